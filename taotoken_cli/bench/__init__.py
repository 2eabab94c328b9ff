"""`taotoken bench`: LLM-aware load testing of the gateway (see engine, report, render).

Public entry points: `BenchOptions`, `run_bench(options, on_progress=None) -> BenchReport`,
`render.render_text(report)`, `BenchReport.to_dict()` (the --json contract).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from taotoken_cli.bench.engine import Plan, run_series
from taotoken_cli.bench.report import BenchReport, bench_report


@dataclass
class BenchOptions:
    root: str
    api_key: str | None
    models: list[str]
    prompt: str = "Say OK."
    max_tokens: int = 16
    stream: bool = False
    requests: int | None = 100
    duration: float | None = None
    concurrency: int = 10
    rate: float | None = None
    warmup: int = 0
    timeout: float = 60.0
    workers: int | None = None
    raw_path: str | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)


def default_workers() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 16))


def plans_for(options: BenchOptions) -> list[Plan]:
    workers = options.workers or default_workers()
    return [Plan(root=options.root, api_key=options.api_key, model=model, prompt=options.prompt,
                 max_tokens=options.max_tokens, stream=options.stream,
                 requests=options.requests if options.duration is None else None,
                 duration=options.duration, concurrency=options.concurrency, rate=options.rate,
                 warmup=options.warmup, timeout=options.timeout, connect_timeout=min(10.0, options.timeout),
                 workers=workers, raw_path=options.raw_path, extra_headers=options.extra_headers)
            for model in options.models]


def run_bench(options: BenchOptions, on_progress=None) -> BenchReport:
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


__all__ = ["BenchOptions", "BenchReport", "Plan", "run_bench", "default_workers"]
