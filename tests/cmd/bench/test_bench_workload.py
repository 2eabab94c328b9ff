"""Workloads, sweeps and SLOs as pure functions: arrival schedules (seeded, reproducible, the right
rate and burstiness, ramps), length distributions, dataset and trace files, the request body
template, the shared request tally, time windows, and the strict parsers of --sweep and --slo."""

from __future__ import annotations

import json
import statistics
from collections import Counter

import pytest

from taotoken_cli.cmd.bench.plan import BodyTemplate, SeriesPlan, Tally
from taotoken_cli.cmd.bench.stats import SeriesStats, TimeWindows
from taotoken_cli.cmd.bench.sweep import (
    MAX_PROBES,
    Step,
    knee,
    knee_and_bound,
    next_probe,
    parse_slo,
    parse_sweep,
    request_limits,
    saturated,
)
from taotoken_cli.cmd.bench.workload import (
    Arrival,
    Workload,
    parse_arrival,
    parse_lengths,
    read_dataset,
    read_trace,
    schedule,
)
from taotoken_cli.core.base.errors import InputError


def gaps(times) -> list[float]:
    return [b - a for a, b in zip(times, times[1:], strict=False)]


def test_constant_poisson_and_gamma_arrivals():
    assert list(schedule(10, Arrival(), seed=1, requests=4, duration=None)) == pytest.approx([0, 0.1, 0.2, 0.3])
    poisson = schedule(20, Arrival("poisson"), seed=7, requests=4001, duration=None)
    assert poisson == schedule(20, Arrival("poisson"), seed=7, requests=4001, duration=None)  # reproducible
    assert poisson != schedule(20, Arrival("poisson"), seed=8, requests=4001, duration=None)
    g = gaps(poisson)
    assert statistics.fmean(g) == pytest.approx(0.05, rel=0.06)
    assert statistics.stdev(g) / statistics.fmean(g) == pytest.approx(1.0, rel=0.1)  # exponential: CV 1
    bursty = gaps(schedule(20, Arrival("gamma", 0.25), seed=7, requests=4001, duration=None))
    smooth = gaps(schedule(20, Arrival("gamma", 4.0), seed=7, requests=4001, duration=None))
    assert statistics.fmean(bursty) == pytest.approx(0.05, rel=0.1)  # the rate holds whatever the shape
    assert statistics.stdev(bursty) / statistics.fmean(bursty) == pytest.approx(2.0, rel=0.15)  # CV = 1/sqrt(B)
    assert statistics.stdev(smooth) / statistics.fmean(smooth) == pytest.approx(0.5, rel=0.15)
    # -z cuts the schedule: 10/s for 2 s
    assert len(schedule(10, Arrival(), seed=1, requests=None, duration=2.0)) == 20


def test_ramp_up_climbs_linearly_then_holds_the_rate():
    times = schedule(20, Arrival(), seed=1, requests=None, duration=20.0, ramp_up=10.0)
    in_first_half = sum(1 for t in times if t < 5)
    in_second_half = sum(1 for t in times if 5 <= t < 10)
    assert in_first_half == pytest.approx(25, abs=1) and in_second_half == pytest.approx(75, abs=1)
    assert sum(1 for t in times if 10 <= t < 20) == pytest.approx(200, abs=1)  # full rate after the ramp


@pytest.mark.parametrize(("text", "kind", "low", "high"), [
    ("128", "fixed", 128, 128), ("64..256", "uniform", 64, 256), ("normal:128,32", "normal", 1, 10_000)])
def test_length_distributions(text, kind, low, high):
    lengths = parse_lengths("--output-tokens", text)
    drawn = [lengths.draw(3, 2, g) for g in range(3000)]
    assert lengths.kind == kind and low <= min(drawn) and max(drawn) <= high
    assert statistics.fmean(drawn) == pytest.approx(lengths.mean, rel=0.05)
    assert drawn == [lengths.draw(3, 2, g) for g in range(3000)]  # a function of (seed, g) alone


@pytest.mark.parametrize(("text", "message"), [
    ("0", "at least 1"), ("ten", "not a token count"), ("9..3", "range must go"), ("normal:0,3", "mean must be"),
    ("normal:5", "not a token count")])
def test_bad_lengths(text, message):
    with pytest.raises(InputError, match=message):
        parse_lengths("--input-tokens", text)


