"""Rendering a BenchReport as text that fits the terminal (80 columns at least; the live view is
progress.py). Tables size their columns to their cells by display width (Chinese characters take two
columns); long lines wrap with a hanging indent and never inside a command. Every text a person reads
goes through `_()` here, at render time: the report's data (codes, stop reasons, knee rules) stays English,
as `--json` shows it."""

from __future__ import annotations

from functools import partial

from taotoken_cli.cmd.bench.histogram import Histogram
from taotoken_cli.cmd.bench.report import BenchReport, Distribution, ErrorLine, SeriesReport, binding_limit
from taotoken_cli.cmd.bench.sweep import step_label
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, clauses, ngettext
from taotoken_cli.core.term.layout import cell_width, pad, table, wrap

_COLUMNS = ("min", "mean", "p50", "p90", "p95", "p99", "max")
# the percentile table's headings: min, mean and max are words, the percentiles stay as they are
_COLUMN_LABELS = {"min": N_("min"), "mean": N_("mean"), "max": N_("max")}
FIELD_WIDTH = 12  # the label column of a model's block, at least (English labels fit in it)

# the rows of the percentile table and of the side-by-side comparison
LATENCY, TTFT, INTER_TOKEN, PER_TOKEN = N_("latency"), "TTFT", N_("inter-token"), N_("per token")


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _load_line(report: BenchReport) -> str:
    parts = []
    if report.mode == "open":
        if report.sweep and report.sweep["parameter"] == "rate":
            how = _("open loop at each rate of the sweep")
        elif report.workload.get("trace"):
            how = _("trace replay")
        else:
            how = _("open loop at {rate:g} req/s").format(rate=report.rate)
        parts.append(_("{how} (latency from each scheduled start)").format(how=how))
    else:
        parts.append(_("closed loop"))
    if report.duration_s is not None:
        parts.append(_("for {seconds:g} s").format(seconds=report.duration_s))
    elif report.requests is not None:
        if report.sweep:
            parts.append(ngettext("{n} request per step", "{n} requests per step", report.requests)
                         .format(n=report.requests))
        else:
            parts.append(ngettext("{n} request", "{n} requests", report.requests).format(n=report.requests))
    if not (report.sweep and report.sweep["parameter"] == "concurrency"):
        parts.append(_("{n} concurrent").format(n=report.concurrency) if report.mode == "closed"
                     else _("at most {n} in flight").format(n=report.concurrency))
    parts.append(ngettext("{n} worker", "{n} workers", report.workers).format(n=report.workers))
    if report.warmup:
        parts.append(ngettext("{n} warm-up request excluded", "{n} warm-up requests excluded", report.warmup)
                     .format(n=report.warmup))
    if report.repeat > 1:
        parts.append(_("each run {n} times").format(n=report.repeat))
    parts.append((_("stream, max_tokens {n}") if report.stream else _("no stream, max_tokens {n}"))
                 .format(n=report.max_tokens))
    return _("load: {items}").format(items=clauses(parts))


def _workload_line(report: BenchReport) -> str | None:
    w = report.workload
    parts = []
    if report.mode == "open" and not w.get("trace"):
        parts.append(_("{arrival} arrivals (seed {seed})").format(arrival=w.get("arrival", "constant"),
                                                                   seed=w.get("seed")))
    if w.get("ramp_up_s"):
        parts.append(_("ramp-up {seconds:g} s").format(seconds=w["ramp_up_s"]))
    if w.get("dataset"):
        parts.append(_("prompts from {file} ({count})").format(file=w["dataset"], count=w["dataset_size"]))
    if w.get("trace"):
        parts.append(ngettext("trace {file} ({n} request)", "trace {file} ({n} requests)", w["trace_size"])
                     .format(file=w["trace"], n=w["trace_size"]))
    if w.get("input_tokens"):
        parts.append(_("prompts of about {tokens} tokens").format(tokens=w["input_tokens"]))
    if w.get("output_tokens"):
        parts.append(f"max_tokens {w['output_tokens']}")
    return _("workload: {items}").format(items=clauses(parts)) if parts else None


