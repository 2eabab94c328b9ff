"""Claude Code (reference §1): the `env` block of settings.json, plus the onboarding flag.

Claude Code appends /v1/messages itself, so ANTHROPIC_BASE_URL is the bare root. The key goes in
ANTHROPIC_AUTH_TOKEN (sent as Bearer); ANTHROPIC_API_KEY in the same block is a conflict.

Claude Code reads several settings files (managed, project local, project shared, user — highest first); for
each variable the highest `env` block that sets it wins, and any `env` block wins over the shell.
`effective_env` resolves that order once, for doctor and init alike.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.errors import ConfigFileError, InputError
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.base.masking import mask_key, unquoted_key
from taotoken_cli.core.clients.base import (
    ClientState,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    detect_by,
    home_dir,
    json_change,
    read_json,
)
from taotoken_cli.core.files import gitrepo
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.net.urlform import BARE_ROOT
from taotoken_cli.core.platform import system

NAME = "claude-code"
LABEL = "Claude Code"
URL_FORM = BARE_ROOT  # Claude Code appends /v1/messages itself
BASE_URL = "ANTHROPIC_BASE_URL"
AUTH_TOKEN = "ANTHROPIC_AUTH_TOKEN"
API_KEY = "ANTHROPIC_API_KEY"
MODEL = "ANTHROPIC_MODEL"
HAIKU_MODEL = "ANTHROPIC_DEFAULT_HAIKU_MODEL"
SMALL_FAST_MODEL = "ANTHROPIC_SMALL_FAST_MODEL"  # deprecated alias of the haiku slot
ONBOARDING = "hasCompletedOnboarding"


# The settings files by role, highest precedence first (reference §1.2; `--settings` on Claude Code's command
# line ranks between managed and local, but is no file one can look at).
SETTINGS_ROLES = ("managed", "project_local", "project_settings", "settings")
PROJECT_ROLES = ("project_local", "project_settings")  # their env applies only after the workspace trust prompt
SHELL = "shell"


@dataclass(frozen=True)
class ClaudePaths:
    config_dir: Path  # ~/.claude or $CLAUDE_CONFIG_DIR
    settings: Path  # user settings.json
    global_config: Path  # ~/.claude.json, or $CLAUDE_CONFIG_DIR/.claude.json
    repo: Path | None  # git repository of the working directory, if any
    project_settings: Path | None  # <repo>/.claude/settings.json (shared, checked in)
    project_local: Path | None  # <repo>/.claude/settings.local.json (personal)
    managed: Path  # set by an administrator; outranks every other file


def _config_dir(env: Mapping[str, str]) -> Path:
    override = env.get("CLAUDE_CONFIG_DIR")
    return Path(override).expanduser() if override else home_dir(env) / ".claude"


def paths(machine: Machine) -> ClaudePaths:
    env = machine.env
    config_dir = _config_dir(env)
    global_config = config_dir / ".claude.json" if env.get("CLAUDE_CONFIG_DIR") else machine.home / ".claude.json"
    repo = machine.git_root
    return ClaudePaths(
        config_dir, config_dir / "settings.json", global_config, repo,
        repo / ".claude" / "settings.json" if repo else None,
        repo / ".claude" / "settings.local.json" if repo else None,
        machine.system_root / system.current().managed_claude,
    )


def detect(machine: Machine) -> Detection:
    return detect_by([_config_dir(machine.env)], ["claude"], machine.env)


def read(machine: Machine) -> ClientState:
    """Parsed settings files (managed, user, project, local) and ~/.claude.json; parse errors are kept, not
    raised."""
    where = paths(machine)
    files = {"settings": read_json(where.settings), "global": read_json(where.global_config),
             "managed": read_json(where.managed)}
    if where.project_settings:
        files["project_settings"] = read_json(where.project_settings)
    if where.project_local:
        files["project_local"] = read_json(where.project_local)
    return ClientState(NAME, detect(machine), files)


def env_block(data: dict | None) -> dict:
    """The `env` object of a parsed settings file ({} when absent)."""
    block = (data or {}).get("env")
    return block if isinstance(block, dict) else {}


@dataclass(frozen=True)
class EnvValue:
    """One variable as Claude Code sees it: the value, where it comes from (a settings file's role and path, or
    the shell), and the values it hides — what the lower layers set it to, highest first."""

    name: str
    value: str
    role: str  # one of SETTINGS_ROLES, or SHELL
    path: Path | None  # None: the shell
    hidden: tuple[EnvValue, ...] = ()

    @property
    def where(self) -> str:
        return _("the shell") if self.path is None else str(self.path)

    @property
    def after_trust(self) -> bool:
        """Applied only once the user accepted the workspace trust prompt (project files)."""
        return self.role in PROJECT_ROLES

    @property
    def outranks_user(self) -> bool:
        """Set by a file that wins over the user settings (managed, or a project file)."""
        return self.role in ("managed", *PROJECT_ROLES)

    @property
    def editable(self) -> bool:
        """A file the user may edit (managed settings belong to an administrator)."""
        return self.path is not None and self.role != "managed"


def effective_env(machine: Machine, state: ClientState | None = None) -> dict[str, EnvValue]:
    """Every variable Claude Code starts with, resolved in its own order: the shell, then the user, project,
    local and managed `env` blocks, each overriding the ones before (files that do not parse are skipped: Claude
    Code ignores them too). `state` is a `read(machine)` already at hand."""
    files = (state or read(machine)).files
    layers: list[tuple[str, Path | None, Mapping]] = [(SHELL, None, machine.env)]
    for role in reversed(SETTINGS_ROLES):
        file = files.get(role)
        if file is not None and file.error is None and file.exists:
            layers.append((role, file.path, env_block(file.data)))
    effective: dict[str, EnvValue] = {}
    for role, path, block in layers:
        for name, value in block.items():
            if isinstance(value, str):  # non-strings are a settings error (doctor's claude.settings says so)
                below = effective.get(name)
                effective[name] = EnvValue(name, value, role, path, (below, *below.hidden) if below else ())
    return effective


def environment(effective: Mapping[str, EnvValue]) -> dict[str, str]:
    """The plain environment Claude Code's process gets (what its proxy and other settings are read from)."""
    return {name: item.value for name, item in effective.items()}


