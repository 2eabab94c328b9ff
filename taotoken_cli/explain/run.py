"""Core of `taotoken explain`: render catalogue entries, with placeholders filled from the config."""

from __future__ import annotations

from taotoken_cli.diagnosis.catalogue import CATALOGUE, close_codes
from taotoken_cli.diagnosis.classify import Diagnosis
from taotoken_cli.errors import InputError
from taotoken_cli.output import Output


def _context() -> dict[str, str]:
    """{base}, {openai_base}, {model}, {host} from the active profile, when it loads; else none."""
    try:
        from urllib.parse import urlsplit

        from taotoken_cli.config import load_settings

        settings = load_settings()
    except Exception:  # explain must work even with a broken config; placeholders then stay visible
        return {}
    context: dict[str, str] = {}
    base = settings.base_url.value
    if base:
        context.update(base=base, openai_base=base + "/v1", host=urlsplit(base).hostname or "")
    if settings.model.value:
        context["model"] = settings.model.value
    return context


def explain_code(out: Output, code: str, json_out: bool = False) -> None:
    wanted = code.strip().lower()
    entry = CATALOGUE.get(wanted)
    if entry is None:
        near = close_codes(wanted)
        hint = ("did you mean: " + ", ".join(near) + "?  " if near else "") + "all codes: taotoken explain --list"
        raise InputError(f"unknown code {code!r}", hint)
    diagnosis = Diagnosis(entry.code, entry, context=_context())
    if json_out:
        data = diagnosis.to_dict()
        for transient in ("server_message", "retry_after_s", "details"):
            data.pop(transient)
        out.json(data)
        return
    out.line(f"{entry.code} — {entry.title}")
    out.line(f"exit status: {int(entry.exit)} ({entry.exit.name.lower()})   "
             f"retry: {'may succeed later' if entry.retry else 'no, retrying will not help'}")
    out.line("likely causes, most likely first:")
    for number, cause in enumerate(diagnosis.causes(), 1):
        out.line(f"  {number}. {cause}")
    out.line("fix:")
    for fix in diagnosis.fixes():
        out.line(f"  - {fix}")


def list_codes(out: Output, json_out: bool = False) -> None:
    if json_out:
        out.json([{"code": e.code, "exit_code": int(e.exit), "retry": e.retry, "title": e.title}
                  for e in CATALOGUE.values()])
        return
    width = max(len(code) for code in CATALOGUE)
    for entry in CATALOGUE.values():
        out.line(f"{entry.code:<{width}}  {int(entry.exit)}  {entry.title}")
