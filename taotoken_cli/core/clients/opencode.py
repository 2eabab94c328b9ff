"""OpenCode (the `opencode` CLI, npm `opencode-ai`; read in 1.18.33, docs/clients.md#opencode): a custom provider in its
global config, JSONC, and the key where `opencode auth login` keeps it.

The config files, lowest first (each merged over the one before): the global ones in $XDG_CONFIG_HOME/opencode
(default ~/.config/opencode on every OS) — config.json, opencode.json, opencode.jsonc —, the file $OPENCODE_CONFIG
names, the project's opencode.json/opencode.jsonc from the git root down to the working directory, each
`.opencode/` folder's opencode.json(c) and $OPENCODE_CONFIG_DIR's, $OPENCODE_CONFIG_CONTENT, and an administrator's
(/etc/opencode, /Library/Application Support/opencode, %ProgramData%\\opencode). OpenCode itself writes the first of
opencode.jsonc, opencode.json, config.json that exists (opencode.jsonc when none does): so does init.

The provider: `provider.taotoken` with npm "@ai-sdk/openai-compatible" (bundled in the binary, nothing downloaded),
`options.baseURL` = root + /v1 (it posts to <baseURL>/chat/completions), the model listed under `models`, and the
top-level `model` = "taotoken/<model>" (else OpenCode picks the last model it used, from its state directory).
The key: `options.apiKey` in the config wins; else auth.json ($XDG_DATA_HOME/opencode/auth.json, 0600, {"taotoken":
{"type": "api", "key": …}}, what `opencode auth login` writes; $OPENCODE_AUTH_CONTENT replaces the file); else the
first set variable the provider's `env` list names. init writes auth.json, unless the entry already keeps a literal
apiKey in the config (then it is updated there: the user chose that place).
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taotoken_cli.core.base.errors import ConfigFileError
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients.base import (
    ClientState,
    ConfigFile,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    deep_merge,
    detect_by,
    json_change,
    read_json,
    set_fields,
)
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.net.urlform import OPENAI_V1
from taotoken_cli.core.platform import system

NAME = "opencode"
LABEL = "OpenCode"
URL_FORM = OPENAI_V1  # @ai-sdk/openai-compatible posts to <baseURL>/chat/completions
PROVIDER_ID = "taotoken"
PROVIDER_NAME = "TaoToken"
PROVIDER_NPM = "@ai-sdk/openai-compatible"
SCHEMA = "https://opencode.ai/config.json"
GLOBAL_FILES = ("config.json", "opencode.json", "opencode.jsonc")  # merged in this order: the last wins
WRITE_ORDER = ("opencode.jsonc", "opencode.json", "config.json")  # OpenCode writes the first that exists
PROJECT_FILES = ("opencode.json", "opencode.jsonc")
ENV_CONFIG, ENV_CONFIG_DIR, ENV_CONTENT = "OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR", "OPENCODE_CONFIG_CONTENT"
ENV_AUTH_CONTENT, ENV_NO_PROJECT = "OPENCODE_AUTH_CONTENT", "OPENCODE_DISABLE_PROJECT_CONFIG"


@dataclass(frozen=True)
class OpenCodePaths:
    config_dir: Path  # $XDG_CONFIG_HOME/opencode or ~/.config/opencode
    config: Path  # the global file OpenCode (and init) writes
    auth: Path  # $XDG_DATA_HOME/opencode/auth.json or ~/.local/share/opencode/auth.json


def paths(machine: Machine) -> OpenCodePaths:
    env = machine.env
    config_home = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else machine.home / ".config"
    data_home = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else machine.home / ".local" / "share"
    config_dir = config_home / "opencode"
    config = next((config_dir / n for n in WRITE_ORDER if (config_dir / n).exists()), config_dir / WRITE_ORDER[0])
    return OpenCodePaths(config_dir, config, data_home / "opencode" / "auth.json")


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true")


def layers(machine: Machine) -> list[tuple[str, Path]]:
    """Every config file OpenCode reads here that exists, lowest precedence first, with its role: "global" (the
    user's own files), "custom" ($OPENCODE_CONFIG), "project", "dir" (a .opencode folder, $OPENCODE_CONFIG_DIR),
    "managed" (an administrator's). $OPENCODE_CONFIG_CONTENT is no file: see `content_override`."""
    env = machine.env
    where = paths(machine)
    found: list[tuple[str, Path]] = [("global", where.config_dir / n) for n in GLOBAL_FILES]
    if env.get(ENV_CONFIG):
        found.append(("custom", Path(env[ENV_CONFIG]).expanduser()))
    project_dirs: list[Path] = []
    if not _truthy(env.get(ENV_NO_PROJECT)):
        stop = machine.git_root
        for directory in (machine.cwd, *machine.cwd.parents):
            project_dirs.append(directory)
            if directory == stop:
                break
        for directory in reversed(project_dirs):  # the git root first: the nearest file wins
            found += [("project", directory / n) for n in PROJECT_FILES]
    dot_dirs = [d / ".opencode" for d in reversed(project_dirs)] + [machine.home / ".opencode"]
    if env.get(ENV_CONFIG_DIR):
        dot_dirs.append(Path(env[ENV_CONFIG_DIR]).expanduser())
    for directory in dict.fromkeys(dot_dirs):
        found += [("dir", directory / n) for n in PROJECT_FILES]
    managed = machine.system_root / system.managed_path(NAME)
    found += [("managed", managed / n) for n in PROJECT_FILES]
    seen: set[Path] = set()
    result = []
    for role, path in found:
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        result.append((role, path))
    return result


def user_file(machine: Machine, where: str | None) -> Path | None:
    """`where` (a file `effective` names) when it is a file the user edits: not $OPENCODE_CONFIG_CONTENT and not in
    the administrator's folder."""
    if not where or where.startswith("$"):
        return None
    path = Path(where)
    return None if path.parent == machine.system_root / system.managed_path(NAME) else path


def detect(machine: Machine) -> Detection:
    return detect_by([paths(machine).config_dir], ["opencode"], machine.env)


def read(machine: Machine) -> ClientState:
    """The global file init writes ("config"), auth.json ("auth"), and every other config file OpenCode reads here
    ("<role>:<path>"), lowest precedence first; parse errors are kept."""
    where = paths(machine)
    files = {"config": read_json(where.config, allow_comments=True), "auth": read_json(where.auth)}
    for role, path in layers(machine):
        if path != where.config:
            files[f"{role}:{path}"] = read_json(path, allow_comments=True)
    return ClientState(NAME, detect(machine), files)


def provider_entry(data: Any, provider_id: str = PROVIDER_ID) -> dict | None:
    providers = data.get("provider") if isinstance(data, dict) else None
    entry = providers.get(provider_id) if isinstance(providers, dict) else None
    return entry if isinstance(entry, dict) else None


def literal_key(entry: dict | None) -> str | None:
    """The entry's options.apiKey when it is the key itself (not an {env:…} or {file:…} reference)."""
    options = entry.get("options") if entry else None
    key = options.get("apiKey") if isinstance(options, dict) else None
    return key if isinstance(key, str) and "{env:" not in key and "{file:" not in key else None


def _check_shape(file: ConfigFile, data: dict) -> None:
    providers = data.get("provider")
    if providers is not None and not isinstance(providers, dict):
        raise ConfigFileError(str(file.path), None, None, _("{name} is not a JSON object").format(name="provider"),
                              _("make it an object, or remove it, then run again"))
    if isinstance(providers, dict) and not isinstance(providers.get(PROVIDER_ID, {}), dict):
        raise ConfigFileError(str(file.path), None, None,
                              _("{name} is not a JSON object").format(name=f"provider.{PROVIDER_ID}"),
                              _("remove it so init can write it"))


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    where = paths(machine)
    result = Plan()
    file = read_json(where.config, allow_comments=True)
    file.check()
    data = copy.deepcopy(file.data) if isinstance(file.data, dict) else {}
    _check_shape(file, data)
    if not file.exists or not (file.text or "").strip():
        data = {"$schema": SCHEMA, **data}
    summary: list[str] = []
    providers = data.setdefault("provider", {})
    old_entry = providers.get(PROVIDER_ID) or {}
    entry = copy.deepcopy(old_entry)
    entry.setdefault("npm", PROVIDER_NPM)
    entry.setdefault("name", PROVIDER_NAME)
    opts = entry["options"] if isinstance(entry.get("options"), dict) else {}
    key_in_config = literal_key(old_entry) is not None
    wanted_options = {"baseURL": triple.url_for(URL_FORM), **({"apiKey": triple.api_key} if key_in_config else {})}
    set_fields(opts, wanted_options, name=f"provider.{PROVIDER_ID}.options", plan=result, summary=summary)
    entry["options"] = opts
    models = entry["models"] if isinstance(entry.get("models"), dict) else {}
    if triple.model not in models:
        models[triple.model] = {"name": triple.model}
        summary.append(_("add model {model} to {name}").format(model=repr(triple.model),
                                                               name=f"provider.{PROVIDER_ID}.models"))
    entry["models"] = models
    if entry.get("npm") != PROVIDER_NPM:  # another package would not speak the OpenAI-compatible protocol
        summary.append(_("set {name} = {value} (was {old})").format(name=f"provider.{PROVIDER_ID}.npm",
                                                                    value=repr(PROVIDER_NPM), old=repr(entry["npm"])))
        entry["npm"] = PROVIDER_NPM
    providers[PROVIDER_ID] = entry
    selected = f"{PROVIDER_ID}/{triple.model}"
    if data.get("model") != selected:
        old = data.get("model")
        summary.append(_("set {name} = {value} (was {old})").format(name="model", value=repr(selected), old=repr(old))
                       if old is not None else _("set {name} = {value}").format(name="model", value=repr(selected)))
        data["model"] = selected
    if summary and not old_entry:
        summary.insert(0, _("add provider {name} ({npm})").format(name=PROVIDER_ID, npm=PROVIDER_NPM))
    if isinstance(data.get("disabled_providers"), list) and PROVIDER_ID in data["disabled_providers"]:
        result.warnings.append(_("{path} lists {name} in disabled_providers: OpenCode ignores it until you remove "
                                 "it from there").format(path=where.config, name=PROVIDER_ID))
    reference = (old_entry.get("options") or {}).get("apiKey") if isinstance(old_entry.get("options"), dict) else None
    if isinstance(reference, str) and not key_in_config:
        result.warnings.append(_("{name} in {path} is {value}: OpenCode sends what that gives, not the key stored in "
                                 "{auth}; remove it there to use that one").format(
            name=f"provider.{PROVIDER_ID}.options.apiKey", path=where.config, value=reference, auth=where.auth))
    result.add(json_change(file, data, target=NAME, summary=summary, secret=key_in_config))
    if not key_in_config:
        result.extend(_plan_auth(triple, where))
    return result


def _plan_auth(triple: Triple, where: OpenCodePaths) -> Plan:
    """The key in auth.json, as `opencode auth login` stores it (other providers' credentials are kept)."""
    result = Plan()
    auth = read_json(where.auth)
    auth.check()
    data = copy.deepcopy(auth.data) if isinstance(auth.data, dict) else {}
    old = data.get(PROVIDER_ID)
    wanted = {"type": "api", "key": triple.api_key}
    summary: list[str] = []
    if not isinstance(old, dict) or old.get("type") != "api" or old.get("key") != triple.api_key:
        if isinstance(old, dict) and isinstance(old.get("key"), str):
            result.secrets.append(old["key"])
        data[PROVIDER_ID] = {**(old if isinstance(old, dict) else {}), **wanted}
        summary.append(_("set {name} = {value}").format(name=f"{PROVIDER_ID}.key", value=mask_key(triple.api_key)))
    result.add(json_change(auth, data, target=NAME, summary=summary, secret=True))
    return result


# -- what OpenCode will use -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Effective:
    """What OpenCode resolves from its config files, auth.json and environment for the model it starts with."""

    model: str | None  # "provider/model", None: OpenCode picks the last one it used
    model_from: str | None  # the file that sets it
    provider_id: str | None
    entry: dict | None  # the merged provider entry
    provider_from: str | None  # the last file that sets it
    base_url: str | None
    base_url_from: str | None
    key: str | None
    key_from: str | None
    overridden: list[tuple[str, str]]  # (file, what it sets) for files over the global one that set model/provider


def _substitute(value: Any, env: dict[str, str]) -> Any:
    """{env:NAME} as OpenCode replaces it when it loads a file (an unset variable becomes "")."""
    if isinstance(value, str):
        return re.sub(r"\{env:([^}]+)\}", lambda m: env.get(m.group(1), ""), value)
    if isinstance(value, dict):
        return {k: _substitute(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, env) for v in value]
    return value


def sources(machine: Machine, state: ClientState) -> list[tuple[str, str, Any]]:
    """(role, where, parsed content) of every config OpenCode merges here, lowest first: the files (`layers`), the
    global file init writes even when it does not exist yet, and $OPENCODE_CONFIG_CONTENT."""
    where = paths(machine)
    found = [(role, path) for role, path in layers(machine)]
    if where.config not in [path for _role, path in found]:
        found.insert(0, ("global", where.config))
    result = []
    for role, path in found:
        file = state.files.get("config") if path == where.config else state.files.get(f"{role}:{path}")
        result.append((role, str(path), file.data if file is not None else None))
    if machine.env.get(ENV_CONTENT):
        with contextlib.suppress(ValueError):  # OpenCode stops on it; doctor reports only what it can read
            result.append(("content", "$" + ENV_CONTENT, json.loads(machine.env[ENV_CONTENT])))
    return result


def effective(machine: Machine, state: ClientState | None = None) -> Effective:
    state = state or read(machine)
    env = dict(machine.env)
    merged: dict = {}
    model_from = None
    origin: dict[str, str] = {}  # provider id -> the last file that sets it
    overridden: list[tuple[str, str]] = []
    written_key: dict[str, tuple[str, str]] = {}  # provider id -> (apiKey as written, file)
    for role, where, data in sources(machine, state):
        if not isinstance(data, dict):
            continue
        if "model" in data:
            model_from = where
        for name, raw in (data.get("provider") or {}).items() if isinstance(data.get("provider"), dict) else ():
            origin[name] = where
            options = raw.get("options") if isinstance(raw, dict) else None
            if isinstance(options, dict) and "apiKey" in options:
                written_key[name] = (str(options["apiKey"]), where)
        if role != "global" and ("model" in data or "provider" in data):
            overridden.append((where, ", ".join(k for k in ("model", "provider") if k in data)))
        merged = deep_merge(merged, _substitute(data, env))
    model = merged.get("model") if isinstance(merged.get("model"), str) else None
    provider_id = model.split("/", 1)[0] if model and "/" in model else None
    entry = provider_entry(merged, provider_id) if provider_id else None
    options = entry.get("options") if entry and isinstance(entry.get("options"), dict) else {}
    base = options.get("baseURL") if isinstance(options.get("baseURL"), str) and options["baseURL"] else None
    key = key_from = None
    if provider_id and isinstance(options.get("apiKey"), str) and options["apiKey"]:
        key = options["apiKey"]
        written, where = written_key.get(provider_id, (key, "?"))
        name = f"provider.{provider_id}.options.apiKey"
        key_from = f"{name} = {written} ({where})" if "{env:" in written else f"{name} ({where})"
    elif provider_id:
        stored = _auth_data(state, env).get(provider_id)
        if isinstance(stored, dict) and stored.get("type") == "api" and isinstance(stored.get("key"), str):
            key = stored["key"]
            key_from = "$" + ENV_AUTH_CONTENT if env.get(ENV_AUTH_CONTENT) else str(paths(machine).auth)
        else:
            variable = next((n for n in (entry or {}).get("env") or [] if isinstance(n, str) and env.get(n)), None)
            if variable:
                key, key_from = env[variable], "$" + variable
    provider_from = origin.get(provider_id) if provider_id else None
    return Effective(model, model_from, provider_id, entry, provider_from, base, provider_from if base else None, key,
                     key_from, overridden)


def _auth_data(state: ClientState, env: dict[str, str]) -> dict:
    if env.get(ENV_AUTH_CONTENT):
        try:
            data = json.loads(env[ENV_AUTH_CONTENT])
            return data if isinstance(data, dict) else {}
        except ValueError:
            pass
    auth = state.files.get("auth")
    return auth.data if auth is not None and isinstance(auth.data, dict) else {}
