"""Computing the bench report from merged statistics (no rendering here: see view.py).

`BenchReport.to_dict()` is the `--json` contract: every key is always present (None when it does
not apply), names never change (new ones are only added), and times are in milliseconds.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from taotoken_cli.cmd.bench.histogram import Histogram
from taotoken_cli.cmd.bench.plan import SeriesPlan
from taotoken_cli.cmd.bench.stats import SeriesStats
from taotoken_cli.cmd.bench.sweep import SLO, evaluate
from taotoken_cli.core.base.fix import Fix, texts

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
    fixes: list[Fix] = field(default_factory=list)  # in English: data, as --json shows it
    shown_fixes: list[Fix] = field(default_factory=list)  # the same, in the reader's language (not in the JSON)

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        del out["shown_fixes"]
        out["fixes"] = texts(self.fixes)
        out["fix_steps"] = [Fix.coerce(fix).to_dict() for fix in self.fixes]
        return out


# the figures compared across repeats: name -> how to read it from one repeat's statistics
def _per_s(count: int, stats: SeriesStats) -> float | None:
    return round(count / stats.elapsed, 3) if stats.elapsed > 0 else None


def _pct(name: str, p: float):
    def read(stats: SeriesStats) -> float | None:
        value = getattr(stats, name).percentile(p)
        return None if value is None else round(value * 1000, 3)

    return read


SPREAD_METRICS = {
    "requests_per_s": lambda s: _per_s(s.ok + s.failed, s),
    "goodput_per_s": lambda s: _per_s(s.good, s),
    "output_tokens_per_s": lambda s: _per_s(s.output_tokens, s),
    "latency_p50_ms": _pct("latency", 50), "latency_p95_ms": _pct("latency", 95),
    "ttft_p50_ms": _pct("ttft", 50), "ttft_p95_ms": _pct("ttft", 95), "itl_p50_ms": _pct("itl", 50),
}


def spread(repeats: list[SeriesStats]) -> dict[str, Any]:
    """Mean, standard deviation, coefficient of variation, min and max of each figure across repeats."""
    out: dict[str, Any] = {"count": len(repeats)}
    for name, read in SPREAD_METRICS.items():
        values = [v for v in (read(s) for s in repeats) if v is not None]
        if not values:
            out[name] = None
            continue
        mean = statistics.fmean(values)
        stdev = statistics.stdev(values) if len(values) > 1 else 0.0
        out[name] = {"values": values, "mean": round(mean, 3), "stdev": round(stdev, 3),
                     "cv": round(stdev / mean, 4) if mean else None, "min": min(values), "max": max(values)}
    return out


def windows(stats: SeriesStats) -> dict[str, Any]:
    w = stats.windows
    rows = []
    for index in range(max(w.rows) + 1 if w.rows else 0):
        requests, ok, failed, tokens, latency, ttft, started, good = (w.rows.get(index) or
                                                                    (0, 0, 0, 0, Histogram(), Histogram(), 0, 0))[:8]
        rows.append({"start_s": round(index * w.width, 3), "requests": requests, "ok": ok, "failed": failed,
                     "started": started, "good": good,
                     "requests_per_s": round(requests / w.width, 3),
                     "output_tokens_per_s": round(tokens / w.width, 3),
                     "latency_p50_ms": _ms(latency.percentile(50)), "latency_p95_ms": _ms(latency.percentile(95)),
                     "ttft_p50_ms": _ms(ttft.percentile(50))})
    return {"width_s": w.width, "rows": rows}


STEADY_MIN_S = 1.0  # a shorter steady window holds too few answers to be a rate


def steady(stats: SeriesStats, plan: SeriesPlan, repeats: int = 1) -> dict[str, Any] | None:
    """Rates over the steady window: from when the pipeline is full (the median latency after the start)
    to the last start (the drain, when nothing new starts and the last answers trickle in, is left out).
    Whole time windows only; None when that leaves under STEADY_MIN_S (then the whole-run rates stand).

    The rates are taken from the first answer in the window to the first answer after it: n answers over the time
    from one answer to the n+1-th. Users of a closed loop against a server of fixed latency answer in bursts, one
    burst a latency apart, and a window's edges alone would count one burst more or less (±20 % for 7 users at
    0.72 s over 3.5 s); between two answers every burst counts once."""
    w = stats.windows
    if not w.rows or stats.latency.count == 0 and stats.failed == 0:
        return None
    fill = stats.latency.percentile(50) or 0.0
    end = stats.last_start if repeats == 1 else stats.elapsed
    first, last = math.ceil(fill / w.width), int(end / w.width) - 1  # windows [first, last], whole ones
    low, high = first * w.width, (last + 1) * w.width
    if high - low < STEADY_MIN_S:
        return None
    counts = [0, 0, 0, 0]  # ended, ok, good, started
    for index in range(first, last + 1):
        row = w.rows.get(index)
        if row:
            counts[0] += row[0]
            counts[1] += row[1]
            counts[2] += row[7]
            counts[3] += row[6]
    answers = [(i, row[8]) for i, row in w.rows.items() if row[0]]
    begin = min((t for i, t in answers if first <= i <= last), default=low)
    until = min((t for i, t in answers if i > last), default=high)
    span = until - begin if counts[0] and until > begin else high - low
    offered = counts[3] / span
    if plan.schedule is not None and repeats == 1:  # open loop: what was scheduled, whether it started or not
        offered = sum(1 for t in plan.schedule if low <= t < high) / (high - low)
    return {"start_s": round(begin, 3), "end_s": round(until, 3),
            "offered_per_s": round(offered, 2), "started_per_s": round(counts[3] / span, 2),
            "achieved_per_s": round(counts[0] / span, 2), "ok_per_s": round(counts[1] / span, 2),
            "goodput_per_s": round(counts[2] / span, 2)}


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000, 3)


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
    concurrency: int = 0
    rate: float | None = None
    input_tokens: int = 0
    good: int = 0
    goodput_per_s: float | None = None
    slo: list[dict[str, Any]] | None = None
    meets_slo: bool | None = None
    aborted: dict[str, Any] | None = None
    connect: Distribution | None = None
    proxy_connect: Distribution | None = None
    windows: dict[str, Any] = field(default_factory=dict)
    repeats: dict[str, Any] | None = None
    steady: dict[str, Any] | None = None  # rates over the steady window (drain excluded): see steady()
    deferred: int = 0  # starts held back by a Retry-After
    rate_limited: dict[str, Any] | None = None  # the finding, when 429s with a retry hint came back
    stats: SeriesStats | None = field(default=None, repr=False)  # for the HTML report; not in the JSON

    @property
    def event_loop(self) -> str | None:
        return (self.stats.event_loop or None) if self.stats is not None else None

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
            "top_error_fix": (str(self.top_error.fixes[0]) if self.top_error and self.top_error.fixes else None),
            "late_starts": self.late_starts, "lateness_mean_ms": self.lateness_mean_ms,
            "lateness_max_ms": self.lateness_max_ms, "connections": self.connections,
            "concurrency": self.concurrency, "rate": self.rate, "input_tokens": self.input_tokens,
            "good": self.good, "goodput_per_s": self.goodput_per_s, "slo": self.slo, "meets_slo": self.meets_slo,
            "aborted": self.aborted,
            "connect_ms": self.connect.to_dict() if self.connect else None,
            "proxy_connect_ms": self.proxy_connect.to_dict() if self.proxy_connect else None,
            "windows": self.windows, "repeats": self.repeats, "steady": self.steady, "deferred": self.deferred,
            "rate_limited": self.rate_limited,
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
    proxy: str | None = None  # masked
    proxy_source: str | None = None  # "--proxy" or the environment variable's name
    workload: dict[str, Any] = field(default_factory=dict)
    repeat: int = 1
    slo: list[SLO] = field(default_factory=list)
    sweep: dict[str, Any] | None = None
    max_errors: int | None = None
    max_error_rate: float | None = None
    interrupted: str | None = None  # "SIGINT" / "SIGTERM": the run was stopped, its figures are partial
    abandoned: bool = False  # interrupted twice: the requests then in flight were not waited for, nor counted
    event_loop: str | None = None  # "uvloop" or "asyncio": what the workers ran on (the `fast` extra installed?)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION, "url": self.url,
            "load": {"mode": self.mode, "requests": self.requests, "duration_s": self.duration_s,
                     "concurrency": self.concurrency, "rate": self.rate, "warmup": self.warmup,
                     "workers": self.workers, "event_loop": self.event_loop, "stream": self.stream,
                     "max_tokens": self.max_tokens,
                     "timeout_s": self.timeout_s, "repeat": self.repeat, "proxy": self.proxy,
                     "proxy_source": self.proxy_source, "max_errors": self.max_errors,
                     "max_error_rate": self.max_error_rate, **self.workload},
            "series": [s.to_dict() for s in self.series],
            "slo": [s.to_dict() for s in self.slo] or None,
            "sweep": self.sweep, "interrupted": self.interrupted,
            "in_flight": None if self.interrupted is None else "abandoned" if self.abandoned else "settled",
        }


def rate_limited(stats: SeriesStats, elapsed: float, window: dict[str, Any] | None) -> dict[str, Any] | None:
    """"Rate-limited at ≈ R req/s": the rate the gateway let through while it answered 429 (rate.limited).
    None when no request was rate limited."""
    entry = stats.errors.get("rate.limited")
    if not entry or elapsed <= 0:
        return None
    at = window["ok_per_s"] if window else stats.ok / elapsed
    return {"at_per_s": round(at, 2), "responses": entry["count"],
            "share": round(entry["count"] / max(1, stats.ok + stats.failed), 4),
            "retry_after_s": entry.get("retry_after_s")}


def binding_limit(findings: list[dict[str, Any]]) -> dict[str, Any]:
    """Of several series' rate-limit findings (a sweep's steps), the one where the limit binds hardest: the largest
    share of 429s. A step barely over the limit gets through on the bucket's burst and overstates the rate."""
    return max(findings, key=lambda finding: finding["share"])


