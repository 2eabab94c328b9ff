"""Claude Code (reference §1): the `env` block of settings.json, plus the onboarding flag.

Claude Code appends /v1/messages itself, so ANTHROPIC_BASE_URL is the bare root. The key goes in
ANTHROPIC_AUTH_TOKEN (sent as Bearer); ANTHROPIC_API_KEY in the same block is a conflict.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli import gitrepo
from taotoken_cli.clients.base import (
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
from taotoken_cli.errors import ConfigFileError, InputError
from taotoken_cli.fileplan import Plan
from taotoken_cli.masking import mask_key

NAME = "claude-code"
LABEL = "Claude Code"
BASE_URL = "ANTHROPIC_BASE_URL"
AUTH_TOKEN = "ANTHROPIC_AUTH_TOKEN"
API_KEY = "ANTHROPIC_API_KEY"
MODEL = "ANTHROPIC_MODEL"
HAIKU_MODEL = "ANTHROPIC_DEFAULT_HAIKU_MODEL"
SMALL_FAST_MODEL = "ANTHROPIC_SMALL_FAST_MODEL"  # deprecated alias of the haiku slot
ONBOARDING = "hasCompletedOnboarding"


@dataclass(frozen=True)
class ClaudePaths:
    config_dir: Path  # ~/.claude or $CLAUDE_CONFIG_DIR
    settings: Path  # user settings.json
    global_config: Path  # ~/.claude.json, or $CLAUDE_CONFIG_DIR/.claude.json
    repo: Path | None  # git repository of the working directory, if any
    project_settings: Path | None  # <repo>/.claude/settings.json (shared, checked in)
    project_local: Path | None  # <repo>/.claude/settings.local.json (personal)


def git_root(cwd: Path | None = None) -> Path | None:
    return gitrepo.root(cwd)


def _config_dir(env: Mapping[str, str]) -> Path:
    override = env.get("CLAUDE_CONFIG_DIR")
    return Path(override).expanduser() if override else home_dir(env) / ".claude"


def paths(machine: Machine) -> ClaudePaths:
    env = machine.env
    config_dir = _config_dir(env)
    global_config = config_dir / ".claude.json" if env.get("CLAUDE_CONFIG_DIR") else machine.home / ".claude.json"
    repo = git_root(machine.cwd)
    return ClaudePaths(
        config_dir, config_dir / "settings.json", global_config, repo,
        repo / ".claude" / "settings.json" if repo else None,
        repo / ".claude" / "settings.local.json" if repo else None,
    )


def detect(machine: Machine) -> Detection:
    return detect_by([_config_dir(machine.env)], ["claude"], machine.env)


def read(machine: Machine) -> ClientState:
    """Parsed settings files (user, project, local) and ~/.claude.json; parse errors are kept, not raised."""
    where = paths(machine)
    files = {"settings": read_json(where.settings), "global": read_json(where.global_config)}
    if where.project_settings:
        files["project_settings"] = read_json(where.project_settings)
    if where.project_local:
        files["project_local"] = read_json(where.project_local)
    return ClientState(NAME, detect(machine), files)


def env_block(data: dict | None) -> dict:
    """The `env` object of a parsed settings file ({} when absent)."""
    block = (data or {}).get("env")
    return block if isinstance(block, dict) else {}


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    env, scope = machine.env, options.scope
    where = paths(machine)
    result = Plan()
    if scope == "project":
        if where.project_local is None:
            raise InputError("--scope project writes .claude/settings.local.json of the current git repository, "
                             "but this directory is not inside one",
                             "run it from inside your project, or use --scope user")
        settings_path = where.project_local
        result.warnings.append(
            "Claude Code applies a project file's env only after you accept the workspace trust prompt; "
            "first-run onboarding still needs the user settings (use --scope user for that)")
        if _git_ignored(settings_path) is False:
            result.warnings.append(f"{settings_path} is not git-ignored: add `.claude/settings.local.json` to "
                                   f"{where.repo}/.gitignore so the key is never committed")
    else:
        settings_path = where.settings
    settings = read_json(settings_path)
    settings.check()
    data = copy.deepcopy(settings.data) if settings.data is not None else {}
    if "env" in data and not isinstance(data["env"], dict):
        raise ConfigFileError(str(settings_path), None, None, '"env" is not a JSON object',
                              'make it an object of strings, e.g. "env": {}, then run again')
    block = data.setdefault("env", {})
    summary: list[str] = []
    wanted = {BASE_URL: triple.anthropic_base, AUTH_TOKEN: triple.api_key, MODEL: triple.model,
              HAIKU_MODEL: triple.model}
    for name, value in wanted.items():
        old = block.get(name)
        if old == value:
            continue
        if name == AUTH_TOKEN:
            if isinstance(old, str):
                result.secrets.append(old)
            summary.append(f"set env.{name} = {mask_key(value)}")
        else:
            summary.append(f"set env.{name} = {value!r}" + (f" (was {old!r})" if old is not None else ""))
        block[name] = value
    if API_KEY in block:
        old_key = block.pop(API_KEY)
        if isinstance(old_key, str):
            result.secrets.append(old_key)
        summary.append(f"removed env.{API_KEY} ({mask_key(str(old_key))}): with {AUTH_TOKEN} also set, requests "
                       "may carry two different credentials (X-Api-Key and Bearer)")
    if SMALL_FAST_MODEL in block:
        result.warnings.append(f"{settings_path}: env.{SMALL_FAST_MODEL} is deprecated; {HAIKU_MODEL} (now set) "
                               "replaces it — remove the old one when convenient")
    if env.get(API_KEY):
        result.warnings.append(f"{API_KEY} is exported in your shell: Claude Code would send it as X-Api-Key next to "
                               f"the Bearer token from settings.json — `unset {API_KEY}` and remove it from your "
                               "shell start-up files")
    if scope == "user":
        result.warnings.extend(_project_overrides(where))
    result.add(json_change(settings, data, target=NAME, summary=summary, secret=True))

    onboarding = read_json(where.global_config)
    onboarding.check()
    state = copy.deepcopy(onboarding.data) if onboarding.data is not None else {}
    onboarding_summary = []
    if state.get(ONBOARDING) is not True:
        state[ONBOARDING] = True
        onboarding_summary.append(f"set {ONBOARDING} = true (otherwise the first-run wizard asks for an "
                                  "Anthropic login and ignores the gateway)")
    result.add(json_change(onboarding, state, target=NAME, summary=onboarding_summary, new_mode=0o600))
    return result


def _project_overrides(where: ClaudePaths) -> list[str]:
    """Project files outrank the user file: say so when one of them sets the same variables."""
    warnings = []
    for path in (where.project_local, where.project_settings):
        if path is None:
            continue
        file = read_json(path)
        overridden = sorted(set(env_block(file.data)) & {BASE_URL, AUTH_TOKEN, API_KEY, MODEL, HAIKU_MODEL})
        if overridden:
            warnings.append(f"{path} sets {', '.join(overridden)}, which override the user settings inside that "
                            "repository; remove them there or run init with --scope project")
    return warnings


def _git_ignored(path: Path) -> bool | None:
    return gitrepo.ignored(path)