def render_text(report: BenchReport, width: int = 80) -> list[str]:
    lines = wrap(f"POST {report.url}", width, "taotoken bench  ", "  ")
    if report.interrupted is not None:
        text = (_("interrupted ({signal}) before the first request: nothing was measured") if not report.series else
                _("interrupted twice ({signal}): the load was stopped, the requests in flight were abandoned "
                  "(not counted); the figures below are partial") if report.abandoned else
                _("interrupted ({signal}): the load was stopped, the requests in flight were settled; "
                  "the figures below are partial"))
        lines += wrap(text.format(signal=report.interrupted), width, hang="  ")
    lines += wrap(_load_line(report), width, hang="  ")
    workload = _workload_line(report)
    if workload:
        lines += wrap(workload, width, hang="  ")
    if report.proxy:
        text = (_("proxy: {proxy} (from --proxy; proxy errors are reported as proxy.*)")
                if report.proxy_source == "--proxy" else
                _("proxy: {proxy} (from the environment; proxy errors are reported as proxy.*)"))
        lines += wrap(text.format(proxy=report.proxy), width, hang="  ")
    if report.slo:
        lines += wrap(_("SLOs: {targets}").format(targets=slo_listing(report.slo)), width, hang="  ")
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


def slo_listing(slos) -> str:
    """"ttft:p95<600ms, error-rate<1% (default)": the targets, the one bench added marked."""
    return clauses([_("{target} (default)").format(target=s.text) if s.implied else s.text for s in slos])


_TOKEN_SOURCES = {"usage": N_("server-reported usage"),
                  "counted": N_("counted stream deltas (no usage from the server)"),
                  "mixed": N_("server usage where given, else counted deltas")}


def series_lines(s: SeriesReport, stream: bool, width: int = 80) -> list[str]:
    fields: list[tuple[str, str]] = []
    rate = "-" if s.success_rate is None else f"{s.success_rate * 100:.1f} %"
    fields.append((_("requests"), _("{total} ({ok} ok, {failed} failed, {rate} success) in {seconds:.2f} s").format(
        total=s.requests, ok=s.ok, failed=s.failed, rate=rate, seconds=s.elapsed_s)))
    fields.append((_("requests/s"), _num(s.requests_per_s, 1)))
    if s.steady is not None:
        fields.append((_("steady"), _("{achieved} req/s achieved, {offered} offered, {good} good, over "
                                     "{start:g}-{end:g} s (the drain excluded)").format(
            achieved=_num(s.steady["achieved_per_s"]), offered=_num(s.steady["offered_per_s"]),
            good=_num(s.steady["goodput_per_s"]), start=s.steady["start_s"], end=s.steady["end_s"])))
    if s.rate_limited is not None:
        fields.append((_("rate limit"), rate_limit_text(s.rate_limited, s.deferred)))
    if s.slo is not None:
        fields.append((_("goodput"), _("{value} req/s within the SLO limits ({good} of {total})").format(
            value=_num(s.goodput_per_s), good=s.good, total=s.requests)))
        checks = clauses([(_("{target} ok ({value})") if c["ok"] else _("{target} MISSED ({value})"))
                          .format(target=c["target"], value=_slo_value(c)) for c in s.slo])
        fields.append((_("SLOs"), (_("met: {checks}") if s.meets_slo else _("missed: {checks}")).format(checks=checks)))
    if s.output_tokens:
        source = _(_TOKEN_SOURCES[s.tokens_source]) if s.tokens_source in _TOKEN_SOURCES else ""
        fields.append((_("output"), _("{tokens:,} tokens, {rate} tokens/s overall (from {source})").format(
            tokens=s.output_tokens, rate=_num(s.output_tokens_per_s, 1), source=source)))
    if s.late_starts is not None:
        fields.append((_("late starts"), _("{late} of {total} (mean {mean} ms, max {max} ms late; latency is "
                                           "counted from the scheduled start)").format(
            late=s.late_starts, total=s.requests, mean=_num(s.lateness_mean_ms), max=_num(s.lateness_max_ms))))
    if s.aborted:
        reason = s.aborted["reason"]
        fields.append((_("stopped"), _("after {requests} requests, {failed} failed ({reason})").format(
            requests=s.aborted["after_requests"], failed=s.aborted["failed"],
            reason=_(_ABORTS[reason]) if reason in _ABORTS else reason)))
    if s.connect is not None and s.connect.count:
        if s.proxy_connect is not None:
            text = _("{n} opened, p50 {ms} ms to connect, of which the proxy's CONNECT p50 {proxy_ms} ms").format(
                n=s.connections, ms=_num(s.connect.p50, 2), proxy_ms=_num(s.proxy_connect.p50, 2))
        else:
            text = _("{n} opened, p50 {ms} ms to connect").format(n=s.connections, ms=_num(s.connect.p50, 2))
        fields.append((_("connections"), text))
    if s.repeats:
        fields.append((_("spread"), _spread_text(s.repeats)))
    label_width = max(FIELD_WIDTH, *(cell_width(label) for label, _text in fields))
    hang = " " * (2 + label_width + 1)
    lines = wrap(_("model {model}").format(model=s.model), width, hang="  ", fold=True)  # a long ID never overflows
    for label, text in fields:
        lines += wrap(pad(label, label_width) + " " + text, width, "  ", hang)
    lines.append("")
    lines.append("  " + _("times in ms, successful requests:"))
    rows = [(_(LATENCY), s.latency, 1)]
    if stream:
        rows += [(TTFT, s.ttft, 1), (_(INTER_TOKEN), s.itl, 2), (_(PER_TOKEN), s.tpot, 2)]
    if s.tokens_per_s.count:
        rows.append((_("tokens/s/req"), s.tokens_per_s, 1))
    header = ["", *(_(_COLUMN_LABELS[c]) if c in _COLUMN_LABELS else c for c in _COLUMNS)]
    lines += table(header, [_dist_cells(label, dist, digits) for label, dist, digits in rows], width, drop=(1, 2))
    if stream:
        lines += wrap(_("TTFT: time to first token; inter-token: the gaps between tokens; per token: "
                        "(latency - TTFT) / (tokens - 1)"), width, "  ", "  ")
    if s.latency_histogram:
        lines.append("")
        lines.append("  " + _("latency histogram (ms):"))
        peak = max(n for _low, _high, n in s.latency_histogram) or 1
        bar_width = max(10, min(40, width - 40))
        for low, high, n in s.latency_histogram:
            bar = "■" * (round(n / peak * bar_width) if n else 0)
            lines.append(f"  {low:>10.1f} - {high:<10.1f} {n:>8}  {bar}")
    lines += _windows_lines(s, width)
    lines.append("")
    codes = clauses([(f"HTTP {code} x{n}" if code != "none" else _("no response x{n}").format(n=n))
                     for code, n in sorted(s.status_codes.items())]) or "-"
    lines += wrap(_("status codes: {codes}").format(codes=codes), width, "  ", "    ")
    lines += error_lines(s, width)
    return lines


