"""A bench run as a whole: `BenchRun` (the shared load and the models compared) and `run_bench`, which runs every
model, at every step of a sweep (bisecting for the knee), `repeat` times, one series each (engine.run_series), and
returns the BenchReport; Ctrl-C and SIGTERM stop it through `stop_on_signals`."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field, fields

from taotoken_cli.cmd.bench.engine import SeriesResult, run_series
from taotoken_cli.cmd.bench.plan import Load, SeriesPlan
from taotoken_cli.cmd.bench.report import BenchReport, SeriesReport, series_report
from taotoken_cli.cmd.bench.stats import SeriesStats
from taotoken_cli.cmd.bench.sweep import (
    DEFAULT_RESOLUTION,
    MAX_PROBES,
    SLO,
    Step,
    Sweep,
    knee_and_bound,
    next_probe,
    saturated,
)
from taotoken_cli.core.base.i18n import N_


@dataclass(kw_only=True)
class BenchRun(Load):
    """The whole run: the shared load plus the models compared (one series each, per sweep step)."""

    models: list[str]
    workers: int | None = None  # default: one per core
    sweep: Sweep | None = None
    slos: list[SLO] = field(default_factory=list)
    repeat: int = 1
    resolution: float = DEFAULT_RESOLUTION  # a rate sweep's knee, bisected until the gap is within it
    raw_path: str | None = None
    csv_path: str | None = None
    proxy_source: str | None = None


def default_workers() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 16))


def plan_for(options: BenchRun, model: str, step: float | None = None, label: str = "") -> SeriesPlan:
    shared = {f.name: getattr(options, f.name) for f in fields(Load)}
    if options.duration is not None:
        shared["requests"] = None  # -z wins over -n
    if step is not None and options.sweep is not None:
        if options.sweep.parameter == "concurrency":
            shared["concurrency"] = int(step)
        else:
            shared["rate"] = step
    return SeriesPlan(**shared, model=model, workers=options.workers or default_workers(),
                connect_timeout=min(10.0, options.timeout), label=label)


class Progress:
    """What run_bench tells a live view (view.LiveView implements it)."""

    def series_started(self, plan: SeriesPlan, step: str | None, repeat: int | None):
        """Returns on_progress(done, failed, total, elapsed) for this series, or None."""
        return None

    def series_finished(self, plan: SeriesPlan, result: SeriesResult) -> None:
        pass


def run_bench(options: BenchRun, view: Progress | None = None) -> BenchReport:
    """Every model, one after the other, under the same load (at each step of a sweep)."""
    from taotoken_cli.cmd.bench.artifacts import RecordSink

    sink = RecordSink(options.raw_path, options.csv_path) if (options.raw_path or options.csv_path) else None
    if sink is not None:
        options.records_dir = tempfile.mkdtemp(prefix="taotoken-bench-")
    steps: list[float | None] = list(options.sweep.values) if options.sweep else [None]
    series: list[SeriesReport] = []
    workers = 0  # the most any series ran on
    sweep_models = []
    try:
        for model in options.models:
            if interrupted():
                break
            if options.sweep is None:
                report, used = _run_cell(options, model, None, len(series), view, sink)
                workers = max(workers, used)
                series.append(report)
                continue
            done: list[Step] = []
            rows = []

            def measure(value: float, probe: bool, model: str = model, done: list[Step] = done,
                        rows: list = rows) -> None:
                nonlocal workers
                report, used = _run_cell(options, model, value, len(series), view, sink)
                workers = max(workers, used)
                series.append(report)
                step = _step(options.sweep, report, value)
                # a step cut short by Ctrl-C is shown, but it neither bounds the knee nor stops the sweep early
                cut = report.aborted is not None and report.aborted["reason"] == "interrupted"
                if not cut:
                    done.append(step)
                rows.append({**_step_row(report, value, len(series) - 1, step.goodput), "probe": probe,
                             "interrupted": cut})

            stop = None
            for value in steps:
                measure(float(value), False)
                if interrupted():
                    break
                stop = saturated(done, True)
                if stop is not None:
                    break
            probes = 0
            while probes < MAX_PROBES and not interrupted():
                value = next_probe(done, options.sweep.parameter, options.resolution)
                if value is None:
                    break
                measure(value, True)
                probes += 1
            point, bound = knee_and_bound(done, options.sweep.parameter)
            cut_short = interrupted()
            if cut_short and bound is None:
                point = None  # no measured step on the other side confirms it: the sweep ended too soon to tell
            at = next((s for s in done if s.load == point), None)
            rows.sort(key=lambda row: row["load"])
            sweep_models.append({"model": model, "steps": rows, "knee": point,
                                 "knee_goodput_per_s": round(at.goodput, 2) if at and at.goodput is not None else None,
                                 "bounded_by": _bound(bound, options.sweep.parameter) if point is not None else None,
                                 "probes": probes,
                                 "stopped_early": stop is not None and len(done) - probes < len(steps),
                                 "stop_reason": stop if len(done) - probes < len(steps) else None,
                                 "interrupted": cut_short})
    finally:
        if sink is not None:
            sink.close()
            shutil.rmtree(options.records_dir, ignore_errors=True)
    first = plan_for(options, options.models[0], steps[0])
    sweep = None
    if options.sweep is not None:
        sweep = {"parameter": options.sweep.parameter, "values": list(options.sweep.values),
                 # in English (data, as --json shows it); the text report translates it
                 "knee_rule": (N_("the lowest concurrency reaching the best goodput (within 5 %) while meeting "
                                  "every SLO") if options.sweep.parameter == "concurrency" else
                               N_("the highest rate meeting every SLO and served on time (achieved at least 95 % "
                                  "of offered)")),
                 "resolution": options.resolution,
                 "models": sweep_models}
    return BenchReport(
        url=first.url, mode="open" if first.open_loop else "closed", requests=first.requests,
        duration_s=first.duration, concurrency=first.concurrency, rate=first.rate, warmup=first.warmup,
        workers=workers or first.workers,  # interrupted before any series ran: the workers planned
        stream=first.stream, max_tokens=first.max_tokens,
        timeout_s=first.timeout, series=series, proxy=options.proxy_label, proxy_source=options.proxy_source,
        workload=options.workload.describe(), repeat=options.repeat, slo=list(options.slos), sweep=sweep,
        max_errors=options.max_errors, max_error_rate=options.max_error_rate,
        interrupted=signal_name(STOP.signal),
        abandoned=STOP.abandoned, event_loop=next((s.event_loop for s in series if s.event_loop), None))


def _run_cell(options: BenchRun, model: str, value: float | None, index: int, view: Progress | None,
              sink) -> tuple[SeriesReport, int]:
    """One model at one load, `repeat` times; the repeats' figures are merged, their spread kept.
    Also: the worker processes it ran on."""
    runs: list[SeriesStats] = []
    workers = 0
    aborted = None
    plan = None
    for repeat in range(options.repeat):
        if repeat and interrupted():
            break
        plan = plan_for(options, model, value, label=f"s{index}r{repeat}-")
        step = options.sweep.label(value) if options.sweep is not None and value is not None else None
        on_progress = view.series_started(plan, step, repeat if options.repeat > 1 else None) if view else None
        result = run_series(plan, on_progress)
        if view is not None:
            view.series_finished(plan, result)
        if sink is not None:
            sink.add(plan, options.records_dir, repeat)
        runs.append(result.stats)
        workers = max(workers, result.workers)
        aborted = aborted or result.aborted
        if result.aborted:
            break  # a model that fails every request fails every repeat the same way (or: interrupted)
    assert plan is not None
    merged = runs[0]
    if len(runs) > 1:
        merged = SeriesStats(runs[0].windows.width)
        for stats in runs:
            merged.add_repeat(stats)
    return series_report(plan, merged, aborted=aborted, slos=options.slos, repeats=runs), workers


def interrupted() -> bool:
    """True once SIGINT/SIGTERM asked the run to stop (set by run.py's handlers)."""
    return STOP.is_set()


class _Stop:
    def __init__(self) -> None:
        self.signal: int | None = None
        self.abandoned = False  # a second signal: the requests in flight were not waited for

    def is_set(self) -> bool:
        return self.signal is not None


STOP = _Stop()
_SIGNALS = {2: "SIGINT", 15: "SIGTERM"}


def signal_name(signum: int | None) -> str | None:
    return _SIGNALS.get(signum) if signum is not None else None


def stop_on_signals():
    """SIGINT and SIGTERM stop the load (no new request; those in flight finish and are counted); a second one
    abandons the requests in flight (what finished is still reported and written); a third ends the process at
    once. Returns a function that puts the previous handlers back."""
    import signal

    from taotoken_cli.cmd.bench.plan import HALT, halt

    def handler(signum, _frame) -> None:
        if STOP.abandoned:  # the third time: the workers did not come back; end without a report
            raise KeyboardInterrupt
        if STOP.signal is not None:
            STOP.abandoned = True
            halt(2)
            return
        STOP.signal = signum
        halt(1)

    STOP.signal, STOP.abandoned = None, False
    HALT[0] = 0
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)
        HALT[0] = 0

    return restore


