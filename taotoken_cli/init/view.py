"""Rendering `taotoken init`: the plan (masked diffs with --dry-run), notes and warnings, what was written,
and what --undo restored."""

from __future__ import annotations

import os
from pathlib import Path

from taotoken_cli import fileplan
from taotoken_cli.clients import ccswitch, shell
from taotoken_cli.clients.base import Machine
from taotoken_cli.fileplan import Plan
from taotoken_cli.init.plan import InitPlan
from taotoken_cli.masking import mask_key
from taotoken_cli.output import Output


def render_plan(out: Output, init: InitPlan, *, dry_run: bool) -> None:
    triple = init.triple
    out.line(f"taotoken init — profile {init.profile!r}")
    out.wrapped(f"{triple.base_url}   (Anthropic-style clients: {triple.anthropic_base}; "
                f"OpenAI-style: {triple.openai_base})", "  base URL  ")
    out.wrapped(mask_key(triple.api_key), "  API key   ")
    out.wrapped(triple.model, "  model     ")
    for note in init.hygiene:  # `note: …` what was cleaned, `warning: …` what still looks wrong
        label, colon, text = note.partition(": ")
        out.wrapped(text, f"  {label}: ") if colon and " " not in label else out.wrapped(note, "  ", "    ")
    out.wrapped(f"own config, {', '.join(init.targets) if init.targets else '(no clients)'}", "targets: ")
    for note in init.target_notes:
        out.wrapped(note, "  ", "    ")
    if init.links:
        out.wrapped("CC Switch import links (key masked; use --open to hand them to CC Switch):", hang="  ")
        for app, link in init.links.items():
            out.wrapped(ccswitch.mask_link(link, triple.api_key), f"  {app}: ")
    if init.plan.is_noop:
        return
    out.line("")
    if dry_run:
        out.line(fileplan.plan_diff(init.plan).rstrip("\n"))
        out.line("")
    out.line("changes:")
    for line in fileplan.change_lines(init.plan):
        out.wrapped(line.lstrip(" "), line[:len(line) - len(line.lstrip(" "))],
                    " " * (len(line) - len(line.lstrip(" ")) + 4))


def render_notes(out: Output, plan: Plan) -> None:
    """Notes explain what the changes mean, so they are shown only when something changes; warnings always."""
    for note in [] if plan.is_noop else plan.notes:
        out.wrapped(note, "note: ")
    for warning in plan.warnings:
        out.error_wrapped(warning, "warning: ")


def render_link_notes(out: Output, notes: list[str]) -> None:
    for note in notes:
        out.wrapped(note, "note: ")


def render_opened(out: Output, app: str, problem: str | None, links_path: Path) -> None:
    label = ccswitch.APP_LABELS[app]
    if problem:
        out.error_wrapped(f"could not hand the {label} link to CC Switch: {problem}; the links are in "
                          f"{links_path}", "warning: ")
    else:
        out.wrapped(f"handed the {label} import link to CC Switch: confirm it in CC Switch's dialog", hang="  ")


def render_next_link(out: Output, app: str, next_app: str) -> None:
    """Without a terminal nothing can wait for the user: the next link goes in a later run."""
    out.wrapped(f"CC Switch's import dialog holds one link at a time: confirm the {ccswitch.APP_LABELS[app]} "
                f"import there, then hand over the {ccswitch.APP_LABELS[next_app]} link with: "
                f"taotoken init --target cc-switch --open-app {next_app}", hang="  ")


def render_applied(out: Output, result: fileplan.ApplyResult) -> None:
    for change in result.written:
        out.wrapped(str(change.path) + (f" -> {os.path.realpath(change.path)}"
                                        if Path(change.path).is_symlink() else ""), "wrote ")
    if result.backup_dir:
        out.wrapped(str(result.backup_dir), "backups of the previous versions: ", "  ")
        out.wrapped("taotoken init --undo", "undo everything this run changed: ", "  ")


def render_undo(out: Output, result: fileplan.UndoResult) -> None:
    for path in result.restored:
        out.wrapped(str(path), "restored ")
    for path in result.deleted:
        out.wrapped(f"{path} (created by that run)", "deleted ")
    out.wrapped(str(result.backup_dir), "undid the run saved in ", "  ")


def render_next_command(out: Output, init: InitPlan, machine: Machine) -> None:
    """What to run next: check the setup; and in this shell, load env.sh when it was written."""
    out.wrapped("taotoken check   (one request: base URL, key and model)", "next: ")
    if "shell" in init.targets:
        paths = shell.paths(machine)
        fish = machine.env.get("SHELL", "").endswith("fish")
        source = (f"source {_home_relative(paths.env_fish, machine)}" if fish
                  else f". {_home_relative(paths.env_sh, machine)}")
        out.wrapped(f"{source}   (for Codex and SDK scripts started from this shell; new shells load it "
                    "themselves)", "      ")


def _home_relative(path: Path, machine: Machine) -> str:
    import shlex

    try:
        return "~/" + shlex.quote(str(path.relative_to(machine.home)))
    except ValueError:
        return shlex.quote(str(path))