_ABORTS = {"max-errors": N_("--max-errors reached"), "error-rate": N_("its error rate passed --max-error-rate"),
           "all-failed": N_("every request it started failed"), "interrupted": N_("interrupted")}


def rate_limit_text(finding: dict, deferred: int) -> str:
    """The finding: "rate-limited at ≈ 10.0 req/s (1,234 answers 429, Retry-After 1 s honoured)"."""
    hint = finding.get("retry_after_s")
    if hint is not None:
        text = ngettext("rate-limited at ≈ {rate} req/s ({n} answer 429, Retry-After {s:g} s honoured {d} times)",
                        "rate-limited at ≈ {rate} req/s ({n} answers 429, Retry-After {s:g} s honoured {d} times)",
                        finding["responses"])
    else:
        text = ngettext("rate-limited at ≈ {rate} req/s ({n} answer 429)",
                        "rate-limited at ≈ {rate} req/s ({n} answers 429)", finding["responses"])
    return text.format(rate=_num(finding["at_per_s"]), n=finding["responses"], s=hint or 0, d=deferred)


def _slo_value(check: dict) -> str:
    value = check["value"]
    if value is None:
        return _("not measured")
    return f"{value * 100:.2f} %" if check["target"].startswith("error-rate") else f"{value:,.1f} ms"


