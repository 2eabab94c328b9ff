"""Rendering a BenchReport as text (terminal or pipe) and the live progress line (TTY only)."""

from __future__ import annotations

import sys
import time

from taotoken_cli.bench.report import BenchReport, Distribution, SeriesReport

_COLUMNS = ("min", "mean", "p50", "p90", "p95", "p99", "max")


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _dist_row(label: str, dist: Distribution | None, digits: int = 1) -> str:
    cells = [_num(getattr(dist, c) if dist else None, digits) for c in _COLUMNS]
    return f"  {label:<22}" + "".join(f"{cell:>10}" for cell in cells)


def _load_line(report: BenchReport) -> str:
    parts = []
    if report.mode == "open":
        parts.append(f"open loop at {report.rate:g} req/s (latency from each scheduled start)")
    else:
        parts.append("closed loop")
    if report.duration_s is not None:
        parts.append(f"for {report.duration_s:g} s")
    elif report.requests is not None:
        parts.append(f"{report.requests} requests")
    parts.append(f"{report.concurrency} concurrent" if report.mode == "closed" else f"at most {report.concurrency} "
                 "in flight")
    parts.append(f"{report.workers} worker{'s' if report.workers != 1 else ''}")
    if report.warmup:
        parts.append(f"{report.warmup} warm-up requests excluded")
    parts.append(("stream" if report.stream else "no stream") + f", max_tokens {report.max_tokens}")
    return "load: " + ", ".join(parts)


def render_text(report: BenchReport) -> list[str]:
    lines = [f"taotoken bench  POST {report.url}", _load_line(report)]
    for series in report.series:
        lines.append("")
        lines += _series_lines(series, report.stream)
    if len(report.series) > 1:
        lines.append("")
        lines += comparison_lines(report)
    return lines


def _series_lines(s: SeriesReport, stream: bool) -> list[str]:
    lines = [f"model {s.model}"]
    rate = "-" if s.success_rate is None else f"{s.success_rate * 100:.1f} %"
    lines.append(f"  requests     {s.requests} ({s.ok} ok, {s.failed} failed, {rate} success) in {s.elapsed_s:.2f} s")
    lines.append(f"  requests/s   {_num(s.requests_per_s, 1)}")
    if s.output_tokens:
        source = {"usage": "server-reported usage", "counted": "counted stream deltas (no usage from the server)",
                  "mixed": "server usage where given, else counted deltas"}.get(s.tokens_source or "", "")
        lines.append(f"  output       {s.output_tokens:,} tokens, {_num(s.output_tokens_per_s, 1)} tokens/s overall "
                     f"(from {source})")
    if s.late_starts is not None:
        lines.append(f"  late starts  {s.late_starts} of {s.requests} (mean {_num(s.lateness_mean_ms)} ms, "
                     f"max {_num(s.lateness_max_ms)} ms late; latency is counted from the scheduled start)")
    lines.append("")
    lines.append(f"  {'(ms; successful requests)':<22}" + "".join(f"{c:>10}" for c in _COLUMNS))
    lines.append(_dist_row("latency", s.latency))
    if stream:
        lines.append(_dist_row("time to first token", s.ttft))
        lines.append(_dist_row("inter-token latency", s.itl, 2))
        lines.append(_dist_row("time per output token", s.tpot, 2))
    if s.tokens_per_s.count:
        lines.append(_dist_row("tokens/s per request", s.tokens_per_s))
    if s.latency_histogram:
        lines.append("")
        lines.append("  latency histogram (ms):")
        peak = max(n for _, _, n in s.latency_histogram) or 1
        for low, high, n in s.latency_histogram:
            bar = "■" * (round(n / peak * 40) if n else 0)
            lines.append(f"  {low:>10.1f} - {high:<10.1f} {n:>8}  {bar}")
    lines.append("")
    lines.append("  status codes: " + (", ".join(f"{'HTTP ' + code if code != 'none' else 'no response'} x{n}"
                                                 for code, n in sorted(s.status_codes.items())) or "-"))
    if s.errors:
        lines.append("  errors:")
        for e in s.errors:
            status = f"HTTP {e.status}" if e.status is not None else "no response"
            extra = f", Retry-After {e.retry_after_s:g} s" if e.retry_after_s is not None else ""
            lines.append(f"    {e.code:<22} {e.count:>7}  {e.share * 100:5.1f} %  {e.title or ''} ({status}{extra})")
            if e.server_message:
                lines.append(f"    {'':<23}server said: {e.server_message}")
        top = s.top_error
        if top is not None and top.fixes:
            lines.append(f"  fix ({top.code}): {top.fixes[0]}")
            lines += [f"       {fix}" for fix in top.fixes[1:3]]
    return lines


def comparison_lines(report: BenchReport) -> list[str]:
    """Models side by side: one column per model."""
    rows: list[tuple[str, list[str]]] = []

    def add(label: str, values: list[str]) -> None:
        rows.append((label, values))

    series = report.series
    add("success rate", ["-" if s.success_rate is None else f"{s.success_rate * 100:.1f} %" for s in series])
    add("requests/s", [_num(s.requests_per_s) for s in series])
    for name, attr in (("latency", "latency"), ("TTFT", "ttft"), ("inter-token", "itl"), ("per token", "tpot")):
        if attr != "latency" and not report.stream:
            continue
        for pct in ("p50", "p99"):
            digits = 2 if attr in ("itl", "tpot") else 1
            add(f"{name} {pct} (ms)", [_num(getattr(getattr(s, attr), pct) if getattr(s, attr) else None, digits)
                                        for s in series])
    add("tokens/s per req p50", [_num(s.tokens_per_s.p50) for s in series])
    add("output tokens/s", [_num(s.output_tokens_per_s) for s in series])
    add("top error", [s.top_error.code if s.top_error else "-" for s in series])
    width = max(12, *(len(s.model) + 2 for s in series), *(len(v) + 2 for _, values in rows for v in values))
    out = ["side by side:", f"  {'':<22}" + "".join(f"{s.model:>{width}}" for s in series)]
    out += [f"  {label:<22}" + "".join(f"{v:>{width}}" for v in values) for label, values in rows]
    return out


class ProgressLine:
    """A one-line progress bar on stderr, redrawn at most 10 times a second; only used on a TTY."""

    def __init__(self, label: str, stream=None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self._last = 0.0

    def __call__(self, done: int, total: int | None, elapsed: float, duration: float | None = None) -> None:
        now = time.monotonic()
        if now - self._last < 0.1:
            return
        self._last = now
        if total:
            frac = min(1.0, done / total)
        elif duration:
            frac = min(1.0, elapsed / duration)
        else:
            frac = 0.0
        bar = "█" * int(frac * 30) + "░" * (30 - int(frac * 30))
        rate = f"{done / elapsed:8.1f}" if elapsed >= 0.2 else f"{'-':>8}"  # too early for a meaningful rate
        count = f"{done}/{total}" if total else f"{done}"
        self.stream.write(f"\r{self.label} {bar} {count}  {elapsed:5.1f} s  {rate} req/s ")
        self.stream.flush()

    def clear(self) -> None:
        self.stream.write("\r\033[K")
        self.stream.flush()
