"""Turning a doctor Report into text (TTY or plain) or a stable JSON object. No checks run here."""

from __future__ import annotations

from typing import Any

from taotoken_cli import __version__
from taotoken_cli.cmd.doctor.model import SECTIONS, Check, Finding, Report, Status, and_more
from taotoken_cli.core.base.fix import Command, Fix, texts
from taotoken_cli.core.base.i18n import N_, _, listed, ngettext
from taotoken_cli.core.term.layout import cell_width, table, wrap
from taotoken_cli.core.term.output import Output

_UNICODE_MARKS = {Status.OK: "[✓]", Status.WARN: "[!]", Status.FAIL: "[✗]", Status.SKIPPED: "[-]"}
# i18n: the marks of a terminal that cannot show ✓ ✗ (a GBK console shows Chinese, not ✓)
_ASCII_MARKS = {Status.OK: N_("[OK]"), Status.WARN: N_("[WARN]"), Status.FAIL: N_("[FAIL]"),
                Status.SKIPPED: N_("[SKIP]")}
_STYLES = {Status.OK: "green", Status.WARN: "yellow", Status.FAIL: "bold red", Status.SKIPPED: "dim"}
JSON_SCHEMA = 1


def unicode_ok(out: Output) -> bool:
    """Can the terminal show ✓ ✗ • → …? (Not on a C/POSIX locale or a cp1252 console.)"""
    return out.unicode


class _Writer:
    """Lines fitted to the terminal (hanging indents, commands kept whole: taotoken_cli.core.term.layout), styled on a
    colour terminal, ASCII on a terminal that cannot show ✓."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.width = out.width
        self.unicode = unicode_ok(out)
        self.marks = _UNICODE_MARKS if self.unicode else {s: _(m) for s, m in _ASCII_MARKS.items()}
        self.bullet = "•" if self.unicode else "-"

    def text(self, text: str | Fix) -> str | Fix:
        if self.unicode:
            return text
        if isinstance(text, Fix):
            return text.mapped(self.text)  # type: ignore[arg-type]
        # Values may contain the ellipsis of a masked key, arrows etc.: keep the line printable.
        return text.replace("…", "...").replace("→", "->").replace("✓", "ok").replace("✗", "x").replace(
            "—", "-").encode(self.out.out.encoding or "ascii", errors="replace").decode(
            self.out.out.encoding or "ascii")

    def line(self, text: str | Fix = "", style: str | None = None, prefix: str = "", hang: str | None = None) -> None:
        for line in wrap(self.text(text), self.width, str(self.text(prefix)), hang):
            if style and self.out.color:
                from rich.text import Text

                self.out.console.print(Text(line, style=style), soft_wrap=True)  # wrapped already
            else:
                self.out.line(line)


def verdict_line(report: Report) -> str | Fix:
    fails, warns = report.count(Status.FAIL), report.count(Status.WARN)
    ran = len(report.findings) - report.count(Status.SKIPPED)
    skipped = report.count(Status.SKIPPED)
    if skipped:
        tally = ngettext("{n} check run, {skipped} skipped", "{n} checks run, {skipped} skipped", ran)
    else:
        tally = ngettext("{n} check run", "{n} checks run", ran)
    tally = tally.format(n=ran, skipped=skipped)
    failures = ngettext("{n} failure", "{n} failures", fails).format(n=fails)
    warnings = ngettext("{n} warning", "{n} warnings", warns).format(n=warns)
    if fails:
        verdict = _("✗ Doctor found {failures} and {warnings} ({tally})").format(failures=failures,
                                                                                 warnings=warnings, tally=tally)
    elif warns:
        verdict = (_("! No failures, {warnings} (--strict: treated as failure) ({tally})") if report.strict
                   else _("! No failures, {warnings} ({tally})")).format(warnings=warnings, tally=tally)
    else:
        return _("✓ No issues found ({tally}).").format(tally=tally)
    repairable = sum(1 for f in report.findings if f.result.repairs)
    if repairable:
        return Fix.of(_("{verdict}; {command} can repair {n} of them."), verdict=verdict, n=repairable,
                      command=Command("taotoken doctor --fix"))
    return _("{verdict}.").format(verdict=verdict)


def progress_text(checks: list[Check], done: set[str]) -> str:
    """The spinner's line while the checks run: how many are done, and which ones it waits for."""
    waiting = [_(c.title) for c in checks if c.id not in done]
    finished = len(checks) - len(waiting)
    if not waiting:
        return ngettext("{done} of {n} check done", "{done} of {n} checks done", len(checks)).format(
            done=finished, n=len(checks))
    return ngettext("{done} of {n} check done, waiting for: {title}",
                    "{done} of {n} checks done, waiting for: {title}", len(checks)).format(
        done=finished, n=len(checks), title=and_more(waiting[0], len(waiting) - 1))