def _spread_text(repeats: dict) -> str:
    parts = []
    for name, label in (("requests_per_s", "req/s"), ("latency_p50_ms", _("latency p50 (ms)")),
                        ("ttft_p50_ms", "TTFT p50 (ms)")):
        m = repeats.get(name)
        if m:
            text = f"{label} {m['mean']:,.1f} ± {m['stdev']:,.1f}"
            if m.get("cv") is not None:
                text = _("{figure} (cv {cv:.1f} %)").format(figure=text, cv=m["cv"] * 100)
            parts.append(text)
    return _("{count} repeats: {figures}").format(count=repeats["count"], figures=clauses(parts))


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
    header = [_("seconds"), "req/s", _("failed"), _("lat p50"), _("lat p95"), "tokens/s"]
    return ["", "  " + _("over time:"), *table(header, rows, width)]


def error_lines(s: SeriesReport, width: int) -> list[str]:
    if not s.errors:
        return []
    lines = ["  " + _("errors:")]
    code_width = max(len(e.code) for e in s.errors)
    for e in s.errors:
        status = f"HTTP {e.status}" if e.status is not None else _("no response")
        title = _(e.title) if e.title else ""  # the catalogue's title, in the reader's language
        if e.retry_after_s is not None:
            text = _("{title} ({status}, Retry-After {seconds:g} s)").format(title=title, status=status,
                                                                            seconds=e.retry_after_s)
        else:
            text = _("{title} ({status})").format(title=title, status=status)
        head = f"{e.code:<{code_width}} {e.count:>6} {e.share * 100:5.1f} %  "
        lines += wrap(head + text, width, "    ", " " * (4 + len(head)))
        if e.server_message:  # the server's own words, as they came
            lines += wrap(_("server said: {message}").format(message=e.server_message), width, " " * 6, " " * 8)
    top = s.top_error
    fixes = _shown_fixes(top)
    if top is not None and fixes:
        lines += wrap(Fix.of(_("fix ({code}): {fix}"), code=top.code, fix=fixes[0]), width, "  ", "       ")
        for fix in fixes[1:3]:
            lines += wrap(fix, width, "       ", "         ")
    return lines


def _shown_fixes(error: ErrorLine | None) -> list[Fix]:
    """An error's fixes in the reader's language (made in it: `shown_fixes`)."""
    if error is None:
        return []
    return [Fix.coerce(fix) for fix in (error.shown_fixes or error.fixes)]


def sweep_lines(report: BenchReport, model: dict, width: int) -> list[str]:
    sweep = report.sweep
    label = partial(step_label, sweep["parameter"])
    title = (_("model {model}: sweep over concurrency") if sweep["parameter"] == "concurrency"
             else _("model {model}: sweep over rate"))
    lines = wrap(title.format(model=model["model"]), width, hang="  ", fold=True)
    header = [_("load"), _("offered"), "req/s", _("goodput"), _("lat p95"), "TTFT p95", "ITL p95", _("errors")]
    if report.slo:
        header.append(_("SLOs"))
    rows = []
    for step in model["steps"]:
        name = label(step["load"]) + (" *" if step.get("probe") else "")
        row = [name, _num(step.get("offered_per_s")), _num(step["requests_per_s"]), _num(step["goodput_per_s"]),
               _num(step["latency_p95_ms"]), _num(step["ttft_p95_ms"]), _num(step["itl_p95_ms"], 2),
               "-" if step["error_rate"] is None else f"{step['error_rate'] * 100:.1f} %"]
        if report.slo:
            row.append(_("interrupted") if step.get("interrupted") else _("met") if step["meets_slo"] else _("missed"))
        rows.append(row)
    if not report.stream:
        header, rows = [h for i, h in enumerate(header) if i not in (5, 6)], [
            [c for i, c in enumerate(r) if i not in (5, 6)] for r in rows]
    lines += table(header, rows, width)
    lines += wrap(_("(ms; req/s: answers per second, offered: starts per second, both over the steady window; "
                    "goodput: requests/s within the SLO limits; * a step added to bisect the knee)"), width,
                  "  ", "   ")
    knee = model["knee"]
    if knee is not None:
        text = _("knee: {load}, {rate} req/s goodput ({rule})").format(
            load=label(knee), rate=_num(model.get("knee_goodput_per_s")), rule=_(sweep["knee_rule"]))
        bound = model.get("bounded_by")
        if bound is not None:
            why = _(_BOUNDS.get(bound["why"], bound["why"]))
            # i18n: the knee line, then the measured step next to it on the other side of the rule
            text = _("{knee}; bounded by {load}: {why}").format(knee=text, load=label(bound["load"]), why=why)
    elif model.get("interrupted"):
        text = _("knee: not established (the sweep was interrupted before a step confirmed one)")
    else:
        text = _("knee: none ({rule})").format(rule=_(sweep["knee_rule"]))
    lines += wrap(text, width, "  ", "    ")
    limited = [report.series[step["series"]].rate_limited for step in model["steps"]
               if report.series[step["series"]].rate_limited is not None]
    if limited:
        top = binding_limit(limited)
        under = max(0.1, round(top["at_per_s"] * 0.9, 1))
        lines += wrap(Fix.of(_("finding: rate-limited at ≈ {rate} req/s (429 with a retry hint from {n} of {steps} "
                               "steps); fix: stay under it, e.g. {command}, or ask the gateway's owner for a higher "
                               "limit"), rate=_num(top["at_per_s"]), n=len(limited), steps=len(model["steps"]),
                             command=Command(f"taotoken bench --rate {under:g}")),
                      width, "  ", "    ")
    if model["stop_reason"]:
        lines += wrap(_("stopped early: {reason}").format(reason=_(model["stop_reason"])), width, "  ", "    ")
    for step in model["steps"]:
        s = report.series[step["series"]]
        top = s.top_error
        if top is not None:
            fixes = _shown_fixes(top)
            text = (_("{load}: {code} x{count}; fix: {fix}") if fixes else _("{load}: {code} x{count}"))
            lines += wrap(Fix.of(text, load=label(step["load"]), code=top.code, count=top.count,
                                 fix=fixes[0] if fixes else ""), width, "  ", "    ")
    return lines


