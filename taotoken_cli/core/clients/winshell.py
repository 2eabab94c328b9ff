"""The shell target on Windows: how OPENAI_BASE_URL and OPENAI_API_KEY reach programs there.

- The user environment (HKCU\\Environment, what `setx` writes), so programs started from the Start menu or
  Explorer — Codex in VS Code, a new cmd or PowerShell window — get them. A registry value is no file, so init
  writes `windows-env.json` (0600-like: a private ACL) in taotoken's config dir: the values it sets and the ones
  they replace. fileplan backs that file up like any other; after apply the registry is set from it, and
  `init --undo` puts back the values recorded as replaced (core.platform.winenv does the writing).
- The PowerShell profiles (Windows PowerShell 5.1: Documents\\WindowsPowerShell, PowerShell 7:
  Documents\\PowerShell; 7 only when it is there), one marked line dot-sourcing `env.ps1` in taotoken's config
  dir, as the POSIX shell target does with env.sh: a profile never holds the key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.base.oserrors import os_error_text
from taotoken_cli.core.clients.base import Machine, on_path, read_text, text_change
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.platform import desktopenv, shells, system

RECORD = "windows-env.json"
ENV_PS1 = "env.ps1"
PROFILE = "Microsoft.PowerShell_profile.ps1"
MARKER = "# taotoken-env"


def documents(machine: Machine) -> Path:
    override = machine.env.get(system.ENV_DOCUMENTS)
    if override:
        return Path(override)
    if system.current().windows:
        from taotoken_cli.core.platform import winenv

        found = winenv.documents_dir(machine.env)
        if found:
            return Path(found)
    return machine.home / "Documents"


def profiles(machine: Machine) -> list[Path]:
    """Windows PowerShell 5.1's profile always (it ships with Windows); PowerShell 7's when it is installed."""
    docs = documents(machine)
    found = [docs / "WindowsPowerShell" / PROFILE]
    if (docs / "PowerShell").is_dir() or on_path("pwsh", machine.env):
        found.append(docs / "PowerShell" / PROFILE)
    return found


def _quote(value: str) -> str:
    return shells.quote(value, shells.POWERSHELL)


def env_ps1_text(exports: Mapping[str, str]) -> str:
    return ("# Written by `taotoken init`: the TaoToken base URL (root + /v1) and key for OpenAI SDK scripts and\n"
            "# Codex. It holds the API key: keep it private. Change it with `taotoken config set`.\n"
            + "".join(shells.set_var(k, v, shells.POWERSHELL) + "\n" for k, v in exports.items()))


def profile_line(env_ps1: Path) -> str:
    quoted = _quote(str(env_ps1))
    return f"if (Test-Path {quoted}) {{ . {quoted} }}  {MARKER} (added by taotoken init)"


def record_text(exports: Mapping[str, str], before: Mapping[str, str | None]) -> str:
    return json.dumps({"set": dict(exports), "before": dict(before)}, indent=2) + "\n"


def plan(exports: Mapping[str, str], machine: Machine, with_marked_line, load: str) -> Plan:
    """`load`: the command that gives the window init runs in the variables (core.clients.shell.load_command: env.ps1
    in PowerShell, env.sh in Git Bash)."""
    result = Plan()
    config_dir = machine.config_dir
    env_ps1 = config_dir / ENV_PS1
    record = read_text(config_dir / RECORD)
    before = desktopenv.get(exports, machine.env)
    if record.text:  # a rerun: what the registry held before taotoken is what the last record says it replaced
        try:
            previous = json.loads(record.text)
            if previous.get("set") == before:
                before = previous.get("before", before)
        except ValueError:
            pass
    result.add(text_change(record, record_text(exports, before), target="shell", secret=True,
                           summary=[_("set OPENAI_BASE_URL and OPENAI_API_KEY in your Windows user environment "
                                      "(HKCU\\Environment, as setx does); undo puts back what was there")]))
    result.add(text_change(read_text(env_ps1), env_ps1_text(exports), target="shell", secret=True,
                           summary=[_("the same variables for PowerShell (readable by you alone)")]))
    for profile in profiles(machine):
        file = read_text(profile)
        result.add(text_change(file, with_marked_line(file.text or "", profile_line(env_ps1)), target="shell",
                               summary=[_("{command} (one marked line)").format(
                                   command=shells.load_file(env_ps1, shells.POWERSHELL))]))
    result.details.append(_("shell: programs started after this get the variables; in this window run {command}")
                          .format(command="`" + load + "`"))
    return result


def load_command(machine: Machine) -> str:
    syntax = shells.syntax(machine.env)
    if syntax == shells.CMD:  # cmd has no file to load: it reads the user environment in a new window
        return _("open a new cmd window")
    return shells.load_file(machine.config_dir / ENV_PS1, shells.POWERSHELL)


def sync_registry(config_dir: Path, env: Mapping[str, str]) -> str | None:
    """After init wrote windows-env.json: set the user environment from it. An error message, or None."""
    values = _read(config_dir)
    if values is None:
        return None
    return _set(values.get("set", {}), env)


def before_undo(config_dir: Path) -> dict[str, str | None] | None:
    """What the registry held before the run about to be undone (read from its record before the undo)."""
    values = _read(config_dir)
    return None if values is None else values.get("before")


def after_undo(before: Mapping[str, str | None] | None, env: Mapping[str, str]) -> str | None:
    if before is None:
        return None
    return _set(before, env)


def _read(config_dir: Path) -> dict | None:
    try:
        data = json.loads((config_dir / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _set(values: Mapping[str, str | None], env: Mapping[str, str]) -> str | None:
    if desktopenv.kind(env) is None:  # Windows' facts asked for elsewhere (tests): no registry to write
        return None
    try:
        desktopenv.set_values(values, env)
    except OSError as exc:
        return _("could not set the Windows user environment ({error})").format(error=os_error_text(exc))
    return None


def user_env_value(name: str, env: Mapping[str, str]) -> str | None:
    """`name` in the Windows user environment (HKCU\\Environment), None when unset or there is none."""
    return desktopenv.get([name], env)[name]
