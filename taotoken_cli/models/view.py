"""Rendering `taotoken models`: one ID per line for pipes (`taotoken models | grep qwen`), a table that fits the
terminal (80 columns as often as not) with the configured and routed models marked, or JSON. Plain text, no rich:
the columns are simple and IDs must never be folded (they are copied from here)."""

from __future__ import annotations

from taotoken_cli.diagnosis.text import failure_lines
from taotoken_cli.iostreams import IOStreams
from taotoken_cli.models.model import ModelsReport
from taotoken_cli.output import Output

_GREEN, _RESET = "\033[32m", "\033[0m"
MIN_WIDTH = 40
ELLIPSIS = "…"


def terminal_width(io: IOStreams) -> int:
    """COLUMNS when set (as shells and tests set it), else the terminal's own width, else 80 (as every view)."""
    return max(MIN_WIDTH, io.out.width)


def render_json(out: Output, report: ModelsReport) -> None:
    out.json(report.to_dict())


def render_failure(out: Output, report: ModelsReport) -> None:
    request = ""
    if report.url is not None:
        status = "000" if report.status is None else str(report.status)
        request = f"{status} GET {report.url} {report.latency_ms or 0:.0f} ms"
    assert report.diagnosis is not None
    for line in failure_lines(report.diagnosis, request=request, responded=report.status is not None,
                              proxy=report.proxy, color=out.err_color, width=out.err_width):
        out.error_line(line)


def render_ids(out: Output, report: ModelsReport) -> None:
    """For pipes and scripts: the matching IDs, one a line, nothing else on stdout."""
    for row in report.rows:
        out.line(row.model.id)
    _no_match(out, report)


def _no_match(out: Output, report: ModelsReport) -> None:
    if not report.no_match:
        return
    text = f"no listed model matches {report.pattern!r} ({len(report.listed)} listed)"
    if report.close_matches:
        text += "; close: " + ", ".join(report.close_matches)
    out.error_wrapped(text, hang="  ")


ID_MIN = 20  # a longer ID gets a line of its own rather than being cut (IDs are copied from here)
# How a table too wide for the terminal is made narrower, step by step: (column, what, down to).
NARROWING = (("ID", "wrap", ID_MIN), ("OWNED BY", "cut", 8), ("CREATED", "drop", 0), ("USED AS", "cut", 10),
             ("OWNED BY", "drop", 0), ("USED AS", "drop", 0))


def fit_columns(columns: dict[str, list[str]], width: int) -> dict[str, int]:
    """Each kept column's width, so that a row fits `width` (ID first; a longer ID wraps onto its own line)."""
    widths = {name: max(len(name), *(len(v) for v in values)) for name, values in columns.items()}

    def total() -> int:
        return 2 + sum(widths.values()) + 2 * (len(widths) - 1)

    for name, what, floor in NARROWING:
        if total() <= width:
            break
        if name not in widths:
            continue
        if what == "drop":
            del widths[name]
        else:
            widths[name] = max(floor, len(name), widths[name] - (total() - width))
    return widths


def _cell(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + ELLIPSIS


def render_table(out: Output, report: ModelsReport, *, width: int = 80) -> None:
    """For a terminal: a heading, the table (ID, owner, created, use) and what the profile uses that is not listed."""
    count = len(report.listed)
    where = f"from {report.url} in {report.latency_ms or 0:.0f} ms"
    if not count:
        out.line(f"the gateway lists no models for key {report.key}")
        out.line(where)
        out.line("if it serves models it does not list: taotoken check --allow-unlisted")
    else:
        head = (f"{len(report.rows)} of {count} models match {report.pattern!r}" if report.pattern
                else f"{count} model{'s' if count != 1 else ''}")
        out.wrapped(f"{head} for key {report.key} (profile {report.profile!r})", hang="  ")
        out.line(where)
    if report.rows:
        out.line("")
        _table(out, report, width)
    _no_match(out, report)
    for item in report.unlisted:
        what = (f"the configured model {item.model!r}" if item.use == "model"
                else f"route {item.route} -> {item.model!r}")
        close = f" (close: {', '.join(item.close_matches)})" if item.close_matches else ""
        out.error_wrapped(f"{what} is not listed{close}; fix: {item.fix}", "warning: ")
    for note in report.notes:
        out.error_note(note)


def _table(out: Output, report: ModelsReport, width: int) -> None:
    columns = {"ID": [r.model.id for r in report.rows], "USED AS": [r.uses for r in report.rows],
               "OWNED BY": [r.model.owned_by or "" for r in report.rows],
               "CREATED": [r.model.created_date or "" for r in report.rows]}
    columns = {name: values for name, values in columns.items() if name == "ID" or any(values)}
    widths = fit_columns(columns, width)
    out.line("  " + "  ".join(name.ljust(w) for name, w in widths.items()).rstrip())
    for n, row in enumerate(report.rows):
        model_id = row.model.id
        rest = "  ".join(_cell(columns[name][n], w).ljust(w) for name, w in widths.items() if name != "ID").rstrip()
        mark = "* " if row.configured else "  "
        if len(model_id) > widths["ID"]:  # the whole ID on its line, the other columns under it
            lines = [model_id, (" " * (widths["ID"] + 2) + rest).rstrip()] if rest else [model_id]
        else:
            lines = [(model_id.ljust(widths["ID"]) + "  " + rest).rstrip()]
        for i, line in enumerate(lines):
            painted = f"{_GREEN}{line}{_RESET}" if row.configured and out.color else line
            out.line((mark if i == 0 else "  ") + painted)
    if any(r.configured for r in report.rows):
        out.line("* the configured model")
