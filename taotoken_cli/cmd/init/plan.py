"""Planning `taotoken init`: resolve the triple (flags > environment > config file > prompts), choose the
targets, and build one fileplan Plan over every file they write. Nothing is written here: `run` shows,
confirms and applies the plan; `view` renders it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TypeVar

from taotoken_cli.cmd.init import wizard
from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import remember_secret
from taotoken_cli.core.clients import (
    CLIENTS,
    ON_REQUEST,
    ccswitch,
    ccswitch_cli,
    codex,
    gemini_cli,
    mcp,
    project_env,
    shell,
    shellproxy,
)
from taotoken_cli.core.clients.base import Machine, PlanOptions, Triple
from taotoken_cli.core.clients.copies import (
    OWN,
    Record,
    claimed_targets,
    plan_copies,
    read_record,
    record_change,
    written_keys,
)
from taotoken_cli.core.clients.envvars import host_key, key_mark, taotoken_hosts
from taotoken_cli.core.diagnosis import gemini_api
from taotoken_cli.core.files import fileplan
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.platform import shells, system
from taotoken_cli.core.settings import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MODEL,
    LABELS,
    Overrides,
    load_settings,
)
from taotoken_cli.core.term.iostreams import IOStreams, Prompter

TARGETS = tuple(CLIENTS)
SCOPES = ("user", "project")  # where Claude Code's settings go (--scope)


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
    open_links: bool = False  # hand the CC Switch links over (one at a time)
    allow_unlisted: bool = False  # write a --model the gateway's list lacks (not asked)
    open_app: str | None = None  # only this app's link (claude | codex)
    profile: str | None = None


@dataclass
class InitPlan:
    triple: Triple
    profile: str
    targets: list[str]
    plan: Plan
    hygiene: list[str]  # what input hygiene changed or distrusts, reported to the user
    target_notes: list[str | Fix]  # what the choice of targets means (warnings, nothing detected, …)
    links: dict[str, str]  # CC Switch import links (contain the key; printed masked)
    blocker: InputError | None = None  # a choice the user must make before this plan is applied (shown by a dry run)
    cli: ccswitch_cli.Handover | None = None  # the apps `cc-switch provider add` takes once the files are written
    target_reasons: list[str] = field(default_factory=list)  # why each target is written (with -v or --dry-run)


T = TypeVar("T")


class Patience:
    """How long init waits for the gateway in all, across its questions (is the model listed, does it serve the
    Gemini API): a silent gateway costs one wait, not one per question (5 s + 8 s before). Time spent at a prompt
    between the questions does not count."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.left = seconds
        self.clock = clock

    def asking(self, most: float, question: Callable[[float], T]) -> T:
        started = self.clock()
        try:
            return question(min(most, self.left))
        finally:
            self.left = max(0.0, self.left - (self.clock() - started))


# ------------------------------------------------------------------------------------------- triple

def resolve_triple(request: InitRequest, io: IOStreams, patience: Patience) -> tuple[Triple, str, list[str]]:
    """Flags > environment > taotoken's config file > prompts (TTY only). Returns triple, profile, notes."""
    prompter = io.prompter
    api_key = request.api_key
    if request.key_stdin:
        api_key = io.stdin.read()
        if not api_key.strip():
            raise InputError(_("--key-stdin was given but stdin was empty"),
                             Fix.of(_("pipe the key in, e.g. {command}"), command=Command(
                                 f"{shells.piped_var('KEY', shells.syntax(io.env))} taotoken init --key-stdin --yes")))
    remember_secret(api_key)
    settings = load_settings(Overrides(profile=request.profile, base_url=request.base_url, api_key=api_key,
                                       model=request.model), io.env)
    notes = []
    if request.key_from_flag:
        notes.append(_("warning: a key passed with --key lands in your shell history; prefer --key-stdin or the "
                       "prompt"))
    values = {}
    for name, flag, env_name in (("base_url", "--base-url VALUE", ENV_BASE_URL),
                                 ("api_key", "--key-stdin", ENV_API_KEY), ("model", "--model VALUE", ENV_MODEL)):
        item = settings.value(name)
        if item.error:
            label = {"base_url": _("Base URL"), "api_key": _("API key"), "model": _("Model ID")}[name]
            raise InputError(_("{name} ({origin}): {error}").format(name=label, origin=item.origin, error=item.error),
                             item.fix)
        value = item.value
        ask = value is None or (name == "base_url" and item.origin.kind == "default" and prompter.interactive
                                and settings.api_key.value is None)
        if ask:
            if not prompter.interactive:
                missing = {"base_url": _("no base URL given and stdin is not a terminal to ask for it"),
                           "api_key": _("no API key given and stdin is not a terminal to ask for it"),
                           "model": _("no model ID given and stdin is not a terminal to ask for it")}[name]
                raise InputError(missing, _("pass {option} or set {variable}").format(option=flag,
                                                                                        variable=env_name))
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
    if not request.allow_unlisted and settings.value("model").value is not None:  # a picked one is listed
        notes.extend(_refuse_unlisted(io, values["base_url"], values["api_key"], values["model"], patience))
    return Triple(values["base_url"], values["api_key"], values["model"]), settings.profile, notes