def test_arrival_parsing():
    assert parse_arrival("Poisson") == Arrival("poisson") and parse_arrival("gamma:0.5") == Arrival("gamma", 0.5)
    for bad in ("gamma", "gamma:-1", "uniform"):
        with pytest.raises(InputError):
            parse_arrival(bad)


def test_synthetic_prompts_have_about_the_length_asked_and_no_shared_prefix():
    workload = Workload(input_tokens=parse_lengths("--input-tokens", "200"), seed=5)
    a, b = workload.request(0)[0], workload.request(1)[0]
    assert len(a.split()) == 199 and a != b and a[:40] != b[:40]
    assert workload.request(0) == Workload(input_tokens=workload.input_tokens, seed=5).request(0)


def test_dataset_files(tmp_path):
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text('{"prompt": "one", "max_tokens": 7}\n\n{"text": "two"}\n'
                     '{"conversations": [{"from": "human", "value": "three"}, {"from": "gpt", "value": "x"}]}\n')
    assert read_dataset(str(jsonl)) == [("one", 7), ("two", None), ("three", None)]
    text = tmp_path / "d.txt"
    text.write_text("first prompt\nsecond prompt\n")
    assert read_dataset(str(text)) == [("first prompt", None), ("second prompt", None)]
    workload = Workload(dataset=read_dataset(str(jsonl)), max_tokens=16)
    assert [workload.request(g) for g in range(4)] == [("one", 7), ("two", 16), ("three", 16), ("one", 7)]
    bad = tmp_path / "bad.jsonl"
    for content, message in (('{"prompt": "a"}\n{"nope": 1}\n', r"bad.jsonl:2 has no prompt"),
                             ('{"prompt": "a", "max_tokens": 0}\n', "max_tokens must be a positive"),
                             ("{broken\n", "bad.jsonl:1 is not a JSON object"), ("\n", "has no prompts")):
        bad.write_text(content)
        with pytest.raises(InputError, match=message):
            read_dataset(str(bad))
    with pytest.raises(InputError, match="cannot read --dataset"):
        read_dataset(str(tmp_path / "missing.jsonl"))


def test_trace_files(tmp_path):
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"timestamp": 1500, "input_length": 10, "output_length": 3}\n'
                     '{"timestamp": 1000, "prompt": "hi", "output_length": 5}\n')
    entries = read_trace(str(trace))
    assert [(e.at, e.input_tokens, e.output_tokens, e.prompt) for e in entries] == [(0.0, None, 5, "hi"),
                                                                                    (0.5, 10, 3, None)]
    workload = Workload(trace=entries)
    assert workload.request(0) == ("hi", 5) and workload.request(1)[1] == 3
    for content, message in (('{"timestamp": -1, "input_length": 3}', "timestamp must be"),
                             ('{"timestamp": 0}', "neither input_length nor prompt"),
                             ('{"timestamp": 0, "input_length": 2.5}', "input_length must be")):
        trace.write_text(content + "\n")
        with pytest.raises(InputError, match=message):
            read_trace(str(trace))


def test_body_template_splices_the_shared_request_shape():
    plan = SeriesPlan(root="http://x/api", api_key=None, model="m", stream=True)
    template = BodyTemplate(plan)
    for prompt, tokens in (("plain", 5), ('quotes " and \\ and 中文 \n', 123)):
        assert json.loads(template.body(prompt, tokens)) == json.loads(plan.request_body(prompt, tokens))


