"""Turning a doctor Report into text (TTY or plain) or a stable JSON object. No checks run here."""

from __future__ import annotations

from typing import Any

from taotoken_cli import __version__
from taotoken_cli.doctor.model import SECTIONS, Check, Finding, Report, Status
from taotoken_cli.layout import table, wrap
from taotoken_cli.output import Output

_UNICODE_MARKS = {Status.OK: "[✓]", Status.WARN: "[!]", Status.FAIL: "[✗]", Status.SKIPPED: "[-]"}
_ASCII_MARKS = {Status.OK: "[OK]", Status.WARN: "[WARN]", Status.FAIL: "[FAIL]", Status.SKIPPED: "[SKIP]"}
_STYLES = {Status.OK: "green", Status.WARN: "yellow", Status.FAIL: "bold red", Status.SKIPPED: "dim"}
JSON_SCHEMA = 1


def unicode_ok(out: Output) -> bool:
    """Can the terminal show ✓ ✗ • → …? (Not on a C/POSIX locale or a cp1252 console.)"""
    return out.unicode


class _Writer:
    """Lines fitted to the terminal (hanging indents, commands kept whole: taotoken_cli.layout), styled on a
    colour terminal, ASCII on a terminal that cannot show ✓."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.width = out.width
        self.unicode = unicode_ok(out)
        self.marks = _UNICODE_MARKS if self.unicode else _ASCII_MARKS
        self.bullet = "•" if self.unicode else "-"

    def text(self, text: str) -> str:
        if self.unicode:
            return text
        # Values may contain the ellipsis of a masked key, arrows etc.: keep the line printable.
        return text.replace("…", "...").replace("→", "->").replace("✓", "ok").replace("✗", "x").replace(
            "—", "-").encode(self.out.out.encoding or "ascii", errors="replace").decode(
            self.out.out.encoding or "ascii")

    def line(self, text: str = "", style: str | None = None, prefix: str = "", hang: str | None = None) -> None:
        for line in wrap(self.text(text), self.width, self.text(prefix), hang):
            if style and self.out.color:
                from rich.text import Text

                self.out.console.print(Text(line, style=style), soft_wrap=True)  # wrapped already
            else:
                self.out.line(line)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def verdict_line(report: Report) -> str:
    fails, warns = report.count(Status.FAIL), report.count(Status.WARN)
    ran = len(report.findings) - report.count(Status.SKIPPED)
    skipped = report.count(Status.SKIPPED)
    tail = f"{_plural(ran, 'check')} run" + (f", {skipped} skipped" if skipped else "")
    repairable = sum(1 for f in report.findings if f.result.repairs)
    fix_hint = f"; `taotoken doctor --fix` can repair {repairable} of them" if repairable else ""
    if fails:
        return f"✗ Doctor found {_plural(fails, 'failure')} and {_plural(warns, 'warning')} ({tail}){fix_hint}."
    if warns:
        strict = " (--strict: treated as failure)" if report.strict else ""
        return f"! No failures, {_plural(warns, 'warning')}{strict} ({tail}){fix_hint}."
    return f"✓ No issues found ({tail})."


def progress_text(checks: list[Check], done: set[str]) -> str:
    """The spinner's line while the checks run: how many are done, and which ones it waits for."""
    waiting = [c.title for c in checks if c.id not in done]
    text = f"{len(checks) - len(waiting)} of {_plural(len(checks), 'check')} done"
    if waiting:
        text += f", waiting for: {waiting[0]}" + (f" (+{len(waiting) - 1} more)" if len(waiting) > 1 else "")
    return text


