"""The mock gateway over real loopback HTTP: httpx and the project's own gateway.Gateway client."""

from __future__ import annotations

import json
import statistics
import time

import httpx
import pytest

from taotoken_cli.cmd.mock import MockGateway, MockOptions
from taotoken_cli.core.net.gateway import Gateway
from taotoken_cli.core.net.sse import SSEParser
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
    assert " none model=m " in mock.requests[1].log_line()
    assert "sk-someoneelse0123456789" not in mock.requests[0].log_line()


def test_any_key_accepts_every_nonempty_key(mock_gateway):
    mock = mock_gateway(key=None, any_key=True)
    with Gateway(mock.url, "sk-whatever-123456") as gw:
        assert gw.chat("m").status == 200
    with Gateway(mock.url, None) as gw:
        assert gw.chat("m").status == 401


def _timed_gets(mock) -> list[float]:
    """Five GETs of /models on one warm connection: how long each took, in ms, as the client saw it."""
    with httpx.Client() as client:
        client.get(mock.openai_base + "/models", headers=BEARER)  # connect outside the timing
        took = []
        for _ in range(5):
            t0 = time.perf_counter()
            assert client.get(mock.openai_base + "/models", headers=BEARER).status_code == 200
            took.append((time.perf_counter() - t0) * 1000)
    return took


def test_latency_is_precise(mock_gateway):
    # The references, measured beside it: the same requests to a mock that adds nothing (this machine's cost of a
    # request, now), and a 50 ms sleep (how late this machine wakes a sleeper, now).
    # Interleaved, so that reference and measurement see the same moments of a machine whose load comes and goes.
    instant, mock = mock_gateway(latency_ms=0), mock_gateway(latency_ms=50)
    baselines, slept, took = [], [], []
    for _ in range(3):
        baselines += _timed_gets(instant)
        t0 = time.perf_counter()
        time.sleep(0.05)
        slept.append((time.perf_counter() - t0) * 1000)
        took += _timed_gets(mock)
    baseline = statistics.median(baselines)
    oversleep = statistics.median(slept) - 50
    measured = [r.latency_ms for r in mock.requests]
    # Never early (exact). Late only by what the machine adds to any sleep and any request (this process also
    # runs the mock's thread); precision itself is measured by benchmarks/bench_vs_hey.py, a mock in its own process.
    assert all(m >= 50 for m in measured), measured
    # the mock's thread waits for the GIL and the CPU like the instant mock's requests do: both are in the baseline
    assert statistics.median(measured) <= 50 + 3 * (oversleep + baseline) + 5, (measured, oversleep, baseline)
    assert 50 <= statistics.median(took) <= 50 + 3 * (oversleep + baseline) + 5, (took, oversleep, baseline)


def test_mock_options_refuse_bad_combinations():
    from taotoken_cli.core.base.errors import InputError

    with pytest.raises(InputError, match="no key"):
        MockOptions().validate()
    with pytest.raises(InputError, match="non-loopback"):
        MockOptions(key="k" * 10, host="0.0.0.0").validate()
    assert MockOptions(key="k" * 10, host="0.0.0.0", allow_remote=True).validate()
    with pytest.raises(InputError, match="unknown fault"):
        MockOptions(any_key=True, fault="explode").validate()
    with pytest.raises(InputError, match="not an error status"):
        MockOptions(any_key=True, fail=200).validate()


def test_latency_holds_under_concurrency(mock_gateway):
    import concurrent.futures

    def burst(mock) -> list[float]:
        """40 requests on 20 connections from 20 threads; the mock's latency of each, sorted."""
        with httpx.Client(limits=httpx.Limits(max_connections=20)) as client:
            def one(_):
                return client.post(mock.openai_base + "/chat/completions", headers=BEARER,
                                   json={"model": "m", "messages": []}).status_code

            with concurrent.futures.ThreadPoolExecutor(20) as pool:
                assert set(pool.map(one, range(40))) == {200}
        return sorted(r.latency_ms for r in mock.requests)

    # The reference, measured beside it: the same burst to a mock that adds nothing (what 20 client threads
    # sharing this process with the mock's thread cost its answers now).
    instant, mock = mock_gateway(latency_ms=0), mock_gateway(latency_ms=50)
    burst(instant)
    measured = burst(mock)
    reference = burst(instant)
    # Never early (exact). The delays overlap instead of queueing: 40 requests on 20 connections served one
    # after the other would take 50 ms times their place in the queue, up to a second; overlapping, each is late
    # by about what the reference's answers were; precision is measured by benchmarks/bench_vs_hey.py.
    assert measured[0] >= 50, measured
    assert statistics.median(measured) <= 2 * 50 + 3 * statistics.median(reference), (measured, reference)
    assert measured[-1] <= 3 * 50 + 3 * reference[-1], (measured, reference)


