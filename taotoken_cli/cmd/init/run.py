"""`taotoken init` from options to exit status: undo, or plan → show → confirm → apply → hand over links."""

from __future__ import annotations

from dataclasses import dataclass, field

from taotoken_cli.cmd.init import view
from taotoken_cli.cmd.init.plan import InitRequest, build
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.clients import ccswitch, winshell
from taotoken_cli.core.clients.base import Machine, Triple
from taotoken_cli.core.files import fileplan
from taotoken_cli.core.settings import config_dir
from taotoken_cli.core.term.iostreams import IOStreams


@dataclass
class InitOptions:
    request: InitRequest = field(default_factory=InitRequest)
    yes: bool = False  # apply without asking
    dry_run: bool = False  # show masked diffs, write nothing
    undo: bool = False  # restore every file of the last run
    force: bool = False  # with undo: also files edited since that run


def run(options: InitOptions, io: IOStreams) -> int:
    out = io.out
    own_dir = config_dir(io.env)
    if options.undo:
        before = winshell.before_undo(own_dir)  # Windows: the user environment that run replaced
        view.render_undo(out, fileplan.undo_last(own_dir, force=options.force))
        _warn(out, winshell.after_undo(before))
        return Exit.OK
    try:  # Ctrl-D or Ctrl-C at any question: nothing has been written yet
        planned = build(options.request, io, assume_yes=options.yes)
        view.render_plan(out, planned, dry_run=options.dry_run)
        view.render_notes(out, planned.plan)
        if planned.blocker is not None and not options.dry_run:
            raise planned.blocker
        apply = not planned.plan.is_noop and not options.dry_run and io.prompter.confirm(
            _("Apply these changes?"), assume_yes=options.yes, dry_run_hint=True)
    except KeyboardInterrupt:
        out.error_line("\n" + _("cancelled: nothing was written"))
        return Exit.INTERRUPTED
    if planned.plan.is_noop:
        out.wrapped(_("already up to date: every file already has these values; nothing was written"), hang="  ")
    elif options.dry_run:
        out.line(_("dry run: nothing was written"))
        return Exit.OK
    elif not apply:
        out.line(_("cancelled: nothing was written"))
        return Exit.FAILURE
    else:
        view.render_applied(out, fileplan.apply(planned.plan, own_dir))
        _warn(out, winshell.sync_registry(own_dir))
    if options.request.open_links and planned.links:
        open_links(io, planned.triple, options.request.open_app)
    view.render_next_command(out, planned, Machine.of(io.env, io.cwd))
    return Exit.OK


def _warn(out, problem: str | None) -> None:
    if problem:
        out.error_note(_("warning: {problem}").format(problem=problem))


def open_links(io: IOStreams, triple: Triple, only: str | None) -> None:
    """Hand the CC Switch links over one at a time: its import dialog holds one request, so the next waits for
    Enter on a terminal, or for another run without one. A link whose endpoint CC Switch has is left out."""
    links, notes = ccswitch.pending_links(triple, Machine.of(io.env, io.cwd), only)
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
