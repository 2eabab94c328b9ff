"""`taotoken init` from options to exit status: undo, or plan → the apply flow (core.files.applyflow) → hand over
links."""

from __future__ import annotations

from dataclasses import dataclass, field

from taotoken_cli.cmd.init import view
from taotoken_cli.cmd.init.plan import InitRequest, build
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.clients import ccswitch, shell
from taotoken_cli.core.clients.base import Machine, Triple
from taotoken_cli.core.files import applyflow, fileplan
from taotoken_cli.core.settings import config_dir
from taotoken_cli.core.term.iostreams import IOStreams


@dataclass
class InitOptions:
    request: InitRequest = field(default_factory=InitRequest)
    yes: bool = False  # apply without asking
    dry_run: bool = False  # show masked diffs, write nothing
    undo: bool = False  # restore every file of the last run
    force: bool = False  # with undo: also files edited since that run
    verbose: bool = False  # every change, note and file written; default (unless --dry-run): one line per client


def run(options: InitOptions, io: IOStreams) -> int:
    out = io.out
    own_dir = config_dir(io.env)
    if options.undo:
        machine = Machine.of(io.env, io.cwd, own_dir)
        before = shell.before_undo(machine)  # the Windows user environment that run replaced, the macOS agent
        from taotoken_cli.core.settings.edit import OWN_MERGE, revert_own_change

        view.render_undo(out, fileplan.undo_last(own_dir, force=options.force, env=io.env,
                                                 mergers={OWN_MERGE: revert_own_change}))
        _warn(out, shell.after_undo(machine, before))
        return Exit.OK
    compact = not (options.verbose or options.dry_run)
    flow = applyflow.Flow("taotoken init", yes=options.yes, dry_run=options.dry_run, offers_dry_run=True,
                          compact=compact,
                          after_apply=lambda: shell.after_apply(Machine.of(io.env, io.cwd, own_dir)))
    try:  # Ctrl-D or Ctrl-C at any question: nothing has been written yet
        planned = build(options.request, io, assume_yes=options.yes)
    except KeyboardInterrupt:
        applyflow.cancelled(out)
        return Exit.INTERRUPTED
    view.render_plan(out, planned, compact=compact)
    outcome = applyflow.run(io, planned.plan, flow, own_dir, blocker=planned.blocker)
    if outcome.step is applyflow.Step.NOOP:
        out.wrapped(_("already up to date: every file already has these values; nothing was written"), hang="  ")
    elif outcome.step is not applyflow.Step.APPLIED:
        return outcome.exit_code
    added: list[str] = []  # the apps CC Switch's command line took: their links need no handing over
    if options.request.open_links and planned.links:
        open_links(io, planned.triple, planned.links, options.request.open_app)
    elif planned.cli is not None and planned.cli.cli_apps and outcome.result and outcome.result.backup_dir:
        added, failed, steps = ccswitch.add_with_cli(planned.cli, planned.triple, dict(io.env))
        if steps:  # `init --undo` deletes them again
            fileplan.record_steps(outcome.result.backup_dir, steps)
        view.render_added_with_cli(out, added, failed, config_dir(io.env) / ccswitch.LINKS_FILE)
    if planned.plan.broken:  # never "next: check" while a client it wrote is known not to work
        view.render_broken(out, planned.plan.broken)
        return Exit.FAILURE
    view.render_next_command(out, planned, Machine.of(io.env, io.cwd),
                             links_pending=compact and bool(set(planned.links) - set(added))
                             and not options.request.open_links)
    return Exit.OK


def _warn(out, problem: str | None) -> None:
    if problem:
        out.error_note(_("warning: {problem}").format(problem=problem))


def open_links(io: IOStreams, triple: Triple, links: dict[str, str], only: str | None) -> None:
    """Hand the CC Switch links over one at a time: its import dialog holds one request, so the next waits for
    Enter on a terminal, or for another run without one. A link whose endpoint CC Switch has is left out."""
    links, notes = ccswitch.pending_links(triple, Machine.of(io.env, io.cwd), links, only)
    view.render_link_notes(io.out, notes)
    apps = list(links)
    for app, next_app in zip(apps, [*apps[1:], None], strict=False):
        problem = ccswitch.open_link(links[app])
        view.render_opened(io.out, app, problem, config_dir(io.env) / ccswitch.LINKS_FILE)
        if problem or next_app is None:
            return
        if not io.prompter.pause(_("Confirm the {app} import in CC Switch; next: the {next_app} link").format(
                app=ccswitch.APP_LABELS[app], next_app=ccswitch.APP_LABELS[next_app])):
            view.render_next_link(io.out, app, next_app)
            return
