"""VS Code's side of the clients (reference §1.4, §4.1), read only: the user settings.json of each VS Code
flavour (JSONC: comments and trailing commas allowed), Claude Code's `claudeCode.environmentVariables` in it,
the installed extension versions, and VS Code's own state database `state.vscdb`.

`claudeCode.environmentVariables` is an array of {"name": ..., "value": ...} objects (the extension's
package.json: type array, default []); the extension passes them to the `claude` process it starts. Inside
that process the `env` block of ~/.claude/settings.json still overrides them, like any inherited variable.

`state.vscdb` (SQLite, table ItemTable) holds each extension's globalState as one JSON value under the
extension id; SecretStorage values sit beside it as `secret://…` rows, encrypted with a key kept in the OS
keychain (Keychain "Code Safe Storage" on macOS, the Secret Service or KWallet on Linux, DPAPI on Windows):
they can be seen to exist, never read.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.clients.base import ConfigFile, Machine, read_json

# (folder under the config root, folder under HOME holding its extensions)
FLAVOURS = (("Code", ".vscode"), ("Code - Insiders", ".vscode-insiders"), ("VSCodium", ".vscode-oss"),
            ("Cursor", ".cursor"), ("Windsurf", ".windsurf"))
CLAUDE_ENV = "claudeCode.environmentVariables"
CLAUDE_EXTENSION = "anthropic.claude-code"
CLINE_EXTENSION = "saoudrizwan.claude-dev"
STATE_DB = "state.vscdb"
_VERSION_RE = re.compile(r"-(\d+)\.(\d+)\.(\d+)(?:-[A-Za-z0-9_-]+)?$")


def candidate_user_dirs(machine: Machine) -> list[Path]:
    """Every place a VS Code-style editor may keep its `User` folder: Linux (XDG), macOS (Application Support),
    Windows (%APPDATA%), for each flavour."""
    env = machine.env
    roots = [Path(env.get("XDG_CONFIG_HOME") or machine.home / ".config"),
             machine.home / "Library" / "Application Support"]
    if env.get("APPDATA"):
        roots.append(Path(env["APPDATA"]))
    return [root / name / "User" for root in roots for name, _ in FLAVOURS]


def user_dirs(machine: Machine) -> list[Path]:
    """The `User` folders that exist."""
    return [d for d in candidate_user_dirs(machine) if d.is_dir()]


def settings_files(machine: Machine) -> list[Path]:
    """Every existing user settings.json."""
    return [d / "settings.json" for d in user_dirs(machine) if (d / "settings.json").is_file()]


def workspace_settings(machine: Machine) -> Path | None:
    """The working directory's .vscode/settings.json (it overrides the user settings in that workspace)."""
    path = machine.cwd / ".vscode" / "settings.json"
    return path if path.is_file() else None


def read_settings(path: Path) -> ConfigFile:
    return read_json(path, allow_comments=True)


@dataclass(frozen=True)
class EnvEntry:
    index: int  # position in the array (the path a repair edits)
    name: str
    value: Any


@dataclass
class ClaudeEnv:
    """`claudeCode.environmentVariables` as found: the usable entries and what is wrong with the rest."""

    entries: list[EnvEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    shape_ok: bool = True  # False: not an array (the extension ignores it)

    def get(self, name: str) -> EnvEntry | None:
        found = [e for e in self.entries if e.name == name]
        return found[-1] if found else None  # a later entry overrides an earlier one in the env it builds

    def names(self) -> list[str]:
        return [e.name for e in self.entries]


def claude_env(data: Any) -> ClaudeEnv | None:
    """The setting in parsed settings, or None when it is not there."""
    if not isinstance(data, dict) or CLAUDE_ENV not in data:
        return None
    raw = data[CLAUDE_ENV]
    result = ClaudeEnv()
    if not isinstance(raw, list):
        result.shape_ok = False
        shape = _("is an object, not an array of {shape} objects: the extension does not read it") \
            if isinstance(raw, dict) else _("is a {type}, not an array of {shape} objects: the extension does not "
                                            "read it")
        result.problems.append(shape.format(type=type(raw).__name__, shape='{"name", "value"}'))
        return result
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or "value" not in item:
            result.problems.append(_("entry {index} is not a {shape} object").format(
                index=index, shape='{"name": "…", "value": "…"}'))
            continue
        if not isinstance(item["value"], str):
            result.problems.append(_("{name}: the value must be a JSON string").format(name=item["name"]))
        result.entries.append(EnvEntry(index, item["name"], item["value"]))
    return result


def extension_versions(machine: Machine, extension_id: str) -> list[tuple[tuple[int, int, int], Path]]:
    """Installed versions of an extension in every flavour's extensions folder, newest first."""
    found = []
    for _name, folder in FLAVOURS:
        extensions = machine.home / folder / "extensions"
        if not extensions.is_dir():
            continue
        for path in extensions.glob(f"{extension_id}-*"):
            match = _VERSION_RE.search(path.name)
            if match and path.is_dir():
                found.append(((int(match[1]), int(match[2]), int(match[3])), path))
    return sorted(found, reverse=True)


@dataclass
class ExtensionState:
    """One extension's rows in a state.vscdb."""

    path: Path
    global_state: dict | None = None  # its globalState memento (None: no row)
    secret_keys: list[str] = field(default_factory=list)  # names of its SecretStorage entries (values encrypted)
    error: str | None = None  # why the database could not be read


def read_extension_state(user_dir: Path, extension_id: str) -> ExtensionState | None:
    """The extension's globalState and the names of its secrets in `<user_dir>/globalStorage/state.vscdb`, read
    through a read-only connection (VS Code may hold the file open); None when there is no database."""
    db = user_dir / "globalStorage" / STATE_DB
    if not db.is_file():
        return None
    state = ExtensionState(db)
    try:
        conn = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error as exc:
        state.error = str(exc)
        return state
    try:
        row = conn.execute("SELECT value FROM ItemTable WHERE key = ?", (extension_id,)).fetchone()
        secrets = conn.execute("SELECT key FROM ItemTable WHERE key LIKE ?",
                               (f'secret://%"{extension_id}"%',)).fetchall()
    except sqlite3.Error as exc:
        state.error = str(exc)  # locked by a running VS Code, or not a state database
        return state
    finally:
        conn.close()
    if row is not None:
        try:
            value = json.loads(row[0] if isinstance(row[0], str) else bytes(row[0]).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            value = None
        state.global_state = value if isinstance(value, dict) else None
    for (key,) in secrets:
        try:
            state.secret_keys.append(str(json.loads(key[len("secret://"):]).get("key")))
        except (ValueError, AttributeError):
            continue
    return state
