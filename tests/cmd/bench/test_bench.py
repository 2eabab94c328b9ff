"""`taotoken bench` against the mock gateway (`taotoken mock` in its own process) with known timing.

One mock serves every model these tests need: per-model timing (`--model-timing`) schedules each
reply and stream token at an exact time from the request's arrival, and per-model failures
(`--model-fail`) answer 401, 429, no channel, resets and broken streams next to healthy models, so
the figures bench reports can be checked against what the mock was told to do. Bounds are strict
downwards (a latency below the configured delay, or a TTFT that counted the role-only first chunk,
fails); upwards they allow what the machine adds now, measured beside the run (tests/timing.py: how
late a process wakes from a sleep, the mock's and bench's worker both) or within it (the run's own
slowest reply), never an absolute number of seconds.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from taotoken_cli.cmd.bench.histogram import Histogram, _index
from taotoken_cli.cmd.mock import MockOptions, ModelTiming
from tests.conftest import SENTINEL_KEY
from tests.timing import Oversleep

MOCK = MockOptions(
    key=SENTINEL_KEY, latency_ms=10, tokens=3,  # any other model: 10 ms, 3 tokens
    model_timing={
        "fixed30": ModelTiming(30, 0, 4),  # non-stream reply after 30 ms, usage says 4 tokens
        "stream": ModelTiming(40, 100, 6),  # first content token at 40 ms, then one every 10 ms, 6 tokens
        "slow": ModelTiming(200, 0, 1),  # 200 ms
    },
    model_fail={"hang": "stall", "unauthorized": 401, "rate-limited": 429, "quota": "quota",
                "no-channel": "no-channel", "reset": "reset", "error-event": "stream-error", "empty": "empty-stream",
                "no-usage": "no-usage"},
    retry_after=0.2,  # on the injected 429 (honoured: the user waits)
)


@pytest.fixture(scope="module")
def server(module_mock_gateway):
    return module_mock_gateway(MOCK, process=True).url  # its own process: no GIL shared with the test


@pytest.fixture
def bench(cli, server):
    def run(*args: str, env: dict[str, str] | None = None, base_url: str = server):
        full_env = {"TAOTOKEN_API_KEY": SENTINEL_KEY, **(env or {})}
        result = cli("bench", "--base-url", base_url, *args, env=full_env, timeout=60)
        result.assert_clean()
        return result

    return run


def run_json(bench, *args: str, **kwargs) -> dict:
    result = bench(*args, "--json", **kwargs)
    assert result.returncode in (0, 4, 5, 6, 7, 8, 9), result.output
    return json.loads(result.stdout)


# -- the histogram ---------------------------------------------------------------------------
def test_histogram_percentiles_within_one_percent_and_merge():
    rng = random.Random(7)
    values = [rng.lognormvariate(-3, 1) for _ in range(20000)]
    a, b, whole = Histogram(), Histogram(), Histogram()
    for i, v in enumerate(values):
        (a if i % 2 else b).record(v)
        whole.record(v)
    a.merge(b)
    values.sort()
    for p in (50, 90, 95, 99, 99.9):
        exact = values[int(p / 100 * len(values)) - 1]
        assert abs(a.percentile(p) - exact) / exact < 0.01, p
        assert a.percentile(p) == whole.percentile(p)
    assert a.count == 20000 and a.min == values[0] and a.max == values[-1]
    assert len(a.counts) < 1000  # bounded: buckets, not samples


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.one_of(st.floats(-1e-3, 0.2), st.floats(0, 1e4),  # and values at buckets' ends:
                                 st.builds(lambda n, off: (n + off) / 1e6, st.integers(0, 300),
                                           st.sampled_from([0.0, 0.4999, 0.5, -0.5])),
                                 st.builds(lambda k, off: (2 ** k - 1 + off) / 1e6, st.integers(7, 30),
                                           st.sampled_from([0.0, 0.4999, 0.5, 0.5001, -0.5]))), max_size=3000),
       scale=st.sampled_from([1e6, 1000.0]))
@example(values=[random.Random(3).lognormvariate(-6, 1.5) - 1e-4 for _ in range(5000)], scale=1e6)
def test_histogram_sorts_batches_into_the_buckets_each_value_has(values: list[float], scale: float) -> None:
    """record() defers the bucketing to a batch (sorted, each bucket's end found by bisection): the figures are the
    same as bucketing each value as it comes (values under 0 count as 0), whatever is read and when."""
    hist = Histogram(scale)
    expected: dict[int, int] = {}
    for i, v in enumerate(values):
        hist.record(v)
        index = _index(int(max(v, 0.0) * scale + 0.5))
        expected[index] = expected.get(index, 0) + 1
        if i == 1500:  # a read in the middle folds what is pending; later values go on from there
            assert hist.count == 1501
    assert hist.counts == expected
    clamped = [max(v, 0.0) for v in values]
    assert hist.count == len(values)
    if values:
        assert (hist.min, hist.max) == (min(clamped), max(clamped))
        assert hist.total == pytest.approx(sum(clamped), rel=1e-12, abs=1e-12)


def test_the_run_distributions_are_those_of_its_windows_together():
    """A success's latency and TTFT are recorded once, in the window it ended in; the worker's whole-run
    distributions are filled from its windows (SeriesStats.fill_from_windows), across their coarsening, as if each
    value had gone into them directly. Failures are in neither."""
    from taotoken_cli.cmd.bench.stats import MAX_WINDOWS, SeriesStats

    rng = random.Random(5)
    stats = SeriesStats(0.25)
    latency, ttft = Histogram(), Histogram()
    for i in range(6000):
        ok = i % 7 != 0
        at, lat, first = i * 0.03, rng.lognormvariate(-3, 1), rng.lognormvariate(-5, 1) if i % 3 else None
        stats.windows.add(at, ok, lat, first, 10)
        if ok:
            latency.record(lat)
            if first is not None:
                ttft.record(first)
    assert stats.windows.width > 0.25 and len(stats.windows.rows) <= MAX_WINDOWS  # coarsened on the way
    rows = stats.windows.rows  # a window left behind holds no values unsorted (only the last one may)
    assert all(not row[4]._pending and not row[5]._pending for index, row in rows.items() if index < max(rows))
    stats.fill_from_windows()
    for mine, direct in ((stats.latency, latency), (stats.ttft, ttft)):
        assert mine.counts == direct.counts and (mine.count, mine.min, mine.max) == (direct.count, direct.min,
                                                                                      direct.max)
        assert mine.total == pytest.approx(direct.total, rel=1e-12)


def test_histogram_memory_does_not_grow_with_samples():
    hist = Histogram()
    for i in range(200000):
        hist.record(0.05 + (i % 1000) * 1e-5)
    buckets = len(hist.counts)
    for i in range(200000):
        hist.record(0.05 + (i % 1000) * 1e-5)
    assert len(hist.counts) == buckets


# -- closed loop -----------------------------------------------------------------------------
def late_ms(late: Oversleep) -> float:
    """How late a reply may be on this machine now: two of the latest wake-ups measured beside the run (the mock
    wakes to answer, bench's worker to read)."""
    return 2 * late.worst_ms


def test_counts_and_percentiles_for_a_known_delay(bench):
    with Oversleep(seconds=0.01, runs=40) as late:
        data = run_json(bench, "-m", "fixed30", "-n", "40", "-c", "4", "--workers", "2")
    s = data["series"][0]
    assert (s["requests"], s["ok"], s["failed"]) == (40, 40, 0)
    assert s["status_codes"] == {"200": 40}
    lat = s["latency_ms"]
    assert lat["count"] == 40
    assert lat["min"] >= 29.5  # never faster than the server's fixed delay
    assert 29.5 <= lat["p50"] <= 1.5 * 30 + late_ms(late), (lat, late.worst_ms)
    assert lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]
    assert s["output_tokens"] == 160 and s["tokens_source"] == "usage"
    assert s["requests_per_s"] <= 4 / 0.03 * 1.05  # 4 users can't beat 4 / 30 ms
    assert s["connections"] == 4  # keep-alive: one connection per user, reused
    assert data["load"]["workers"] == 2 and data["load"]["mode"] == "closed"


def test_stream_metrics_for_a_known_token_schedule(bench):
    with Oversleep(seconds=0.01, runs=60) as late:
        data = run_json(bench, "-m", "stream", "-n", "12", "-c", "3", "--stream")
    s = data["series"][0]
    assert s["ok"] == 12, s["errors"]
    slack = late_ms(late)  # a token late by a wake-up shortens the next gap by as much: gaps are judged both ways
    # the role-only chunk arrives at once: had it counted as a token, TTFT would be ~0
    assert 39.5 <= s["ttft_ms"]["p50"] <= 40 * 1.375 + slack, (s["ttft_ms"], late.worst_ms)
    assert 10 * 0.9 - slack <= s["itl_ms"]["p50"] <= 10 * 1.25 + slack, (s["itl_ms"], late.worst_ms)
    assert s["itl_ms"]["count"] == 12 * 5  # inter-token gaps exclude the first token
    assert 10 * 0.9 - slack <= s["tpot_ms"]["p50"] <= 10 * 1.25 + slack, (s["tpot_ms"], late.worst_ms)
    assert 89.5 <= s["latency_ms"]["p50"] <= 90 * 1.22 + slack  # 40 ms + 5 x 10 ms
    assert s["output_tokens"] == 72 and s["tokens_source"] == "usage"
    assert 6 / (0.09 * 1.22 + slack / 1000) <= s["tokens_per_s_per_request"]["p50"] <= 6 / 0.09 * 1.02


def test_token_count_falls_back_to_counted_deltas_and_says_so(bench):
    result = bench("-m", "no-usage", "-n", "4", "-c", "2", "--stream")
    assert result.returncode == 0, result.output
    assert "counted stream deltas (no usage from the server)" in " ".join(result.stdout.split())
    data = run_json(bench, "-m", "no-usage", "-n", "4", "-c", "2", "--stream")
    assert data["series"][0]["tokens_source"] == "counted"
    assert data["series"][0]["output_tokens"] == 12


def test_duration_mode_and_warmup(bench, tmp_path: Path):
    raw = tmp_path / "raw.jsonl"
    with Oversleep(seconds=0.01, runs=60) as late:
        data = run_json(bench, "-m", "fixed30", "-z", "0.6s", "-c", "2", "--warmup", "4", "--workers", "1",
                        "--raw", str(raw))
    s = data["series"][0]
    assert data["load"]["duration_s"] == 0.6 and data["load"]["requests"] is None
    # starts stop at 0.6 s (a start decided just before may be taken a wake-up later); the last reply ends at most
    # the run's slowest reply after that (the drain)
    slowest_s = s["latency_ms"]["max"] / 1000
    assert 0.6 * 0.99 <= s["elapsed_s"] <= 0.6 + late.worst_ms / 1000 + slowest_s, (s, late.worst_ms)
    # each of the 2 users sends back to back: at least as many replies as its slowest one fits in 0.6 s
    assert 2 * int(0.6 / slowest_s) <= s["requests"] <= 2 * 0.6 / 0.03 + 2
    lines = [json.loads(line) for line in raw.read_text().splitlines()]
    assert len(lines) == s["requests"]  # warm-up requests are not in the figures or the raw file
    assert all(line["ok"] and line["status"] == 200 and line["latency_ms"] >= 29.5 for line in lines)
    assert SENTINEL_KEY not in raw.read_text()


# -- errors ----------------------------------------------------------------------------------
def test_errors_are_classified_per_model(bench):
    models = ["unauthorized", "rate-limited", "quota", "no-channel", "reset", "error-event", "empty"]
    args = [arg for m in models for arg in ("-m", m)]
    result = bench(*args, "-m", "fixed30", "-n", "3", "-c", "1", "--stream", "--json")
    assert result.returncode == 4  # every request of the first series failed: the auth exit code
    series = {s["model"]: s for s in json.loads(result.stdout)["series"]}
    expected = {"unauthorized": "auth.invalid_key", "rate-limited": "rate.limited", "quota": "quota.exhausted",
                "no-channel": "model.no_channel", "reset": "stream.truncated", "error-event": "stream.error_event",
                "empty": "stream.empty"}
    for model, code in expected.items():
        s = series[model]
        assert (s["ok"], s["failed"]) == (0, 3), model
        assert [(e["code"], e["count"]) for e in s["errors"]] == [(code, 3)], (model, s["errors"])
        assert s["top_error_fix"], model
    assert series["fixed30"]["ok"] == 3  # the healthy model next to the failing ones, from the same mock
    assert series["rate-limited"]["errors"][0]["retry_after_s"] == 0.2
    assert series["quota"]["errors"][0]["retry_after_s"] is None  # never "wait and retry" a quota
    assert series["unauthorized"]["status_codes"] == {"401": 3}
    assert series["quota"]["status_codes"] == {"403": 3}  # new-api: insufficient user quota
    assert series["no-channel"]["status_codes"] == {"503": 3}
    assert "No available channel for model no-channel" in series["no-channel"]["errors"][0]["server_message"]


def test_quota_429_with_retry_after_is_not_a_rate_limit(bench, mock_gateway):
    # An upstream OpenAI quota error relayed as is: 429 like a rate limit, but waiting will not help.
    mock = mock_gateway(process=True, fail="quota", fail_style="openai", retry_after=0.2)
    s = run_json(bench, "-m", "gpt-4o-mini", "-n", "3", "-c", "1", base_url=mock.url)["series"][0]
    assert s["status_codes"] == {"429": 3}
    assert [(e["code"], e["count"]) for e in s["errors"]] == [("quota.exhausted", 3)]
    assert s["errors"][0]["retry_after_s"] is None


def test_error_text_names_the_code_and_the_fix(bench):
    result = bench("-m", "rate-limited", "-n", "2", "-c", "1")
    assert result.returncode == 6
    assert "rate.limited" in result.stdout and "Retry-After 0.2 s" in result.stdout
    assert "fix (rate.limited):" in result.stdout
    assert "status codes: HTTP 429 x2" in result.stdout


def test_reset_mid_answer_and_timeout_and_refused(bench, cli):
    # the mock sends the head and half the body, then a TCP RST: the status arrived, the answer did not
    s = run_json(bench, "-m", "reset", "-n", "2", "-c", "1")["series"][0]
    assert s["errors"][0]["code"] == "net.reset" and s["status_codes"] == {"200": 2} and s["failed"] == 2
    # the reference beside it: the same two requests to a model that answers after 30 ms
    reference = run_json(bench, "-m", "fixed30", "-n", "2", "-c", "2")["series"][0]["elapsed_s"]
    s = run_json(bench, "-m", "hang", "-n", "2", "-c", "2", "--timeout", "0.3")["series"][0]
    assert s["errors"][0]["code"] == "net.timeout" and s["failed"] == 2 and s["status_codes"] == {"none": 2}
    assert 0.3 <= s["elapsed_s"] <= 0.3 + 4 * reference, (s["elapsed_s"], reference)
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = cli("bench", "--base-url", f"http://127.0.0.1:{port}", "-m", "x", "-n", "2", "--json",
                 env={"TAOTOKEN_API_KEY": SENTINEL_KEY})
    result.assert_clean()
    assert result.returncode == 7
    assert json.loads(result.stdout)["series"][0]["errors"][0]["code"] == "net.refused"


def test_partial_failures_still_exit_zero_and_mix_is_reported(bench):
    data = run_json(bench, "-m", "fixed30", "-m", "rate-limited", "-n", "4", "-c", "2")
    # one model fully failed: exit code is its error's (rate), figures of both are there
    fixed, rate = data["series"]
    assert fixed["success_rate"] == 1.0 and rate["success_rate"] == 0.0


# -- open loop -------------------------------------------------------------------------------
def test_rate_with_a_slow_server_reports_late_starts(bench):
    # capacity: 2 in flight / 200 ms = 10 req/s, asked for 40 req/s
    data = run_json(bench, "-m", "slow", "--rate", "40", "-n", "16", "-c", "2", "--workers", "1")
    s = data["series"][0]
    assert data["load"]["mode"] == "open" and data["load"]["rate"] == 40
    assert s["ok"] == 16
    assert s["late_starts"] >= 10
    assert s["lateness_max_ms"] >= 700  # the last starts wait for ~0.8 s of backlog
    # latency counts from the scheduled start: queueing is visible (no coordinated omission)
    assert s["latency_ms"]["max"] >= 800
    assert s["latency_ms"]["min"] >= 199


def test_rate_within_capacity_is_on_time(bench):
    # The reference, measured beside it on the same machine now: the same requests in a closed loop (no schedule).
    # And how late a process wakes from a sleep now (tests/timing.py).
    with Oversleep(seconds=0.05, runs=20) as late:
        reference = run_json(bench, "-m", "fixed30", "-n", "10", "-c", "4")["series"][0]["latency_ms"]
        data = run_json(bench, "-m", "fixed30", "--rate", "20", "-n", "10", "-c", "4")
    s = data["series"][0]
    assert s["ok"] == 10 and reference["min"] >= 29.5 and s["latency_ms"]["min"] >= 29.5
    # 20 req/s x 30 ms is well within 4 connections: a start may be late by a timer woken late (more so on a
    # loaded machine), never by waiting for a reply; queueing would make it at least one reply late and growing
    assert (s["lateness_max_ms"] or 0.0) < reference["p50"] + late.worst_ms, (s["lateness_max_ms"], reference,
                                                                            late.worst_ms)
    # 10 starts at 50 ms intervals, plus the last reply: never shorter, longer only by what bench says was late
    # (elapsed_s is rounded to 0.1 ms)
    assert 0.45 + 0.0295 <= s["elapsed_s"] <= \
        0.45 + ((s["lateness_max_ms"] or 0.0) + s["latency_ms"]["max"]) / 1000 + 0.00005
    assert s["latency_ms"]["p50"] <= 1.5 * reference["p50"]  # the schedule adds no queueing to the replies


# -- output shape and input errors -------------------------------------------------------------
SERIES_KEYS = {"model", "requests", "ok", "failed", "success_rate", "elapsed_s", "requests_per_s", "latency_ms",
               "latency_histogram_ms", "ttft_ms", "itl_ms", "tpot_ms", "tokens_per_s_per_request", "output_tokens",
               "output_tokens_per_s", "tokens_source", "status_codes", "errors", "top_error_fix", "late_starts",
               "lateness_mean_ms", "lateness_max_ms", "connections",
               # added with sweeps, SLOs, workloads, repeats and proxies (keys only gain fields)
               "concurrency", "rate", "input_tokens", "good", "goodput_per_s", "slo", "meets_slo", "aborted",
               "connect_ms", "proxy_connect_ms", "windows", "repeats",
               # the steady window (drain excluded), Retry-After honoured, the rate-limit finding
               "steady", "deferred", "rate_limited"}
DIST_KEYS = {"count", "min", "mean", "p50", "p90", "p95", "p99", "max"}


def test_json_shape_is_stable(bench):
    data = run_json(bench, "-m", "fixed30", "-m", "rate-limited", "-n", "2", "-c", "1")
    assert set(data) == {"schema", "exit_code", "url", "load", "series", "slo", "sweep", "interrupted", "in_flight"}
    assert data["url"].endswith("/v1/chat/completions")
    assert set(data["load"]) == {"mode", "requests", "duration_s", "concurrency", "rate", "warmup", "workers",
                                 "event_loop", "stream", "max_tokens", "timeout_s",
                                 "repeat", "proxy", "proxy_source", "max_errors", "max_error_rate", "seed",
                                 "arrival", "ramp_up_s", "input_tokens", "output_tokens", "dataset", "dataset_size",
                                 "trace", "trace_size"}
    assert data["slo"] is None and data["sweep"] is None
    for s in data["series"]:
        assert set(s) == SERIES_KEYS
        assert set(s["latency_ms"]) == DIST_KEYS
        assert s["ttft_ms"] is None  # not a stream run
    err = data["series"][1]["errors"][0]
    assert set(err) == {"code", "count", "share", "title", "status", "server_message", "retry_after_s", "fixes",
                        "fix_steps"}
    assert sum(b["count"] for b in data["series"][0]["latency_histogram_ms"]) == 2


def test_text_report_side_by_side(bench):
    result = bench("-m", "stream", "-m", "fixed30", "-n", "3", "-c", "1", "--stream", "--max-tokens", "8")
    out = result.stdout
    assert "model stream" in out and "TTFT" in out and "latency histogram (ms):" in out
    assert "side by side:" in out and "TTFT p50 (ms)" in out
    assert "\r" not in result.stderr  # no progress bar when stderr is not a terminal


@pytest.mark.parametrize(("args", "message"), [
    (("-n", "0"), "-n/--requests must be at least 1"),
    (("-n", "5", "-z", "1s"), "both given"),
    (("-z", "soon"), "not a positive duration"),
    (("--rate", "0"), "--rate must be a positive"),
    (("-c", "0"), "-c/--concurrency"),
    (("--prompt-file", "/nonexistent/prompt.txt"), "cannot read --prompt-file"),
])
def test_bad_options_are_usage_errors(run, server, monkeypatch, args, message):
    # in-process: these stop before any request (tests/app/test_parse.py: the parse-only seam)
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    result = run("bench", "--base-url", server, "-m", "fixed30", *args).assert_clean()
    assert result.returncode == 2, result.output
    assert message in result.stderr and "fix:" in result.stderr


def test_missing_key_is_explained(cli, server):
    result = cli("bench", "--base-url", server, "-m", "x")
    result.assert_clean()
    assert result.returncode == 3 and "no API key" in result.stderr


def test_prompt_file_and_configured_model(cli, server, home: Path):
    prompt = home / "prompt.txt"
    prompt.write_text("Write a haiku about load tests.", encoding="utf-8")
    result = cli("bench", "--base-url", server, "-n", "2", "--prompt-file", str(prompt), "--json",
                 env={"TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_MODEL": "fixed30"})
    result.assert_clean()
    assert result.returncode == 0, result.output
    assert json.loads(result.stdout)["series"][0]["model"] == "fixed30"


def test_a_bug_in_reading_answers_ends_the_run_with_it(server, monkeypatch):
    """An exception in bench's own reading of an answer (not a failure of the gateway's) ends the series with that
    exception, at the first answer. Swallowed by the event loop's handler, it left each request in flight until its
    timeout: bench under Windows waited out 300 s for 20 requests when a bytearray reached a dict lookup."""
    from taotoken_cli.cmd.bench import engine
    from taotoken_cli.cmd.bench.exchange import Exchange
    from taotoken_cli.cmd.bench.plan import SeriesPlan

    def broken(self, status, head, t):
        raise LookupError("a bug in reading the head")

    monkeypatch.setattr(Exchange, "on_head", broken)
    plan = SeriesPlan(root=server, api_key=SENTINEL_KEY, model="fixed30", requests=20, concurrency=2, workers=1,
                      timeout=3600.0)  # a request left in flight would hold the test for an hour: it fails at once
    with pytest.raises(LookupError, match="a bug in reading the head"):
        engine.run_series(plan)