def render_text(out: Output, report: Report, *, verbose: bool = False) -> None:
    w = _Writer(out)
    head = f"taotoken doctor — profile {report.profile}"
    if report.offline:
        head += ", offline"
    if not verbose:
        head += " (details: taotoken doctor -v)"
    w.line(head, hang="  ")
    by_section: dict[str, list[Finding]] = {}
    for finding in report.findings:
        by_section.setdefault(finding.check.section, []).append(finding)
    for section in SECTIONS:
        findings = by_section.get(section)
        if not findings:
            continue
        w.line()
        w.line(section, "bold")
        for group in _groups(findings, verbose):
            _render_finding(w, group[0], verbose, more=len(group) - 1)
    w.line()
    if report.timed_out:
        w.line(f"Timed out after {report.deadline_s:g} s: {', '.join(report.timed_out)}", _STYLES[Status.FAIL],
               hang="  ")
    if verbose:
        w.line(f"Finished in {report.elapsed_s:.1f} s.")
    verdict = report.verdict
    if report.strict and verdict is Status.WARN:
        verdict = Status.FAIL
    w.line(verdict_line(report), _STYLES[verdict], hang="  ")


def _groups(findings: list[Finding], verbose: bool) -> list[list[Finding]]:
    """Consecutive checks skipped for the same reason share one line in the default view
    (six "Claude Code not found" lines say nothing five times); -v shows each."""
    groups: list[list[Finding]] = []
    for finding in findings:
        last = groups[-1][0].result if groups else None
        if (not verbose and last is not None and finding.result.status is Status.SKIPPED
                and last.status is Status.SKIPPED and last.message == finding.result.message):
            groups[-1].append(finding)
        else:
            groups.append([finding])
    return groups


def _render_finding(w: _Writer, finding: Finding, verbose: bool, more: int = 0) -> None:
    result = finding.result
    mark = w.marks[result.status]
    problem = result.status in (Status.WARN, Status.FAIL)
    suffix = f"  ({finding.check.id})" if problem or verbose else ""
    if verbose and result.code:
        suffix += f" [{result.code}]"
    title = finding.check.title + (f" (+{more} more)" if more else "")
    w.line(f"{title}: {result.message}{suffix}", _STYLES[result.status], prefix=f"  {mark} ")
    if not (problem or verbose):
        return
    indent = " " * (len(mark) + 3)
    for detail in result.details:
        w.line(detail, prefix=f"{indent}{w.bullet} ")
    for fix in result.fixes:
        w.line(fix, prefix=f"{indent}fix: ")
    for repair in result.repairs:
        w.line(f"{repair.description} ({repair.path})", prefix=f"{indent}--fix: ")


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    result = finding.result
    return {
        "id": finding.check.id,
        "section": finding.check.section,
        "title": finding.check.title,
        "status": result.status.value,
        "message": result.message,
        "details": list(result.details),
        "fixes": list(result.fixes),
        "repairs": [{"path": str(r.path), "description": r.description} for r in result.repairs],
        "code": result.code,
        "latency_ms": result.latency_ms,
        "elapsed_ms": round(finding.elapsed_s * 1000, 1),
        "timed_out": result.timed_out,
    }


def report_to_dict(report: Report) -> dict[str, Any]:
    """Stable shape: static keys only (checks are a list, never a map keyed by id); the key is masked."""
    return {
        "schema": JSON_SCHEMA,
        "version": __version__,
        "verdict": report.verdict.value,
        "exit_code": report.exit_code,
        "strict": report.strict,
        "offline": report.offline,
        "profile": report.profile,
        "config_path": report.config_path,
        "triple": dict(report.triple),
        "deadline_s": report.deadline_s,
        "elapsed_s": round(report.elapsed_s, 3),
        "counts": {status.value: report.count(status) for status in Status},
        "timed_out": report.timed_out,
        "checks": [finding_to_dict(f) for f in report.findings],
    }


def render_list(out: Output, checks: list[Check], *, json_out: bool = False) -> None:
    if json_out:
        out.json({"schema": JSON_SCHEMA, "checks": [
            {"id": c.id, "section": c.section, "title": c.title, "network": c.network} for c in checks]})
        return
    sections: dict[str, list[Check]] = {}
    for c in checks:
        sections.setdefault(c.section, []).append(c)
    id_width = max(len(c.id) for c in checks)  # one column width for every section
    for number, (section, members) in enumerate(sections.items()):
        out.line(("\n" if number else "") + section)
        rows = [[c.id.ljust(id_width), c.title + ("  (network)" if c.network else "")] for c in members]
        for line in table(None, rows, out.width, align="ll"):
            out.line(line)
