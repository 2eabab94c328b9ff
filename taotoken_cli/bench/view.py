"""Rendering a BenchReport as text that fits the terminal (80 columns at least; the live view is
progress.py). Tables size their columns to their cells; long lines wrap with a hanging indent and
never inside a command."""

from __future__ import annotations

import textwrap

from taotoken_cli.bench.histogram import Histogram
from taotoken_cli.bench.report import BenchReport, Distribution, SeriesReport

_COLUMNS = ("min", "mean", "p50", "p90", "p95", "p99", "max")
_COMMAND_STARTS = ("taotoken ", "export ", "unset ", "pip ", "curl ", "getent ")


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def wrap(text: str, width: int, indent: str = "", hang: str | None = None) -> list[str]:
    """Wrap prose at spaces; a command in it (from "taotoken …", "export …") goes whole onto a line of its own."""
    hang = indent + "  " if hang is None else hang
    if len(indent) + len(text) <= width:
        return [indent + text]
    starts = [text.find(c) for c in _COMMAND_STARTS if text.find(c) > 0]
    if starts:
        cut = min(starts)
        prose, command = text[:cut].rstrip(), text[cut:]
        return wrap(prose, width, indent, hang) + [hang + command]
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=hang, break_long_words=False,
                         break_on_hyphens=False) or [indent]


def table(header: list[str], rows: list[list[str]], width: int, indent: str = "  ",
          drop: tuple[int, ...] = ()) -> list[str]:
    """Left-aligned first column, right-aligned others, each as wide as its widest cell plus a gap;
    columns in `drop` (by index, first dropped first) go when the table would not fit."""
    keep = list(range(len(header)))
    for index in (*drop, None):
        widths = [max(len(r[i]) for r in [header, *rows]) for i in keep]
        total = len(indent) + widths[0] + sum(w + 2 for w in widths[1:])
        if total <= width or index is None:
            break
        keep.remove(index)

    def line(cells: list[str]) -> str:
        first = f"{cells[keep[0]]:<{widths[0]}}"
        rest = "".join(f"  {cells[i]:>{w}}" for i, w in zip(keep[1:], widths[1:], strict=True))
        return (indent + first + rest).rstrip()

    return [line(header)] + [line(r) for r in rows]


def _load_line(report: BenchReport) -> str:
    parts = []
    if report.mode == "open":
        how = "trace replay" if report.workload.get("trace") else f"open loop at {report.rate:g} req/s"
        if report.sweep and report.sweep["parameter"] == "rate":
            how = "open loop at each rate of the sweep"
        parts.append(how + " (latency from each scheduled start)")
    else:
        parts.append("closed loop")
    if report.duration_s is not None:
        parts.append(f"for {report.duration_s:g} s")
    elif report.requests is not None:
        parts.append(f"{report.requests} requests" + (" per step" if report.sweep else ""))
    if not (report.sweep and report.sweep["parameter"] == "concurrency"):
        parts.append(f"{report.concurrency} concurrent" if report.mode == "closed"
                     else f"at most {report.concurrency} in flight")
    parts.append(f"{report.workers} worker{'s' if report.workers != 1 else ''}")
    if report.warmup:
        parts.append(f"{report.warmup} warm-up requests excluded")
    if report.repeat > 1:
        parts.append(f"each run {report.repeat} times")
    parts.append(("stream" if report.stream else "no stream") + f", max_tokens {report.max_tokens}")
    return "load: " + ", ".join(parts)


def _workload_line(report: BenchReport) -> str | None:
    w = report.workload
    parts = []
    if report.mode == "open" and not w.get("trace"):
        parts.append(f"{w.get('arrival', 'constant')} arrivals (seed {w.get('seed')})")
    if w.get("ramp_up_s"):
        parts.append(f"ramp-up {w['ramp_up_s']:g} s")
    if w.get("dataset"):
        parts.append(f"prompts from {w['dataset']} ({w['dataset_size']})")
    if w.get("trace"):
        parts.append(f"trace {w['trace']} ({w['trace_size']} requests)")
    if w.get("input_tokens"):
        parts.append(f"prompts of about {w['input_tokens']} tokens")
    if w.get("output_tokens"):
        parts.append(f"max_tokens {w['output_tokens']}")
    return "workload: " + ", ".join(parts) if parts else None