# -- Responses API and Anthropic Messages ---------------------------------------------------------
def test_responses_plain_and_stream_events(mock_gateway):
    mock = mock_gateway(tokens=3)
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        plain = gw.responses("gpt-x")
        streamed = gw.responses("gpt-x", stream=True)
    body = plain.json()
    assert body["object"] == "response" and body["status"] == "completed" and body["model"] == "gpt-x"
    assert body["output"][0]["content"][0] == {"type": "output_text", "text": "Hello from the", "annotations": []}
    assert body["usage"]["output_tokens"] == 3
    assert streamed.stream.done and streamed.stream.text == "Hello from the"
    resp = httpx.post(mock.openai_base + "/responses", headers=BEARER,
                      json={"model": "gpt-x", "input": "hi", "stream": True})
    events = sse_events(resp.content)
    names = [e.event for e in events]
    assert names == ["response.created", "response.in_progress", "response.output_item.added",
                     "response.content_part.added"] + ["response.output_text.delta"] * 3 + [
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.completed"]
    payloads = [json.loads(e.data) for e in events]
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    assert all(p["type"] == e.event for p, e in zip(payloads, events, strict=True))
    completed = payloads[-1]["response"]
    assert completed["id"].startswith("resp_") and completed["usage"]["total_tokens"] > 3
    assert completed["output"][0]["content"][0]["text"] == "Hello from the"


def test_responses_max_output_tokens_marks_incomplete(mock_gateway):
    mock = mock_gateway()
    resp = httpx.post(mock.openai_base + "/responses", headers=BEARER,
                      json={"model": "m", "input": "hi", "max_output_tokens": 2})
    assert resp.json()["status"] == "incomplete"
    assert resp.json()["incomplete_details"] == {"reason": "max_output_tokens"}


def test_messages_plain_and_stream_with_x_api_key_or_bearer(mock_gateway):
    mock = mock_gateway(tokens=2)
    headers = {"x-api-key": SENTINEL_KEY, "anthropic-version": "2023-06-01"}
    plain = httpx.post(mock.url + "/v1/messages", headers=headers,
                       json={"model": "claude-x", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]})
    body = plain.json()
    assert plain.status_code == 200 and body["type"] == "message" and body["stop_reason"] == "end_turn"
    assert body["content"] == [{"type": "text", "text": "Hello from"}]
    resp = httpx.post(mock.url + "/v1/messages?beta=true", headers=headers,
                      json={"model": "claude-x", "max_tokens": 100, "stream": True, "messages": []})
    names = [e.event for e in sse_events(resp.content)]
    assert names == ["message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta",
                     "content_block_stop", "message_delta", "message_stop"]
    with Gateway(mock.url, SENTINEL_KEY) as gw:  # Bearer, as Claude Code sends with ANTHROPIC_AUTH_TOKEN
        obs = gw.messages("claude-x", max_tokens=1, stream=True)
    assert obs.stream.done and obs.stream.text == "Hello" and obs.stream.finish_reason == "max_tokens"
    assert [r.auth_kind for r in mock.requests] == ["x-api-key", "x-api-key", "bearer"]
    assert mock.requests[1].flags == []  # ?beta=true is what Claude Code sends: not a mistake


def test_models_list_in_anthropic_shape_and_single_model(mock_gateway):
    mock = mock_gateway(models=("claude-a", "gpt-b"))
    resp = httpx.get(mock.url + "/v1/models", headers={"x-api-key": SENTINEL_KEY, "anthropic-version": "2023-06-01"})
    assert resp.json()["data"][0] == {"type": "model", "id": "claude-a", "display_name": "claude-a",
                                      "created_at": "2025-01-01T00:00:00Z"}
    assert resp.json()["has_more"] is False
    assert httpx.get(mock.openai_base + "/models/gpt-b", headers=BEARER).json()["id"] == "gpt-b"
    assert httpx.get(mock.openai_base + "/models/nope", headers=BEARER).status_code == 503  # new-api: no channel
    count = httpx.post(mock.url + "/v1/messages/count_tokens", headers=BEARER,
                       json={"model": "claude-a", "messages": [{"role": "user", "content": "x" * 40}]})
    assert count.json() == {"input_tokens": 11}  # (4 + 40) chars / 4


