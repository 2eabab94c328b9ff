"""Cline's provider storage before 4.0 (reference §4.1), read only (doctor's `cline.legacy`):

| extension           | where the provider is                                                               |
| 3.66 – 3.89, CLI 2.x| ~/.cline/data/globalState.json + secrets.json (flat key -> value; wins over VS Code's) |
| ≤ 3.65              | VS Code's state.vscdb: the globalState row readable, the key a SecretStorage secret   |
| 4.0+                | ~/.cline/data/settings/providers.json (clients.cline, doctor's `cline.providers`)     |

Key names: `apiProvider` (before the plan/act split, v3.19.8), then `planModeApiProvider` /
`actModeApiProvider` with `mode` choosing ("openai" = OpenAI Compatible), `openAiBaseUrl`, `openAiModelId` /
`planModeOpenAiModelId` / `actModeOpenAiModelId`, and the secret `openAiApiKey`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taotoken_cli.core.clients import vscode
from taotoken_cli.core.clients.base import ConfigFile, Machine

OPENAI = "openai"  # "OpenAI Compatible" in these versions
KEY = "openAiApiKey"
FILE_STORE_SINCE = (3, 66, 0)
PROVIDERS_JSON_SINCE = (4, 0, 0)


def store_of(version: tuple[int, int, int]) -> str:
    """Which storage an extension version reads: "providers" (4.0+), "file" (3.66–3.89) or "vscode"."""
    if version >= PROVIDERS_JSON_SINCE:
        return "providers"
    return "file" if version >= FILE_STORE_SINCE else "vscode"


def version_text(version: tuple[int, int, int]) -> str:
    return ".".join(map(str, version))


@dataclass(frozen=True)
class LegacyConfig:
    """The provider Cline would use, as one of the pre-4.0 stores holds it."""

    store: str  # "file" | "vscode"
    where: Path  # globalState.json or state.vscdb
    mode: str  # "act" | "plan"
    provider: Any
    base_url: Any
    model: Any
    api_key: Any  # None when absent, or not readable (vscode)
    key_stored: bool  # a key is there (for vscode: an encrypted secret row exists)


def config_of(store: str, where: Path, global_state: dict, secrets: dict | None, key_stored: bool) -> LegacyConfig:
    mode = global_state.get("mode") if global_state.get("mode") in ("act", "plan") else "act"
    provider = global_state.get(f"{mode}ModeApiProvider") or global_state.get("apiProvider")
    model = global_state.get(f"{mode}ModeOpenAiModelId") or global_state.get("openAiModelId")
    key = secrets.get(KEY) if secrets is not None else None
    return LegacyConfig(store, where, mode, provider, global_state.get("openAiBaseUrl"), model, key, key_stored)


def from_files(global_state: ConfigFile, secrets: ConfigFile) -> LegacyConfig | None:
    """The 3.66–3.89 / CLI 2.x file store, or None when globalState.json is absent or does not parse."""
    if not isinstance(global_state.data, dict):
        return None
    secret_data = secrets.data if isinstance(secrets.data, dict) else {}
    return config_of("file", global_state.path, global_state.data, secret_data, bool(secret_data.get(KEY)))


@dataclass(frozen=True)
class VscodeStore:
    config: LegacyConfig | None  # None when the database has no Cline row
    path: Path
    error: str | None = None  # the database could not be read


def from_vscode(machine: Machine) -> list[VscodeStore]:
    """Cline's rows in each VS Code flavour's state.vscdb (≤ 3.65)."""
    found = []
    for user_dir in vscode.user_dirs(machine):
        state = vscode.read_extension_state(user_dir, vscode.CLINE_EXTENSION)
        if state is None:
            continue
        if state.error or state.global_state is None:
            found.append(VscodeStore(None, state.path, state.error))
            continue
        found.append(VscodeStore(config_of("vscode", state.path, state.global_state, None, KEY in state.secret_keys),
                                 state.path))
    return found