def render_text(report: BenchReport, width: int = 80) -> list[str]:
    lines = [f"taotoken bench  POST {report.url}"]
    lines += wrap(_load_line(report), width, hang="  ")
    workload = _workload_line(report)
    if workload:
        lines += wrap(workload, width, hang="  ")
    if report.proxy:
        source = "--proxy" if report.proxy_source == "--proxy" else "the environment"
        lines += wrap(f"proxy: {report.proxy} (from {source}; proxy errors are reported as proxy.*)", width)
    if report.slo:
        lines += wrap("SLOs: " + ", ".join(s.text for s in report.slo), width, hang="  ")
    if report.sweep is not None:
        for model in report.sweep["models"]:
            lines.append("")
            lines += sweep_lines(report, model, width)
        return lines
    for series in report.series:
        lines.append("")
        lines += series_lines(series, report.stream, width)
    if len(report.series) > 1:
        lines.append("")
        lines += comparison_lines(report, width)
    return lines


def series_lines(s: SeriesReport, stream: bool, width: int = 80) -> list[str]:
    lines = [f"model {s.model}"]
    rate = "-" if s.success_rate is None else f"{s.success_rate * 100:.1f} %"
    hang = " " * 15

    def field(label: str, text: str) -> None:
        lines.extend(wrap(f"{label:<12} {text}", width, "  ", hang))

    field("requests", f"{s.requests} ({s.ok} ok, {s.failed} failed, {rate} success) in {s.elapsed_s:.2f} s")
    field("requests/s", _num(s.requests_per_s, 1))
    if s.slo is not None:
        field("goodput", f"{_num(s.goodput_per_s)} req/s within the SLO limits ({s.good} of {s.requests})")
        checks = ", ".join(f"{c['target']} {'ok' if c['ok'] else 'MISSED'} ({_slo_value(c)})" for c in s.slo)
        field("SLOs", ("met: " if s.meets_slo else "missed: ") + checks)
    if s.output_tokens:
        source = {"usage": "server-reported usage", "counted": "counted stream deltas (no usage from the server)",
                  "mixed": "server usage where given, else counted deltas"}.get(s.tokens_source or "", "")
        field("output", f"{s.output_tokens:,} tokens, {_num(s.output_tokens_per_s, 1)} tokens/s overall "
                        f"(from {source})")
    if s.late_starts is not None:
        field("late starts", f"{s.late_starts} of {s.requests} (mean {_num(s.lateness_mean_ms)} ms, max "
                             f"{_num(s.lateness_max_ms)} ms late; latency is counted from the scheduled start)")
    if s.aborted:
        field("stopped", f"after {s.aborted['after_requests']} requests, {s.aborted['failed']} failed "
                         f"({_ABORTS.get(s.aborted['reason'], s.aborted['reason'])})")
    if s.connect is not None and s.connect.count:
        text = f"{s.connections} opened, p50 {_num(s.connect.p50, 2)} ms to connect"
        if s.proxy_connect is not None:
            text += f", of which the proxy's CONNECT p50 {_num(s.proxy_connect.p50, 2)} ms"
        field("connections", text)
    if s.repeats:
        field("spread", _spread_text(s.repeats))
    lines.append("")
    lines.append("  times in ms, successful requests:")
    rows = [("latency", s.latency, 1)]
    if stream:
        rows += [("TTFT", s.ttft, 1), ("inter-token", s.itl, 2), ("per token", s.tpot, 2)]
    if s.tokens_per_s.count:
        rows.append(("tokens/s/req", s.tokens_per_s, 1))
    lines += table(["", *_COLUMNS], [_dist_cells(label, dist, digits) for label, dist, digits in rows], width,
                   drop=(1, 2))
    if stream:
        lines += wrap("TTFT: time to first token; inter-token: the gaps between tokens; per token: "
                      "(latency - TTFT) / (tokens - 1)", width, "  ", "  ")
    if s.latency_histogram:
        lines.append("")
        lines.append("  latency histogram (ms):")
        peak = max(n for _, _, n in s.latency_histogram) or 1
        bar_width = max(10, min(40, width - 40))
        for low, high, n in s.latency_histogram:
            bar = "■" * (round(n / peak * bar_width) if n else 0)
            lines.append(f"  {low:>10.1f} - {high:<10.1f} {n:>8}  {bar}")
    lines += _windows_lines(s, width)
    lines.append("")
    lines += wrap("status codes: " + (", ".join(f"{'HTTP ' + code if code != 'none' else 'no response'} x{n}"
                                                for code, n in sorted(s.status_codes.items())) or "-"), width, "  ")
    lines += error_lines(s, width)
    return lines