_BOUNDS = {"missed": N_("it missed the SLOs"), "unsaturated": N_("below 95 % of the best goodput"),
           "late": N_("not served on time (achieved below 95 % of offered)"),
           "aborted": N_("stopped by the error limits")}


def comparison_lines(report: BenchReport, width: int = 80) -> list[str]:
    """Models side by side: one column per model, as many models per block as fit the width; names too
    long for a column are shown as letters with a legend. Widths are display widths."""
    rows: list[tuple[str, list[str]]] = []
    series = report.series
    rows.append((_("success rate"), ["-" if s.success_rate is None else f"{s.success_rate * 100:.1f} %"
                                     for s in series]))
    rows.append((_("requests/s"), [_num(s.requests_per_s) for s in series]))
    for name, attr in ((LATENCY, "latency"), (TTFT, "ttft"), (INTER_TOKEN, "itl"), (PER_TOKEN, "tpot")):
        if attr != "latency" and not report.stream:
            continue
        for pct in ("p50", "p99"):
            digits = 2 if attr in ("itl", "tpot") else 1
            rows.append((f"{_(name)} {pct} (ms)", [_num(getattr(getattr(s, attr), pct) if getattr(s, attr) else None,
                                                        digits) for s in series]))
    rows.append((_("tokens/s/req p50"), [_num(s.tokens_per_s.p50) for s in series]))
    rows.append((_("output tokens/s"), [_num(s.output_tokens_per_s) for s in series]))
    rows.append((_("top error"), [s.top_error.code if s.top_error else "-" for s in series]))
    label_width = max(cell_width(label) for label, _values in rows)
    widest = max(cell_width(v) for _label, values in rows for v in values)
    room = width - 2 - label_width
    lettered = any(cell_width(s.model) > max(widest, room // 2 - 2) for s in series)
    names = [chr(ord("A") + i) if lettered and i < 26 else s.model for i, s in enumerate(series)]
    column = max(widest, *(cell_width(n) for n in names)) + 2
    per_block = max(1, room // column)
    out = [_("side by side:")]
    if lettered:
        for name, s in zip(names, series, strict=True):
            out += wrap(s.model, width, f"  {name} = ", fold=True)
    for first in range(0, len(series), per_block):
        block = range(first, min(len(series), first + per_block))
        out.append("  " + pad("", label_width) + "".join(pad(names[i], column, "r") for i in block))
        out += ["  " + pad(label, label_width) + "".join(pad(values[i], column, "r") for i in block)
                for label, values in rows]
    return out