def _header(report: Report, verbose: bool) -> str:
    if report.offline:
        head = (_("taotoken doctor — profile {profile}, offline") if verbose
                else _("taotoken doctor — profile {profile}, offline (details: taotoken doctor -v)"))
    else:
        head = (_("taotoken doctor — profile {profile}") if verbose
                else _("taotoken doctor — profile {profile} (details: taotoken doctor -v)"))
    return head.format(profile=report.profile)


def _label(text: str) -> str:
    """A label before a line ("fix: taotoken init"): a space after it, unless it ends in a full-width colon."""
    return text if text.endswith("：") else text + " "


def render_text(out: Output, report: Report, *, verbose: bool = False) -> None:
    w = _Writer(out)
    w.line(_header(report, verbose), hang="  ")
    by_section: dict[str, list[Finding]] = {}
    for finding in report.findings:
        by_section.setdefault(finding.check.section, []).append(finding)
    for section in SECTIONS:
        findings = by_section.get(section)
        if not findings:
            continue
        w.line()
        w.line(_(section), "bold")
        for group in _groups(findings, verbose):
            _render_finding(w, group[0], verbose, more=len(group) - 1)
    w.line()
    if report.timed_out:
        w.line(_("Timed out after {seconds} s: {ids}").format(seconds=f"{report.deadline_s:g}",
                                                              ids=listed(report.timed_out)),
               _STYLES[Status.FAIL], hang="  ")
    if verbose:
        w.line(_("Finished in {seconds} s.").format(seconds=f"{report.elapsed_s:.1f}"))
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
    title = and_more(_(finding.check.title), more)
    headline = _("{title}: {message}").format(title=title, message=result.message)
    w.line(headline + suffix, _STYLES[result.status], prefix=f"  {mark} ")
    if not (problem or verbose):
        return
    indent = " " * (cell_width(mark) + 3)
    for detail in result.details:
        w.line(detail, prefix=f"{indent}{w.bullet} ")
    for fix in result.fixes:
        w.line(fix, prefix=indent + _label(_("fix:")))
    for repair in result.repairs:
        w.line(_("{description} ({path})").format(description=repair.description, path=repair.path),
               prefix=indent + _label(_("--fix:")))


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    result = finding.result
    return {
        "id": finding.check.id,
        "section": finding.check.section,
        "title": finding.check.title,
        "status": result.status.value,
        "message": result.message,
        "details": list(result.details),
        "fixes": texts(result.fixes),  # the lines as text, as always; fix_steps: each with its commands
        "fix_steps": [Fix.coerce(fix).to_dict() for fix in result.fixes],
        "repairs": [{"path": str(r.path), "description": r.description} for r in result.repairs],
        "code": result.code,
        "latency_ms": result.latency_ms,
        "elapsed_ms": round(finding.elapsed_s * 1000, 1),
        "timed_out": result.timed_out,
    }


def report_to_dict(report: Report) -> dict[str, Any]:
    """Stable shape: static keys only (checks are a list, never a map keyed by id); the key is masked."""
    return {
        "version": __version__,
        "verdict": report.verdict.value,
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
        out.json({"checks": [{"id": c.id, "section": c.section, "title": c.title, "network": c.network}
                            for c in checks]}, schema=JSON_SCHEMA, exit_code=0)
        return
    sections: dict[str, list[Check]] = {}
    for c in checks:
        sections.setdefault(c.section, []).append(c)
    id_width = max(len(c.id) for c in checks)  # one column width for every section
    for number, (section, members) in enumerate(sections.items()):
        out.line(("\n" if number else "") + _(section))
        rows = [[c.id.ljust(id_width), _("{title}  (network)").format(title=_(c.title)) if c.network
                 else _(c.title)] for c in members]
        for line in table(None, rows, out.width, align="ll"):
            out.line(line)