# -- prefixes and path mistakes ------------------------------------------------------------------
@pytest.mark.parametrize("prefix", ["/api/v1", "/v1", "/custom/root/v1"])
def test_any_prefix_ending_in_v1_is_served(mock_gateway, prefix):
    mock = mock_gateway()
    resp = httpx.post(mock.origin + prefix + "/chat/completions", headers=BEARER, json={"model": "m", "messages": []})
    assert resp.status_code == 200 and resp.json()["choices"]
    assert mock.last.flags == []


@pytest.mark.parametrize(("path", "flag", "status", "kind"), [
    ("/api/v1/v1/chat/completions", "doubled-v1", 404, "json"),
    ("/api/chat/completions", "missing-v1", 404, "json"),
    ("/chat/completions", "missing-v1", 200, "html"),  # one-api/new-api serve the dashboard page there
    ("/api/v1/chat/completions/chat/completions", "endpoint-in-base", 404, "json"),
    ("/api/v1/messages/v1/messages", "endpoint-in-base", 404, "json"),
])
def test_path_mistakes_are_answered_like_new_api_and_flagged(mock_gateway, path, flag, status, kind):
    mock = mock_gateway()
    resp = httpx.post(mock.origin + path, headers=BEARER, json={"model": "m", "messages": []})
    assert resp.status_code == status
    if kind == "json":
        assert resp.json()["error"]["message"] == f"Invalid URL (POST {path})"
    else:
        assert resp.headers["content-type"].startswith("text/html") and resp.text.startswith("<!doctype html>")
    record = mock.last
    assert record.flags == [flag] and record.model == "m"
    assert flag in record.log_line() and "!!" in record.log_line()


def test_lenient_paths_answer_but_still_flag(mock_gateway):
    mock = mock_gateway(lenient_paths=True)
    resp = httpx.post(mock.url + "/v1/v1/chat/completions", headers=BEARER, json={"model": "m", "messages": []})
    assert resp.status_code == 200 and mock.last.flags == ["doubled-v1"]


def test_query_string_in_base_url_is_flagged(mock_gateway):
    mock = mock_gateway()
    # What the OpenAI SDK sends for base_url "http://h/api?utm_source=x": the endpoint lands in the query.
    resp = httpx.post(mock.url + "?utm_source=x/chat/completions", headers=BEARER, json={"model": "m"})
    assert resp.status_code == 404 and mock.last.flags == ["query-in-base"]


# -- key mistakes --------------------------------------------------------------------------------
@pytest.mark.parametrize(("header", "value", "flags"), [
    ("Authorization", f"Bearer Bearer {SENTINEL_KEY}", ["bearer-in-key", "wrong-key", "key-ok-when-cleaned"]),
    ("Authorization", f"Bearer  {SENTINEL_KEY}", ["key-whitespace", "wrong-key", "key-ok-when-cleaned"]),
    ("Authorization", f"Bearer {SENTINEL_KEY[:10]} {SENTINEL_KEY[10:]}",
     ["key-whitespace", "wrong-key", "key-ok-when-cleaned"]),
    ("x-api-key", f'"{SENTINEL_KEY}"', ["key-quoted", "wrong-key", "key-ok-when-cleaned"]),
    ("Authorization", "Bearer", ["no-key"]),
    ("x-api-key", "sk-otherkey0123456789", ["wrong-key"]),
])
def test_key_mistakes_are_flagged_and_rejected(mock_gateway, header, value, flags):
    mock = mock_gateway()
    resp = httpx.get(mock.openai_base + "/models", headers={header: value})
    assert resp.status_code == 401
    assert resp.json()["error"]["message"].startswith("Invalid token (request id: ")
    record = mock.last
    assert record.flags == flags
    line = record.log_line()
    assert SENTINEL_KEY not in line and all(f in line for f in flags)
    assert SENTINEL_KEY not in json.dumps(record.headers)


def test_one_api_style_missing_key_message(mock_gateway):
    mock = mock_gateway(fail_style="one-api")
    body = httpx.get(mock.openai_base + "/models").json()
    assert body["error"]["message"].startswith("未提供令牌 (request id: ")
    assert body["error"]["type"] == "one_api_error" and "code" not in body["error"]  # auth layer: no code
