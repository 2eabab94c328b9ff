"""Codex CLI (reference §2): a custom provider in $CODEX_HOME/config.toml, edited with tomlkit.

Codex appends /responses to base_url and never inserts /v1, so base_url is root + /v1; only
wire_api = "responses" is accepted. The key reaches Codex one of three ways (`auth_mode`):
  env       env_key = "OPENAI_API_KEY" (the shell target exports it)            [default]
  auth-json requires_openai_auth = true + auth.json OPENAI_API_KEY (replaces a ChatGPT login)
  inline    experimental_bearer_token = "<key>" (plaintext in config.toml)
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.errors import ConfigFileError, InputError
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients.base import (
    ClientState,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    detect_by,
    json_change,
    parse_toml_doc,
    read_json,
    read_toml,
    text_change,
)
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.formats import tomledit
from taotoken_cli.core.net.urlform import OPENAI_V1

NAME = "codex"
LABEL = "Codex"
URL_FORM = OPENAI_V1  # Codex calls <base_url>/responses and never adds /v1
PROVIDER_ID = "taotoken"
PROVIDER_NAME = "TaoToken"
ENV_KEY = "OPENAI_API_KEY"  # exported by the shell target's env.sh (never a TAOTOKEN_* variable: see clients.shell)
AUTH_MODES = ("env", "auth-json", "inline")
# Keys that choose where the key comes from; exactly one scheme may be active.
_KEY_SOURCES = ("env_key", "experimental_bearer_token", "requires_openai_auth", "auth")


@dataclass(frozen=True)
class CodexPaths:
    home: Path  # $CODEX_HOME or ~/.codex
    config: Path
    auth: Path


def paths(machine: Machine) -> CodexPaths:
    env = machine.env
    home = Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else machine.home / ".codex"
    return CodexPaths(home, home / "config.toml", home / "auth.json")


def project_config(machine: Machine) -> Path | None:
    """The nearest `.codex/config.toml` from the working directory up (not the user's own config)."""
    user_config = paths(machine).config
    candidates = [d / ".codex" / "config.toml" for d in (machine.cwd, *machine.cwd.parents)]
    return next((c for c in candidates if c.exists() and c != user_config), None)


def detect(machine: Machine) -> Detection:
    return detect_by([paths(machine).home], ["codex"], machine.env)


def read(machine: Machine) -> ClientState:
    """config.toml (data = plain dict) and auth.json; parse errors are kept, not raised."""
    where = paths(machine)
    return ClientState(NAME, detect(machine), {"config": read_toml(where.config), "auth": read_json(where.auth)})


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    import tomlkit

    auth_mode = options.codex_auth
    if auth_mode not in AUTH_MODES:
        raise InputError(_("unknown --codex-auth {value}").format(value=repr(auth_mode)),
                         _("choose one of: {choices}").format(choices=listed(AUTH_MODES)))
    where = paths(machine)
    result = Plan()
    config = read_toml(where.config)
    config.check()
    doc = parse_toml_doc(config.text or "", where.config) if config.exists else tomlkit.document()
    summary: list[str] = []

    for key, value in (("model", triple.model), ("model_provider", PROVIDER_ID)):
        if doc.get(key) != value:
            old = doc.get(key)
            tomledit.set_in(doc, (key,), value)
            summary.append(_("set {name} = {value} (was {old})").format(name=key, value=repr(value), old=repr(old))
                           if old is not None else _("set {name} = {value}").format(name=key, value=repr(value)))

    providers = doc.get("model_providers")
    if providers is not None and not isinstance(providers, Mapping):
        raise ConfigFileError(str(where.config), None, None, _("model_providers is not a table"),
                              _("make it a table ([model_providers.<id>] sections), then run again"))
    table = providers.get(PROVIDER_ID) if providers is not None else None
    if table is not None and not isinstance(table, Mapping):
        raise ConfigFileError(str(where.config), None, None,
                              _("{name} is not a table").format(name=f"model_providers.{PROVIDER_ID}"),
                              _("remove it so init can write {table}").format(table=f"[model_providers.{PROVIDER_ID}]"))

    wanted: dict[str, object] = {"name": PROVIDER_NAME, "base_url": triple.url_for(URL_FORM)}
    if auth_mode == "env":
        wanted["env_key"] = ENV_KEY
    elif auth_mode == "inline":
        wanted["experimental_bearer_token"] = triple.api_key
    else:
        wanted["requires_openai_auth"] = True
    wanted["wire_api"] = "responses"
    path = ("model_providers", PROVIDER_ID)
    current = dict(table) if table is not None else {}
    for key in _KEY_SOURCES:
        if key in current and key not in wanted:
            old = current[key]
            if key == "experimental_bearer_token" and isinstance(old, str):
                result.secrets.append(old)
            tomledit.remove_in(doc, (*path, key))
            summary.append(_("removed {name} (the key now comes from {source})").format(
                name=f"model_providers.{PROVIDER_ID}.{key}", source="$" + ENV_KEY if auth_mode == "env" else auth_mode))
    for key, value in wanted.items():
        old = current.get(key)
        if old == value:
            continue
        if key == "experimental_bearer_token":
            if isinstance(old, str):
                result.secrets.append(old)
            shown = mask_key(triple.api_key)
        else:
            shown = repr(value)
        if table is not None:
            tomledit.set_in(doc, (*path, key), value)
        name = f"model_providers.{PROVIDER_ID}.{key}"
        summary.append(_("set {name} = {value} (was {old})").format(name=name, value=shown, old=repr(old))
                       if old is not None and key != "experimental_bearer_token"
                       else _("set {name} = {value}").format(name=name, value=shown))
    if table is None:
        _add_provider_table(doc, wanted)

    if "profile" in doc or "profiles" in doc:
        moved = _move_legacy_profiles(doc, where, config.text or "")
        if moved is None:
            result.warnings.append(_("{path} has a legacy `profile`/`[profiles]` entry: Codex 0.134+ refuses to "
                                     "start with it; move each profile to $CODEX_HOME/<name>.config.toml").format(
                path=where.config))
            result.broken.append(_("Codex will refuse to start: {path} keeps its legacy `profile`/`[profiles]` "
                                   "entry (see the warning above; `taotoken doctor --fix` repairs what it can)").format(
                path=where.config))
        else:
            for change in moved:
                result.add(change)
            summary.append(_("moved the legacy [profiles] to {files} and removed profile = (Codex 0.134+ refuses "
                             "to start with them; start a profile with `codex --profile NAME`)").format(
                files=listed(change.path.name for change in moved)))
    if auth_mode == "env":
        result.details.append(_("Codex reads the key from {variable} in the environment that starts it (the shell "
                              "target exports it; GUI/IDE-launched Codex needs it in that environment too)").format(
            variable="$" + ENV_KEY))
    elif auth_mode == "inline":
        result.warnings.append(_("--codex-auth inline stores the key in plaintext in {path} (kept at 0600); do not "
                                 "share or commit that file").format(path=where.config))
    secret = auth_mode == "inline" or _holds_inline_token(doc)
    result.add(text_change(config, tomledit.dumps(doc, config.text or ""), target=NAME, summary=summary,
                           secret=secret))

    if auth_mode == "auth-json":
        result.extend(_plan_auth_json(triple, where))
    return result


def _move_legacy_profiles(doc, where: CodexPaths, text: str) -> list | None:
    """The FileChanges that move each [profiles.NAME] to $CODEX_HOME/NAME.config.toml (the form Codex 0.134+
    reads), after which `profile`/`profiles` are removed from `doc`; None when that cannot be done safely (a
    name that is not a plain file name, a target that exists, a profile that is not a table)."""
    from taotoken_cli.core.files.fileplan import FileChange
    from taotoken_cli.core.files.fsutil import endings_like, stays_inside

    profiles = doc.get("profiles")
    profiles = profiles if isinstance(profiles, Mapping) else {}
    targets = {name: where.home / f"{name}.config.toml" for name in profiles}
    if any(not isinstance(table, Mapping) for table in profiles.values()) or any(
            not stays_inside(where.home, target) or target.exists() for target in targets.values()):
        return None
    changes = []
    for name, target in targets.items():
        # The header is part of the file, not a message: English whatever the language of the run.
        header = f"# moved from [profiles.{name}] of {where.config} by taotoken init\n"
        body = endings_like(header + tomledit.table_text(doc, ("profiles", name)), text)
        changes.append(FileChange(target, None, body.encode("utf-8"), secret=True, target=NAME,
                                  summary=[_("created from [profiles.{name}] of {path}").format(
                                      name=name, path=where.config)]))
    tomledit.remove_in(doc, ("profiles",))
    tomledit.remove_in(doc, ("profile",))
    return changes


def _add_provider_table(doc, wanted: dict[str, object]) -> None:
    """[model_providers.taotoken] after the other providers (inside `model_providers = { … }` when the user
    wrote the providers inline), keeping the blank line before a table that follows."""
    import tomlkit
    from tomlkit.items import Table

    providers = doc.get("model_providers")
    if providers is None:
        providers = tomlkit.table(is_super_table=True)
        doc["model_providers"] = providers
    if not isinstance(providers, Table):
        tomledit.set_in(doc, ("model_providers", PROVIDER_ID), dict(wanted))
        return
    table = tomlkit.table()
    for key, value in wanted.items():
        table[key] = value
    providers[PROVIDER_ID] = table
    if not tomlkit.dumps(doc).rstrip().endswith(table.as_string().rstrip()):
        table.add(tomlkit.nl())  # a table inserted between others keeps the blank line before the next


def _holds_inline_token(doc) -> bool:
    providers = doc.get("model_providers") or {}
    return any(isinstance(t, Mapping) and "experimental_bearer_token" in t for t in providers.values())


def _plan_auth_json(triple: Triple, where: CodexPaths) -> Plan:
    result = Plan()
    auth = read_json(where.auth)
    auth.check()
    data = copy.deepcopy(auth.data) if auth.data is not None else {}
    old_key = data.get("OPENAI_API_KEY")
    if isinstance(old_key, str):
        result.secrets.append(old_key)
    if data.get("auth_mode") == "chatgpt" or data.get("tokens"):
        result.warnings.append(_("{path} holds a ChatGPT login: --codex-auth auth-json replaces it with the API key "
                                 "(`taotoken init --undo` brings it back); use the default env mode to keep it").format(
            path=where.auth))
    summary = []
    if data.get("auth_mode") != "apikey":
        data["auth_mode"] = "apikey"
        summary.append(_("set {name} = {value}").format(name="auth_mode", value="'apikey'"))
    if old_key != triple.api_key:
        data["OPENAI_API_KEY"] = triple.api_key
        summary.append(_("set {name} = {value}").format(name="OPENAI_API_KEY", value=mask_key(triple.api_key)))
    result.add(json_change(auth, data, target=NAME, summary=summary, secret=True))
    return result