_ABORTS = {"max-errors": "--max-errors reached", "error-rate": "its error rate passed --max-error-rate"}


def _slo_value(check: dict) -> str:
    value = check["value"]
    if value is None:
        return "not measured"
    return f"{value * 100:.2f} %" if check["target"].startswith("error-rate") else f"{value:,.1f} ms"


def _spread_text(repeats: dict) -> str:
    parts = []
    for name, label in (("requests_per_s", "req/s"), ("latency_p50_ms", "latency p50 (ms)"),
                        ("ttft_p50_ms", "TTFT p50 (ms)")):
        m = repeats.get(name)
        if m:
            cv = f" (cv {m['cv'] * 100:.1f} %)" if m.get("cv") is not None else ""
            parts.append(f"{label} {m['mean']:,.1f} ± {m['stdev']:,.1f}{cv}")
    return f"{repeats['count']} repeats: " + ", ".join(parts)


def _dist_cells(label: str, dist: Distribution | None, digits: int) -> list[str]:
    return [label, *(_num(getattr(dist, c) if dist else None, digits) for c in _COLUMNS)]


def _windows_lines(s: SeriesReport, width: int) -> list[str]:
    """Throughput and latency over the run, in at most 8 rows (neighbouring windows merged)."""
    if s.stats is None or len(s.stats.windows.rows) < 3:
        return []
    w = s.stats.windows
    count = max(w.rows) + 1
    per_row = -(-count // 8)
    rows = []
    for first in range(0, count, per_row):
        requests = ok = failed = tokens = 0
        latency = Histogram()
        for index in range(first, min(count, first + per_row)):
            row = w.rows.get(index)
            if row:
                requests, ok, failed, tokens = requests + row[0], ok + row[1], failed + row[2], tokens + row[3]
                latency.merge(row[4])
        span = min(count, first + per_row) * w.width - first * w.width
        rows.append([f"{first * w.width:g}-{min(count, first + per_row) * w.width:g}", f"{requests / span:,.1f}",
                     str(failed), _num(latency.percentile(50) and latency.percentile(50) * 1000),
                     _num(latency.percentile(95) and latency.percentile(95) * 1000),
                     _num(tokens / span) if tokens else "-"])
    header = ["seconds", "req/s", "failed", "lat p50", "lat p95", "tokens/s"]
    return ["", "  over time:", *table(header, rows, width)]


def error_lines(s: SeriesReport, width: int) -> list[str]:
    if not s.errors:
        return []
    lines = ["  errors:"]
    code_width = max(len(e.code) for e in s.errors)
    for e in s.errors:
        status = f"HTTP {e.status}" if e.status is not None else "no response"
        extra = f", Retry-After {e.retry_after_s:g} s" if e.retry_after_s is not None else ""
        head = f"{e.code:<{code_width}} {e.count:>6} {e.share * 100:5.1f} %  "
        lines += wrap(head + f"{e.title or ''} ({status}{extra})", width, "    ", " " * (4 + len(head)))
        if e.server_message:
            lines += wrap(f"server said: {e.server_message}", width, " " * 6, " " * 8)
    top = s.top_error
    if top is not None and top.fixes:
        lines += wrap(f"fix ({top.code}): {top.fixes[0]}", width, "  ", "       ")
        for fix in top.fixes[1:3]:
            lines += wrap(fix, width, "       ", "         ")
    return lines


def sweep_lines(report: BenchReport, model: dict, width: int) -> list[str]:
    sweep = report.sweep
    label = (lambda v: f"c={v:g}") if sweep["parameter"] == "concurrency" else (lambda v: f"{v:g}/s")
    lines = [f"model {model['model']}: sweep over {sweep['parameter']}"]
    header = ["load", "req/s", "goodput", "lat p95", "TTFT p95", "ITL p95", "errors"]
    if report.slo:
        header.append("SLOs")
    rows = []
    for step in model["steps"]:
        row = [label(step["load"]), _num(step["requests_per_s"]), _num(step["goodput_per_s"]),
               _num(step["latency_p95_ms"]), _num(step["ttft_p95_ms"]), _num(step["itl_p95_ms"], 2),
               "-" if step["error_rate"] is None else f"{step['error_rate'] * 100:.1f} %"]
        if report.slo:
            row.append("met" if step["meets_slo"] else "missed")
        rows.append(row)
    if not report.stream:
        header, rows = [h for i, h in enumerate(header) if i not in (4, 5)], [
            [c for i, c in enumerate(r) if i not in (4, 5)] for r in rows]
    lines += table(header, rows, width)
    lines.append("  (ms; goodput: requests/s " + ("within the SLO limits)" if report.slo else "that succeeded)"))
    knee = model["knee"]
    lines += wrap(f"knee: {label(knee) if knee is not None else 'none'} ({sweep['knee_rule']})", width, "  ", "    ")
    if model["stop_reason"]:
        lines += wrap(f"stopped early: {model['stop_reason']}", width, "  ", "    ")
    for step in model["steps"]:
        s = report.series[step["series"]]
        top = s.top_error
        if top is not None:
            fix = f"; fix: {top.fixes[0]}" if top.fixes else ""
            lines += wrap(f"{label(step['load'])}: {top.code} x{top.count}{fix}", width, "  ", "    ")
    return lines


def comparison_lines(report: BenchReport, width: int = 80) -> list[str]:
    """Models side by side: one column per model, as many models per block as fit the width; names too
    long for a column are shown as letters with a legend."""
    rows: list[tuple[str, list[str]]] = []
    series = report.series
    rows.append(("success rate", ["-" if s.success_rate is None else f"{s.success_rate * 100:.1f} %"
                                  for s in series]))
    rows.append(("requests/s", [_num(s.requests_per_s) for s in series]))
    for name, attr in (("latency", "latency"), ("TTFT", "ttft"), ("inter-token", "itl"), ("per token", "tpot")):
        if attr != "latency" and not report.stream:
            continue
        for pct in ("p50", "p99"):
            digits = 2 if attr in ("itl", "tpot") else 1
            rows.append((f"{name} {pct} (ms)", [_num(getattr(getattr(s, attr), pct) if getattr(s, attr) else None,
                                                     digits) for s in series]))
    rows.append(("tokens/s/req p50", [_num(s.tokens_per_s.p50) for s in series]))
    rows.append(("output tokens/s", [_num(s.output_tokens_per_s) for s in series]))
    rows.append(("top error", [s.top_error.code if s.top_error else "-" for s in series]))
    label_width = max(len(label) for label, _ in rows)
    cell_width = max(len(v) for _, values in rows for v in values)
    room = width - 2 - label_width
    lettered = any(len(s.model) > max(cell_width, room // 2 - 2) for s in series)
    names = [chr(ord("A") + i) if lettered and i < 26 else s.model for i, s in enumerate(series)]
    column = max(cell_width, *(len(n) for n in names)) + 2
    per_block = max(1, room // column)
    out = ["side by side:"]
    if lettered:
        out += [f"  {name} = {s.model}" for name, s in zip(names, series, strict=True)]
    for first in range(0, len(series), per_block):
        block = range(first, min(len(series), first + per_block))
        out.append(f"  {'':<{label_width}}" + "".join(f"{names[i]:>{column}}" for i in block))
        out += [f"  {label:<{label_width}}" + "".join(f"{values[i]:>{column}}" for i in block)
                for label, values in rows]
    return out
