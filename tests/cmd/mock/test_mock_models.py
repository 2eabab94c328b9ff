"""Per-model behaviour of the mock gateway: `--model-timing` and `--model-fail` (real HTTP).

One mock plays several backends at once: a fast and a slow model with their own latency, token
rate and length, and a failing model next to a healthy one. Timing tests run the mock in its own
process (`process=True`) and time token arrivals here, the way a client sees them.
"""

from __future__ import annotations

import time

import httpx
import pytest

from taotoken_cli.cmd.mock import MockOptions, ModelTiming
from taotoken_cli.cmd.mock.options import parse_model_fail, parse_model_timing
from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.net.gateway import Gateway
from tests.cmd.mock.test_mock_cli import start_mock, stop
from tests.conftest import SENTINEL_KEY
from tests.timing import Oversleep

BEARER = {"Authorization": f"Bearer {SENTINEL_KEY}"}


def token_arrivals(client: httpx.Client, url: str, model: str, *, usage: bool = False) -> tuple[list[float], bytes]:
    """Seconds from sending the request to each content delta's arrival, and the raw body."""
    body = {"model": model, "stream": True, "max_tokens": 1000, "messages": [{"role": "user", "content": "hi"}]}
    if usage:
        body["stream_options"] = {"include_usage": True}
    arrivals: list[float] = []
    raw = b""
    started = time.perf_counter()
    with client.stream("POST", url + "/chat/completions", headers=BEARER, json=body) as resp:
        assert resp.status_code == 200
        for chunk in resp.iter_raw():
            now = time.perf_counter() - started
            arrivals.extend([now] * chunk.count(b'"delta":{"content":'))
            raw += chunk
    return arrivals, raw


# -- timing --------------------------------------------------------------------------------------
def test_two_models_with_their_own_timing(mock_gateway):
    mock = mock_gateway(process=True, latency_ms=5, tokens=2, model_timing={
        "fast": ModelTiming(20, 200, 12), "slow": ModelTiming(60, 50, 5)})
    with httpx.Client() as client:
        client.get(mock.openai_base + "/models", headers=BEARER)  # connect once: timings exclude the handshake
        # The references, taken at the same moments: how late a process wakes from a sleep, and what a request of
        # the unpaced model costs beyond its 5 ms before, between and after the timed ones (a loaded machine
        # delays the mock's and this process's work as much as their sleeps).
        with Oversleep() as late:
            costs = [token_arrivals(client, mock.openai_base, "anything-else")[0][0] - 0.005]
            fast, _ = token_arrivals(client, mock.openai_base, "fast")
            costs.append(token_arrivals(client, mock.openai_base, "anything-else")[0][0] - 0.005)
            slow, _ = token_arrivals(client, mock.openai_base, "slow")
            other, _ = token_arrivals(client, mock.openai_base, "anything-else")
            costs.append(other[0] - 0.005)
        listed = [m["id"] for m in client.get(mock.openai_base + "/models", headers=BEARER).json()["data"]]
    assert len(fast) == 12 and len(slow) == 5 and len(other) == 2
    # Client side: strict downwards; upwards late by what a wake-up is late on this machine now (both processes:
    # the mock's and this one may each wake late), judged against the reference measured beside it.
    slack = 3 * (late.ms / 1000 + max(costs))
    assert 0.020 <= fast[0] < 0.040 + slack and 0.060 <= slow[0] < 0.080 + slack, (fast, slow, late.ms, costs)
    assert 0.055 - 0.005 - slack <= fast[-1] - fast[0] <= 0.055 + 0.010 + slack, (fast, late.ms)  # 11 gaps of 5 ms
    assert 0.080 - 0.005 - slack <= slow[-1] - slow[0] <= 0.080 + 0.010 + slack, (slow, late.ms)  # 4 gaps of 20 ms
    assert other[0] >= 0.005 and len(set(other)) == 1  # the global 5 ms, unpaced: both tokens in one write
    assert "fast" in listed and "slow" in listed  # per-model names are listed like served models
    # Server side: headers at the model's latency, the last token at latency + (n - 1) intervals.
    records = {r.model: r for r in mock.requests if r.model}
    pad = 3 * (late.ms + 1000 * max(costs))
    assert 20 <= records["fast"].latency_ms < 30 + pad and 75 <= records["fast"].duration_ms < 85 + pad
    assert 60 <= records["slow"].latency_ms < 70 + pad and 140 <= records["slow"].duration_ms < 150 + pad


