"""Turning a doctor Report into text (TTY or plain) or a stable JSON object. No checks run here."""

from __future__ import annotations

from typing import Any

from taotoken_cli import __version__
from taotoken_cli.doctor.model import SECTIONS, Check, Finding, Report, Status
from taotoken_cli.output import Output

_UNICODE_MARKS = {Status.OK: "[✓]", Status.WARN: "[!]", Status.FAIL: "[✗]", Status.SKIPPED: "[-]"}
_ASCII_MARKS = {Status.OK: "[OK]", Status.WARN: "[WARN]", Status.FAIL: "[FAIL]", Status.SKIPPED: "[SKIP]"}
_STYLES = {Status.OK: "green", Status.WARN: "yellow", Status.FAIL: "bold red", Status.SKIPPED: "dim"}
JSON_SCHEMA = 1


def unicode_ok(out: Output) -> bool:
    """Can the terminal show ✓ ✗ • →? (Not on a C/POSIX locale or a cp1252 console.)"""
    try:
        "✓✗•→…".encode(out.out.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class _Writer:
    def __init__(self, out: Output) -> None:
        self.out = out
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

    def line(self, text: str = "", style: str | None = None) -> None:
        text = self.text(text)
        if style and self.out.color:
            from rich.text import Text

            self.out.console.print(Text(text, style=style))
        else:
            self.out.line(text)


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


def render_text(out: Output, report: Report, *, verbose: bool = False) -> None:
    w = _Writer(out)
    head = f"taotoken doctor — profile {report.profile}"
    if report.offline:
        head += ", offline"
    if not verbose:
        head += " (details: taotoken doctor -v)"
    w.line(head)
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
        w.line(f"Timed out after {report.deadline_s:g} s: {', '.join(report.timed_out)}", _STYLES[Status.FAIL])
    if verbose:
        w.line(f"Finished in {report.elapsed_s:.1f} s.")
    verdict = report.verdict
    if report.strict and verdict is Status.WARN:
        verdict = Status.FAIL
    w.line(verdict_line(report), _STYLES[verdict])


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
    w.line(f"  {mark} {title}: {result.message}{suffix}", _STYLES[result.status])
    if not (problem or verbose):
        return
    indent = " " * (len(mark) + 3)
    for detail in result.details:
        w.line(f"{indent}{w.bullet} {detail}")
    for fix in result.fixes:
        w.line(f"{indent}fix: {fix}")
    for repair in result.repairs:
        w.line(f"{indent}--fix: {repair.description} ({repair.path})")


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
    width = max(len(c.id) for c in checks)
    section = None
    for c in checks:
        if c.section != section:
            section = c.section
            out.line(("" if c is checks[0] else "\n") + section)
        out.line(f"  {c.id:<{width}}  {c.title}" + ("  (network)" if c.network else ""))
