"""The one apply flow: plan → show → confirm → apply → report, for every command that writes the user's files.

A command builds a fileplan `Plan` (init, `config set`/`config sync`, `doctor --fix`) and hands it to `run` with
a `Flow`: what the user chose (`--yes`, `--dry-run`) and the few texts that are the command's own (doctor's
heading and its "--fix:" lines). Everything else is the same for every command: the list of changes, the
notes and warnings, the masked diff, the one question (refused without a terminal unless `--yes`), Ctrl-C at
the question, the backup and `taotoken init --undo`, and what was written.

A change to taotoken's own file alone, which the user named on the command line (`config set` when no copy
follows, `route set`), is the command's own confirmation: `write_own` writes it at once, atomically, with no
question and no backup (as `git config` does).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, clauses, listed
from taotoken_cli.core.base.oserrors import os_error_text
from taotoken_cli.core.files import fileplan
from taotoken_cli.core.files.fileplan import OWN_TARGET, ApplyResult, FileChange, Plan
from taotoken_cli.core.files.fsutil import atomic_write, tilde
from taotoken_cli.core.term.iostreams import IOStreams
from taotoken_cli.core.term.layout import cell_width, pad
from taotoken_cli.core.term.output import Output

UNDO_COMMAND = "taotoken init --undo"


@dataclass
class Flow:
    """What one run of a command decides about the flow; the defaults are what init and config say."""

    command: str  # recorded in the backup's manifest: "taotoken init", "taotoken config sync", …
    yes: bool = False  # --yes: apply without asking
    dry_run: bool = False  # --dry-run: show the masked diffs, write nothing
    offers_dry_run: bool = False  # the command has --dry-run: a refusal without a terminal names it
    diff: bool = False  # show the masked diff before asking, not only with --dry-run (doctor --fix)
    notes: bool = True  # what the changes mean (init's first write); a sync needs only the warnings
    # one line per target (what it changes), the notes but not the details, and after writing only the undo
    # command (init without -v or --dry-run); the full list of changes otherwise
    compact: bool = False
    heading: str | None = None  # the line above the changes (default "changes:")
    declined: str | None = None  # said when the answer is no (default "cancelled: nothing was written")
    report: Callable[[Output, ApplyResult], None] | None = None  # what was written (default `report_applied`)
    # run after the files are written (Windows: the user environment follows windows-env.json); a problem it
    # returns is a warning, the files stay written
    after_apply: Callable[[], str | None] | None = None


class Step(Enum):
    """Where the flow stopped."""

    NOOP = "noop"  # every file already holds the planned content
    DRY_RUN = "dry_run"
    DECLINED = "declined"
    INTERRUPTED = "interrupted"  # Ctrl-C or Ctrl-D at the question
    APPLIED = "applied"


@dataclass
class Outcome:
    step: Step
    result: ApplyResult | None = None

    @property
    def exit_code(self) -> int:
        return {Step.DECLINED: Exit.FAILURE, Step.INTERRUPTED: Exit.INTERRUPTED}.get(self.step, Exit.OK)


def run(io: IOStreams, plan: Plan, flow: Flow, config_dir: Path, *,
        blocker: TaotokenError | None = None) -> Outcome:
    """Show `plan`, ask, apply it through fileplan (backups, all or nothing) and say what was written.

    `blocker` is a choice the user must make first: it is raised after the plan is shown (a dry run shows the
    plan all the same). A plan that changes nothing shows only its warnings; the caller says it is up to date."""
    out = io.out
    if plan.is_noop:
        show_warnings(out, plan)
        if blocker is not None and not flow.dry_run:
            raise blocker
        return Outcome(Step.NOOP)
    show(out, plan, flow, io.env.get("HOME"))
    if blocker is not None and not flow.dry_run:
        raise blocker
    if flow.dry_run:
        out.line(_("dry run: nothing was written"))
        return Outcome(Step.DRY_RUN)
    try:
        agreed = io.prompter.confirm(_("Apply these changes?"), assume_yes=flow.yes,
                                     dry_run_hint=flow.offers_dry_run)
    except KeyboardInterrupt:
        cancelled(out)
        return Outcome(Step.INTERRUPTED)
    if not agreed:
        out.line(flow.declined or _("cancelled: nothing was written"))
        return Outcome(Step.DECLINED)
    result = fileplan.apply(plan, config_dir, command=flow.command)
    problem = flow.after_apply() if flow.after_apply else None
    if problem:
        out.error_note(_("warning: {problem}").format(problem=problem))
    if flow.report is not None:
        flow.report(out, result)
    elif flow.compact:
        report_undo(out, result, io.env.get("HOME"))
    else:
        report_applied(out, result)
    return Outcome(Step.APPLIED, result)


def show(out: Output, plan: Plan, flow: Flow, home: str | None = None) -> None:
    """The changes (file, target, what each means), the notes and warnings, then the masked diff when asked; in
    compact form one line per target, the notes (not the details) and the warnings."""
    out.line(flow.heading or _("changes:"))
    if flow.compact:
        show_compact(out, plan, home)
    else:
        fileplan.render_changes(out, plan)
    if flow.notes:
        for note in plan.notes + (plan.repairs if flow.compact else plan.details):
            out.wrapped(note, _("note: "))
    show_warnings(out, plan)
    for line in plan.broken:  # known before anything is written: said before the question too
        out.error_wrapped(line, _("not working yet: "))
    if flow.dry_run or flow.diff:
        out.line(fileplan.plan_diff(plan).rstrip("\n"))


def show_warnings(out: Output, plan: Plan) -> None:
    for warning in plan.warnings:
        out.error_wrapped(warning, _("warning: "))


def show_compact(out: Output, plan: Plan, home: str | None) -> None:
    """`  claude-code  update ~/.claude/settings.json, create ~/.claude.json`: each target's files, in plan order."""
    by_target: dict[str, dict[bool, list[str]]] = {}
    for change in plan.pending:
        by_target.setdefault(change.target, {}).setdefault(change.creates, []).append(_shown_path(change.path, home))
    labels = {target: _("own config") if target == OWN_TARGET else target for target in by_target}
    column = max(cell_width(label) for label in labels.values()) + 2
    for target, files in by_target.items():
        parts = [(_("create {paths}") if creates else _("update {paths}")).format(paths=listed(paths))
                 for creates, paths in files.items()]
        out.wrapped(clauses(parts),
                    "  " + pad(labels[target], column), " " * (2 + column))


