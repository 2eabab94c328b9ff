"""Rendering `taotoken init`: the plan (masked diffs with --dry-run), notes and warnings, what was written,
and what --undo restored."""

from __future__ import annotations

import os
from pathlib import Path

from taotoken_cli import fileplan
from taotoken_cli.clients import ccswitch
from taotoken_cli.fileplan import Plan
from taotoken_cli.init.plan import InitPlan
from taotoken_cli.masking import mask_key
from taotoken_cli.output import Output


def render_plan(out: Output, init: InitPlan, *, dry_run: bool) -> None:
    triple = init.triple
    out.line(f"taotoken init — profile {init.profile!r}")
    out.line(f"  base URL  {triple.base_url}   (Anthropic-style clients: {triple.anthropic_base}; "
             f"OpenAI-style: {triple.openai_base})")
    out.line(f"  API key   {mask_key(triple.api_key)}")
    out.line(f"  model     {triple.model}")
    for note in init.hygiene:
        out.line(f"  {note}" if note.startswith("warning:") else f"  cleaned: {note}")
    out.line(f"targets: own config, {', '.join(init.targets) if init.targets else '(no clients)'}")
    for note in init.target_notes:
        out.line(f"  {note}")
    if init.links:
        out.line("CC Switch import links (key masked; use --open to hand them to CC Switch):")
        for app, link in init.links.items():
            out.line(f"  {app}: {ccswitch.mask_link(link, triple.api_key)}")
    if init.plan.is_noop:
        return
    out.line("")
    if dry_run:
        out.line(fileplan.plan_diff(init.plan).rstrip("\n"))
        out.line("")
    out.line("changes:")
    for line in fileplan.change_lines(init.plan):
        out.line(line)


def render_notes(out: Output, plan: Plan) -> None:
    """Notes explain what the changes mean, so they are shown only when something changes; warnings always."""
    for note in [] if plan.is_noop else plan.notes:
        out.line(f"note: {note}")
    for warning in plan.warnings:
        out.error_line(f"warning: {warning}")


def render_link_notes(out: Output, notes: list[str]) -> None:
    for note in notes:
        out.line(f"note: {note}")


def render_opened(out: Output, app: str, problem: str | None, links_path: Path) -> None:
    label = ccswitch.APP_LABELS[app]
    if problem:
        out.error_line(f"warning: could not hand the {label} link to CC Switch: {problem}; the links are in "
                       f"{links_path}")
    else:
        out.line(f"handed the {label} import link to CC Switch: confirm it in CC Switch's dialog")


def render_next_link(out: Output, app: str, next_app: str) -> None:
    """Without a terminal nothing can wait for the user: the next link goes in a later run."""
    out.line(f"CC Switch's import dialog holds one link at a time: confirm the {ccswitch.APP_LABELS[app]} import "
             f"there, then hand over the {ccswitch.APP_LABELS[next_app]} link with: "
             f"taotoken init --target cc-switch --open-app {next_app}")


def render_applied(out: Output, result: fileplan.ApplyResult) -> None:
    for change in result.written:
        out.line(f"wrote {change.path}" + (f" -> {os.path.realpath(change.path)}"
                                           if Path(change.path).is_symlink() else ""))
    if result.backup_dir:
        out.line(f"backups of the previous versions: {result.backup_dir}")
        out.line("undo everything this run changed: taotoken init --undo")


def render_undo(out: Output, result: fileplan.UndoResult) -> None:
    for path in result.restored:
        out.line(f"restored {path}")
    for path in result.deleted:
        out.line(f"deleted {path} (created by that run)")
    out.line(f"undid the run saved in {result.backup_dir}")