def _step(sweep: Sweep, report: SeriesReport, value: float) -> Step:
    steady = report.steady or {}
    good = steady.get("goodput_per_s")
    if good is None:
        good = report.goodput_per_s  # without SLOs every success is good
    offered = steady.get("offered_per_s") if sweep.parameter == "rate" else None
    return Step(value, good, report.meets_slo, report.aborted is not None, offered)


def _bound(step: Step | None, parameter: str) -> dict | None:
    if step is None:
        return None
    why = ("aborted" if step.aborted else "missed" if step.meets is False else
           "late" if not step.met else "unsaturated")
    return {"load": step.load, "goodput_per_s": round(step.goodput, 2) if step.goodput is not None else None,
            "why": why}


def _step_row(report: SeriesReport, value: float, index: int, good: float | None) -> dict:
    def p95(dist) -> float | None:
        return dist.p95 if dist is not None else None

    steady = report.steady or {}
    return {"load": value, "series": index, "requests_per_s": steady.get("achieved_per_s", report.requests_per_s),
            "offered_per_s": steady.get("offered_per_s"),
            "goodput_per_s": round(good, 2) if good is not None else None, "meets_slo": report.meets_slo,
            "error_rate": round(report.failed / report.requests, 4) if report.requests else None,
            "latency_p95_ms": p95(report.latency), "ttft_p95_ms": p95(report.ttft), "itl_p95_ms": p95(report.itl),
            "late_starts": report.late_starts, "aborted": report.aborted is not None}


__all__ = ["BenchRun", "BenchReport", "SeriesPlan", "Progress", "run_bench", "default_workers"]
