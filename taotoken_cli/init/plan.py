"""Planning `taotoken init`: resolve the triple (flags > environment > config file > prompts), choose the
targets, and build one fileplan Plan over every file they write. Nothing is written here: `run` shows,
confirms and applies the plan; `view` renders it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from taotoken_cli import fileplan
from taotoken_cli.clients import CLIENTS, ccswitch, codex
from taotoken_cli.clients.base import Machine, PlanOptions, Triple, read_text, text_change
from taotoken_cli.config import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MODEL,
    LABELS,
    Overrides,
    config_path,
    load_settings,
)
from taotoken_cli.config.edit import render_config_update
from taotoken_cli.errors import ConfigFileError, InputError, TaotokenError
from taotoken_cli.exitcodes import Exit
from taotoken_cli.fileplan import FileChange, Plan
from taotoken_cli.init import wizard
from taotoken_cli.iostreams import IOStreams, Prompter
from taotoken_cli.masking import mask_key, remember_secret

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

def resolve_triple(request: InitRequest, io: IOStreams) -> tuple[Triple, str, list[str]]:
    """Flags > environment > taotoken's config file > prompts (TTY only). Returns triple, profile, notes."""
    prompter = io.prompter
    api_key = request.api_key
    if request.key_stdin:
        api_key = io.stdin.read()
        if not api_key.strip():
            raise InputError("--key-stdin was given but stdin was empty",
                             "pipe the key in, e.g. `printf %s \"$KEY\" | taotoken init --key-stdin --yes`")
    remember_secret(api_key)
    settings = load_settings(Overrides(profile=request.profile, base_url=request.base_url, api_key=api_key,
                                       model=request.model), io.env)
    notes = []
    if request.key_from_flag:
        notes.append("warning: a key passed with --key lands in your shell history; prefer --key-stdin or the prompt")
    values = {}
    for name, flag, label, env_name in (("base_url", "--base-url", "Base URL", ENV_BASE_URL),
                                        ("api_key", "--key-stdin", "API key", ENV_API_KEY),
                                        ("model", "--model", "Model ID", ENV_MODEL)):
        item = settings.value(name)
        if item.error:
            raise InputError(f"{label} ({item.origin}): {item.error}", item.fix)
        value = item.value
        ask = value is None or (name == "base_url" and item.origin.kind == "default" and prompter.interactive
                                and settings.api_key.value is None)
        if ask:
            if not prompter.interactive:
                raise InputError(f"no {label.lower()} given and stdin is not a terminal to ask for it",
                                 f"pass {flag}{'' if name == 'api_key' else ' VALUE'} or set {env_name}")
            # Asked until usable; what was cleaned is said at the prompt.
            if name == "base_url":
                item = wizard.ask_base_url(prompter, value)
            elif name == "api_key":
                item = wizard.ask_key(prompter)
            else:
                item = wizard.ask_model(io, values["base_url"], values["api_key"])
        else:
            notes.extend(item.labelled_notes(LABELS[name]))
        values[name] = item.value
    remember_secret(values["api_key"])
    return Triple(values["base_url"], values["api_key"], values["model"]), settings.profile, notes


# ------------------------------------------------------------------------------------------ targets

def choose_targets(request: InitRequest, machine: Machine, prompter: Prompter | None = None, *,
                   assume_yes: bool = False, key_exported: bool = False) -> tuple[list[str], list[str]]:
    """The clients to write (asked, flagged or detected), and why. The shell target is never implied: Codex
    with `--codex-auth env` needs it, so it is asked for on a terminal, and otherwise named as missing."""
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
        if key_exported:
            notes.append(f"codex: reads the key from ${ENV_API_KEY}, which is set here: keep it exported in your "
                         "shell's start-up file (or add --target shell)")
        elif prompter is not None and prompter.interactive and not assume_yes:
            if prompter.confirm(f"Codex reads the key from an environment variable (${ENV_API_KEY}); add the shell "
                                "target, which exports it (and OPENAI_*) in every new shell?", default=True):
                chosen.append("shell")
                notes.append(f"shell: chosen, so that Codex finds ${ENV_API_KEY}")
            else:
                notes.append(f"warning: codex: nothing exports ${ENV_API_KEY}, so Codex will have no key; export it "
                             "yourself, or run again with --codex-auth auth-json")
        else:
            wanted = " ".join(f"--target {t}" for t in [*chosen, "shell"])
            raise InputError(f"Codex reads the key from ${ENV_API_KEY} (--codex-auth env), and no target chosen "
                             "exports it",
                             f"choose how Codex gets the key: `taotoken init {wanted} …` (env.sh exports "
                             f"{ENV_API_KEY} and OPENAI_* in every new shell), or `--codex-auth auth-json` (the key "
                             "goes into ~/.codex/auth.json)")
    return chosen, notes


# --------------------------------------------------------------------------------------------- plan

def build(request: InitRequest, io: IOStreams, *, assume_yes: bool = False) -> InitPlan:
    if request.scope not in ("user", "project"):
        raise InputError(f"unknown --scope {request.scope!r}", "use --scope user or --scope project")
    if request.codex_auth not in codex.AUTH_MODES:
        raise InputError(f"unknown --codex-auth {request.codex_auth!r}", f"use one of: {', '.join(codex.AUTH_MODES)}")
    triple, profile, hygiene = resolve_triple(request, io)
    machine = Machine.of(io.env, io.cwd)
    targets, target_notes = choose_targets(request, machine, io.prompter, assume_yes=assume_yes,
                                           key_exported=io.env.get(ENV_API_KEY) == triple.api_key)
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

    collect(lambda: own_config_change(triple, profile, machine))
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


def own_config_change(triple: Triple, profile: str, machine: Machine) -> FileChange:
    from taotoken_cli.config import read_config_file

    path = config_path(machine.env)
    read_config_file(path)  # a broken file stops the run with line:column
    current = read_text(path)
    text = current.text or ""
    new_text = render_config_update(text, path, profile, {"base_url": triple.base_url, "api_key": triple.api_key,
                                                          "model": triple.model})
    summary = [f"profile {profile!r}: base_url = {triple.base_url!r}, api_key = {mask_key(triple.api_key)}, "
               f"model = {triple.model!r}"]
    return text_change(current, new_text, target=OWN, summary=summary, secret=True)
