"""Rendering a CheckResult: one line, quiet, status code only, or JSON.

Plain text with at most two ANSI colours (no rich: `check` must start fast). Success goes to
stdout, failures to stderr, so `.bashrc` and scripts can capture one without the other. The words are in the
user's language; scripts read `--json`, `--code` or the exit status, which never change with it.
"""

from __future__ import annotations

from taotoken_cli.cmd.check.model import CheckResult
from taotoken_cli.core.base.fix import Fix
from taotoken_cli.core.base.i18n import _, listed, ngettext
from taotoken_cli.core.diagnosis.text import failure_lines
from taotoken_cli.core.term.layout import wrap_items
from taotoken_cli.core.term.output import Output

_GREEN, _RESET = "\033[32m", "\033[0m"


def _paint(text: str, colour: str, enabled: bool) -> str:
    return f"{colour}{text}{_RESET}" if enabled else text


def _status(status: int | None) -> str:
    return "000" if status is None else str(status)


def render_code(out: Output, result: CheckResult) -> None:
    """Like `curl -w %{http_code}`: the status of the last request, 000 when there was no response."""
    out.line(_status(result.last_status))


def render_json(out: Output, result: CheckResult) -> None:
    out.json(result.to_dict(), exit_code=result.exit_code)


def render_quiet(out: Output, result: CheckResult) -> None:
    """Nothing on success; one line (code, cause, fix) on failure."""
    diagnosis = result.diagnosis
    if diagnosis is None:
        return
    text = f"taotoken: {diagnosis.code}: {diagnosis.title}"
    if diagnosis.server_message:
        said = _("{line} (server: {message})") if result.last_status is not None else _("{line} (error: {message})")
        text = said.format(line=text, message=diagnosis.server_message)
    elif diagnosis.details:
        text = _("{line} ({detail})").format(line=text, detail=diagnosis.details[0])
    fixes = diagnosis.fixes()
    line = Fix.of(_("{line} — fix: {fix}"), line=" ".join(text.split()), fix=fixes[0]) if fixes else Fix.prose(text)
    if out.err.isatty():  # at shell start-up: wrapped, so the terminal splits no word and no command
        out.error_wrapped(line, hang="  ")
    else:  # one line: a pipe or a log reads it, nothing wraps it
        out.error_line(" ".join(str(line).split()))


def _model_part(result: CheckResult) -> str:
    if not result.model:
        return _("no model configured")
    if result.model_listed:
        return _("model {model} listed").format(model=result.model)
    if result.model_listed is False:
        text = _("model {model} NOT listed").format(model=result.model)
        if result.close_matches:
            text = _("{text} (close: {models})").format(text=text, models=listed(result.close_matches))
        if result.unlisted_allowed:
            text = _("{text} (allowed: --allow-unlisted)").format(text=text)
        return text
    return _("model {model}").format(model=result.model)


def render_line(out: Output, result: CheckResult) -> None:
    """Default view: one line on success; on failure the line plus server words, causes and fixes. What the
    hygiene cleaned in the configured values follows on stderr (`note:`/`warning:`), so stdout stays one line."""
    first = result.probes[0] if result.probes else None
    head = ""
    if first is not None:
        head = f"{_status(first.status)} {first.method} {first.url} {first.latency_ms:.0f} ms"
    diagnosis = result.diagnosis
    if diagnosis is None:
        count = result.models_count or 0
        # i18n: the mark that starts check's success line: "OK 200 GET https://… 35 ms · 3 models · …"
        mark = _("OK")
        parts = [f"{mark} {head}",
                 ngettext("{count} model", "{count} models", count).format(count=count), _model_part(result)]
        chat = next((p for p in result.probes if p.name == "chat"), None)
        if chat is not None:
            parts.append(_("chat {status} {ms} ms").format(status=_status(chat.status), ms=f"{chat.latency_ms:.0f}"))
        # one line where it fits (scripts may read it); on a narrow terminal it breaks between the parts
        lines = wrap_items(parts, out.width, hang="   ")
        lines[0] = _paint(mark, _GREEN, out.color) + lines[0][len(mark):]
        for line in lines:
            out.line(line)
    else:
        last = result.probes[-1] if result.probes else None
        if last is not None and last is not first:
            head = f"{_status(last.status)} {last.method} {last.url} {last.latency_ms:.0f} ms"
        for line in failure_lines(diagnosis, request=head, responded=result.last_status is not None,
                                  proxy=result.proxy, color=out.err_color, width=out.err_width):
            out.error_line(line)
    for note in result.labelled_notes:
        out.error_note(note)