def _refuse_unlisted(io: IOStreams, base_url: str, api_key: str, model: str, patience: Patience) -> list[str]:
    """A model the gateway does not list is not written into every client: refused before the plan, with the
    listed ID it was probably meant to be; with no list to ask it is written as before."""
    from taotoken_cli.core.base.errors import TaotokenError
    from taotoken_cli.core.base.exitcodes import Exit
    from taotoken_cli.core.diagnosis.model_check import CHECK_TIMEOUT_S, check_model

    found = patience.asking(CHECK_TIMEOUT_S, lambda seconds: check_model(base_url, api_key, model, io.env,
                                                                         timeout_s=seconds))
    if found.listed is not False:  # listed, or no list to ask (offline, no key): written as before
        return []
    message = _("{model} is not in the gateway's model list for this key; nothing was written").format(
        model=repr(model))
    keep = Command("--allow-unlisted")
    if found.close:
        fix = Fix.of(_("did you mean {close}? run init again with {option}   (keep {model} anyway: add {keep})"),
                     close=found.close[0], option=Command(f"--model {found.close[0]}"), model=repr(model), keep=keep)
    else:
        fix = Fix.of(_("pick a listed ID: {list}, then run init again with --model ID (keep {model} anyway: add "
                       "{keep})"), list=Command("taotoken models"), model=repr(model), keep=keep)
    raise TaotokenError(message, fix, Exit.NOT_FOUND, code="model.not_found")


# ------------------------------------------------------------------------------------------ targets

_KEPT = N_("{target}: written by an earlier init, kept in step")

def choose_targets(request: InitRequest, machine: Machine, profile: str, prompter: Prompter | None = None, *,
                   assume_yes: bool = False,
                   key_exported: bool = False) -> tuple[list[str], list[str], list[str], InputError | None]:
    """The clients to write (asked, flagged, detected, or kept in step from an earlier init), why each, notes on
    the choice, and what keeps this plan from being applied (a choice only the user can make), if anything."""
    notes: list[str] = []
    reasons: list[str] = []
    unknown = [t for t in request.targets if t not in (*TARGETS, OWN)]
    if unknown:
        raise InputError(_("unknown target(s): {targets}").format(targets=listed(unknown)),
                         _("choose from: {targets} (your own config file is always written)").format(
                             targets=listed(TARGETS)))
    if request.all_targets:
        chosen = [t for t in TARGETS if t not in ON_REQUEST or t in request.targets]
    elif request.targets:
        chosen = [t for t in TARGETS if t in request.targets]
    else:
        chosen = []
        for name, client in CLIENTS.items():
            found = client.detect(machine)  # never true for ON_REQUEST targets
            if found.found:
                chosen.append(name)
                reasons.append(_("{target}: detected ({reasons})").format(target=name,
                                                                           reasons=_("; ").join(found.reasons)))
        if not chosen:
            notes.append(_("no AI clients detected: only taotoken's own config is written (choose clients with "
                           "--target NAME or --all)"))
    recorded = read_record(machine)
    if recorded is not None and recorded.profile == profile:
        kept = [t for t in recorded.targets if t not in chosen]
        chosen += kept  # one truth: every copy an earlier init wrote gets the new values too
        reasons.extend(_(_KEPT).format(target=name) for name in kept)
    elif recorded is not None:
        notes.append(_("the copies of profile {old} ({targets}) are no longer kept in step: from now on they follow "
                       "profile {new} wherever this run writes them").format(
            old=repr(recorded.profile), targets=listed(recorded.targets), new=repr(profile)))
    if request.open_links and "cc-switch" not in chosen:
        chosen.append("cc-switch")
        reasons.append(_("{target}: added because of --open").format(target="cc-switch"))
    blocker = None
    if "codex" in chosen and request.codex_auth == "env" and "shell" not in chosen:
        blocker = _codex_key_source(chosen, notes, reasons, prompter, assume_yes=assume_yes,
                                    key_exported=key_exported)
    return chosen, reasons, notes, blocker


