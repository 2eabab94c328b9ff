"""CC Switch (reference §3): add TaoToken without writing its database behind its back.

CC Switch >= 3.8 keeps providers in SQLite (~/.cc-switch/cc-switch.db); the safe way in is its
`ccswitch://v1/import` deep link, which shows the user a confirmation dialog. The links carry the
key, so they are printed masked and handed over only by an explicit action: `--open` passes them to
xdg-open/open/start, and they are written to a 0600 file in taotoken's config directory. Only when
a pre-3.8 `config.json` (v2 shape) is the live store is a provider entry added there directly.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

from taotoken_cli.clients.base import (
    ClientState,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    detect_by,
    json_change,
    read_json,
    read_text,
    text_change,
)
from taotoken_cli.errors import ConfigFileError
from taotoken_cli.fileplan import Plan

NAME = "cc-switch"
LABEL = "CC Switch"
PROVIDER_ID = "taotoken"
PROVIDER_NAME = "TaoToken"
LINKS_FILE = "cc-switch-import.txt"
APPS = ("claude", "codex")


@dataclass(frozen=True)
class CCSwitchPaths:
    home: Path  # ~/.cc-switch (CC Switch ignores CLAUDE_CONFIG_DIR / CODEX_HOME)
    db: Path  # 3.8+: the source of truth
    legacy_config: Path  # <= 3.7: config.json, v2 shape
    settings: Path  # device settings (currentProviderClaude, …)


def paths(machine: Machine) -> CCSwitchPaths:
    home = machine.home / ".cc-switch"
    return CCSwitchPaths(home, home / "cc-switch.db", home / "config.json", home / "settings.json")


def detect(machine: Machine) -> Detection:
    return detect_by([paths(machine).home], ["cc-switch"], machine.env)


def store_kind(where: CCSwitchPaths) -> str:
    """'sqlite' (3.8+), 'legacy-json' (<= 3.7 config.json is live) or 'none' (never launched)."""
    if where.db.exists():
        return "sqlite"
    if where.legacy_config.exists():
        return "legacy-json"
    return "none"


def read(machine: Machine) -> ClientState:
    where = paths(machine)
    files = {"legacy_config": read_json(where.legacy_config), "settings": read_json(where.settings)}
    return ClientState(NAME, detect(machine), files, notes=[f"store: {store_kind(where)}"])


def import_links(triple: Triple) -> dict[str, str]:
    """The deep links for Claude (endpoint = root) and Codex (endpoint = root + /v1, used verbatim)."""
    common = {"resource": "provider", "name": PROVIDER_NAME}
    claude = {"app": "claude", **common, "endpoint": triple.anthropic_base, "apiKey": triple.api_key,
              "model": triple.model, "haikuModel": triple.model}
    codex = {"app": "codex", **common, "endpoint": triple.openai_base, "apiKey": triple.api_key,
             "model": triple.model}
    return {app: "ccswitch://v1/import?" + urlencode(params, quote_via=quote)
            for app, params in (("claude", claude), ("codex", codex))}


def codex_config_text(triple: Triple) -> str:
    return (f'model_provider = "{PROVIDER_ID}"\nmodel = "{triple.model}"\n\n[model_providers.{PROVIDER_ID}]\n'
            f'name = "{PROVIDER_NAME}"\nbase_url = "{triple.openai_base}"\nwire_api = "responses"\n'
            "requires_openai_auth = true\n")


def provider_entries(triple: Triple) -> dict[str, dict]:
    """Provider entries in the v2 config.json shape (serde names of CC Switch's `Provider`)."""
    claude_env = {"ANTHROPIC_AUTH_TOKEN": triple.api_key, "ANTHROPIC_BASE_URL": triple.anthropic_base,
                  "ANTHROPIC_MODEL": triple.model, "ANTHROPIC_DEFAULT_HAIKU_MODEL": triple.model}
    return {
        "claude": {"id": PROVIDER_ID, "name": PROVIDER_NAME, "settingsConfig": {"env": claude_env}},
        "codex": {"id": PROVIDER_ID, "name": PROVIDER_NAME,
                  "settingsConfig": {"auth": {"OPENAI_API_KEY": triple.api_key},
                                     "config": codex_config_text(triple)}},
    }


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    where = paths(machine)
    result = Plan()
    links = import_links(triple)
    links_path = machine.config_dir / LINKS_FILE
    body = ("# CC Switch import links written by `taotoken init`. They contain your API key: keep this file "
            "private.\n# Open one to add TaoToken to CC Switch (it asks for confirmation), e.g.\n"
            f"#   xdg-open \"$(grep 'app=claude' {links_path})\"\n" + "".join(f"{u}\n" for u in links.values()))
    links_file = read_text(links_path)
    result.add(text_change(links_file, body, target=NAME, secret=True,
                           summary=["CC Switch import links for Claude and Codex (contain the key; mode 0600)"]))
    kind = store_kind(where)
    if kind == "legacy-json":
        result.extend(_plan_legacy(triple, where))
    else:
        result.notes.append("CC Switch: open the import links with `taotoken init --target cc-switch --open` "
                            f"(or from {links_path}); CC Switch shows a confirmation dialog for each"
                            + ("" if kind == "sqlite" else " — start CC Switch once first if it is not installed"))
    result.warnings.append(
        "CC Switch manages ~/.claude/settings.json and ~/.codex/config.toml + auth.json: switching providers in "
        "CC Switch rewrites those files (after saving their current content into the provider that was selected), "
        "so select TaoToken inside CC Switch instead of relying on the direct edits")
    return result


def _plan_legacy(triple: Triple, where: CCSwitchPaths) -> Plan:
    result = Plan()
    file = read_json(where.legacy_config)
    file.check()
    data = copy.deepcopy(file.data)
    if data.get("version") != 2:
        raise ConfigFileError(str(where.legacy_config), None, None,
                              f"is a CC Switch config of version {data.get('version')!r}, not the v2 shape",
                              "start CC Switch once so it migrates the file, then run init again")
    summary = []
    now_ms = int(time.time() * 1000)
    for app, entry in provider_entries(triple).items():
        manager = data.setdefault(app, {"providers": {}, "current": ""})
        if not isinstance(manager, dict) or not isinstance(manager.setdefault("providers", {}), dict):
            raise ConfigFileError(str(where.legacy_config), None, None, f'"{app}.providers" is not an object',
                                  "let CC Switch repair the file (start it once), then run init again")
        providers = manager["providers"]
        old = providers.get(PROVIDER_ID)
        if isinstance(old, dict):
            secret = old.get("settingsConfig", {})
            result.secrets.extend(v for v in _strings(secret) if v.startswith("sk-"))
            if all(old.get(k) == v for k, v in entry.items()):
                continue
            merged = {**old, **entry}
        else:
            merged = {**entry, "websiteUrl": "https://taotoken.net", "category": "custom", "createdAt": now_ms}
        providers[PROVIDER_ID] = merged
        summary.append(f"{'updated' if old else 'added'} provider {PROVIDER_ID!r} for {app} (not selected: "
                       "choose it in CC Switch to activate it)")
    result.add(json_change(file, data, target=NAME, summary=summary, secret=True))
    return result


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def open_link(url: str) -> str | None:
    """Hand a link to the desktop's URL opener; returns an error message or None."""
    if sys.platform == "darwin":
        command = ["open", url]
    elif sys.platform.startswith("win"):
        command = ["cmd", "/c", "start", "", url]
    else:
        command = ["xdg-open", url]
    try:
        proc = subprocess.run(command, capture_output=True, timeout=15, check=False)
    except FileNotFoundError:
        return f"{command[0]} is not available on this machine"
    except subprocess.TimeoutExpired:
        return f"{command[0]} did not return within 15 s"
    if proc.returncode != 0:
        return f"{command[0]} exited with status {proc.returncode}"
    return None
