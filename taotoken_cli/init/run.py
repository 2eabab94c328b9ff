"""`taotoken init` from options to exit status: undo, or plan → show → confirm → apply → hand over links."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from taotoken_cli import fileplan
from taotoken_cli.clients import ccswitch
from taotoken_cli.clients.base import Machine
from taotoken_cli.config import config_dir
from taotoken_cli.exitcodes import Exit
from taotoken_cli.init import view
from taotoken_cli.init.plan import InitRequest, build
from taotoken_cli.iostreams import IOStreams
from taotoken_cli.output import Output


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
        view.render_undo(out, fileplan.undo_last(own_dir, force=options.force))
        return Exit.OK
    try:  # Ctrl-D or Ctrl-C at any question: nothing has been written yet
        planned = build(options.request, io, assume_yes=options.yes)
        view.render_plan(out, planned, dry_run=options.dry_run)
        view.render_notes(out, planned.plan)
        apply = not planned.plan.is_noop and not options.dry_run and io.prompter.confirm(
            "Apply these changes?", assume_yes=options.yes)
    except KeyboardInterrupt:
        out.error_line("\ncancelled: nothing was written")
        return Exit.INTERRUPTED
    if planned.plan.is_noop:
        out.line("already up to date: every file already has these values; nothing was written")
    elif options.dry_run:
        out.line("dry run: nothing was written")
        return Exit.OK
    elif not apply:
        out.line("cancelled: nothing was written")
        return Exit.FAILURE
    else:
        view.render_applied(out, fileplan.apply(planned.plan, own_dir))
    if options.request.open_links and planned.links:
        open_links(out, planned.links, own_dir)
    view.render_next(out, planned, Machine.of(io.env, io.cwd))
    return Exit.OK


def open_links(out: Output, links: Mapping[str, str], own_dir) -> None:
    for app, link in links.items():
        problem = ccswitch.open_link(link)
        if problem:
            out.error_line(f"warning: could not open the CC Switch link for {app}: {problem}; the links are in "
                           f"{own_dir / ccswitch.LINKS_FILE}")
        else:
            out.line(f"opened the CC Switch import link for {app}: confirm it in CC Switch")