def test_tally_hands_out_requests_once_and_stops_on_errors():
    plan = SeriesPlan(root="http://x", api_key=None, model="m", requests=5, max_errors=None, max_error_rate=None)
    tally = Tally(plan)
    assert [tally.claim() for _ in range(7)] == [0, 1, 2, 3, 4, None, None]
    plan = SeriesPlan(root="http://x", api_key=None, model="m", requests=100, max_errors=3)
    tally = Tally(plan)
    for failed in (True, False, True, True):
        tally.finish(failed)
    assert tally.counts() == (4, 3, "max-errors") and tally.claim() is None
    plan = SeriesPlan(root="http://x", api_key=None, model="m", requests=100)  # default: stop when all of 20 failed
    tally = Tally(plan)
    for g in range(19):
        tally.claim()
        tally.finish(True, index=g)
    assert not tally.aborted
    tally.claim()
    tally.finish(True, index=19)
    assert tally.counts()[2] == "all-failed"
    # judged on the requests started, not on the first to finish: 25 fast failures while the first ones
    # started are still under way do not stop the run
    tally = Tally(plan)
    for _ in range(30):
        tally.claim()
    for g in range(5, 30):
        tally.finish(True, index=g)
    assert not tally.aborted
    # a rate limit with a retry hint is load shed: --max-error-rate leaves it out
    tally = Tally(SeriesPlan(root="http://x", api_key=None, model="m", requests=100, max_error_rate=0.5))
    for g in range(25):
        tally.claim()
        tally.finish(True, hinted=True, index=g)
    assert not tally.aborted and tally.counts() == (25, 25, None)
    for _ in range(13):
        tally.finish(True)
    assert tally.counts()[2] == "error-rate"
    # … while --max-errors N counts every failure
    tally = Tally(SeriesPlan(root="http://x", api_key=None, model="m", requests=100, max_errors=3))
    for _ in range(3):
        tally.claim()
        tally.finish(True, hinted=True)
    assert tally.counts()[2] == "max-errors"


def test_time_windows_coarsen_and_merge_exactly():
    windows = TimeWindows(0.25)
    for i in range(400):
        windows.add(i * 0.25 + 0.1, True, 0.05, None, 2)
    assert windows.width == 0.5 and len(windows.rows) == 200
    assert sum(r[0] for r in windows.rows.values()) == 400
    other = TimeWindows(0.25)
    other.add(0.3, False, 0.1, None, None)
    windows.merge(other)
    assert windows.rows[0][2] == 1
    a, b = SeriesStats(), SeriesStats()
    a.started_at, a.ended_at, a.ok = 0.0, 2.0, 1
    b.started_at, b.ended_at, b.ok = 10.0, 13.0, 1
    repeated = SeriesStats()
    repeated.add_repeat(a)
    repeated.add_repeat(b)
    assert repeated.elapsed == pytest.approx(5.0) and repeated.ok == 2


def test_a_start_is_counted_in_the_window_it_started_in():
    """TimeWindows.add(..., started=s) counts the start in s's own window (one lookup when both fall in one), the
    same window the division gives, in the same window as the end, another one, and across the coarsening past
    MAX_WINDOWS; the rest of the row is what add() without a start keeps."""
    together, ends_only = TimeWindows(0.25), TimeWindows(0.25)
    starts = []
    for i in range(700):
        end, start = i * 0.17 + 0.01, max(0.0, i * 0.17 - (0.3 if i % 3 else 0.001))
        together.add(end, i % 5 != 0, 0.05 + i / 1e4, None, i % 7, i % 2 == 0, started=start)
        ends_only.add(end, i % 5 != 0, 0.05 + i / 1e4, None, i % 7, i % 2 == 0)
        starts.append(start)
    assert together.width == ends_only.width == 0.5  # coarsened once
    expected = Counter(int(start / together.width) for start in starts)
    assert {i: row[6] for i, row in together.rows.items() if row[6]} == dict(expected)
    # every window with an end in it holds the same figures either way, its count of starts aside
    ended = {i: r[:6] + r[7:] for i, r in together.to_state()["rows"].items() if r[0]}
    assert ended == {i: r[:6] + r[7:] for i, r in ends_only.to_state()["rows"].items()}


def test_sweep_specs():
    assert parse_sweep("c=1..64").values == (1, 2, 4, 8, 16, 32, 64)
    assert parse_sweep("concurrency=8,2,4,2").values == (2, 4, 8)
    assert parse_sweep("rate=2..10+4").values == (2, 6, 10)
    assert parse_sweep("c=1..10*1.5").values == (1, 2, 3, 5, 8)  # users are whole: rounded, once each
    for bad, message in (("x=1,2", "start with c="), ("c=1,2.5", "whole numbers"), ("rate=0,1", "above zero"),
                         ("c=4..2", "not a list or a range"), ("rate=1..9*1", "not a list or a range"),
                         ("c=1..1000+1", "at most 64")):
        with pytest.raises(InputError, match=message):
            parse_sweep(bad)


