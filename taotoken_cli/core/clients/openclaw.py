"""OpenClaw (npm `openclaw`, checked against 2026.9.6; docs/clients.md "OpenClaw"): a custom provider in its
config file, `~/.openclaw/openclaw.json` ($OPENCLAW_CONFIG_PATH, or openclaw.json in $OPENCLAW_STATE_DIR).

From its own documentation and the installed program (docs/gateway/config-tools/custom-providers.md):
`models.providers.<id>` holds `baseUrl`, `apiKey`, `api` (the request adapter) and `models` (catalogue rows,
`{id, name}` at least); `agents.defaults.model.primary` is `<provider>/<model>`. The adapter
`openai-completions` calls `<baseUrl>/chat/completions` with `Authorization: Bearer <apiKey>`, so baseUrl is
root + /v1 (OPENAI_V1). The file is JSON5; taotoken edits it when it is JSON (comments and trailing commas
allowed) and otherwise says how to do it with `openclaw config set`. OpenClaw needs Node >= 24.16.

init writes the provider `taotoken` and selects `taotoken/<model>` as the default model; other providers, models
and settings are kept.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.errors import ConfigFileError
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.clients.base import (
    Claim,
    ClientState,
    ConfigFile,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    detect_by,
    json_change,
    read_json,
    set_fields,
)
from taotoken_cli.core.clients.envvars import host_key, key_mark
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.net.urlform import OPENAI_V1

NAME = "openclaw"
LABEL = "OpenClaw"
URL_FORM = OPENAI_V1  # the openai-completions adapter calls <baseUrl>/chat/completions
PROVIDER_ID = "taotoken"
API = "openai-completions"
# What each adapter appends to baseUrl (used.py and doctor name the URL a request goes to).
ENDPOINTS = {"openai-completions": "/chat/completions", "openai-responses": "/responses",
             "anthropic-messages": "/v1/messages"}


@dataclass(frozen=True)
class OpenClawPaths:
    state_dir: Path  # $OPENCLAW_STATE_DIR or ~/.openclaw
    config: Path  # $OPENCLAW_CONFIG_PATH or <state_dir>/openclaw.json


def paths(machine: Machine) -> OpenClawPaths:
    env = machine.env
    state = Path(env["OPENCLAW_STATE_DIR"]).expanduser() if env.get("OPENCLAW_STATE_DIR") else \
        machine.home / ".openclaw"
    config = Path(env["OPENCLAW_CONFIG_PATH"]).expanduser() if env.get("OPENCLAW_CONFIG_PATH") else \
        state / "openclaw.json"
    return OpenClawPaths(state, config)


def detect(machine: Machine) -> Detection:
    return detect_by([paths(machine).state_dir], ["openclaw"], machine.env)


def read_config(machine: Machine) -> ConfigFile:
    file = read_json(paths(machine).config, allow_comments=True)
    if file.error is not None and file.error.line is not None:  # valid JSON5 is not always JSON with comments
        wanted = json.dumps({"baseUrl": "<root>/v1", "apiKey": "sk-…", "api": API,
                             "models": [{"id": "<model>", "name": "<model>"}]})
        file.error = ConfigFileError(
            str(file.path), file.error.line, file.error.column,
            _("{detail} (OpenClaw reads JSON5; taotoken edits JSON with comments only)").format(
                detail=file.error.message.split(": ", 1)[-1]),
            _("let OpenClaw write it: {command}").format(
                command=f"openclaw config set models.providers.{PROVIDER_ID} '{wanted}' --strict-json --merge"))
    return file


def read(machine: Machine) -> ClientState:
    return ClientState(NAME, detect(machine), {"config": read_config(machine)})


def _object(file: ConfigFile, parent: dict, key: str, name: str) -> dict:
    value = parent.setdefault(key, {})
    if not isinstance(value, dict):
        raise ConfigFileError(str(file.path), None, None, _('"{name}" is not a JSON object').format(name=name),
                              _("make it an object, e.g. {example}, then run again").format(example=f'"{key}": {{}}'))
    return value


def primary(data: object) -> str | None:
    """agents.defaults.model.primary (a string, or {primary: …} in older files)."""
    for key in ("agents", "defaults", "model"):
        data = data.get(key) if isinstance(data, dict) else None
    if isinstance(data, dict):
        data = data.get("primary")
    return data if isinstance(data, str) else None


def claim(machine: Machine, hosts: frozenset[str], written: frozenset[str] | tuple[str, ...]) -> Claim:
    """Whether the provider `taotoken` is a copy of the triple (envvars' rule for key variables: its apiKey is
    TaoToken's only while its baseUrl points at TaoToken, or when it is a key taotoken wrote)."""
    file = read_config(machine)
    entry = None
    if file.error is None and isinstance(file.data, dict):
        providers = (file.data.get("models") or {}).get("providers") if isinstance(file.data.get("models"), dict) \
            else None
        entry = providers.get(PROVIDER_ID) if isinstance(providers, dict) else None
    if not isinstance(entry, dict) or not (entry.get("baseUrl") or entry.get("apiKey")):
        return Claim(None)
    base, key = entry.get("baseUrl"), entry.get("apiKey")
    ours_key = isinstance(key, str) and key_mark(key) in written
    if host_key(base if isinstance(base, str) else None) in hosts or ours_key:
        return Claim(True)
    return Claim(False, (_("{path}: models.providers.{id}.apiKey is left alone: not TaoToken's key (baseUrl = "
                           "{value} does not point at TaoToken)").format(path=file.path, id=PROVIDER_ID,
                                                                          value=repr(base)),))


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    file = read_config(machine)
    file.check()
    result = Plan()
    data = copy.deepcopy(file.data) if file.data is not None else {}
    providers = _object(file, _object(file, data, "models", "models"), "providers", "models.providers")
    entry = _object(file, providers, PROVIDER_ID, f"models.providers.{PROVIDER_ID}")
    summary: list[str] = []
    set_fields(entry, {"baseUrl": triple.url_for(URL_FORM), "apiKey": triple.api_key, "api": API},
               name=f"models.providers.{PROVIDER_ID}", plan=result, summary=summary)
    models = entry.get("models") if isinstance(entry.get("models"), list) else []
    if not any(isinstance(m, dict) and m.get("id") == triple.model for m in models):
        entry["models"] = [*models, {"id": triple.model, "name": triple.model}]
        summary.append(_("add model {model} to {name}").format(model=repr(triple.model),
                                                               name=f"models.providers.{PROVIDER_ID}.models"))
    wanted = f"{PROVIDER_ID}/{triple.model}"
    old_primary = primary(data)
    if old_primary != wanted:
        defaults = _object(file, _object(file, data, "agents", "agents"), "defaults", "agents.defaults")
        if isinstance(defaults.get("model"), str):  # the short form: "model": "provider/model"
            defaults["model"] = wanted
        else:
            _object(file, defaults, "model", "agents.defaults.model")["primary"] = wanted
        summary.append(_("set {name} = {value} (was {old})").format(
            name="agents.defaults.model.primary", value=repr(wanted), old=repr(old_primary)) if old_primary else
            _("set {name} = {value}").format(name="agents.defaults.model.primary", value=repr(wanted)))
    result.add(json_change(file, data, target=NAME, summary=summary, secret=True))
    return result