def same_value(name: str, a: str, b: str) -> bool:
    """Do two settings of `name` mean the same thing (one base URL root, one key, one model)?"""
    from taotoken_cli.core.net.hygiene import clean_base_url

    if name == BASE_URL:
        try:
            return clean_base_url(a).value == clean_base_url(b).value
        except InputError:
            return a.strip().rstrip("/") == b.strip().rstrip("/")
    if name in (AUTH_TOKEN, API_KEY):
        return unquoted_key(a) == unquoted_key(b)
    return a.strip() == b.strip()


def overridden(effective: Mapping[str, EnvValue], names: Iterable[str], above: str = "settings") -> list[EnvValue]:
    """The variables among `names` that a file ranking above the `above` role sets (so a value written into
    that role's file does not reach Claude Code), in the order of `names`."""
    higher = SETTINGS_ROLES[:SETTINGS_ROLES.index(above)]
    return [effective[name] for name in names if name in effective and effective[name].role in higher]


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    env, scope = machine.env, options.scope
    where = paths(machine)
    result = Plan()
    if scope == "project":
        if where.project_local is None:
            raise InputError(_("--scope project writes .claude/settings.local.json of the current git repository, "
                               "but this directory is not inside one"),
                             _("run it from inside your project, or use --scope user"))
        settings_path = where.project_local
        result.warnings.append(_(
            "Claude Code applies a project file's env only after you accept the workspace trust prompt; "
            "first-run onboarding still needs the user settings (use --scope user for that)"))
        if gitrepo.ignored(settings_path) is False:
            result.warnings.append(_("{path} is not git-ignored: add `.claude/settings.local.json` to {gitignore} so "
                                     "the key is never committed").format(path=settings_path,
                                                                          gitignore=f"{where.repo}/.gitignore"))
    else:
        settings_path = where.settings
    settings = read_json(settings_path)
    settings.check()
    data = copy.deepcopy(settings.data) if settings.data is not None else {}
    if "env" in data and not isinstance(data["env"], dict):
        raise ConfigFileError(str(settings_path), None, None, _('"env" is not a JSON object'),
                              _('make it an object of strings, e.g. {example}, then run again').format(
                                  example='"env": {}'))
    block = data.setdefault("env", {})
    summary: list[str] = []
    wanted = {BASE_URL: triple.url_for(URL_FORM), AUTH_TOKEN: triple.api_key, MODEL: triple.model,
              HAIKU_MODEL: triple.model}
    for name, value in wanted.items():
        old = block.get(name)
        if old == value:
            continue
        if name == AUTH_TOKEN:
            if isinstance(old, str):
                result.secrets.append(old)
            summary.append(_("set {name} = {value}").format(name=f"env.{name}", value=mask_key(value)))
        elif old is not None:
            summary.append(_("set {name} = {value} (was {old})").format(name=f"env.{name}", value=repr(value),
                                                                        old=repr(old)))
        else:
            summary.append(_("set {name} = {value}").format(name=f"env.{name}", value=repr(value)))
        block[name] = value
    if API_KEY in block:
        old_key = block.pop(API_KEY)
        if isinstance(old_key, str):
            result.secrets.append(old_key)
        summary.append(_("removed {name} ({value}): with {other} also set, requests may carry two different "
                         "credentials (X-Api-Key and Bearer)").format(name=f"env.{API_KEY}",
                                                                       value=mask_key(str(old_key)), other=AUTH_TOKEN))
    if SMALL_FAST_MODEL in block:
        result.warnings.append(_("{path}: {old} is deprecated; {new} (now set) replaces it — remove the old one "
                                 "when convenient").format(path=settings_path, old=f"env.{SMALL_FAST_MODEL}",
                                                           new=HAIKU_MODEL))
    if env.get(API_KEY):
        result.warnings.append(_("{variable} is exported in your shell: Claude Code would send it as X-Api-Key next "
                                 "to the Bearer token from settings.json — {command} and remove it from your shell "
                                 "start-up files").format(variable=API_KEY, command=f"`unset {API_KEY}`"))
    result.warnings.extend(_overrides(machine, "project_local" if scope == "project" else "settings", wanted))
    result.add(json_change(settings, data, target=NAME, summary=summary, secret=True))

    onboarding = read_json(where.global_config)
    onboarding.check()
    state = copy.deepcopy(onboarding.data) if onboarding.data is not None else {}
    onboarding_summary = []
    if state.get(ONBOARDING) is not True:
        state[ONBOARDING] = True
        onboarding_summary.append(_("set {name} = true (otherwise the first-run wizard asks for an Anthropic login "
                                    "and ignores the gateway)").format(name=ONBOARDING))
    result.add(json_change(onboarding, state, target=NAME, summary=onboarding_summary, new_mode=0o600))
    return result


def _overrides(machine: Machine, written: str, wanted: Mapping[str, str]) -> list[str]:
    """Files that outrank the one init writes (role `written`) and set one of its variables to another value
    (or set ANTHROPIC_API_KEY, which init removes): there, init's values do not reach Claude Code."""
    by_file: dict[tuple[str, Path | None], list[str]] = {}
    for item in overridden(effective_env(machine), (BASE_URL, AUTH_TOKEN, API_KEY, MODEL, HAIKU_MODEL), written):
        if item.name in wanted and same_value(item.name, item.value, wanted[item.name]):
            continue
        by_file.setdefault((item.role, item.path), []).append(item.name)
    warnings = []
    for (role, path), names in by_file.items():
        if role == "managed":
            warnings.append(_("{path} (managed settings, set by an administrator) sets {names}, which override "
                              "every other settings file: ask the administrator to change them there").format(
                path=path, names=listed(names)))
        else:
            warnings.append(_("{path} sets {names}, which override the user settings inside that repository; remove "
                              "them there or run init with --scope project").format(path=path, names=listed(names)))
    return warnings
