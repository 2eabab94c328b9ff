"""The user's shell, and commands written in its syntax: every fix and hint that sets a variable or loads a file
is shown as the user would type it (PowerShell `$env:X = "…"`, cmd `set X=…`, POSIX `export X=…`, fish
`set -gx X …`). Fixes are written once, in POSIX (`export X=…; unset Y`, the catalogue's and doctor's commands);
`in_shell` says the same in the user's shell.

Which shell: on Windows, Git Bash/MSYS set SHELL (POSIX); cmd.exe sets PROMPT, which PowerShell does not, unless
it was started from cmd, when PowerShell's own PSModulePath entry (under the user's Documents) still tells;
otherwise PowerShell, the default shell of Windows 10 and 11. Elsewhere `$SHELL`: fish, or POSIX.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path, PurePath

from taotoken_cli.core.base.fix import Command, Fix
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


def piped_var(name: str, shell: str) -> str:
    """What pipes the value of variable `name` into the next command's stdin (a key, never on a command line)."""
    if shell == POWERSHELL:
        return f"$env:{name} |"
    if shell == CMD:
        return f"echo %{name}%|"
    return f'printf %s "${name}" |'


def env_file_name(shell: str) -> str:
    return {POWERSHELL: "env.ps1", CMD: "env.cmd", FISH: "env.fish"}.get(shell, "env.sh")


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?\Z")
_JOINERS = {POWERSHELL: "; ", CMD: " & ", FISH: "; ", POSIX: "; "}


def in_shell(line: str, shell: str) -> str:
    """A POSIX line of variable settings (`export X=V`, `unset X Y`, joined by `; `; V may be `"$OTHER"`) in
    `shell`'s syntax; any other line unchanged (it is not a variable setting, or already the user's)."""
    if shell == POSIX:
        return line
    statements = []
    for statement in line.split("; "):
        translated = _statement(statement.strip(), shell)
        if translated is None:
            return line
        statements.extend(translated)
    return _JOINERS[shell].join(statements)


def in_shell_fix(fix: Fix | str, shell: str) -> Fix | str:
    """`fix` with each of its commands that sets variables in `shell`'s syntax (prose stays as it is)."""
    if isinstance(fix, str) or shell == POSIX:
        return fix

    def translated(command: Command) -> Fix | None:
        line = in_shell(command.line, shell)
        return None if line == command.line else Fix.run(Command(line, command.sets, command.value))

    return fix.replace_commands(translated)


def _statement(text: str, shell: str) -> list[str] | None:
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    if len(words) >= 2 and words[0] == "unset" and all(_NAME.match(w) for w in words[1:]):
        names = words[1:]
        if shell in (POWERSHELL, CMD):  # Windows' variable names ignore case: HTTP_PROXY is http_proxy
            names = list({name.upper(): name for name in reversed(names)}.values())[::-1]
        return [unset_var(name, shell) for name in names]
    if len(words) == 2 and words[0] == "export" and "=" in words[1]:
        name, value = words[1].split("=", 1)
        if not _NAME.match(name):
            return None
        reference = _REFERENCE.match(value) if "'" not in text else None
        if reference:
            return [set_reference(name, reference.group(1), shell)]
        return [set_var(name, value, shell)]
    return None


def set_reference(name: str, other: str, shell: str) -> str:
    """The command that sets `name` to the value of the variable `other`."""
    if shell == POWERSHELL:
        return f"$env:{name} = $env:{other}"
    if shell == CMD:
        return f'set "{name}=%{other}%"'
    if shell == FISH:
        return f'set -gx {name} "${other}"'
    return f'export {name}="${other}"'
