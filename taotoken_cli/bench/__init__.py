"""`taotoken bench`: LLM-aware load testing of the gateway (see engine, report, render).

`run.run(options, io)` is the command (validate, resolve the settings, run, render); below it,
`BenchRun` + `run_bench(bench_run, on_progress=None) -> BenchReport` is the work, `view.render_text(report)`
the text and `BenchReport.to_dict()` the --json contract.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

from taotoken_cli.bench.engine import Load, Plan, run_series
from taotoken_cli.bench.report import BenchReport, bench_report


@dataclass(kw_only=True)
class BenchRun(Load):
    """The whole run: the shared load plus the models compared (one series each)."""

    models: list[str]
    workers: int | None = None  # default: one per core


def default_workers() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 16))


def plans_for(options: BenchRun) -> list[Plan]:
    shared = {f.name: getattr(options, f.name) for f in fields(Load)}
    if options.duration is not None:
        shared["requests"] = None  # -z wins over -n
    return [Plan(**shared, model=model, workers=options.workers or default_workers(),
                 connect_timeout=min(10.0, options.timeout)) for model in options.models]


def run_bench(options: BenchRun, on_progress=None) -> BenchReport:
    """Run every model as its own series, one after the other, under the same load."""
    plans = plans_for(options)
    if options.raw_path:
        with open(options.raw_path, "wb"):
            pass  # start a fresh file; workers append one line per request
    stats = []
    for plan in plans:
        callback = on_progress(plan) if on_progress is not None else None
        stats.append(run_series(plan, callback))
    return bench_report(plans, stats)


__all__ = ["BenchRun", "BenchReport", "Plan", "run_bench", "default_workers"]
