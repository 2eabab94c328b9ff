"""Core of `taotoken init`: resolve the triple, choose targets, build one Plan over every file,
then render / confirm / apply it through fileplan. The Typer layer only parses options.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from taotoken_cli import fileplan
from taotoken_cli.clients import CLIENTS, ccswitch, codex
from taotoken_cli.clients.base import Machine, PlanOptions, Triple, read_text, text_change
from taotoken_cli.config import Overrides, config_dir, config_path, load_settings
from taotoken_cli.config.edit import render_config_update
from taotoken_cli.errors import ConfigFileError, InputError, TaotokenError
from taotoken_cli.exitcodes import Exit
from taotoken_cli.fileplan import FileChange, Plan
from taotoken_cli.masking import mask_key, remember_secret
from taotoken_cli.output import Output

OWN = "own"
TARGETS = tuple(CLIENTS)


@dataclass
class InitRequest:
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    key_from_flag: bool = False
    key_stdin: bool = False
    targets: list[str] = field(default_factory=list)
    all_targets: bool = False
    scope: str = "user"
    codex_auth: str = "env"
    open_links: bool = False
    profile: str | None = None


@dataclass
class InitPlan:
    triple: Triple
    profile: str
    targets: list[str]
    plan: Plan
    hygiene: list[str]  # what input hygiene changed or distrusts, reported to the user
    target_notes: list[str]  # why these targets
    links: dict[str, str]  # CC Switch import links (contain the key; printed masked)


# ------------------------------------------------------------------------------------------- triple

def resolve_triple(request: InitRequest, *, stdin=None, interactive: bool | None = None,
                   prompt: Callable[[str, bool], str] | None = None) -> tuple[Triple, str, list[str]]:
    """Flags > environment > taotoken's config file > prompts (TTY only). Returns triple, profile, notes."""
    stdin = stdin or sys.stdin
    if interactive is None:
        interactive = _isatty(stdin)
    prompt = prompt or _prompt
    api_key = request.api_key
    if request.key_stdin:
        api_key = stdin.read()
        if not api_key.strip():
            raise InputError("--key-stdin was given but stdin was empty",
                             "pipe the key in, e.g. `printf %s \"$KEY\" | taotoken init --key-stdin --yes`")
    remember_secret(api_key)
    settings = load_settings(Overrides(profile=request.profile, base_url=request.base_url, api_key=api_key,
                                       model=request.model))
    notes = []
    if request.key_from_flag:
        notes.append("warning: a key passed with --key lands in your shell history; prefer --key-stdin or the prompt")
    values = {}
    for name, flag, label in (("base_url", "--base-url", "Base URL"), ("api_key", "--key-stdin", "API key"),
                              ("model", "--model", "Model ID")):
        item = settings.value(name)
        if item.error:
            raise InputError(f"{label} ({item.origin}): {item.error}", item.fix)
        value = item.value
        ask = value is None or (name == "base_url" and item.origin.kind == "default" and interactive
                                and settings.api_key.value is None)
        if ask:
            if not interactive:
                env_name = {"base_url": "TAOTOKEN_BASE_URL", "api_key": "TAOTOKEN_API_KEY",
                            "model": "TAOTOKEN_MODEL"}[name]
                raise InputError(f"no {label.lower()} given and stdin is not a terminal to ask for it",
                                 f"pass {flag}{'' if name == 'api_key' else ' VALUE'} or set {env_name}")
            default = value if name == "base_url" else None
            answer = prompt(f"{label}" + (f" [{default}]" if default else ""), name == "api_key")
            if name == "api_key":
                remember_secret(answer)
            if not answer.strip() and default:
                answer = default
            from taotoken_cli.config import Origin, clean_value

            item = clean_value(name, answer, Origin("flag", "prompt"))
            if item.error:
                raise InputError(f"{label}: {item.error}", item.fix)
            value = item.value
        notes.extend(f"{label}: {note}" for note in item.notes)
        values[name] = value
    remember_secret(values["api_key"])
    return Triple(values["base_url"], values["api_key"], values["model"]), settings.profile, notes


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _prompt(label: str, secret: bool) -> str:
    if secret:
        import getpass

        return getpass.getpass(f"{label} (input hidden): ")
    return input(f"{label}: ")


# ------------------------------------------------------------------------------------------ targets

def choose_targets(request: InitRequest, machine: Machine) -> tuple[list[str], list[str]]:
    notes = []
    unknown = [t for t in request.targets if t not in (*TARGETS, OWN)]
    if unknown:
        raise InputError(f"unknown target(s): {', '.join(unknown)}",
                         f"choose from: {', '.join(TARGETS)} (your own config file is always written)")
    if request.all_targets:
        chosen = list(TARGETS)
    elif request.targets:
        chosen = [t for t in TARGETS if t in request.targets]
    else:
        chosen = []
        for name, client in CLIENTS.items():
            found = client.detect(machine)
            if found.found:
                chosen.append(name)
                notes.append(f"{name}: detected ({'; '.join(found.reasons)})")
        if not chosen:
            notes.append("no AI clients detected: only taotoken's own config is written "
                         "(choose clients with --target NAME or --all)")
    if request.open_links and "cc-switch" not in chosen:
        chosen.append("cc-switch")
        notes.append("cc-switch: added because of --open")
    if "codex" in chosen and request.codex_auth == "env" and "shell" not in chosen:
        chosen.append("shell")
        notes.append("shell: added because Codex reads the key from $TAOTOKEN_API_KEY (--codex-auth env)")
    return chosen, notes


