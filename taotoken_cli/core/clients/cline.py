"""Cline (reference §4.2): ~/.cline/data/settings/providers.json, the file Cline CLI 3.x and the
4.x extension share. Written in exactly the shape the CLI writes; other providers are kept. Cline
reads a file that fails validation as empty (logged out), so the entry must be complete.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from taotoken_cli.core.base.errors import ConfigFileError
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.clients import vscode
from taotoken_cli.core.clients.base import (
    ClientState,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    detect_by,
    json_change,
    read_json,
    set_fields,
)
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.net.urlform import OPENAI_V1

NAME = "cline"
LABEL = "Cline"
URL_FORM = OPENAI_V1  # Cline calls <baseUrl>/chat/completions
PROVIDER_ID = "openai-compatible"
TOKEN_SOURCE = "manual"
EXTENSION_ID = vscode.CLINE_EXTENSION
MCP_SETTINGS = "cline_mcp_settings.json"


@dataclass(frozen=True)
class ClinePaths:
    cline_dir: Path  # $CLINE_DIR or ~/.cline
    data_dir: Path  # $CLINE_DATA_DIR or <cline_dir>/data
    providers: Path  # $CLINE_PROVIDER_SETTINGS_PATH or <data_dir>/settings/providers.json
    legacy_global_state: Path  # CLI 2.x / extension 3.66-3.89 store (read by doctor only)
    legacy_secrets: Path


def paths(machine: Machine) -> ClinePaths:
    env = machine.env
    cline_dir = Path(env["CLINE_DIR"]).expanduser() if env.get("CLINE_DIR") else machine.home / ".cline"
    data_dir = Path(env["CLINE_DATA_DIR"]).expanduser() if env.get("CLINE_DATA_DIR") else cline_dir / "data"
    if env.get("CLINE_PROVIDER_SETTINGS_PATH"):
        providers = Path(env["CLINE_PROVIDER_SETTINGS_PATH"]).expanduser()
    else:
        providers = data_dir / "settings" / "providers.json"
    return ClinePaths(cline_dir, data_dir, providers, data_dir / "globalState.json", data_dir / "secrets.json")


def mcp_settings_paths(machine: Machine) -> list[Path]:
    """Cline's MCP server files (reference §4.4): the 4.x extension's and the CLI's (CLINE_MCP_SETTINGS_PATH moves
    it), then each editor's pre-4.0 extension file in its globalStorage."""
    env = machine.env
    if env.get("CLINE_MCP_SETTINGS_PATH"):
        current = Path(env["CLINE_MCP_SETTINGS_PATH"]).expanduser()
    else:
        current = paths(machine).data_dir / "settings" / MCP_SETTINGS
    legacy = [d / "globalStorage" / EXTENSION_ID / "settings" / MCP_SETTINGS
              for d in vscode.candidate_user_dirs(machine)]
    return [current, *legacy]


def detect(machine: Machine) -> Detection:
    where = paths(machine)
    found = detect_by([where.cline_dir], ["cline"], machine.env)
    versions = vscode.extension_versions(machine, vscode.CLINE_EXTENSION)
    if versions:
        found.found = True
        found.reasons.append(_("Cline VS Code extension {version} in {directory}").format(
            version=".".join(map(str, versions[0][0])), directory=versions[0][1].parent))
    return found


def read(machine: Machine) -> ClientState:
    where = paths(machine)
    files = {"providers": read_json(where.providers), "global_state": read_json(where.legacy_global_state),
             "secrets": read_json(where.legacy_secrets)}
    return ClientState(NAME, detect(machine), files)


def now_iso() -> str:
    """The timestamp form Cline writes (JavaScript toISOString: milliseconds, Z)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    where = paths(machine)
    result = Plan()
    file = read_json(where.providers)
    file.check()
    data = copy.deepcopy(file.data) if file.data is not None else {}
    if data.get("version") not in (None, 1):
        raise ConfigFileError(str(where.providers), None, None,
                              _("has version {version}; this taotoken knows version 1").format(
                                  version=repr(data.get("version"))),
                              Fix.of(_("update taotoken, or configure Cline with {command}"),
                                     command=Command("cline auth --provider openai-compatible")))
    providers = data.get("providers")
    if providers is not None and not isinstance(providers, dict):
        raise ConfigFileError(str(where.providers), None, None, _('"providers" is not a JSON object'),
                              _("move the file away (Cline then starts logged out) and run again"))
    # Key order as the CLI writes a fresh file.
    fresh = {"version": 1, "lastUsedProvider": PROVIDER_ID, "modes": {}, "providers": {}}
    for key, value in fresh.items():
        data.setdefault(key, copy.deepcopy(value))
    providers = data["providers"]
    summary: list[str] = []
    entry = providers.get(PROVIDER_ID) if isinstance(providers.get(PROVIDER_ID), dict) else {}
    settings = dict(entry.get("settings") or {}) if isinstance(entry.get("settings"), dict) else {}
    wanted = {"provider": PROVIDER_ID, "apiKey": triple.api_key, "model": triple.model,
              "baseUrl": triple.url_for(URL_FORM)}
    set_fields(settings, wanted, name=f"providers.{PROVIDER_ID}.settings", plan=result, summary=summary)
    if summary or entry.get("tokenSource") != TOKEN_SOURCE:
        new_entry = dict(entry)
        # Other optional settings (headers, timeout, …) the user chose are kept.
        new_entry["settings"] = {**wanted, **{k: v for k, v in settings.items() if k not in wanted}}
        new_entry["updatedAt"] = now_iso()  # only touched on a real change: reruns stay no-ops
        new_entry["tokenSource"] = TOKEN_SOURCE
        providers[PROVIDER_ID] = new_entry
    if data.get("lastUsedProvider") != PROVIDER_ID:
        summary.append(_("set {name} = {value} (was {old})").format(name="lastUsedProvider", value=repr(PROVIDER_ID),
                                                                    old=repr(data.get("lastUsedProvider"))))
        data["lastUsedProvider"] = PROVIDER_ID
    kept = sorted(k for k in providers if k != PROVIDER_ID)
    if kept and summary:
        result.notes.append(_("Cline: kept the other providers in {path}: {providers}").format(
            path=where.providers, providers=listed(kept)))
    result.add(json_change(file, data, target=NAME, summary=summary, secret=True))
    return result
