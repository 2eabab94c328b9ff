"""Rendering `taotoken init`: the triple and the targets, the CC Switch links, what --undo restored and what to
run next (the changes, their diffs and what was written are the apply flow's: core.files.applyflow)."""

from __future__ import annotations

from pathlib import Path

from taotoken_cli.cmd.init.plan import InitPlan
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import ccswitch, shell
from taotoken_cli.core.clients.base import Machine
from taotoken_cli.core.files import fileplan
from taotoken_cli.core.platform import system
from taotoken_cli.core.term.layout import cell_width, pad
from taotoken_cli.core.term.output import Output, split_label


def render_plan(out: Output, init: InitPlan, *, compact: bool = False) -> None:
    """The triple, the targets and why, and the CC Switch links; the changes themselves are the apply flow's. In
    compact form (init without -v or --dry-run): the triple on one line, and only the notes that need reading."""
    triple = init.triple
    if compact:
        out.wrapped(_("taotoken init — profile {profile}: {base_url}, key {key}, model {model}").format(
            profile=repr(init.profile), base_url=triple.base_url, key=mask_key(triple.api_key), model=triple.model),
            hang="  ")
    else:
        out.line(_("taotoken init — profile {profile}").format(profile=repr(init.profile)))
        labels = (_("base URL"), _("API key"), _("model"))
        column = max(cell_width(label) for label in labels) + 2
        base, key, model = (pad("  " + label, column + 2) for label in labels)
        out.wrapped(_("{base_url}   (Anthropic-style clients: {anthropic}; OpenAI-style: {openai})").format(
            base_url=triple.base_url, anthropic=triple.anthropic_base, openai=triple.openai_base), base)
        out.wrapped(mask_key(triple.api_key), key)
        out.wrapped(triple.model, model)
    for note in init.hygiene:  # `note: …` what was cleaned, `warning: …` what still looks wrong
        label, text = split_label(note)
        out.wrapped(text, f"  {label}") if label else out.wrapped(note, "  ", "    ")
    if not compact:
        clients = listed(init.targets) if init.targets else _("(no clients)")
        out.wrapped(_("own config, {clients}").format(clients=clients), _("targets: "))
    for note in ([] if compact else init.target_reasons) + init.target_notes:
        out.wrapped(note, "  ", "    ")
    if init.links and not compact:
        out.wrapped(_("CC Switch import links (key masked; use --open to hand them to CC Switch):"), hang="  ")
        for app, link in init.links.items():
            out.wrapped(ccswitch.mask_link(link, triple.api_key), f"  {app}: ")
    if not init.plan.is_noop and not compact:
        out.line("")


def render_link_notes(out: Output, notes: list[str]) -> None:
    for note in notes:
        out.wrapped(note, _("note: "))


def render_opened(out: Output, app: str, problem: str | None, links_path: Path) -> None:
    label = ccswitch.APP_LABELS[app]
    if problem:
        out.error_wrapped(_("could not hand the {app} link to CC Switch: {problem}; the links are in {path}").format(
            app=label, problem=problem, path=links_path), _("warning: "))
    else:
        out.wrapped(_("handed the {app} import link to CC Switch: confirm it in CC Switch's dialog").format(app=label),
                    hang="  ")


def render_next_link(out: Output, app: str, next_app: str) -> None:
    """Without a terminal nothing can wait for the user: the next link goes in a later run."""
    out.wrapped(_("CC Switch's import dialog holds one link at a time: confirm the {app} import there, then hand "
                  "over the {next_app} link with: {command}").format(
        app=ccswitch.APP_LABELS[app], next_app=ccswitch.APP_LABELS[next_app],
        command=f"taotoken init --target cc-switch --open-app {next_app}"), hang="  ")


def render_undo(out: Output, result: fileplan.UndoResult) -> None:
    for path in result.restored:
        out.wrapped(str(path), _("restored "))
    for path in result.deleted:
        out.wrapped(_("{path} (created by that run)").format(path=path), _("deleted "))
    for label in result.reverted:
        out.wrapped(label, _("removed "))
    for problem in result.not_reverted:
        out.error_wrapped(problem, _("warning: not undone: "))
    for path in result.kept:
        out.wrapped(_("{path}: that run's values put back; what changed there since (routes, other settings) "
                      "kept").format(path=path), _("restored "))
    out.wrapped(str(result.backup_dir), _("undid the run saved in "), "  ")


def render_added_with_cli(out: Output, added: list[str], failed: list[str], links_path: Path) -> None:
    """What `cc-switch provider add` did for each app."""
    for app in added:
        out.wrapped(_("added provider {id} for {app} with cc-switch (not selected: choose it in CC Switch to use it)")
                    .format(id=repr(ccswitch.PROVIDER_ID), app=ccswitch.APP_LABELS[app]), hang="  ")
    for problem in failed:
        out.error_wrapped(_("cc-switch could not add TaoToken: {problem}; its import link is in {path}").format(
            problem=problem, path=links_path), _("warning: "))


def render_broken(out: Output, broken: list[str]) -> None:
    """Why the setup does not work yet, in place of the next command."""
    for line in broken:
        out.error_wrapped(line, _("not working yet: "))


def render_next_command(out: Output, init: InitPlan, machine: Machine, *, links_pending: bool = False) -> None:
    """What to run next: check the setup; and in this shell, load env.sh when it was written; the CC Switch links
    still to hand over (`links_pending`: the compact form, which does not print them)."""
    label = _("next: ")
    out.wrapped(Fix.of(_("{command}   (one request: base URL, key and model)"), command=Command("taotoken check")),
                label)
    if links_pending:
        out.wrapped(Fix.of(_("{command}   (hand the import links to CC Switch, one at a time)"),
                           command=Command("taotoken init --target cc-switch --open")), " " * cell_width(label))
    if "shell" in init.targets:
        source = shell.load_command(machine)
        if not system.current().windows:  # POSIX: the file as ~/…, as the user would type it
            paths = shell.paths(machine)
            fish = machine.env.get("SHELL", "").endswith("fish")
            source = (f"source {_home_relative(paths.env_fish, machine)}" if fish
                      else f". {_home_relative(paths.env_sh, machine)}")
        out.wrapped(Fix.of(_("{command}   (for Codex and SDK scripts started from this shell; new shells load it "
                             "themselves)"), command=Command(source)), " " * cell_width(label))


def _home_relative(path: Path, machine: Machine) -> str:
    import shlex

    try:
        return "~/" + shlex.quote(str(path.relative_to(machine.home)))
    except ValueError:
        return shlex.quote(str(path))
