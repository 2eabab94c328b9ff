"""`doctor --fix`: gather the safe repairs the checks offered into one fileplan Plan, show the diff,
confirm, back up and apply — the apply flow `init` uses (core.files.applyflow), so `taotoken init --undo`
reverts it.

Repairs are mechanical (a URL normalised, whitespace stripped, a duplicate or dead entry removed, a
legacy Codex setting rewritten). Nothing here invents a key or a model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from taotoken_cli.cmd.doctor.model import Repair, Report, Status
from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.term.iostreams import IOStreams

if TYPE_CHECKING:
    from taotoken_cli.core.files.fileplan import ApplyResult
    from taotoken_cli.core.term.output import Output


@dataclass
class FixOutcome:
    planned: int = 0  # files with a pending change
    applied: bool = False
    interrupted: bool = False  # Ctrl-C at the question: nothing was written
    backup_dir: Path | None = None
    skipped: list[Fix | str] = field(default_factory=list)  # repairs that could not be planned, with the reason


def build_plan(report: Report):
    """One FileChange per file; several repairs of the same file are applied in order."""
    from taotoken_cli.core.files.fileplan import FileChange, Plan, read_current
    from taotoken_cli.core.files.fsutil import resolve_target

    by_file: dict[Path, list[tuple[str, Repair]]] = {}
    for finding in report.findings:
        if finding.status in (Status.WARN, Status.FAIL):
            for repair in finding.result.repairs:
                by_file.setdefault(resolve_target(repair.path), []).append((finding.check.id, repair))
    plan = Plan()
    skipped: list[Fix | str] = []
    for _real, repairs in by_file.items():
        path = repairs[0][1].path
        if len(repairs) > 1 and any(r.whole_file for _check, r in repairs):  # a sync would overwrite the other repairs
            skipped += [Fix.of(_("{path}: {repair} waits: run {command} again after this run"), path=path,
                               repair=r.description, command=Command("taotoken doctor --fix"))
                        for _check, r in repairs if r.whole_file]
            repairs = [(check_id, r) for check_id, r in repairs if not r.whole_file]
        before = read_current(path)
        text = (before or b"").decode("utf-8", errors="strict") if before is not None else ""
        summary = []
        try:
            for check_id, repair in repairs:
                text = repair.transform(text)
                summary.append(f"{repair.description}  ({check_id})")
        except (TaotokenError, UnicodeDecodeError, KeyError, TypeError) as exc:
            reason = exc.message if isinstance(exc, TaotokenError) else f"{type(exc).__name__}: {exc}"
            skipped.append(_("{path}: not repaired ({reason})").format(path=path, reason=reason))
            continue
        plan.add(FileChange(path, before, text.encode("utf-8"), secret=any(r.secret for _check, r in repairs),
                            summary=summary, target="doctor"))
    return plan, skipped


def offer_repairs(io: IOStreams, report: Report, *, assume_yes: bool) -> FixOutcome:
    from taotoken_cli.core.clients import shell
    from taotoken_cli.core.clients.base import Machine
    from taotoken_cli.core.files import applyflow
    from taotoken_cli.core.settings import config_dir

    out = io.out
    plan, skipped = build_plan(report)
    outcome = FixOutcome(planned=len(plan.pending), skipped=skipped)
    out.line("")
    for line in skipped:
        out.wrapped(Fix.of(_("--fix: {line}"), line=line), hang="  ")
    if plan.is_noop:
        out.line(_("--fix: nothing to repair automatically") if report.verdict is Status.OK else
                 _("--fix: nothing to repair automatically (the remaining problems need the fixes above)"))
        return outcome
    # "file(s)" as before: the tests of other areas read these lines (Chinese needs no plural form)
    heading = _("--fix will change {n} file(s) (a backup is kept; undo: taotoken init --undo):").format(
        n=len(plan.pending))
    flow = applyflow.Flow("taotoken doctor --fix", yes=assume_yes, diff=True, heading=heading,
                          declined=_("--fix: nothing changed"), report=_report,
                          after_apply=lambda: shell.after_apply(Machine.of(io.env, io.cwd)))
    done = applyflow.run(io, plan, flow, config_dir(io.env))
    outcome.interrupted = done.step is applyflow.Step.INTERRUPTED
    if done.result is not None:
        outcome.applied = True
        outcome.backup_dir = done.result.backup_dir
    return outcome


def _report(out: Output, result: ApplyResult) -> None:
    out.line(_("--fix: repaired {n} file(s); backup in {backup}").format(n=len(result.written),
                                                                         backup=result.backup_dir))
    out.wrapped(Fix.of(_("--fix: run {check} again to confirm; {undo} restores the old files"),
                       check=Command("taotoken doctor"), undo=Command("taotoken init --undo")), hang="  ")
