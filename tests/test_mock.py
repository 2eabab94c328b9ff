"""The mock gateway over real loopback HTTP: httpx and the project's own gateway.Gateway client."""

from __future__ import annotations

import json
import statistics
import time

import httpx
import pytest

from taotoken_cli.gateway import Gateway
from taotoken_cli.mock import MockGateway, MockOptions
from taotoken_cli.sse import SSEParser
from tests.conftest import SENTINEL_KEY

BEARER = {"Authorization": f"Bearer {SENTINEL_KEY}"}


def sse_events(raw: bytes) -> list:
    parser = SSEParser()
    return parser.feed(raw) + parser.close()


def no_full_key(mock: MockGateway) -> None:
    for record in mock.requests:
        assert SENTINEL_KEY not in record.log_line()
        assert SENTINEL_KEY not in record.to_json()


# -- the basics ----------------------------------------------------------------------------------
def test_models_list_and_chat_plain(mock_gateway):
    mock = mock_gateway(models=("gpt-4o-mini", "gpu-a"))
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        models = gw.list_models()
        chat = gw.chat("gpu-a", max_tokens=3)
    assert models.status == 200
    assert [m["id"] for m in models.json()["data"]] == ["gpt-4o-mini", "gpu-a"]
    assert models.json()["object"] == "list"
    assert "x-oneapi-request-id" in models.headers
    body = chat.json()
    assert chat.status == 200 and body["model"] == "gpu-a"
    assert body["choices"][0]["message"]["content"] == "Hello from the"
    assert body["choices"][0]["finish_reason"] == "length"  # max_tokens 3 < 16 tokens
    assert body["usage"]["completion_tokens"] == 3
    record = mock.last
    assert (record.method, record.path, record.endpoint, record.auth_kind) == \
        ("POST", "/api/v1/chat/completions", "chat", "bearer")
    assert record.model == "gpu-a" and record.stream is False and record.status == 200
    assert record.key_masked == "sk-SE…WXYZ"
    no_full_key(mock)


def test_chat_stream_with_include_usage(mock_gateway):
    mock = mock_gateway(tokens=4)
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        obs = gw.chat("m1", max_tokens=100, stream=True)
    assert obs.status == 200 and obs.content_type == "text/event-stream"
    s = obs.stream
    assert s.done and s.content_deltas == 4 and s.text == "Hello from the taotoken"
    assert s.finish_reason == "stop" and s.usage["completion_tokens"] == 4 and s.model == "m1"
    # The raw wire: role chunk, 4 content chunks, finish chunk, usage-only chunk (choices: []), [DONE].
    resp = httpx.post(mock.openai_base + "/chat/completions", headers=BEARER, json={
        "model": "m1", "stream": True, "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "hi"}]})
    events = sse_events(resp.content)
    assert events[-1].is_done
    chunks = [json.loads(e.data) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 4
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert resp.headers["transfer-encoding"] == "chunked"
    # Without include_usage there is no usage-only chunk.
    resp = httpx.post(mock.openai_base + "/chat/completions", headers=BEARER,
                      json={"model": "m1", "stream": True, "messages": []})
    chunks = [json.loads(e.data) for e in sse_events(resp.content)[:-1]]
    assert all(c["choices"] for c in chunks) and "usage" not in chunks[-1]


def test_keep_alive_reuses_one_connection(mock_gateway):
    mock = mock_gateway()
    with httpx.Client() as client:
        for _ in range(5):
            assert client.get(mock.openai_base + "/models", headers=BEARER).status_code == 200
            r = client.post(mock.openai_base + "/chat/completions", headers=BEARER,
                            json={"model": "x", "stream": True, "messages": []})
            assert r.status_code == 200
    assert len(mock.requests) == 10
    assert len(mock.server.connections) <= 1


def test_wrong_and_missing_key(mock_gateway):
    mock = mock_gateway()
    with Gateway(mock.url, "sk-someoneelse0123456789") as gw:
        wrong = gw.list_models()
    with Gateway(mock.url, None) as gw:
        missing = gw.chat("m")
    assert wrong.status == 401 and missing.status == 401
    assert wrong.json()["error"]["type"] == "new_api_error"
    assert "wrong-key" in mock.requests[0].flags
    assert mock.requests[1].flags == ["no-key"] and mock.requests[1].auth_kind == "none"
    assert "sk-someoneelse0123456789" not in mock.requests[0].log_line()


def test_any_key_accepts_every_nonempty_key(mock_gateway):
    mock = mock_gateway(key=None, any_key=True)
    with Gateway(mock.url, "sk-whatever-123456") as gw:
        assert gw.chat("m").status == 200
    with Gateway(mock.url, None) as gw:
        assert gw.chat("m").status == 401


def test_latency_is_precise(mock_gateway):
    mock = mock_gateway(latency_ms=50)
    with httpx.Client() as client:
        client.get(mock.openai_base + "/models", headers=BEARER)  # connect outside the timing
        took = []
        for _ in range(5):
            t0 = time.perf_counter()
            assert client.get(mock.openai_base + "/models", headers=BEARER).status_code == 200
            took.append((time.perf_counter() - t0) * 1000)
    measured = [r.latency_ms for r in mock.requests]
    assert all(50 <= m < 54 for m in measured), measured  # server side: from request to headers
    assert 50 <= statistics.median(took) < 60, took  # client side, including httpx


def test_mock_options_refuse_bad_combinations():
    from taotoken_cli.errors import InputError

    with pytest.raises(InputError, match="no key"):
        MockOptions().validate()
    with pytest.raises(InputError, match="non-loopback"):
        MockOptions(key="k" * 10, host="0.0.0.0").validate()
    assert MockOptions(key="k" * 10, host="0.0.0.0", allow_remote=True).validate()
    with pytest.raises(InputError, match="unknown fault"):
        MockOptions(any_key=True, fault="explode").validate()
    with pytest.raises(InputError, match="not an error status"):
        MockOptions(any_key=True, fail=200).validate()
