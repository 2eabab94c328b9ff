"""Rendering `taotoken explain`: one entry (causes and fixes), or the list of every code. Titles, causes and
fixes in the user's language; codes and commands as they are (--json runs in English)."""

from __future__ import annotations

from taotoken_cli.core.base.exitcodes import class_name
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.diagnosis.catalogue import Entry
from taotoken_cli.core.diagnosis.classify import Diagnosis
from taotoken_cli.core.term.layout import table
from taotoken_cli.core.term.output import Output


def _json(out: Output, query: str | None, kind: str, codes: list[dict]) -> None:
    """explain's one --json shape (docs/json.md): what was asked, what kind of thing it is (a code, a status, a
    message, or the list of every code) and the codes it means; `exit_code` is explain's own status, each code's
    `exit_code` the status that failure exits with."""
    out.json({"query": query, "kind": kind, "codes": codes}, exit_code=0)


def _summary(entry: Entry) -> dict:
    return {"code": entry.code, "exit_code": int(entry.exit), "retry": entry.retry, "title": entry.title}


def render_entry(out: Output, diagnosis: Diagnosis, json_out: bool = False) -> None:
    entry = diagnosis.entry
    if json_out:
        data = diagnosis.to_dict()
        for transient in ("server_message", "retry_after_s", "details", "request_id", "model"):
            data.pop(transient)
        _json(out, entry.code, "code", [data])
        return
    out.wrapped(f"{entry.code} — {diagnosis.title}", hang="  ")
    facts = (_("exit status: {status} ({name})   retry: may succeed later") if entry.retry
             else _("exit status: {status} ({name})   retry: no, retrying will not help"))
    out.wrapped(facts.format(status=int(entry.exit), name=class_name(entry.exit)), hang="  ")
    out.line(_("likely causes, most likely first:"))
    for number, cause in enumerate(diagnosis.causes(), 1):
        out.wrapped(cause, f"  {number}. ")
    out.line(_("fix:"))
    for fix in diagnosis.fixes():
        out.wrapped(fix, "  - ")


def render_list(out: Output, entries: list[Entry], json_out: bool = False) -> None:
    if json_out:
        _json(out, None, "list", [_summary(e) for e in entries])
        return
    rows = [[entry.code, str(int(entry.exit)), _(entry.title)] for entry in entries]
    for line in table(None, rows, out.width, indent="", align="lll"):
        out.line(line)


def render_candidates(out: Output, query: str, kind: str, entries: list[Entry], json_out: bool = False,
                      status: int | None = None) -> None:
    """The codes a status or a message can mean, most likely first, each with the command that explains it."""
    if json_out:
        _json(out, query, kind, [_summary(e) for e in entries])
        return
    if not entries:
        out.wrapped(_("HTTP {status} is not an error status: taotoken reports no failure for it").format(
            status=status or query), hang="  ")
        return
    if kind == "status":
        head = (_("HTTP {status} can mean, most likely first:") if len(entries) > 1
                else _("HTTP {status} can mean:")).format(status=status or query)
    else:
        head = _("the message reads as, most likely first:") if len(entries) > 1 else _("the message reads as:")
    out.wrapped(head, hang="  ")
    for line in table(None, [[e.code, _(e.title)] for e in entries], out.width, align="ll"):
        out.line(line)
    if len(entries) > 1:
        out.wrapped(Fix.of(_("more on each: {command}"), command=Command(f"taotoken explain {entries[0].code}")),
                    hang="  ")