def test_tokens_are_scheduled_from_the_arrival_without_drift(mock_gateway):
    # 60 tokens, 5 ms apart: each one is due at arrival + 30 ms + i * 5 ms, so a late wake-up delays one token and
    # never the rest. Tokens are never early (exact lower bounds); the last one is late by at most about one
    # wake-up: one interval plus twice the latest wake-up of a process sleeping 5 ms beside it (Oversleep, the
    # reference measured at the same moments). A mock that slept 5 ms after each write would drift by 59 wake-ups.
    interval = 0.005
    mock = mock_gateway(process=True, model_timing={"m": ModelTiming(30, 200, 60)})
    with httpx.Client() as client:
        client.get(mock.openai_base + "/models", headers=BEARER)
        with Oversleep(seconds=interval, runs=150) as late:
            runs = [token_arrivals(client, mock.openai_base, "m")[0] for _ in range(3)]
    one_wake_up = interval + 2 * late.worst_ms / 1000
    for arrivals in runs:
        assert len(arrivals) == 60
        first_late = arrivals[0] - 0.030  # the request's own way there (and the client's reading), not the schedule's
        span = arrivals[-1] - arrivals[0]
        assert arrivals[0] >= 0.030 and 59 * interval - first_late <= span <= 59 * interval + one_wake_up, \
            (arrivals, late.worst_ms)
    durations = [r.duration_ms for r in mock.requests if r.model == "m"]
    # server side: on schedule from the arrival, whatever the client's reading added
    assert all(30 + 59 * 5 <= d <= 30 + 59 * 5 + 1000 * one_wake_up for d in durations), (durations, late.worst_ms)


def test_model_timing_fields_may_keep_the_global_value(mock_gateway):
    mock = mock_gateway(latency_ms=15, token_rate=0, tokens=3, model_timing={"long": ModelTiming(None, None, 7)})
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        long_ = gw.chat("long", max_tokens=100)
        other = gw.chat("other", max_tokens=100)
    assert long_.json()["usage"]["completion_tokens"] == 7 and other.json()["usage"]["completion_tokens"] == 3
    assert all(r.latency_ms >= 15 for r in mock.requests)


def test_max_tokens_still_caps_a_models_own_length(mock_gateway):
    mock = mock_gateway(model_timing={"m": ModelTiming(0, 0, 20)})
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        obs = gw.chat("m", max_tokens=4)
    assert obs.json()["usage"]["completion_tokens"] == 4 and obs.json()["choices"][0]["finish_reason"] == "length"


# -- failures ------------------------------------------------------------------------------------
def test_a_failing_model_next_to_a_healthy_one(mock_gateway):
    mock = mock_gateway(retry_after=3, model_fail={"limited": 429, "locked": 401, "gone": "no-channel",
                                                   "broke": "stream-error"})
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        healthy = [gw.chat("ok-model").status for _ in range(3)]
        limited = [gw.chat("limited") for _ in range(3)]
        locked = gw.chat("locked")
        gone = gw.chat("gone")
        broke_stream = gw.chat("broke", max_tokens=100, stream=True)
        broke_plain = gw.chat("broke")
    assert healthy == [200, 200, 200]
    assert [o.status for o in limited] == [429] * 3  # every request for that model
    assert all(o.headers["retry-after"] == "3" for o in limited)
    assert locked.status == 401 and "retry-after" not in locked.headers  # Retry-After only on 429/503
    assert gone.status == 503 and "No available channel for model gone" in gone.json()["error"]["message"]
    assert broke_stream.status == 200 and broke_stream.stream.error_event is not None
    assert broke_plain.status == 200  # a stream fault leaves plain requests alone
    injected = {r.model: r.injected for r in mock.requests}
    assert injected["limited"] == "fail:429" and injected["broke"] is None and injected["ok-model"] is None


def test_a_models_own_failure_wins_and_the_global_one_spares_it(mock_gateway):
    mock = mock_gateway(fail=503, fail_rate=0.5, model_fail={"q": "quota", "r": "reset"})
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        others = [gw.chat("m").status for _ in range(4)]
        quota = [gw.chat("q").status for _ in range(3)]
        reset = gw.chat("r")
    assert others == [200, 503, 200, 503]  # the global fraction counts only the other models' requests
    assert quota == [403] * 3  # new-api: insufficient user quota
    assert reset.error is not None


