"""Injected failures, error styles, aliasing, no-channel and token pacing of the mock gateway (real HTTP)."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from taotoken_cli.core.net.gateway import Gateway
from tests.conftest import SENTINEL_KEY
from tests.timing import Oversleep, WakeUps, assert_within, fastest_s, timed

BEARER = {"Authorization": f"Bearer {SENTINEL_KEY}"}
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def wait_for_records(mock, count: int, timeout: float = 3.0) -> list:
    deadline = time.monotonic() + timeout
    while len(mock.requests) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return mock.requests


# -- faults --------------------------------------------------------------------------------------
@pytest.mark.parametrize("stream", [False, True])
def test_fault_reset_closes_the_socket_mid_answer(mock_gateway, stream):
    mock = mock_gateway(fault="reset", tokens=8)
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        obs = gw.chat("m", max_tokens=100, stream=stream)
    assert obs.error is not None, obs
    assert isinstance(obs.error, (httpx.RemoteProtocolError, httpx.ReadError))
    record = mock.last
    assert record.outcome == "reset" and record.injected == "fault:reset"
    assert "reset" in record.log_line()
    # The mock itself keeps serving.
    mock.update(fault=None)
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        assert gw.chat("m").status == 200


def test_fault_stall_accepts_and_never_answers(mock_gateway):
    mock, healthy = mock_gateway(fault="stall"), mock_gateway()

    def chat(url: str):
        with Gateway(url, SENTINEL_KEY, read_timeout=0.3) as gw:
            return gw.chat("m")

    # the references: the same request to a mock that answers at once, and how late a thread of this process wakes
    # beside it (the read timeout is a timer)
    reference = fastest_s(lambda: chat(healthy.url))
    with WakeUps() as late:
        obs, took = timed(chat, mock.url)
    assert isinstance(obs.error, httpx.ReadTimeout) and took >= 0.3
    assert_within(took, 0.3, reference + late.worst_s)
    record = wait_for_records(mock, 1)[0]  # logged when the client gives up
    assert record.outcome == "stalled" and record.status is None
    assert "--- stalled (fault:stall)" in record.log_line()


def test_fault_html_answers_the_dashboard_page_with_200(mock_gateway):
    mock = mock_gateway(fault="html")
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        obs = gw.chat("m")
    assert obs.status == 200 and obs.content_type == "text/html" and obs.json() is None
    assert obs.body.startswith(b"<!doctype html>")


def test_fault_no_choices_is_200_with_an_error_object(mock_gateway):
    mock = mock_gateway(fault="no-choices", fail_style="one-api")
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        obs = gw.chat("m")
    body = obs.json()
    assert obs.status == 200 and "choices" not in body
    assert body["error"]["type"] == "one_api_error"


@pytest.mark.parametrize("endpoint", ["chat", "messages", "responses"])
def test_fault_stream_error_after_200(mock_gateway, endpoint):
    mock = mock_gateway(fault="stream-error", tokens=6)
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        obs = getattr(gw, endpoint)("m", max_tokens=100, stream=True)
        plain = getattr(gw, endpoint)("m", max_tokens=100)  # plain requests are not affected
    assert obs.status == 200 and obs.stream.error_event is not None
    assert obs.stream.content_deltas == 3 and not obs.stream.done
    if endpoint == "messages":
        assert obs.stream.error_event["type"] == "overloaded_error"
    assert plain.status == 200 and plain.json() and plain.json().get("error") is None
    assert mock.requests[0].injected == "fault:stream-error" and mock.requests[1].injected is None


@pytest.mark.parametrize("endpoint", ["chat", "messages", "responses"])
def test_fault_empty_stream_has_no_content(mock_gateway, endpoint):
    mock = mock_gateway(fault="empty-stream")
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        obs = getattr(gw, endpoint)("m", max_tokens=100, stream=True)
    assert obs.status == 200 and obs.stream.done and obs.stream.content_deltas == 0 and obs.stream.text == ""


@pytest.mark.parametrize("endpoint", ["chat", "messages", "responses"])
def test_fault_truncated_stream_ends_without_terminal_event(mock_gateway, endpoint):
    mock = mock_gateway(fault="truncated-stream", tokens=6)
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        obs = getattr(gw, endpoint)("m", max_tokens=100, stream=True)
    assert obs.error is None and obs.status == 200
    assert obs.stream.content_deltas == 3 and not obs.stream.done and obs.stream.error_event is None
    assert obs.headers["connection"] == "close"
    assert mock.last.outcome == "truncated"


# -- injected statuses in each gateway's shape ---------------------------------------------------
@pytest.mark.parametrize(("style", "check"), [
    ("openai", lambda b, h: b["error"]["code"] == "rate_limit_exceeded" and b["error"]["type"] == "requests"
     and "x-request-id" in h),
    ("one-api", lambda b, h: b["error"]["type"] == "one_api_error" and "当前分组上游负载已饱和" in b["error"]["message"]
     and "(request id: " in b["error"]["message"] and "x-oneapi-request-id" in h),
    ("new-api", lambda b, h: b["error"]["type"] == "new_api_error" and "code" in b["error"]
     and "x-new-api-version" in h and "x-oneapi-request-id" in h),
    ("litellm", lambda b, h: b["error"]["code"] == "429" and "Rate Limit Handler" in b["error"]["message"]),
    ("openrouter", lambda b, h: b["error"]["code"] == 429 and "metadata" in b["error"]),
    ("anthropic", lambda b, h: b["type"] == "error" and b["error"]["type"] == "rate_limit_error"
     and b["request_id"].startswith("req_")),
])
def test_fail_429_in_each_style_with_retry_after(mock_gateway, style, check):
    mock = mock_gateway(fail=429, fail_style=style, retry_after=2)
    resp = httpx.post(mock.openai_base + "/chat/completions", headers=BEARER, json=CHAT)
    assert resp.status_code == 429 and resp.headers["retry-after"] == "2"
    assert check(resp.json(), resp.headers), resp.text
    assert mock.last.injected == "fail:429" and "(fail:429)" in mock.last.log_line()


def test_retry_after_float_like_litellm(mock_gateway):
    mock = mock_gateway(fail=429, fail_style="litellm", retry_after=37.41)
    resp = httpx.get(mock.openai_base + "/models", headers=BEARER)  # failures apply to the models list too
    assert resp.status_code == 429 and resp.headers["retry-after"] == "37.41"


@pytest.mark.parametrize(("style", "status", "marker"), [
    ("openai", 429, "insufficient_quota"), ("new-api", 403, "insufficient_user_quota"),
    ("one-api", 403, "insufficient_user_quota"), ("openrouter", 402, "openrouter_credits"),
    ("litellm", 429, "budget_exceeded"), ("anthropic", 400, "credit balance is too low"),
])
def test_named_quota_failure_uses_each_gateways_status(mock_gateway, style, status, marker):
    mock = mock_gateway(fail="quota", fail_style=style)
    resp = httpx.post(mock.openai_base + "/chat/completions", headers=BEARER, json=CHAT)
    assert resp.status_code == status and marker in resp.text


def test_injected_status_wins_over_the_styles_usual_one(mock_gateway):
    mock = mock_gateway(fail=503, fail_style="anthropic")
    resp = httpx.post(mock.url + "/v1/messages", headers=BEARER, json=CHAT)
    assert resp.status_code == 503 and resp.json()["error"]["type"] == "overloaded_error"


def test_new_api_concurrency_limit_message(mock_gateway):
    mock = mock_gateway(fail="concurrency", lang="zh")
    body = httpx.post(mock.openai_base + "/chat/completions", headers=BEARER, json=CHAT).json()
    assert "您已达到并发请求限制" in body["error"]["message"]
    assert body["error"]["code"] == "token_concurrency_limit_reached"


def test_fail_rate_is_an_exact_deterministic_fraction(mock_gateway):
    mock = mock_gateway(fail=500, fail_rate=0.25)
    with httpx.Client() as client:
        statuses = [client.post(mock.openai_base + "/chat/completions", headers=BEARER, json=CHAT).status_code
                    for _ in range(8)]
    assert statuses == [200, 200, 200, 500] * 2
    assert mock.summary().statuses == {"200": 6, "500": 2}


def test_key_check_comes_before_injected_failures(mock_gateway):
    mock = mock_gateway(fail=429)
    assert httpx.get(mock.openai_base + "/models").status_code == 401


# -- models: no channel, aliases, allow-list -----------------------------------------------------
def test_no_channel_is_new_api_503_model_not_found(mock_gateway):
    mock = mock_gateway(no_channel=("gpu-big",))
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        obs = gw.chat("gpu-big")
        ok = gw.chat("cpu-small")
    error = obs.json()["error"]
    assert obs.status == 503 and error["code"] == "model_not_found" and error["type"] == "new_api_error"
    assert error["message"].startswith("No available channel for model gpu-big under group default (distributor)")
    assert ok.status == 200


def test_unknown_model_with_an_allow_list(mock_gateway):
    mock = mock_gateway(models=("a",), fail_style="openai")
    resp = httpx.post(mock.openai_base + "/chat/completions", headers=BEARER, json={**CHAT, "model": "b"})
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "model_not_found"
    assert mock.last.flags == ["unknown-model"] and "!! unknown-model" in mock.last.log_line()
    resp = httpx.post(mock.openai_base + "/chat/completions", headers=BEARER, json={"messages": []})
    assert resp.status_code == 400


@pytest.mark.parametrize("endpoint", ["chat", "messages", "responses"])
def test_alias_answers_with_another_model_name(mock_gateway, endpoint):
    mock = mock_gateway(aliases={"gpt-4o": "gpt-4o-2024-08-06"}, models=("other",))
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        plain = getattr(gw, endpoint)("gpt-4o", max_tokens=4)
        streamed = getattr(gw, endpoint)("gpt-4o", max_tokens=4, stream=True)
    body = plain.json()
    model = body["model"]
    assert model == "gpt-4o-2024-08-06"
    if endpoint != "responses":  # the gateway client reads the model of chat and messages streams
        assert streamed.stream.model == "gpt-4o-2024-08-06"
    record = mock.last
    assert record.model == "gpt-4o" and record.response_model == "gpt-4o-2024-08-06"
    assert "model=gpt-4o->gpt-4o-2024-08-06" in record.log_line()
    listed = httpx.get(mock.openai_base + "/models", headers=BEARER).json()["data"]
    assert [m["id"] for m in listed] == ["other", "gpt-4o"]


# -- pacing --------------------------------------------------------------------------------------
def test_token_rate_paces_stream_chunks(mock_gateway):
    # The mock runs in its own process (no GIL shared with this reader) and paces at 50 ms, so scheduling
    # jitter on a loaded 2-core machine is small beside what is measured. Tokens are due at absolute times:
    # none can arrive early, so lower bounds are exact; upper bounds only leave room for a busy machine.
    # Precision itself is measured by benchmarks/bench_vs_hey.py, not asserted here.
    mock = mock_gateway(process=True, tokens=10, token_rate=20, latency_ms=100)
    arrivals = []
    with httpx.Client() as client:
        client.get(mock.openai_base + "/models", headers=BEARER)
        with Oversleep(seconds=0.05, runs=16) as late:  # the reference: how late a process wakes now
            started = time.perf_counter()
            with client.stream("POST", mock.openai_base + "/chat/completions", headers=BEARER,
                               json={**CHAT, "stream": True, "max_tokens": 100}) as resp:
                for chunk in resp.iter_raw():
                    now = time.perf_counter() - started
                    arrivals.extend([now] * chunk.count(b'"delta":{"content":'))
    # late by at most one interval and two of the latest wake-ups measured beside it (the mock's and this reader's)
    slack = 0.05 + 2 * late.worst_ms / 1000
    assert len(arrivals) == 10, arrivals
    assert 0.1 <= arrivals[0] <= 0.1 + slack, (arrivals, late.worst_ms)  # the first token after the latency
    assert 0.1 + 9 * 0.05 <= arrivals[-1] <= 0.1 + 9 * 0.05 + slack, arrivals  # the last one 9 intervals later
    assert len(set(arrivals)) >= 5, arrivals  # paced apart, not sent in one burst
    mock.close()  # the log arrives through a pipe: complete once the mock has stopped
    record = mock.requests[-1]
    assert 99.9 <= record.latency_ms <= 100 + 1000 * slack, (record, late.worst_ms)
    assert 550 <= record.duration_ms <= 550 + 1000 * slack, (record, late.worst_ms)


def test_json_body_and_headers_are_recorded_without_the_key(mock_gateway):
    mock = mock_gateway()
    httpx.post(mock.openai_base + "/chat/completions", headers={**BEARER, "X-Trace": "t1"},
               json={**CHAT, "stream": True, "stream_options": {"include_usage": True}})
    record = mock.last
    assert record.body["stream_options"] == {"include_usage": True}
    assert record.headers["x-trace"] == "t1" and record.headers["authorization"] == "Bearer sk-SE…WXYZ"
    assert SENTINEL_KEY not in json.dumps(record.to_dict(), default=str)