def _bins(hist: Histogram) -> int:
    """Up to 10 bars, but none narrower than the histogram's ~1.6 % bucket width (no empty artefact bars)."""
    if not hist.count or hist.max <= hist.min:
        return 1
    return max(1, min(10, int((hist.max - hist.min) / (hist.max * 0.016))))


def series_report(plan: SeriesPlan, stats: SeriesStats, *, aborted: str | None = None, slos: list[SLO] | None = None,
                  repeats: list[SeriesStats] | None = None) -> SeriesReport:
    from taotoken_cli.cmd.bench.advice import fitted_fixes, in_english

    total = stats.ok + stats.failed
    elapsed = stats.elapsed
    if stats.tokens_from_usage and stats.tokens_counted:
        source = "mixed"
    elif stats.tokens_from_usage:
        source = "usage"
    elif stats.tokens_counted:
        source = "counted"
    else:
        source = None
    ok_per_s = stats.ok / elapsed if elapsed > 0 else None
    def fit(code: str, e: dict[str, Any], fixes: list[Fix]) -> list[Fix]:
        return fitted_fixes(code, fixes, concurrency=plan.concurrency, rate=plan.rate, timeout=plan.timeout,
                            ok_per_s=ok_per_s, retry_after_s=e.get("retry_after_s"),
                            server_message=e.get("server_message"))

    errors = [ErrorLine(code, e["count"], round(e["count"] / total, 4) if total else 0.0, e.get("title"),
                        e.get("status"), e.get("server_message"), e.get("retry_after_s"),
                        in_english(lambda code=code, e=e: fit(code, e, list(e.get("fixes") or []))),
                        fit(code, e, list(e.get("shown_fixes") or e.get("fixes") or [])))
              for code, e in stats.errors.items()]
    errors.sort(key=lambda e: (-e.count, e.code))
    open_loop = plan.open_loop
    checked = evaluate(slos, stats) if slos else None
    window = steady(stats, plan, len(repeats) if repeats else 1)
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
        concurrency=plan.concurrency, rate=plan.rate, input_tokens=stats.input_tokens,
        good=stats.good, goodput_per_s=round(stats.good / elapsed, 2) if elapsed > 0 else None,
        slo=[{"target": slo.text, "value": (round(value, 4) if slo.metric == "error-rate" else _ms(value))
              if value is not None else None, "ok": ok} for slo, value, ok in checked] if checked else None,
        # an interrupted series is judged on what it measured (the report says it is partial); one the error
        # limits stopped missed its targets
        meets_slo=all(ok for _, _, ok in checked) and aborted in (None, "interrupted") if checked else None,
        aborted=({"reason": aborted, "after_requests": total, "failed": stats.failed} if aborted else None),
        connect=Distribution.of(stats.connect),
        proxy_connect=Distribution.of(stats.proxy_connect) if plan.proxy and stats.proxy_connect.count else None,
        windows=windows(stats),
        repeats=spread(repeats) if repeats and len(repeats) > 1 else None,
        steady=window,
        deferred=stats.deferred,
        rate_limited=rate_limited(stats, elapsed, window),
        stats=stats,
    )
