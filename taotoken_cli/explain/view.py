"""Rendering `taotoken explain`: one entry (causes and fixes), or the list of every code."""

from __future__ import annotations

from taotoken_cli.diagnosis.catalogue import Entry
from taotoken_cli.diagnosis.classify import Diagnosis
from taotoken_cli.layout import table
from taotoken_cli.output import Output


def render_entry(out: Output, diagnosis: Diagnosis, json_out: bool = False) -> None:
    entry = diagnosis.entry
    if json_out:
        data = diagnosis.to_dict()
        for transient in ("server_message", "retry_after_s", "details", "request_id", "model"):
            data.pop(transient)
        out.json(data)
        return
    out.wrapped(f"{entry.code} — {entry.title}", hang="  ")
    out.wrapped(f"exit status: {int(entry.exit)} ({entry.exit.name.lower()})   "
                f"retry: {'may succeed later' if entry.retry else 'no, retrying will not help'}", hang="  ")
    out.line("likely causes, most likely first:")
    for number, cause in enumerate(diagnosis.causes(), 1):
        out.wrapped(cause, f"  {number}. ")
    out.line("fix:")
    for fix in diagnosis.fixes():
        out.wrapped(fix, "  - ")


def render_list(out: Output, entries: list[Entry], json_out: bool = False) -> None:
    if json_out:
        out.json([{"code": e.code, "exit_code": int(e.exit), "retry": e.retry, "title": e.title} for e in entries])
        return
    rows = [[entry.code, str(int(entry.exit)), entry.title] for entry in entries]
    for line in table(None, rows, out.width, indent="", align="lll"):
        out.line(line)


def render_candidates(out: Output, query: str, kind: str, entries: list[Entry], json_out: bool = False) -> None:
    """The codes a status or a message can mean, most likely first, each with the command that explains it."""
    if json_out:
        out.json({"query": query, "kind": kind, "codes": [
            {"code": e.code, "exit_code": int(e.exit), "retry": e.retry, "title": e.title} for e in entries]})
        return
    if not entries:
        out.wrapped(f"HTTP {query} is not an error status: taotoken reports no failure for it", hang="  ")
        return
    head = f"HTTP {query} can mean" if kind == "status" else "the message reads as"
    out.line(f"{head}, most likely first:" if len(entries) > 1 else f"{head}:")
    for line in table(None, [[e.code, e.title] for e in entries], out.width, align="ll"):
        out.line(line)
    if len(entries) > 1:
        out.wrapped(f"more on each: taotoken explain {entries[0].code}", hang="  ")