def _codex_key_source(chosen: list[str], notes: list[str], reasons: list[str], prompter: Prompter | None, *,
                      assume_yes: bool, key_exported: bool) -> InputError | None:
    """Codex with `--codex-auth env` reads the key from a variable only the shell target exports, to every shell:
    that target is never implied. On a terminal it is asked for; otherwise the plan cannot be applied until the
    user chooses, and the returned error says exactly how (a dry run still shows the plan)."""
    codex_key = "$" + codex.ENV_KEY
    # where a variable stays set for new programs, from the platform table: the shell target's start-up files, or
    # on Windows the user environment (its first env target)
    on_windows = system.current().env_targets[0] == "windows-env"
    lasting = _("your Windows user environment") if on_windows else _("your shell's start-up file")
    if key_exported:
        notes.append(_("codex: reads the key from {variable}, which is set here: keep it set in {where} (or add "
                       "--target shell)").format(variable=codex_key, where=lasting))
        return None
    if prompter is not None and prompter.interactive and not assume_yes:
        if prompter.confirm(_("Codex reads the key from an environment variable ({variable}); add the shell target, "
                              "which exports it (and OPENAI_BASE_URL) in every new shell?").format(variable=codex_key),
                            default=True):
            chosen.append("shell")
            reasons.append(_("shell: chosen, so that Codex finds {variable}").format(variable=codex_key))
        else:
            notes.append(_("warning: codex: nothing sets {variable}, so Codex will have no key; set it in {where} "
                           "yourself, or run again with --codex-auth auth-json").format(variable=codex_key,
                                                                                        where=lasting))
        return None
    wanted = " ".join(f"--target {t}" for t in [*chosen, "shell"])
    how = (_("{command} (sets {variable} and OPENAI_BASE_URL in your Windows user environment and PowerShell "
             "profile), or {other} (the key goes into ~/.codex/auth.json)") if on_windows else
           _("{command} (env.sh exports {variable} and OPENAI_BASE_URL in every new shell), or {other} (the key goes "
             "into ~/.codex/auth.json)")).format(command=f"`taotoken init {wanted} …`", variable=codex.ENV_KEY,
                                                 other="`--codex-auth auth-json`")
    notes.append(_("warning: codex: reads the key from {variable}, and no target chosen exports it; choose: {how}")
                 .format(variable=codex_key, how=how))
    return InputError(_("Codex reads the key from {variable} (--codex-auth env), and no target chosen exports it")
                      .format(variable=codex_key), _("choose how Codex gets the key: {how}").format(how=how))


def recorded_places(request: InitRequest, triple: Triple, profile: str,
                    machine: Machine) -> dict[str, tuple[str, ...]]:
    """Where the copies are, kept across runs (a later sync from any directory reaches them): TaoToken's hosts,
    this triple's added (MCP servers still on an old one are moved); the projects holding .env.taotoken, this one
    added when named."""
    recorded = read_record(machine)
    before = recorded.options if recorded is not None and recorded.profile == profile else PlanOptions()
    hosts = [*before.taotoken_hosts, host_key(triple.base_url)]
    dirs = [*before.project_dirs]
    if project_env.NAME in request.targets:
        dirs.append(str(project_env.paths(machine).root))
    marks = (*before.written_keys, key_mark(triple.api_key))  # a copy holding a key taotoken wrote is TaoToken's
    return {"taotoken_hosts": tuple(dict.fromkeys(h for h in hosts if h)), "project_dirs": tuple(dict.fromkeys(dirs)),
            "written_keys": tuple(dict.fromkeys(marks))[-16:]}


# --------------------------------------------------------------------------------------------- plan

