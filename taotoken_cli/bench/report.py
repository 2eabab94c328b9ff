"""Computing the bench report from merged statistics (no rendering here: see bench.render).

`BenchReport.to_dict()` is the `--json` contract: every key is always present (None when it does
not apply), names never change, and times are in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from taotoken_cli.bench.engine import Plan
from taotoken_cli.bench.histogram import Histogram
from taotoken_cli.bench.stats import SeriesStats

SCHEMA_VERSION = 1


@dataclass
class Distribution:
    count: int
    min: float | None
    mean: float | None
    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None
    max: float | None

    @classmethod
    def of(cls, hist: Histogram, factor: float = 1000.0) -> Distribution:
        """Figures of a histogram, multiplied by `factor` (seconds -> ms by default)."""
        if not hist.count:
            return cls(0, None, None, None, None, None, None, None)

        def f(value: float | None) -> float | None:
            return None if value is None else round(value * factor, 3)

        return cls(hist.count, f(hist.min), f(hist.mean), f(hist.percentile(50)), f(hist.percentile(90)),
                   f(hist.percentile(95)), f(hist.percentile(99)), f(hist.max))

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ErrorLine:
    code: str
    count: int
    share: float  # of all measured requests
    title: str | None
    status: int | None  # HTTP status of the first such failure (None: no response)
    server_message: str | None
    retry_after_s: float | None
    fixes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class SeriesReport:
    model: str
    requests: int
    ok: int
    failed: int
    success_rate: float | None
    elapsed_s: float
    requests_per_s: float | None
    latency: Distribution
    latency_histogram: list[tuple[float, float, int]]  # (low_ms, high_ms, count)
    ttft: Distribution | None
    itl: Distribution | None
    tpot: Distribution | None
    tokens_per_s: Distribution  # output tokens/s of each successful request
    output_tokens: int
    output_tokens_per_s: float | None  # all output tokens over the run's wall time
    tokens_source: str | None  # "usage" (server-reported), "counted" (content deltas), "mixed", None
    status_codes: dict[str, int]
    errors: list[ErrorLine]
    late_starts: int | None  # open loop only
    lateness_mean_ms: float | None
    lateness_max_ms: float | None
    connections: int

    @property
    def top_error(self) -> ErrorLine | None:
        return self.errors[0] if self.errors else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model, "requests": self.requests, "ok": self.ok, "failed": self.failed,
            "success_rate": self.success_rate, "elapsed_s": self.elapsed_s, "requests_per_s": self.requests_per_s,
            "latency_ms": self.latency.to_dict(),
            "latency_histogram_ms": [{"low": lo, "high": hi, "count": n} for lo, hi, n in self.latency_histogram],
            "ttft_ms": self.ttft.to_dict() if self.ttft else None,
            "itl_ms": self.itl.to_dict() if self.itl else None,
            "tpot_ms": self.tpot.to_dict() if self.tpot else None,
            "tokens_per_s_per_request": self.tokens_per_s.to_dict(),
            "output_tokens": self.output_tokens, "output_tokens_per_s": self.output_tokens_per_s,
            "tokens_source": self.tokens_source,
            "status_codes": dict(sorted(self.status_codes.items())),
            "errors": [e.to_dict() for e in self.errors],
            "top_error_fix": (self.top_error.fixes[0] if self.top_error and self.top_error.fixes else None),
            "late_starts": self.late_starts, "lateness_mean_ms": self.lateness_mean_ms,
            "lateness_max_ms": self.lateness_max_ms, "connections": self.connections,
        }


@dataclass
class BenchReport:
    url: str
    mode: str  # "closed" or "open"
    requests: int | None
    duration_s: float | None
    concurrency: int
    rate: float | None
    warmup: int
    workers: int
    stream: bool
    max_tokens: int
    timeout_s: float
    series: list[SeriesReport]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION, "url": self.url,
            "load": {"mode": self.mode, "requests": self.requests, "duration_s": self.duration_s,
                     "concurrency": self.concurrency, "rate": self.rate, "warmup": self.warmup,
                     "workers": self.workers, "stream": self.stream, "max_tokens": self.max_tokens,
                     "timeout_s": self.timeout_s},
            "series": [s.to_dict() for s in self.series],
        }


def _bins(hist: Histogram) -> int:
    """Up to 10 bars, but none narrower than the histogram's ~1.6 % bucket width (no empty artefact bars)."""
    if not hist.count or hist.max <= hist.min:
        return 1
    return max(1, min(10, int((hist.max - hist.min) / (hist.max * 0.016))))


def series_report(plan: Plan, stats: SeriesStats) -> SeriesReport:
    total = stats.ok + stats.failed
    elapsed = max(0.0, stats.ended_at - stats.started_at) if total else 0.0
    if stats.tokens_from_usage and stats.tokens_counted:
        source = "mixed"
    elif stats.tokens_from_usage:
        source = "usage"
    elif stats.tokens_counted:
        source = "counted"
    else:
        source = None
    errors = [ErrorLine(code, e["count"], round(e["count"] / total, 4) if total else 0.0, e.get("title"),
                        e.get("status"), e.get("server_message"), e.get("retry_after_s"), list(e.get("fixes") or []))
              for code, e in stats.errors.items()]
    errors.sort(key=lambda e: (-e.count, e.code))
    open_loop = bool(plan.rate)
    return SeriesReport(
        model=plan.model, requests=total, ok=stats.ok, failed=stats.failed,
        success_rate=round(stats.ok / total, 4) if total else None,
        elapsed_s=round(elapsed, 4),
        requests_per_s=round(total / elapsed, 2) if elapsed > 0 else None,
        latency=Distribution.of(stats.latency),
        latency_histogram=[(round(lo * 1000, 3), round(hi * 1000, 3), n)
                           for lo, hi, n in stats.latency.buckets(_bins(stats.latency))],
        ttft=Distribution.of(stats.ttft) if plan.stream else None,
        itl=Distribution.of(stats.itl) if plan.stream else None,
        tpot=Distribution.of(stats.tpot) if plan.stream else None,
        tokens_per_s=Distribution.of(stats.tokens_per_s, factor=1.0),
        output_tokens=stats.output_tokens,
        output_tokens_per_s=round(stats.output_tokens / elapsed, 2) if elapsed > 0 and stats.output_tokens else None,
        tokens_source=source,
        status_codes=dict(stats.status),
        errors=errors,
        late_starts=stats.late_starts if open_loop else None,
        lateness_mean_ms=(round(stats.lateness_total / stats.late_starts * 1000, 3)
                          if open_loop and stats.late_starts else (0.0 if open_loop else None)),
        lateness_max_ms=round(stats.lateness_max * 1000, 3) if open_loop else None,
        connections=stats.connections,
    )


def bench_report(plans: list[Plan], stats: list[SeriesStats]) -> BenchReport:
    from taotoken_cli.bench.engine import split

    first = plans[0]
    return BenchReport(
        url=first.url, mode="open" if first.rate else "closed", requests=first.requests,
        duration_s=first.duration, concurrency=first.concurrency, rate=first.rate, warmup=first.warmup,
        workers=len(split(first)), stream=first.stream, max_tokens=first.max_tokens, timeout_s=first.timeout,
        series=[series_report(p, s) for p, s in zip(plans, stats, strict=True)],
    )
