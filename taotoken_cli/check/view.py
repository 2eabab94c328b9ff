"""Rendering a CheckResult: one line, quiet, status code only, or JSON.

Plain text with at most two ANSI colours (no rich: `check` must start fast). Success goes to
stdout, failures to stderr, so `.bashrc` and scripts can capture one without the other.
"""

from __future__ import annotations

from taotoken_cli.check.model import CheckResult
from taotoken_cli.layout import wrap
from taotoken_cli.output import Output

_GREEN, _RED, _RESET = "\033[32m", "\033[31m", "\033[0m"


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
        return text
    return f"model {result.model}"


def render_line(out: Output, result: CheckResult) -> None:
    """Default view: one line on success; on failure the line plus server words, causes and fixes."""
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
        return

    last = result.probes[-1] if result.probes else None
    if last is not None and last is not first:
        head = f"{_status(last.status)} {last.method} {last.url} {last.latency_ms:.0f} ms"
    width = out.err_width
    lines = wrap(f"{head + '  ' if head else ''}{diagnosis.code}: {diagnosis.entry.title}", width, "FAIL ", "  ")
    lines[0] = _paint("FAIL", _RED, out.err_color) + lines[0][len("FAIL"):]
    if diagnosis.server_message:
        said = "server said" if result.last_status is not None else "error"
        lines += wrap(diagnosis.server_message, width, f"  {said}: ")
    for detail in diagnosis.details:
        lines += wrap(detail, width, "  ", "    ")
    if diagnosis.retry_after_s is not None:
        lines.append(f"  retry after: {diagnosis.retry_after_s:g} s")
    if result.proxy:
        lines += wrap(result.proxy, width, "  proxy: ")
    causes = diagnosis.causes()
    if causes:
        lines += wrap("; ".join(f"{i}) {cause}" for i, cause in enumerate(causes, 1)), width, "  likely: ")
    for fix in diagnosis.fixes():
        lines += wrap(fix, width, "  fix: ")
    lines.append(f"  more: taotoken explain {diagnosis.code}")
    for line in lines:
        out.error_line(line)