def build(request: InitRequest, io: IOStreams, *, assume_yes: bool = False) -> InitPlan:
    if request.scope not in SCOPES:
        raise InputError(_("unknown --scope {value}").format(value=repr(request.scope)),
                         _("use --scope user or --scope project"))
    if request.codex_auth not in codex.AUTH_MODES:
        raise InputError(_("unknown --codex-auth {value}").format(value=repr(request.codex_auth)),
                         _("use one of: {choices}").format(choices=listed(codex.AUTH_MODES)))
    if request.open_app not in (None, *ccswitch.LINK_APPS):
        raise InputError(_("unknown --open-app {value}").format(value=repr(request.open_app)),
                         _("use one of: {choices}").format(choices=listed(ccswitch.LINK_APPS)))
    patience = Patience(gemini_api.PROBE_TIMEOUT_S)
    triple, profile, hygiene = resolve_triple(request, io, patience)
    machine = Machine.of(io.env, io.cwd)
    targets, reasons, target_notes, blocker = choose_targets(
        request, machine, profile, io.prompter, assume_yes=assume_yes,
        key_exported=io.env.get(codex.ENV_KEY) == triple.api_key)
    options = PlanOptions(scope=request.scope, codex_auth=request.codex_auth,
                          **recorded_places(request, triple, profile, machine))
    # Gemini CLI's and OpenClaw's files: one pointing at TaoToken is a copy whoever wrote it; one holding another
    # service's values is written only when named (--target, --all), else left alone and named
    named = [*request.targets, *(TARGETS if request.all_targets else ())]
    targets, added, left = claimed_targets(targets, machine, taotoken_hosts(triple.base_url, options.taotoken_hosts),
                                           written_keys(options, machine, profile), named=named)
    dropped = {name for name, _why in left}
    reasons[:] = [why for why in reasons if why not in {_(_KEPT).format(target=name) for name in dropped}]
    reasons.extend(_("{target}: added: its file points at TaoToken").format(target=name) for name in added)
    target_notes.extend(_("warning: {target} not written: {reason} (point it at TaoToken anyway: {command})").format(
        target=name, reason=why, command=f"taotoken init --target {name}") for name, why in left)
    # Gemini CLI only where the gateway serves the Gemini API (asked only when it is a target; named: a "no" stops)
    gemini = gemini_api.gate(triple, targets, options, gemini_api.probe_for(io.env, patience.asking),
                             named=gemini_cli.NAME in request.targets)
    targets, options = gemini.targets, gemini.options
    reasons.extend(gemini.notes)  # why Gemini CLI is (or is not) written: with -v or --dry-run
    target_notes.extend(_("warning: {problem}").format(problem=w) for w in gemini.warnings)
    if mcp.NAME not in targets:  # a server pointing at TaoToken is a copy, whatever targets were named
        behind = mcp.stale(triple, machine, replace(options, written_keys=written_keys(options, machine, profile)))
        if behind:
            targets.append(mcp.NAME)
            target_notes.append(_("{target}: added: MCP servers pointing at TaoToken hold other values ({servers})")
                                .format(target=mcp.NAME, servers=_("; ").join(behind)))
    plan = plan_copies(triple, targets, options, machine, own_profile=profile)
    # A later start-up line exporting another OPENAI_API_KEY/OPENAI_BASE_URL outvotes env.sh in every new shell
    codex_env = codex.NAME in targets and options.codex_auth == "env"
    if shell.NAME in targets or codex_env:
        shell.repair_overrides(plan, triple, machine, fails={codex.ENV_KEY: "Codex"} if codex_env else {},
                               variables=None if shell.NAME in targets else (codex.ENV_KEY,))
    target_notes.extend(shellproxy.proxied_gateway(triple, machine, targets))  # a shell proxy for a loopback gateway
    plan.warnings.extend(project_env.stale_copies(  # the project's own .env: named, never written
        triple, machine, taotoken_hosts(triple.base_url, options.taotoken_hosts),
        written_keys(options, machine, profile)))
    plan.add(record_change(Record(profile, tuple(targets), options), machine))
    fileplan.add_git_warnings(plan)
    links = (ccswitch.import_links(triple, ccswitch.apps(triple, options, ccswitch.store(machine)))
             if ccswitch.NAME in targets else {})
    remember_secret(ccswitch.encode(triple.api_key))  # the key as the links carry it
    # Where CC Switch's command line is installed it adds TaoToken (unless the user asked for the links: --open)
    cli = ccswitch.cli_handover(triple, machine, options) if links and not request.open_links else None
    return InitPlan(triple, profile, targets, plan, hygiene, target_notes, links, blocker, cli,
                    target_reasons=reasons)
