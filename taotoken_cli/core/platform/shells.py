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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class _Syntax:
    """One shell's way of writing each command below; `quote` makes a value (or a path) one word there."""

    quote: Callable[[str], str]
    set: str  # {name} = {value}
    reference: str  # {name} = the value of variable {other}
    unset: str
    load: str  # run a file of settings: {path}
    piped: str  # the value of {name} on the next command's stdin


_SYNTAX = {
    POWERSHELL: _Syntax(_ps_quote, "$env:{name} = {value}", "$env:{name} = $env:{other}", "Remove-Item Env:{name}",
                        ". {path}", "$env:{name} |"),
    CMD: _Syntax(str, 'set "{name}={value}"', 'set "{name}=%{other}%"', "set {name}=", 'call "{path}"',
                 "echo %{name}%|"),
    FISH: _Syntax(shlex.quote, "set -gx {name} {value}", 'set -gx {name} "${other}"', "set -e {name}",
                  "source {path}", 'printf %s "${name}" |'),
    POSIX: _Syntax(shlex.quote, "export {name}={value}", 'export {name}="${other}"', "unset {name}", ". {path}",
                   'printf %s "${name}" |'),
}


def set_var(name: str, value: str, shell: str) -> str:
    """The command that sets `name` to `value` in this shell session."""
    syntax_of = _SYNTAX[shell]
    return syntax_of.set.format(name=name, value=syntax_of.quote(value))


def set_reference(name: str, other: str, shell: str) -> str:
    """The command that sets `name` to the value of the variable `other`."""
    return _SYNTAX[shell].reference.format(name=name, other=other)


def unset_var(name: str, shell: str) -> str:
    return _SYNTAX[shell].unset.format(name=name)


def load_file(path: Path, shell: str) -> str:
    """The command that runs a file of variable settings in this shell (env.ps1, env.cmd, env.fish or env.sh)."""
    syntax_of = _SYNTAX[shell]
    return syntax_of.load.format(path=syntax_of.quote(str(path)))


def quote(value: str, shell: str) -> str:
    """`value` as one word in this shell (PowerShell: '…' with '' for ')."""
    return _SYNTAX[shell].quote(value)


# The characters a word may hold and still need no quotes: POSIX's are shlex's; PowerShell also splits on `,` (an
# array) and treats `[`…`]` as wildcards in some places; cmd.exe splits on spaces and expands `%`, `!`, `^`, `&`…
_BARE = {POWERSHELL: re.compile(r"[A-Za-z0-9_\-./\\:=+~]+\Z"), CMD: re.compile(r"[A-Za-z0-9_\-./\\:=+~\[\],@]+\Z")}


def command_line(words: Sequence[str], shell: str) -> str:
    """A program and its arguments as one line in `shell`'s syntax, each word quoted only where it must be
    (`pip install 'taotoken[html]'`; cmd: `"C:\\Program Files\\…\\python.exe" -m pip install taotoken[html]`).
    PowerShell runs a quoted program only after `&`."""
    if shell not in _BARE:
        return " ".join(shlex.quote(word) for word in words)
    bare = _BARE[shell]
    quoted = [word if bare.match(word) else
              (_ps_quote(word) if shell == POWERSHELL else '"' + word + '"') for word in words]
    if shell == POWERSHELL and quoted and quoted[0] != words[0]:
        quoted[0] = "& " + quoted[0]
    return " ".join(quoted)


def piped_var(name: str, shell: str) -> str:
    """What pipes the value of variable `name` into the next command's stdin (a key, never on a command line)."""
    return _SYNTAX[shell].piped.format(name=name)


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