def _shown_path(path: Path | str, home: str | None) -> str:
    return tilde(Path(path), Path(home)) if home else str(path)


def report_undo(out: Output, result: ApplyResult, home: str | None = None) -> None:
    """After a compact plan: the one undo command, and where the backups are (nothing to list again)."""
    if result.backup_dir:
        out.wrapped(Fix.of(_("{command}   (backups of the previous versions: {path})"), command=Command(UNDO_COMMAND),
                           path=Command(_shown_path(result.backup_dir, home))), _("undo: "))
    note = fileplan.ownership_note()
    if note:
        out.error_note(_("note: {note}").format(note=note))


def cancelled(out: Output) -> None:
    """Ctrl-C or Ctrl-D at a question: nothing has been written yet, and the user is told so."""
    out.error_line("\n" + _("cancelled: nothing was written"))


def report_applied(out: Output, result: ApplyResult) -> None:
    """Each file written (and where a symlink led the write), the backups, and the one undo command."""
    for change in result.written:
        if change.removes:
            out.wrapped(str(change.path), _("removed "))
            continue
        out.wrapped(str(change.path) + (f" -> {os.path.realpath(change.path)}"
                                        if Path(change.path).is_symlink() else ""), _("wrote "))
    if result.backup_dir:  # a path: whole on a line of its own when it does not fit after the words
        out.wrapped(Fix.of("{path}", path=Command(str(result.backup_dir))), _("backups of the previous versions: "),
                    "  ")
        out.wrapped(UNDO_COMMAND, _("undo everything this run changed: "), "  ")
    note = fileplan.ownership_note()
    if note:
        out.error_note(_("note: {note}").format(note=note))


def write_own(change: FileChange) -> bool:
    """Write a change to taotoken's own file at once (no question, no backup); False when it changes nothing.

    Only for a value the user named on the command line; anything that also touches a client's file goes
    through `run`."""
    if not change.changed:
        return False
    try:
        atomic_write(change.path, change.after, secret=change.secret, mode=change.new_mode)
    except OSError as exc:
        raise TaotokenError(_("cannot write {path}: {error}").format(path=change.path, error=os_error_text(exc)),
                            _("check that {directory} is writable").format(directory=Path(change.path).parent),
                            Exit.FAILURE, code="init.write_failed") from None
    return True
