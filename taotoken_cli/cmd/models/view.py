"""Rendering `taotoken models`: one ID per line for pipes (`taotoken models | grep qwen`), a table that fits the
terminal (80 columns as often as not) with the configured and routed models marked, or JSON. Plain text, no rich:
the columns are simple and IDs must never be folded (they are copied from here). Headings and sentences are in the
user's language, so widths are display widths (a Chinese character takes two columns)."""

from __future__ import annotations

from taotoken_cli.cmd.models.model import ModelsReport, Unlisted
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, listed, ngettext
from taotoken_cli.core.diagnosis.text import failure_lines
from taotoken_cli.core.term.iostreams import IOStreams
from taotoken_cli.core.term.layout import cell_width, pad, truncate
from taotoken_cli.core.term.output import Output

_GREEN, _RESET = "\033[32m", "\033[0m"
MIN_WIDTH = 40


def terminal_width(io: IOStreams) -> int:
    """COLUMNS when set (as shells and tests set it), else the terminal's own width, else 80 (as every view)."""
    return max(MIN_WIDTH, io.out.width)


def render_json(out: Output, report: ModelsReport) -> None:
    out.json(report.to_dict(), exit_code=report.exit_code)


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
    if report.close_matches:
        text = _("no listed model matches {pattern!r} ({count} listed); close: {models}").format(
            pattern=report.pattern, count=len(report.listed), models=listed(report.close_matches))
    else:
        text = _("no listed model matches {pattern!r} ({count} listed)").format(pattern=report.pattern,
                                                                            count=len(report.listed))
    out.error_wrapped(text, hang="  ")


ID_MIN = 20  # a longer ID gets a line of its own rather than being cut (IDs are copied from here)
# How a table too wide for the terminal is made narrower, step by step: (column, what, down to).
NARROWING = (("ID", "wrap", ID_MIN), ("OWNED BY", "cut", 8), ("CREATED", "drop", 0), ("USED AS", "cut", 10),
             ("OWNED BY", "drop", 0), ("USED AS", "drop", 0))
# The columns' headings (their keys above are names, not text).
HEADINGS = {"ID": N_("ID"), "USED AS": N_("USED AS"), "OWNED BY": N_("OWNED BY"), "CREATED": N_("CREATED")}


def fit_columns(columns: dict[str, list[str]], width: int, headings: dict[str, str] | None = None) -> dict[str, int]:
    """Each kept column's width in display columns, so that a row fits `width` (ID first; a longer ID wraps onto
    its own line). `headings`: the text over each column (default: its name)."""
    headings = headings or {}
    heading = {name: cell_width(headings.get(name, name)) for name in columns}
    widths = {name: max(heading[name], *(cell_width(v) for v in values)) for name, values in columns.items()}

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
            widths[name] = max(floor, heading[name], widths[name] - (total() - width))
    return widths


def _cell(text: str, width: int) -> str:
    """`text` cut to `width` display columns (with an ellipsis), padded to them."""
    return pad(truncate(text, width), width)


def render_table(out: Output, report: ModelsReport, *, width: int = 80) -> None:
    """For a terminal: a heading, the table (ID, owner, created, use) and what the profile uses that is not listed."""
    count = len(report.listed)
    where = _("from {url} in {ms} ms").format(url=report.url, ms=f"{report.latency_ms or 0:.0f}")
    if not count:
        out.wrapped(_("the gateway lists no models for key {key}").format(key=report.key), hang="  ")
        out.wrapped(where, hang="  ")
        out.wrapped(Fix.of(_("if it serves models it does not list: {command}"),
                           command=Command("taotoken check --allow-unlisted")), hang="  ")
    else:
        if report.pattern:
            head = ngettext("{matched} of {count} model matches {pattern!r} for key {key} (profile {profile!r})",
                            "{matched} of {count} models match {pattern!r} for key {key} (profile {profile!r})",
                            count)
        else:
            head = ngettext("{count} model for key {key} (profile {profile!r})",
                            "{count} models for key {key} (profile {profile!r})", count)
        out.wrapped(head.format(matched=len(report.rows), count=count, pattern=report.pattern, key=report.key,
                                profile=report.profile), hang="  ")
        out.wrapped(where, hang="  ")
    if report.rows:
        out.line("")
        _table(out, report, width)
    _no_match(out, report)
    for item in report.unlisted:
        out.error_wrapped(_unlisted_text(item), _("warning: "))
    for note in report.notes:
        out.error_note(note)


def _unlisted_text(item: Unlisted) -> Fix:
    close = listed(item.close_matches)
    if item.use == "model":
        text = (_("the configured model {model!r} is not listed (close: {close}); fix: {fix}") if close
                else _("the configured model {model!r} is not listed; fix: {fix}"))
    else:
        text = (_("route {route} -> {model!r} is not listed (close: {close}); fix: {fix}") if close
                else _("route {route} -> {model!r} is not listed; fix: {fix}"))
    return Fix.of(text, model=item.model, route=item.route, close=close, fix=item.fix)


def _table(out: Output, report: ModelsReport, width: int) -> None:
    columns = {"ID": [r.model.id for r in report.rows], "USED AS": [r.uses for r in report.rows],
               "OWNED BY": [r.model.owned_by or "" for r in report.rows],
               "CREATED": [r.model.created_date or "" for r in report.rows]}
    columns = {name: values for name, values in columns.items() if name == "ID" or any(values)}
    headings = {name: _(HEADINGS[name]) for name in columns}
    widths = fit_columns(columns, width, headings)
    out.line("  " + "  ".join(pad(headings[name], w) for name, w in widths.items()).rstrip())
    for n, row in enumerate(report.rows):
        model_id = row.model.id
        rest = "  ".join(_cell(columns[name][n], w) for name, w in widths.items() if name != "ID").rstrip()
        mark = "* " if row.configured else "  "
        if cell_width(model_id) > widths["ID"]:  # the whole ID on its line, the other columns under it
            lines = [model_id, (" " * (widths["ID"] + 2) + rest).rstrip()] if rest else [model_id]
        else:
            lines = [(pad(model_id, widths["ID"]) + "  " + rest).rstrip()]
        for i, line in enumerate(lines):
            painted = f"{_GREEN}{line}{_RESET}" if row.configured and out.color else line
            out.line((mark if i == 0 else "  ") + painted)
    if any(r.configured for r in report.rows):
        out.line(_("* the configured model"))
