"""Rendering a CheckResult: one line, quiet, status code only, or JSON.

Plain text with at most two ANSI colours (no rich: `check` must start fast). Success goes to
stdout, failures to stderr, so `.bashrc` and scripts can capture one without the other.
"""

from __future__ import annotations

from taotoken_cli.check.model import CheckResult
from taotoken_cli.diagnosis.text import failure_lines
from taotoken_cli.output import Output

_GREEN, _RESET = "\033[32m", "\033[0m"


def _paint(text: str, colour: str, enabled: bool) -> str:
    return f"{colour}{text}{_RESET}" if enabled else text


def _status(status: int | None) -> str:
    return "000" if status is None else str(status)


def render_code(out: Output, result: CheckResult) -> None:
    """Like `curl -w %{http_code}`: the status of the last request, 000 when there was no response."""
    out.line(_status(result.last_status))


def render_json(out: Output, result: CheckResult) -> None:
    out.json(result.to_dict())


def render_quiet(out: Output, result: CheckResult) -> None:
    """Nothing on success; one line (code, cause, fix) on failure."""
    diagnosis = result.diagnosis
    if diagnosis is None:
        return
    text = f"taotoken: {diagnosis.code}: {diagnosis.entry.title}"
    if diagnosis.server_message:
        said = "server" if result.last_status is not None else "error"
        text += f" ({said}: {diagnosis.server_message})"
    elif diagnosis.details:
        text += f" ({diagnosis.details[0]})"
    fixes = diagnosis.fixes()
    if fixes:
        text += f" — fix: {fixes[0]}"
    out.error_line(" ".join(text.split()))


def _model_part(result: CheckResult) -> str:
    if not result.model:
        return "no model configured"
    if result.model_listed:
        return f"model {result.model} listed"
    if result.model_listed is False:
        text = f"model {result.model} NOT listed"
        if result.close_matches:
            text += " (close: " + ", ".join(result.close_matches) + ")"
        if result.unlisted_allowed:
            text += " (allowed: --allow-unlisted)"
        return text
    return f"model {result.model}"


def render_line(out: Output, result: CheckResult) -> None:
    """Default view: one line on success; on failure the line plus server words, causes and fixes. What the
    hygiene cleaned in the configured values follows on stderr (`note:`/`warning:`), so stdout stays one line."""
    first = result.probes[0] if result.probes else None
    head = ""
    if first is not None:
        head = f"{_status(first.status)} {first.method} {first.url} {first.latency_ms:.0f} ms"
    diagnosis = result.diagnosis
    if diagnosis is None:
        parts = [f"{_paint('OK', _GREEN, out.color)} {head}", f"{result.models_count} models", _model_part(result)]
        chat = next((p for p in result.probes if p.name == "chat"), None)
        if chat is not None:
            parts.append(f"chat {_status(chat.status)} {chat.latency_ms:.0f} ms")
        out.line(" · ".join(parts))  # one line, as `curl -w` prints one: scripts may read it
    else:
        last = result.probes[-1] if result.probes else None
        if last is not None and last is not first:
            head = f"{_status(last.status)} {last.method} {last.url} {last.latency_ms:.0f} ms"
        for line in failure_lines(diagnosis, request=head, responded=result.last_status is not None,
                                  proxy=result.proxy, color=out.err_color, width=out.err_width):
            out.error_line(line)
    for note in result.labelled_notes:
        out.error_note(note)