def test_slo_targets():
    slo = parse_slo("ttft:p95<2s")
    assert (slo.metric, slo.stat, slo.limit, slo.text) == ("ttft", "p95", 2.0, "ttft:p95<2s")
    assert parse_slo("E2E:P99.9 <= 800ms").text == "latency:p99.9<=800ms"
    assert parse_slo("error-rate<1%").limit == pytest.approx(0.01)
    assert request_limits([parse_slo("ttft:p95<2s"), parse_slo("ttft:p50<1s"), parse_slo("error-rate<1%")]) == \
        {"ttft": 1.0}
    for bad, message in (("ttft<2s", "say which statistic"), ("ttft:p95<2", "with its unit"),
                         ("speed:p95<2s", "unknown metric"), ("ttft:p101<2s", "is not a statistic"),
                         ("error-rate<1", "in percent"), ("error-rate<150%", "cannot exceed"),
                         ("ttft:p95>2s", "not a target")):
        with pytest.raises(InputError, match=message):
            parse_slo(bad)


def test_saturation_and_knee():
    climbing = [Step(1, 10, True), Step(2, 20, True), Step(4, 38, True)]
    assert saturated(climbing, True) is None and knee(climbing) == 4
    past = [*climbing, Step(8, 30, False)]
    assert "no more goodput" in saturated(past, True) and knee(past) == 4
    assert knee_and_bound(past)[1].load == 8  # still climbing at 4: bounded by the step that missed
    assert "two steps in a row" in saturated([Step(1, 10, False), Step(2, 25, False)], True)
    flat = [Step(1, 100, None), Step(2, 180, None), Step(4, 185, None), Step(8, 186, None)]
    assert "less than 5 %" in saturated(flat, False) and knee(flat) == 2
    assert knee_and_bound(flat)[1].load == 1  # saturated at 2: bounded by the load below it
    assert "below 90 %" in saturated([Step(1, 100, None), Step(2, 80, None)], False)
    assert saturated([Step(1, 0, None, aborted=True)], False)
    # open loop: a rate the server cannot keep up with is not met, whatever the SLOs say
    rates = [Step(4, 4.0, True, offered=4.0), Step(8, 8.0, True, offered=8.0), Step(16, 12.0, True, offered=16.0)]
    assert knee(rates, "rate") == 8 and knee_and_bound(rates, "rate")[1].load == 16


def capacity_server(c: float, slots: int = 12, service_s: float = 0.72) -> float:
    """Throughput of the issue's server (12 FIFO slots, 0.72 s a request) under c closed-loop users."""
    return min(c, slots) / service_s


def bisect(parameter: str, values: list[float], measure, resolution: float = 0.05) -> tuple[list[Step], int]:
    steps: list[Step] = []
    for value in values:
        steps.append(measure(value))
        if saturated(steps, True):
            break
    probes = 0
    while (value := next_probe(steps, parameter, resolution)) is not None:
        steps.append(measure(value))
        probes += 1
        assert probes < MAX_PROBES
    return steps, probes


def test_bisection_finds_the_true_knee_between_coarse_steps():
    # doubling misses the knee (c=8: 11.1 req/s, c=16: 16.67); bisection finds c=12 in a few probes
    steps, probes = bisect("concurrency", [1, 2, 4, 8, 16, 32, 64],
                           lambda c: Step(c, capacity_server(c), True))
    assert knee(steps) == 12 and probes <= 4
    assert sorted(s.load for s in steps if s.load not in (1, 2, 4, 8, 16, 32, 64)) == [10, 11, 12]
    # the 429 twin: past c=7 the error-rate target is missed; the knee is the last load meeting it
    steps, probes = bisect("concurrency", [1, 2, 4, 8, 16, 32],
                           lambda c: Step(c, min(c / 0.72, 10.0), c / 0.72 <= 10.0))
    assert knee(steps) == 7 and knee_and_bound(steps)[1].load == 8 and probes <= 3
    # a rate sweep: bisected until the gap is within the resolution (5 %)
    steps, probes = bisect("rate", [2, 4, 8, 16, 32],
                           lambda r: Step(r, min(r, 16.67), True, offered=r))
    point, bound = knee_and_bound(steps, "rate")  # "on time" is achieved >= 95 % of offered
    assert 16.67 / 1.05 <= point <= 16.67 / 0.95 and bound.load <= point * 1.05 + 1e-9 and probes <= 5
    # --resolution off: no bisection
    assert bisect("rate", [2, 4, 8, 16, 32], lambda r: Step(r, min(r, 16.67), True, offered=r), 0)[1] == 0