# --------------------------------------------------------------------------------------------- plan

def build(request: InitRequest, env: Mapping[str, str] | None = None, cwd: Path | None = None,
          stdin=None, interactive: bool | None = None) -> InitPlan:
    if request.scope not in ("user", "project"):
        raise InputError(f"unknown --scope {request.scope!r}", "use --scope user or --scope project")
    if request.codex_auth not in codex.AUTH_MODES:
        raise InputError(f"unknown --codex-auth {request.codex_auth!r}", f"use one of: {', '.join(codex.AUTH_MODES)}")
    triple, profile, hygiene = resolve_triple(request, stdin=stdin, interactive=interactive)
    machine = Machine.of(env, cwd)
    targets, target_notes = choose_targets(request, machine)
    options = PlanOptions(scope=request.scope, codex_auth=request.codex_auth)
    plan = Plan()
    errors: list[ConfigFileError] = []

    def collect(make: Callable[[], Plan | FileChange]) -> None:
        try:
            made = make()
        except ConfigFileError as exc:
            errors.append(exc)
            return
        if isinstance(made, Plan):
            plan.extend(made)
        else:
            plan.add(made)

    collect(lambda: own_config_change(triple, profile, env))
    for target in targets:
        collect(lambda client=CLIENTS[target]: client.plan(triple, machine, options))
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise TaotokenError(
            f"{len(errors)} files cannot be parsed; nothing was written:\n"
            + "\n".join(f"  {e.message}\n    fix: {e.fix}" for e in errors),
            "fix each file at the position shown (or move it away), then run again", Exit.CONFIG,
            code="config.unparsable")
    for secret in plan.secrets:
        remember_secret(secret)
    fileplan.add_git_warnings(plan)
    links = ccswitch.import_links(triple) if "cc-switch" in targets else {}
    return InitPlan(triple, profile, targets, plan, hygiene, target_notes, links)


def own_config_change(triple: Triple, profile: str, env: Mapping[str, str] | None = None) -> FileChange:
    from taotoken_cli.config import read_config_file

    path = config_path(env)
    read_config_file(path)  # a broken file stops the run with line:column
    current = read_text(path)
    text = current.text or ""
    new_text = render_config_update(text, path, profile, {"base_url": triple.base_url, "api_key": triple.api_key,
                                                          "model": triple.model})
    summary = [f"profile {profile!r}: base_url = {triple.base_url!r}, api_key = {mask_key(triple.api_key)}, "
               f"model = {triple.model!r}"]
    return text_change(current, new_text, target=OWN, summary=summary, secret=True)


# ------------------------------------------------------------------------------------------- render

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
            out.line(f"  {app}: {masked_link(link, triple.api_key)}")
    if init.plan.is_noop:
        return
    out.line("")
    if dry_run:
        out.line(fileplan.plan_diff(init.plan).rstrip("\n"))
        out.line("")
    out.line("changes:")
    for change in init.plan.pending:
        verb = "create" if change.creates else "update"
        extra = ""
        if change.secret and change.creates:
            extra = " (holds the key: 0600)"
        elif change.secret and _group_or_world_bits(change.path):
            extra = " (holds the key: mode tightened to 0600)"
        out.line(f"  {verb} {change.path}  [{change.target}]{extra}")
        for line in change.summary:
            out.line(f"      {line}")


def masked_link(link: str, key: str) -> str:
    from urllib.parse import quote

    return link.replace(quote(key, safe=""), mask_key(key))


def _group_or_world_bits(path: Path) -> bool:
    try:
        return bool(os.stat(path).st_mode & 0o077)
    except OSError:
        return False


def render_notes(out: Output, plan: Plan) -> None:
    """Notes explain what the changes mean, so they are shown only when something changes; warnings always."""
    for note in [] if plan.is_noop else plan.notes:
        out.line(f"note: {note}")
    for warning in plan.warnings:
        out.error_line(f"warning: {warning}")


def confirm(out: Output, yes: bool, stdin=None) -> bool:
    if yes:
        return True
    stdin = stdin or sys.stdin
    if not _isatty(stdin):
        raise InputError("confirmation needed, but stdin is not a terminal (nothing was written)",
                         "re-run with --yes to apply the changes shown, or with --dry-run to see the diffs")
    answer = input("Apply these changes? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def render_applied(out: Output, result: fileplan.ApplyResult) -> None:
    for change in result.written:
        out.line(f"wrote {change.path}" + (f" -> {os.path.realpath(change.path)}"
                                           if Path(change.path).is_symlink() else ""))
    if result.backup_dir:
        out.line(f"backups of the previous versions: {result.backup_dir}")
        out.line("undo everything this run changed: taotoken init --undo")


def open_links(out: Output, links: Mapping[str, str]) -> None:
    for app, link in links.items():
        problem = ccswitch.open_link(link)
        if problem:
            out.error_line(f"warning: could not open the CC Switch link for {app}: {problem}; the links are in "
                           f"{config_dir() / ccswitch.LINKS_FILE}")
        else:
            out.line(f"opened the CC Switch import link for {app}: confirm it in CC Switch")


def render_undo(out: Output, result: fileplan.UndoResult) -> None:
    for path in result.restored:
        out.line(f"restored {path}")
    for path in result.deleted:
        out.line(f"deleted {path} (created by that run)")
    out.line(f"undid the run saved in {result.backup_dir}")
