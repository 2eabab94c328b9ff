"""Qwen Code (the `qwen` CLI, npm `@qwen-code/qwen-code`; read in 0.24.4, docs/clients.md#qwen-code): a model provider
in ~/.qwen/settings.json ($QWEN_HOME/settings.json), JSON with comments.

Settings files, lowest first (each deep-merged over the one before; `modelProviders` is replaced whole): the
system defaults, the user's, the project's `.qwen/settings.json` (the working directory's, unless it is HOME), and
the administrator's system settings (/etc/qwen-code/settings.json and the like; $QWEN_CODE_SYSTEM_SETTINGS_PATH).

What it sends (packages/core modelConfigResolver): the auth type is `security.auth.selectedType` (or guessed
from OPENAI_API_KEY + OPENAI_MODEL + OPENAI_BASE_URL); the model is `model.name`; an entry of
`modelProviders.openai` whose `id` is that model (and `baseUrl` = `model.baseUrl`, where set) then gives the base
URL — root + /v1: the OpenAI SDK posts to <baseUrl>/chat/completions — and `envKey`, the variable the key is read
from. Such an entry wins over OPENAI_BASE_URL and OPENAI_API_KEY, so a stale export of those in ~/.bashrc does
not reach it; without one those variables, then `security.auth.apiKey`/`baseUrl`, are used.

init writes what Qwen Code's own "Custom Provider" setup writes: the entry (envKey TAOTOKEN_API_KEY, the variable
taotoken itself reads), the key in the settings' `env` block (applied to that variable only when the environment
and the .env files leave it unset), `security.auth.selectedType` = "openai", `model.name` and `model.baseUrl`, and
`"$version": 4` (without it Qwen Code rewrites the file on its next start). A file still in the old flat format
(version 1) is refused: Qwen Code converts it when it next starts.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taotoken_cli.core.base.errors import ConfigFileError
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients.base import (
    ClientState,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    deep_merge,
    detect_by,
    json_change,
    read_json,
    read_text,
)
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.formats import dotenv
from taotoken_cli.core.net.urlform import OPENAI_V1
from taotoken_cli.core.platform import system

NAME = "qwen-code"
LABEL = "Qwen Code"
URL_FORM = OPENAI_V1  # the OpenAI SDK posts to <baseUrl>/chat/completions
AUTH_TYPE = "openai"
ENV_KEY = "TAOTOKEN_API_KEY"  # the entry's envKey; its value sits in the settings' env block
SETTINGS_VERSION = 4
DEFAULT_BASE_URL = "https://api.openai.com/v1"  # the OpenAI SDK's, when nothing names one
DEFAULT_MODEL = "qwen3.7-max"  # Qwen Code's default for the openai auth type
ENV_HOME, ENV_SYSTEM, ENV_DEFAULTS = "QWEN_HOME", "QWEN_CODE_SYSTEM_SETTINGS_PATH", "QWEN_CODE_SYSTEM_DEFAULTS_PATH"
# Top-level keys whose primitive value marks a version-1 (flat) file: Qwen Code moves them when it next starts.
V1_KEYS = ("model", "selectedAuthType", "theme", "autoAccept", "sandbox", "contentGenerator")
# Where each file sits in the merge, lowest first.
SETTINGS_ROLES = ("system_defaults", "settings", "project", "system")


@dataclass(frozen=True)
class QwenPaths:
    home: Path  # $QWEN_HOME or ~/.qwen
    settings: Path  # the user's settings.json: what init writes
    project: Path | None  # <cwd>/.qwen/settings.json (None when cwd is HOME: Qwen Code skips it there)
    system: Path
    system_defaults: Path
    env_files: tuple[Path, ...]  # ~/.qwen/.env, ~/.env (the home fallbacks; a project's .env comes first)


def paths(machine: Machine) -> QwenPaths:
    env = machine.env
    home = Path(env[ENV_HOME]).expanduser() if env.get(ENV_HOME) else machine.home / ".qwen"
    if not home.is_absolute():
        home = machine.cwd / home
    system_settings = Path(env[ENV_SYSTEM]) if env.get(ENV_SYSTEM) else \
        machine.system_root / system.managed_path(NAME)
    defaults = Path(env[ENV_DEFAULTS]) if env.get(ENV_DEFAULTS) else system_settings.parent / "system-defaults.json"
    project = None if _same(machine.cwd, machine.home) else machine.cwd / ".qwen" / "settings.json"
    env_files = [home / ".env"]
    if not env.get(ENV_HOME) or home != machine.home / ".qwen":
        env_files.append(machine.home / ".qwen" / ".env")
    env_files.append(machine.home / ".env")
    return QwenPaths(home, home / "settings.json", project, system_settings, defaults, tuple(dict.fromkeys(env_files)))


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


def project_env_file(machine: Machine) -> Path | None:
    """The first `.qwen/.env` or `.env` from the working directory up (below HOME), as Qwen Code finds it."""
    for directory in (machine.cwd, *machine.cwd.parents):
        if _same(directory, machine.home):
            return None
        for candidate in (directory / ".qwen" / ".env", directory / ".env"):
            if candidate.is_file():
                return candidate
    return None


def dotenv_line(path: Path, name: str) -> int | None:
    """The line of `path` (a .env file) that assigns `name`, the last one (that is the value read)."""
    file = read_text(path)
    lines = [a.line for a in dotenv.parse(file.text or "") if a.name == name]
    return lines[-1] if lines else None


def detect(machine: Machine) -> Detection:
    return detect_by([paths(machine).home], ["qwen"], machine.env)


def read(machine: Machine) -> ClientState:
    """The settings files by role (`settings` is the user's), and the .env files ("env:<path>"); parse errors kept."""
    where = paths(machine)
    files = {"settings": read_json(where.settings, allow_comments=True),
             "system": read_json(where.system, allow_comments=True),
             "system_defaults": read_json(where.system_defaults, allow_comments=True)}
    if where.project is not None:
        files["project"] = read_json(where.project, allow_comments=True)
    project_env = project_env_file(machine)
    for path in (*([project_env] if project_env else []), *where.env_files):
        files[f"env:{path}"] = read_text(path)
    return ClientState(NAME, detect(machine), files)


def is_v1(data: Mapping) -> bool:
    version = data.get("$version")
    if isinstance(version, (int, float)) and not isinstance(version, bool) and version >= 2:
        return False
    return any(key in data and not isinstance(data[key], dict) for key in V1_KEYS)


def _ours(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("envKey") == ENV_KEY


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    where = paths(machine)
    result = Plan()
    file = read_json(where.settings, allow_comments=True)
    file.check()
    data = copy.deepcopy(file.data) if isinstance(file.data, dict) else {}
    if is_v1(data):
        raise ConfigFileError(str(where.settings), None, None,
                              _("is in Qwen Code's old settings format (version 1: flat keys such as \"model\": "
                                "\"…\")"), _("start Qwen Code once (it converts the file), then run again"))
    for name in ("env", "modelProviders", "security", "model"):
        if name in data and not isinstance(data[name], dict):
            raise ConfigFileError(str(where.settings), None, None,
                                  _("{name} is not a JSON object").format(name=name),
                                  _("make it an object, or remove it, then run again"))
    url = triple.url_for(URL_FORM)
    summary: list[str] = []
    if "$version" not in data:
        data = {"$version": SETTINGS_VERSION, **data}
    env_block = data.setdefault("env", {})
    old_key = env_block.get(ENV_KEY)
    if old_key != triple.api_key:
        if isinstance(old_key, str):
            result.secrets.append(old_key)
        env_block[ENV_KEY] = triple.api_key
        summary.append(_("set {name} = {value}").format(name=f"env.{ENV_KEY}", value=mask_key(triple.api_key)))
    providers = data.setdefault("modelProviders", {})
    entries = providers.get(AUTH_TYPE)
    if entries is not None and not isinstance(entries, list):
        raise ConfigFileError(str(where.settings), None, None,
                              _("{name} is not a JSON array").format(name=f"modelProviders.{AUTH_TYPE}"),
                              _("make it an array of models ([{…}]), or remove it, then run again"))
    entries = list(entries or [])
    for index, entry in enumerate(entries):  # every TaoToken entry follows the root
        if _ours(entry) and entry.get("baseUrl") != url:
            entries[index] = {**entry, "baseUrl": url}
            summary.append(_("set {name} = {value}").format(
                name=f"modelProviders.{AUTH_TYPE}[{index}].baseUrl", value=repr(url)))
    if not any(_ours(e) and e.get("id") == triple.model for e in entries):
        entries.append({"id": triple.model, "name": f"{triple.model} (TaoToken)", "baseUrl": url, "envKey": ENV_KEY})
        summary.append(_("add model {model} to {name}").format(model=repr(triple.model),
                                                               name=f"modelProviders.{AUTH_TYPE}"))
    providers[AUTH_TYPE] = entries
    security = data.setdefault("security", {})
    auth = security.get("auth") if isinstance(security.get("auth"), dict) else {}
    if auth.get("selectedType") != AUTH_TYPE:
        old = auth.get("selectedType")
        summary.append(_("set {name} = {value} (was {old})").format(
            name="security.auth.selectedType", value=repr(AUTH_TYPE), old=repr(old)) if old is not None else
            _("set {name} = {value}").format(name="security.auth.selectedType", value=repr(AUTH_TYPE)))
        security["auth"] = {**auth, "selectedType": AUTH_TYPE}
    model = data.setdefault("model", {})
    for key, value in (("name", triple.model), ("baseUrl", url)):  # baseUrl picks our entry among equal ids
        if model.get(key) != value:
            old = model.get(key)
            summary.append(_("set {name} = {value} (was {old})").format(name=f"model.{key}", value=repr(value),
                                                                        old=repr(old)) if old is not None else
                           _("set {name} = {value}").format(name=f"model.{key}", value=repr(value)))
            model[key] = value
    result.add(json_change(file, data, target=NAME, summary=summary, secret=True))
    result.notes.append(_("Qwen Code reads the key from {variable}, set in the env block of {path}; an exported "
                          "{variable} or one in a .env file wins over it").format(variable="$" + ENV_KEY,
                                                                                  path=where.settings))
    return result


# -- what Qwen Code will use --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Effective:
    """What Qwen Code resolves from its files and environment (openai auth type only; `auth_type` says which)."""

    auth_type: str | None
    auth_from: str | None
    model: str
    model_from: str
    entry: dict | None  # the modelProviders entry the model selects
    entry_from: str | None  # the settings file that entry comes from
    base_url: str | None
    base_url_from: str | None
    key: str | None
    key_from: str | None
    key_variable: str | None  # the variable the key was read from, if any


def merged_settings(state: ClientState) -> tuple[dict, dict[str, str]]:
    """The settings merged as Qwen Code merges them, and which file each top-level key last came from."""
    merged: dict = {}
    origin: dict[str, str] = {}
    for role in SETTINGS_ROLES:
        file = state.files.get(role)
        if file is None or not isinstance(file.data, dict):
            continue
        for key, value in file.data.items():
            if key == "modelProviders" or not isinstance(value, dict) or not isinstance(merged.get(key), dict):
                merged[key] = copy.deepcopy(value)
            else:
                merged[key] = deep_merge(merged[key], value)
            origin[key] = str(file.path)
    return merged, origin


def env_sources(state: ClientState, env: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Every variable Qwen Code's process gets: name -> (value, where it comes from). The environment wins, then the
    .env files (the first that sets a name), then the settings' env block (only for what is still unset)."""
    found: dict[str, tuple[str, str]] = {name: (value, "$" + name) for name, value in env.items() if value != ""}
    for role, file in state.files.items():
        if role.startswith("env:") and file.text is not None:
            for name, value in dotenv.values(file.text).items():
                found.setdefault(name, (value, str(file.path)))
    for role in reversed(SETTINGS_ROLES):  # the settings file that wins for each name
        file = state.files.get(role)
        block = file.data.get("env") if file is not None and isinstance(file.data, dict) else None
        for name, value in block.items() if isinstance(block, dict) else ():
            if isinstance(value, str):
                found.setdefault(name, (value, f"env.{name} ({file.path})"))
    return found


def effective(machine: Machine, state: ClientState | None = None) -> Effective:
    state = state or read(machine)
    merged, origin = merged_settings(state)
    variables = env_sources(state, machine.env)

    def var(name: str) -> str | None:
        return variables[name][0] if name in variables else None

    security = merged.get("security") if isinstance(merged.get("security"), dict) else {}
    auth = security.get("auth") if isinstance(security.get("auth"), dict) else {}
    auth_type, auth_from = auth.get("selectedType"), origin.get("security")
    guessed = var("OPENAI_API_KEY") and (var("OPENAI_MODEL") or var("QWEN_MODEL")) and var("OPENAI_BASE_URL")
    if not auth_type and guessed:
        auth_type, auth_from = AUTH_TYPE, "$OPENAI_API_KEY + $OPENAI_MODEL + $OPENAI_BASE_URL"
    model_table = merged.get("model") if isinstance(merged.get("model"), dict) else {}
    if isinstance(model_table.get("name"), str) and model_table["name"]:
        model, model_from = model_table["name"], f"model.name ({origin.get('model')})"
    else:
        name = "OPENAI_MODEL" if var("OPENAI_MODEL") else "QWEN_MODEL" if var("QWEN_MODEL") else None
        model, model_from = (var(name), variables[name][1]) if name else (DEFAULT_MODEL, _("Qwen Code's default"))
    providers = merged.get("modelProviders") if isinstance(merged.get("modelProviders"), dict) else {}
    entries = [e for e in providers.get(auth_type) or [] if isinstance(e, dict)] if auth_type else []
    wanted_url = model_table.get("baseUrl")
    same_id = [e for e in entries if e.get("id") == model]
    entry = next((e for e in same_id if wanted_url and e.get("baseUrl") == wanted_url), same_id[0] if same_id else None)
    entry_from = origin.get("modelProviders") if entry else None
    key = key_from = key_variable = None
    if entry and isinstance(entry.get("envKey"), str) and var(entry["envKey"]):
        key_variable = entry["envKey"]
        key, key_from = variables[key_variable]
    elif var("OPENAI_API_KEY"):
        key_variable = "OPENAI_API_KEY"
        key, key_from = variables[key_variable]
    elif isinstance(auth.get("apiKey"), str):
        key, key_from = auth["apiKey"], f"security.auth.apiKey ({origin.get('security')})"
    if entry and isinstance(entry.get("baseUrl"), str):
        base, base_from = entry["baseUrl"], f"modelProviders.{auth_type} ({entry_from})"
    elif var("OPENAI_BASE_URL"):
        base, base_from = var("OPENAI_BASE_URL"), variables["OPENAI_BASE_URL"][1]
    elif isinstance(auth.get("baseUrl"), str):
        base, base_from = auth["baseUrl"], f"security.auth.baseUrl ({origin.get('security')})"
    else:
        base, base_from = DEFAULT_BASE_URL, _("the OpenAI SDK's default")
    if auth_type not in (AUTH_TYPE, None):
        base = base_from = None
    return Effective(auth_type, auth_from, model, model_from, entry, entry_from, base, base_from, key, key_from,
                     key_variable)
