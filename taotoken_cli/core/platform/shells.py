"""The user's shell, and commands written in its syntax: every fix and hint that sets a variable or loads a file
is shown as the user would type it (PowerShell `$env:X = "…"`, cmd `set X=…`, POSIX `export X=…`, fish
`set -gx X …`).

Which shell: on Windows, Git Bash/MSYS set SHELL (POSIX); cmd.exe sets PROMPT, which PowerShell does not, unless
it was started from cmd, when PowerShell's own PSModulePath entry (under the user's Documents) still tells;
otherwise PowerShell, the default shell of Windows 10 and 11. Elsewhere `$SHELL`: fish, or POSIX.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path, PurePath

from taotoken_cli.core.platform import system

POSIX, FISH, POWERSHELL, CMD = "posix", "fish", "powershell", "cmd"


def syntax(env: Mapping[str, str]) -> str:
    if system.current().windows:
        if env.get("SHELL"):
            return FISH if PurePath(env["SHELL"]).name == "fish" else POSIX
        in_powershell = re.search(r"[\\/](Windows)?PowerShell[\\/]Modules", env.get("PSModulePath", ""), re.I) and \
            re.search(r"Documents", env.get("PSModulePath", ""), re.I)
        if env.get("PROMPT") and not in_powershell:
            return CMD
        return POWERSHELL
    return FISH if PurePath(env.get("SHELL", "")).name == "fish" else POSIX


def _ps_quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def set_var(name: str, value: str, shell: str) -> str:
    """The command that sets `name` to `value` in this shell session."""
    if shell == POWERSHELL:
        return f"$env:{name} = {_ps_quote(value)}"
    if shell == CMD:
        return f'set "{name}={value}"'
    if shell == FISH:
        return f"set -gx {name} {shlex.quote(value)}"
    return f"export {name}={shlex.quote(value)}"


def unset_var(name: str, shell: str) -> str:
    if shell == POWERSHELL:
        return f"Remove-Item Env:{name}"
    if shell == CMD:
        return f"set {name}="
    if shell == FISH:
        return f"set -e {name}"
    return f"unset {name}"


def load_file(path: Path, shell: str) -> str:
    """The command that runs a file of variable settings in this shell (env.ps1, env.cmd, env.fish or env.sh)."""
    if shell == POWERSHELL:
        return f". {_ps_quote(str(path))}"
    if shell == CMD:
        return f'call "{path}"'
    if shell == FISH:
        return f"source {shlex.quote(str(path))}"
    return f". {shlex.quote(str(path))}"


def env_file_name(shell: str) -> str:
    return {POWERSHELL: "env.ps1", CMD: "env.cmd", FISH: "env.fish"}.get(shell, "env.sh")
