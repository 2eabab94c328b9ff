"""`--html FILE`: one self-contained page (plotly.js inlined, gzip-compressed: it opens offline, no CDN, in
about 2 MB instead of 5) with the run's settings, a summary table, the latency / TTFT / inter-token
distributions, throughput and latency over time, and — for a sweep — throughput, goodput and latency against
the load.

The page is for people: its headings, axis titles, legends and table headings are in the reader's
language; its data (the embedded report, series names, codes) stay as `--json` has them.

Plotly (the `html` extra) draws the plots; the figures' data are the report's own: histogram
buckets, time windows and sweep steps, so the page says what the JSON says."""

from __future__ import annotations

import base64
import gzip
import html
import json
import math
from functools import lru_cache
from typing import Any

from taotoken_cli.cmd.bench.histogram import Histogram
from taotoken_cli.cmd.bench.sweep import step_label
from taotoken_cli.core.base.i18n import _, current

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1d2430; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; }
p.meta { color: #555; margin: 2px 0; font-size: 14px; }
table { border-collapse: collapse; font-size: 13px; margin-top: 8px; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f5f8; }
.bad { color: #b3261e; font-weight: 600; } .good { color: #1e7b34; }
.plot { max-width: 1100px; }
"""


# Before the plots: Plotly.newPlot only queues its arguments until the real plotly.js is unpacked (_LOAD_PLOTLY).
_QUEUE_PLOTS = ("window.taotokenPlots=[];window.Plotly={newPlot:function(){window.taotokenPlots.push(arguments);"
                "return Promise.resolve();}};")
# After the plots: plotly.js is inlined gzip-compressed and base64-encoded (2 MB, not 5); the browser unpacks it
# (DecompressionStream: Chrome 80, Firefox 113, Safari 16.4), runs it, then draws the queued plots.
_LOAD_PLOTLY = """(async function () {
  try {
    var packed = document.getElementById("packed-plotly-js").textContent;
    var bytes = Uint8Array.from(atob(packed), function (c) { return c.charCodeAt(0); });
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    var script = document.createElement("script");
    script.textContent = await new Response(stream).text();
    document.head.appendChild(script);
    window.taotokenPlots.forEach(function (args) { Plotly.newPlot.apply(Plotly, args); });
  } catch (error) {
    var note = document.createElement("p");
    note.className = "bad";
    note.textContent = %s + " (" + error + ")";
    document.body.insertBefore(note, document.body.firstChild);
  }
})();"""


@lru_cache(maxsize=1)
def packed_plotlyjs() -> str:
    """plotly.js gzip-compressed, base64-encoded: what the page's loader unpacks."""
    from plotly.offline import get_plotlyjs

    return base64.b64encode(gzip.compress(get_plotlyjs().encode("utf-8"), 6, mtime=0)).decode("ascii")


def distribution_bins(hist: Histogram, factor: float = 1000.0, bins: int = 40) -> tuple[list[float], list[int]]:
    """(bin centres, counts) of equal-width bins from the minimum to the 99.5th percentile; the few
    samples above it are counted in the last bin, so one outlier cannot squash the picture. No bin is
    narrower than the histogram's own bucket there (1/64 of the value): finer bins would draw a comb of
    spikes and gaps that the data do not hold."""
    if not hist.count:
        return [], []
    low = hist.min
    high = max(hist.percentile(99.5) or hist.max, low)
    if high > low:
        bins = max(1, min(bins, int((high - low) / (high / 64))))
    counts = [n for _low, _high, n in hist.buckets(bins, high=high)]
    width = (high - low) / bins
    return [round((low + (i + 0.5) * width) * factor, 3) for i in range(len(counts))], counts


MIN_WINDOW_S = 1.0  # throughput over shorter windows is a sawtooth of whole requests, not a rate


def throughput_windows(windows: dict) -> tuple[float, list[dict]]:
    """The series' windows merged into windows of at least MIN_WINDOW_S: (width, rows with start_s,
    requests_per_s, output_tokens_per_s). A last partial window is left out (it would read low)."""
    rows, width = windows.get("rows", []), windows.get("width_s", 1.0)
    k = max(1, math.ceil(MIN_WINDOW_S / width - 1e-9))
    out = []
    for first in range(0, len(rows) - k + 1 if len(rows) >= k else 0, k):
        group = rows[first:first + k]
        span = width * k
        out.append({"start_s": group[0]["start_s"],
                    "requests_per_s": round(sum(r["requests"] for r in group) / span, 3),
                    "output_tokens_per_s": round(sum(r["output_tokens_per_s"] for r in group) * width / span, 3)})
    return width * k, out


def _series_name(report, s) -> str:
    if report.sweep is None:
        return s.model
    parameter = report.sweep["parameter"]
    return f"{s.model} {step_label(parameter, s.concurrency if parameter == 'concurrency' else s.rate)}"


def figures(report) -> list[tuple[str, Any]]:
    """(title, plotly figure) for every plot of the page."""
    import plotly.graph_objects as go

    out: list[tuple[str, Any]] = []
    metrics = [("latency", _("Latency (ms)"))]
    if report.stream:
        metrics += [("ttft", _("Time to first token (ms)")), ("itl", _("Inter-token gap (ms)"))]
    for attr, title in metrics:
        fig = go.Figure()
        for s in report.series:
            x, y = distribution_bins(getattr(s.stats, attr)) if s.stats is not None else ([], [])
            if x:
                fig.add_trace(go.Bar(x=x, y=y, name=_series_name(report, s), opacity=0.75))
        fig.update_layout(barmode="overlay", xaxis_title=title,
                          yaxis_title=_("requests") if attr != "itl" else _("gaps"))
        out.append((_("Distribution: {metric}").format(metric=title), fig))
    fig = go.Figure()
    owners: list[int] = []  # the series each over-time trace belongs to (the selector shows one at a time)
    for number, s in enumerate(report.series):
        width, rows = throughput_windows(s.windows)
        x = [round(r["start_s"] + width / 2, 3) for r in rows]
        owners.append(number)
        fig.add_trace(go.Scatter(x=x, y=[r["requests_per_s"] for r in rows], mode="lines+markers",
                                 name=f"{_series_name(report, s)} req/s"))
        if any(r["output_tokens_per_s"] for r in rows):
            owners.append(number)
            fig.add_trace(go.Scatter(x=x, y=[r["output_tokens_per_s"] for r in rows], mode="lines",
                                     name=f"{_series_name(report, s)} tokens/s", yaxis="y2"))
    _one_series_at_a_time(report, fig, owners)
    fig.update_layout(xaxis_title=_("seconds since the start"), yaxis_title=_("requests/s"),
                      yaxis2={"title": _("output tokens/s"), "overlaying": "y", "side": "right"})
    out.append((_("Throughput over time"), fig))
    fig = go.Figure()
    owners = []
    for number, s in enumerate(report.series):
        rows = s.windows.get("rows", [])
        width = s.windows.get("width_s", 1.0)
        x = [round(r["start_s"] + width / 2, 3) for r in rows]
        for key, label in (("latency_p50_ms", _("latency p50")), ("latency_p95_ms", _("latency p95")),
                           ("ttft_p50_ms", "TTFT p50")):
            if any(r[key] is not None for r in rows):
                owners.append(number)
                fig.add_trace(go.Scatter(x=x, y=[r[key] for r in rows], mode="lines+markers",
                                         name=f"{_series_name(report, s)} {label}"))
    _one_series_at_a_time(report, fig, owners)
    fig.update_layout(xaxis_title=_("seconds since the start"), yaxis_title="ms")
    out.append((_("Latency over time"), fig))
    if report.sweep is not None:
        out = _sweep_figures(report) + out  # the capacity question first
    return out


def _one_series_at_a_time(report, fig, owners: list[int]) -> None:
    """Over-time charts of several series (sweep steps, models) are not overlaid on one time axis: a selector
    shows one series at a time (the first at first)."""
    count = len(report.series)
    if count < 2:
        return
    for index, trace in enumerate(fig.data):
        trace.visible = owners[index] == 0
    buttons = [{"label": _series_name(report, s), "method": "update",
                "args": [{"visible": [owner == number for owner in owners]}]} for number, s in enumerate(report.series)]
    fig.update_layout(updatemenus=[{"buttons": buttons, "direction": "down", "x": 0, "xanchor": "left", "y": 1.15,
                                    "yanchor": "top", "showactive": True}])


def _sweep_figures(report) -> list[tuple[str, Any]]:
    import plotly.graph_objects as go

    sweep = report.sweep
    axis = _("concurrency") if sweep["parameter"] == "concurrency" else _("requests/s offered")
    rate = go.Figure()
    times = go.Figure()
    for model in sweep["models"]:
        loads = [step["load"] for step in model["steps"]]
        rate.add_trace(go.Scatter(x=loads, y=[s["requests_per_s"] for s in model["steps"]], mode="markers",
                                  name=_("{model} throughput").format(model=model["model"])))
        rate.add_trace(go.Scatter(x=loads, y=[s["goodput_per_s"] for s in model["steps"]], mode="markers",
                                  name=_("{model} goodput").format(model=model["model"]),
                                  marker={"symbol": "diamond", "size": 9}))
        if model["knee"] is not None:
            rate.add_vline(x=model["knee"], line_dash="dash",
                           annotation_text=_("knee {model}").format(model=model["model"]))
            times.add_vline(x=model["knee"], line_dash="dash")
        for key, label in (("latency_p95_ms", _("latency p95")), ("ttft_p95_ms", "TTFT p95")):
            if any(s[key] is not None for s in model["steps"]):
                times.add_trace(go.Scatter(x=loads, y=[s[key] for s in model["steps"]], mode="markers",
                                           name=f"{model['model']} {label}"))
    for slo in report.slo:
        if slo.metric in ("latency", "ttft"):
            times.add_hline(y=slo.limit * 1000, line_dash="dash", annotation_text=f"SLO {slo.text}")
    rate.update_layout(xaxis_title=axis, yaxis_title=_("requests/s"))
    times.update_layout(xaxis_title=axis, yaxis_title="ms")
    return [(_("Sweep: throughput and goodput"), rate), (_("Sweep: latency"), times)]


def _element(tag: str, text: str, css_class: str | None = None) -> str:
    """<tag class="…">text</tag>, the text escaped."""
    attrs = f' class="{css_class}"' if css_class else ""
    return f"<{tag}{attrs}>{html.escape(text)}</{tag}>"


def _span(css_class: str, text: str) -> str:
    return _element("span", text, css_class)


def _summary_table(report) -> str:
    head = [_("series"), _("requests"), _("succeeded"), _("failed"), "req/s", _("goodput/s"), _("latency p50"), "p95",
            "p99", "TTFT p50", "p95", "ITL p50", _("SLOs"), _("top error")]
    rows = []
    for s in report.series:
        def f(dist, attr: str) -> str:
            value = getattr(dist, attr) if dist is not None else None
            return "-" if value is None else f"{value:,.1f}"

        slo = "-" if s.meets_slo is None else (_span("good", _("met")) if s.meets_slo else _span("bad", _("missed")))
        cells = [html.escape(_series_name(report, s)), str(s.requests), str(s.ok), str(s.failed),
                 f"{s.requests_per_s or 0:,.1f}", "-" if s.goodput_per_s is None else f"{s.goodput_per_s:,.1f}",
                 f(s.latency, "p50"), f(s.latency, "p95"), f(s.latency, "p99"), f(s.ttft, "p50"), f(s.ttft, "p95"),
                 f(s.itl, "p50"), slo, html.escape(s.top_error.code) if s.top_error else "-"]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return ("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>" + "".join(rows)
            + "</table>" + _element("p", _("times in ms, over successful requests"), "meta"))


def render(report) -> str:
    from taotoken_cli.cmd.bench.view import _load_line, _workload_line, slo_listing

    meta = [f"POST {report.url}", _load_line(report)]
    workload = _workload_line(report)
    if workload:
        meta.append(workload)
    if report.proxy:
        meta.append(_("proxy: {proxy}").format(proxy=report.proxy))
    if report.slo:
        meta.append(_("SLOs: {targets}").format(targets=slo_listing(report.slo)))
    lang = "zh-CN" if current() == "zh" else "en"
    parts = [f"<!DOCTYPE html><html lang=\"{lang}\"><head><meta charset=\"utf-8\">",
             _element("title", _("taotoken bench report")), f"<style>{_STYLE}</style>",
             f"<script>{_QUEUE_PLOTS}</script></head><body>", "<h1>taotoken bench</h1>"]
    parts += [_element("p", line, "meta") for line in meta]
    if report.sweep is not None:
        for model in report.sweep["models"]:
            parts.append(f"<p class=\"meta\">{_knee_html(report.sweep, model)}</p>")
    parts += [_element("h2", _("Summary")), _summary_table(report)]
    for number, (title, fig) in enumerate(figures(report)):
        fig.update_layout(template="plotly_white", height=420, margin={"l": 60, "r": 60, "t": 30, "b": 50},
                          legend={"orientation": "h", "y": -0.2})
        parts.append(_element("h2", title) + "<div class=\"plot\">")
        parts.append(fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"plot{number}",
                                 config={"displaylogo": False, "responsive": True}))
        parts.append("</div>")
    parts.append("<script type=\"application/json\" id=\"bench-report\">"
                 + json.dumps(report.to_dict(), ensure_ascii=False).replace("</", "<\\/") + "</script>")
    parts.append(f"<script type=\"application/octet-stream\" id=\"packed-plotly-js\">{packed_plotlyjs()}</script>")
    unpack_failed = _("the plots need a browser that can unpack them (Chrome 80, Firefox 113, Safari 16.4 or later)")
    parts.append(f"<script>{_LOAD_PLOTLY % json.dumps(unpack_failed, ensure_ascii=False)}</script>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _knee_html(sweep: dict, model: dict) -> str:
    """"<b>model</b>: knee 4 (the rule); stopped early: why", translated, the values escaped."""
    knee, name, rule = model["knee"], f"<b>{html.escape(model['model'])}</b>", html.escape(_(sweep["knee_rule"]))
    if knee is not None:
        text = html.escape(_("{model}: knee {knee} ({rule})")).format(model=name, knee=f"{knee:g}", rule=rule)
        if model.get("knee_goodput_per_s") is not None:
            from taotoken_cli.cmd.bench.view import _BOUNDS

            label = step_label(sweep["parameter"], knee)
            bound = model.get("bounded_by")
            detail = _("{load}: {rate} req/s goodput").format(load=label, rate=f"{model['knee_goodput_per_s']:,.1f}")
            if bound is not None:
                detail = _("{knee}; bounded by {load}: {why}").format(
                    knee=detail, load=step_label(sweep["parameter"], bound["load"]),
                    why=_(_BOUNDS.get(bound["why"], bound["why"])))
            # i18n: two clauses of one line: "model: knee 4 (…); stopped early: …"
            text = _("{first}; {second}").format(first=text, second=html.escape(detail))
    else:
        text = html.escape(_("{model}: knee none ({rule})")).format(model=name, rule=rule)
    if model["stop_reason"]:
        stopped = html.escape(_("stopped early: {reason}").format(reason=_(model["stop_reason"])))
        # i18n: two clauses of one line: "model: knee 4 (…); stopped early: …"
        text = _("{first}; {second}").format(first=text, second=stopped)
    return text


def write_html(path: str, report) -> None:
    from taotoken_cli.cmd.bench.artifacts import masked

    text = masked(render(report))  # an echoed key (with or without its prefix) is masked in the file too
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