def test_no_usage_fault_drops_the_usage_chunk_though_asked(mock_gateway):
    mock = mock_gateway(tokens=4, model_fail={"plain-channel": "no-usage"})
    with httpx.Client() as client:
        arrivals, raw = token_arrivals(client, mock.openai_base, "plain-channel", usage=True)
        _, with_usage = token_arrivals(client, mock.openai_base, "m", usage=True)
    assert len(arrivals) == 4 and raw.endswith(b"data: [DONE]\n\n") and b'"usage"' not in raw
    assert b'"usage":{"prompt_tokens"' in with_usage
    assert mock.requests[0].injected == "fault:no-usage"


# -- parsing and validation ----------------------------------------------------------------------
def test_parse_model_timing_and_fail():
    assert parse_model_timing(["fast=20,200,32", "org/m:tag=5"]) == {
        "fast": ModelTiming(20.0, 200.0, 32), "org/m:tag": ModelTiming(5.0, None, None)}
    assert parse_model_timing(["x=,,8"]) == {"x": ModelTiming(None, None, 8)}
    assert parse_model_fail(["a=429", "b=Quota", "c=no-channel", "d=empty-stream"]) == {
        "a": 429, "b": "quota", "c": "no-channel", "d": "empty-stream"}
    assert ModelTiming(20.0, 200.0, 32).spec() == "20.0,200.0,32" and ModelTiming(None, None, 8).spec() == ",,8"


@pytest.mark.parametrize(("items", "message"), [
    (["fast"], "expected MODEL=LATENCY_MS[,TOKEN_RATE[,TOKENS]]"),
    (["fast=a,b"], "not numbers"),
    (["fast=1,2,3,4"], "expected MODEL=LATENCY_MS"),
])
def test_bad_model_timing_is_refused_with_a_fix(items, message):
    with pytest.raises(InputError) as err:
        parse_model_timing(items)
    assert message in str(err.value) and err.value.fix


@pytest.mark.parametrize(("changes", "message"), [
    ({"model_fail": {"m": "explode"}}, "--model-fail m='explode': not an HTTP status or a known failure"),
    ({"model_fail": {"m": 200}}, "--model-fail m=200: not an error status"),
    ({"model_timing": {"m": ModelTiming(-1)}}, "--model-timing m: latency, token rate and tokens must not"),
    ({"models": ("a",), "model_timing": {"b": ModelTiming(1)}}, "--model-timing b: not among --models (a)"),
    ({"models": ("a",), "model_fail": {"b": 500}}, "--model-fail b: not among --models (a)"),
])
def test_bad_per_model_options_are_refused(changes, message):
    with pytest.raises(InputError) as err:
        MockOptions(any_key=True, **changes).validate()
    assert message in str(err.value) and err.value.fix


def test_per_model_options_travel_to_a_mock_process(mock_gateway):
    mock = mock_gateway(process=True, model_timing={"slow": ModelTiming(40, None, 2)}, model_fail={"bad": 502})
    with Gateway(mock.url, SENTINEL_KEY) as gw:
        assert gw.chat("bad").status == 502 and gw.chat("slow").status == 200
    deadline = time.monotonic() + 3
    while len(mock.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [r.latency_ms >= 40 for r in mock.requests] == [False, True]
    assert [r.injected for r in mock.requests] == ["fail:502", None]


def test_cli_banner_and_help_show_the_per_model_options(home, cli):
    proc, first = start_mock(home, "--model-timing", "fast=20,200,32", "--model-timing", "slow=300,,8",
                             "--model-fail", "broken=503", "--token-rate", "50")
    out, _ = stop(proc)
    assert proc.returncode == 0, out
    assert "  model fast: latency 20 ms; 32 tokens at 200/s\n" in first
    assert "  model slow: latency 300 ms; 8 tokens at 50/s\n" in first
    assert "  model broken: every request fails (503)\n" in first
    help_text = cli("mock", "--help").stdout
    assert "--model-timing" in help_text and "--model-fail" in help_text and "no-usage" in help_text


def test_cli_refuses_a_bad_model_option(cli):
    result = cli("mock", "--any-key", "--model-fail", "m=teapot", timeout=20)
    assert result.returncode == 2 and "--model-fail m='teapot'" in result.stderr and "fix:" in result.stderr
    result = cli("mock", "--any-key", "--model-timing", "m=fast", timeout=20)
    assert result.returncode == 2 and "not numbers" in result.stderr
    result.assert_clean()
