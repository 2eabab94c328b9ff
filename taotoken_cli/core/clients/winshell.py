"""The shell target on Windows: how OPENAI_BASE_URL and OPENAI_API_KEY reach programs there.

- The user environment (HKCU\\Environment, what `setx` writes), so programs started from the Start menu or
  Explorer — Codex in VS Code, a new cmd or PowerShell window — get them. A registry value is no file, so init
  writes `windows-env.json` (0600-like: a private ACL) in taotoken's config dir: the values it sets and the ones
  they replace. fileplan backs that file up like any other; after apply the registry is set from it, and
  `init --undo` puts back the values recorded as replaced (core.platform.winenv does the writing).
- The PowerShell profiles (Windows PowerShell 5.1: Documents\\WindowsPowerShell, PowerShell 7:
  Documents\\PowerShell; 7 only when it is there), one marked line dot-sourcing `env.ps1` in taotoken's config
  dir, as the POSIX shell target does with env.sh: a profile never holds the key.
- A gateway on this machine: the clients started from a shell send even loopback requests through a proxy the
  environment names (core.clients.proxy_rules: proxied_clients), so env.ps1 adds its host to NO_PROXY (keeping the
  entries the window has), and the user environment's NO_PROXY gets it too (its own entries kept; where it has none,
  the ones programs get now, from the system environment, which a user value would hide). Windows' variable names
  ignore case: NO_PROXY is no_proxy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.base.oserrors import os_error_text
from taotoken_cli.core.clients.base import Machine, on_path, read_text, text_change
from taotoken_cli.core.clients.claude_code import no_proxy_with
from taotoken_cli.core.clients.proxy_rules import exemption_comment, proxied_labels
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.files.fsutil import tilde
from taotoken_cli.core.platform import desktopenv, shells, system

RECORD = "windows-env.json"
ENV_PS1 = "env.ps1"
PROFILE = "Microsoft.PowerShell_profile.ps1"
MARKER = "# taotoken-env"
NO_PROXY = "NO_PROXY"


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


# What env.sh's exemption does (core.clients.shell), in PowerShell: the host joins the window's NO_PROXY once.
_EXEMPT_PS1 = ("$taotoken_np = @($env:NO_PROXY -split ',' | Where-Object {{ $_ }})\n"
               "if ($taotoken_np -notcontains {host}) {{ $env:NO_PROXY = (@($taotoken_np) + {host}) -join ',' }}\n"
               "Remove-Variable taotoken_np\n")


def env_ps1_text(exports: Mapping[str, str], host: str | None = None) -> str:
    """`host`: the gateway's host when it is on this machine (core.clients.shell.loopback_host), else None."""
    return ("# Written by `taotoken init`: the TaoToken base URL (root + /v1) and key for OpenAI SDK scripts and\n"
            "# Codex. It holds the API key: keep it private. Change it with `taotoken config set`.\n"
            + "".join(shells.set_var(k, v, shells.POWERSHELL) + "\n" for k, v in exports.items())
            + (_exempt_ps1(host) if host else ""))


def exempted(text: str, host: str) -> bool:
    """Does an env.ps1 text add `host` to NO_PROXY (what env_ps1_text writes for a gateway on this machine)?"""
    return f"-notcontains {_quote(host)}" in text


def with_exemption(text: str, host: str) -> str:
    """An env.ps1 written before the exemption, with it added at the end (every other byte kept)."""
    if exempted(text, host):
        return text
    return text + ("" if not text or text.endswith("\n") else "\n") + _exempt_ps1(host)


def _exempt_ps1(host: str) -> str:
    return exemption_comment() + _EXEMPT_PS1.format(host=_quote(host))


def profile_line(env_ps1: Path) -> str:
    quoted = _quote(str(env_ps1))
    return f"if (Test-Path {quoted}) {{ . {quoted} }}  {MARKER} (added by taotoken init)"


def record_text(wanted: Mapping[str, str | None], before: Mapping[str, str | None]) -> str:
    """windows-env.json: the values set (None: removed) and the ones they replaced."""
    return json.dumps({"set": dict(wanted), "before": dict(before)}, indent=2) + "\n"


def user_environment(exports: Mapping[str, str], host: str | None, previous_text: str | None,
                     env: Mapping[str, str]) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """(the values to set in the user environment, the ones they replace). `host`: a gateway on this machine, whose
    host joins NO_PROXY. `previous_text`: the last run's record; on a rerun what the registry held before taotoken
    is what that record says it replaced, and a variable it set that this run does not (NO_PROXY, the gateway no
    longer on this machine) gets that value back."""
    try:
        previous = json.loads(previous_text) if previous_text else {}
    except ValueError:
        previous = {}
    previous = previous if isinstance(previous, dict) else {}
    last_set = previous.get("set") if isinstance(previous.get("set"), dict) else {}
    names = [*exports, *([NO_PROXY] if host else [])]
    dropped = [name for name in last_set if name not in names]
    current = desktopenv.get([*names, *dropped], env)
    before: dict[str, str | None] = dict(current)
    if last_set and all(current.get(name) == value for name, value in last_set.items()):
        before.update(previous.get("before") or {})
    wanted: dict[str, str | None] = dict(exports)
    if host:
        kept = before.get(NO_PROXY)  # the user's own entries; where there are none, what programs get now
        wanted[NO_PROXY] = no_proxy_with({NO_PROXY: kept} if kept else env, host)
    wanted.update({name: before.get(name) for name in dropped})
    return wanted, {name: before.get(name) for name in wanted}


def plan(exports: Mapping[str, str], machine: Machine, with_marked_line, load: str, host: str | None = None) -> Plan:
    """`load`: the command that gives the window init runs in the variables (core.clients.shell.load_command: env.ps1
    in PowerShell, env.sh in Git Bash). `host`: the gateway's host when it is on this machine (NO_PROXY gets it)."""
    result = Plan()
    config_dir = machine.config_dir
    env_ps1 = config_dir / ENV_PS1
    record = read_text(config_dir / RECORD)
    wanted, before = user_environment(exports, host, record.text, machine.env)
    result.add(text_change(record, record_text(wanted, before), target="shell", secret=True,
                           summary=[_("set OPENAI_BASE_URL and OPENAI_API_KEY in your Windows user environment "
                                      "(HKCU\\Environment, as setx does); undo puts back what was there"),
                                    *([_("add {host} to NO_PROXY in your user environment and in env.ps1 (kept: the "
                                         "entries you have): the gateway is on this machine, and these clients do "
                                         "not exempt loopback from a proxy: {clients}").format(
                                        host=host, clients=listed(proxied_labels(machine)))] if host else [])]))
    result.add(text_change(read_text(env_ps1), env_ps1_text(exports, host), target="shell", secret=True,
                           summary=[_("the same variables for PowerShell (readable by you alone)")]))
    for profile in profiles(machine):
        file = read_text(profile)
        change = text_change(file, with_marked_line(file.text or "", profile_line(env_ps1)), target="shell",
                             summary=[_("{command} (one marked line)").format(
                                 command=shells.load_file(env_ps1, shells.POWERSHELL))])
        if file.raw is not None and MARKER not in (file.text or ""):
            # A sync finding no line in a profile that exists: the user removed it (as core.clients.shell's rc files)
            change = replace(change, held_back=_(
                "{path} no longer has the line that loads {env}: left so (new PowerShell windows lack the variables; "
                "`taotoken init --target shell` adds it back)").format(path=tilde(profile, machine.home),
                                                                       env=tilde(env_ps1, machine.home)))
        result.add(change)
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


# ------------------------------------------------------------------ profile lines that outvote env.ps1
# The forms a profile sets a variable in (names ignore case): `$env:NAME = …`, `[Environment]::SetEnvironmentVariable(
# 'NAME', …)` (with 'User' or 'Machine' it rewrites the user environment at every start), `Set-Item env:NAME …`.
_SETS = (r"^\s*\$env:{name}\s*=|\[(?:System\.)?Environment\]::SetEnvironmentVariable\(\s*['\"]{name}['\"]"
         r"|^\s*(?:Set-Item|si|New-Item|ni)\s+(?:-(?:Literal)?Path\s+)?['\"]?env:\\?{name}(?![\w])['\"]?")
_LITERAL = r"'(?:[^']|'')*'|\"[^\"$`]*\""
_STRING = re.compile(r"'((?:[^']|'')*)'|\"([^\"]*)\"")


def set_pattern(variable: str) -> re.Pattern[str]:
    """A profile line that sets `variable` (any of the forms above, anywhere on the line)."""
    return re.compile(_SETS.format(name=re.escape(variable)), re.IGNORECASE)


def simple_assignment(variable: str) -> re.Pattern[str]:
    """The one form init may comment out: an unindented `$env:NAME = '<literal>'`, nothing after but a comment."""
    return re.compile(rf"^\$env:{re.escape(variable)}\s*=\s*({_LITERAL})\s*(#.*)?$", re.IGNORECASE)


def line_value(line: str, variable: str) -> str | None:
    """The value a profile line gives `variable`: its first string literal after the name, or None when only
    PowerShell can tell (a $variable, a (command), a "…$expansion…")."""
    found = set_pattern(variable).search(line)
    if found is None:
        return None
    rest = line[found.end():]
    literal = _STRING.search(rest)
    if literal is None or re.search(r"[$`(]", rest[:literal.start()].replace("::", "")):
        return None
    if literal.group(2) is not None:
        return None if re.search(r"[$`]", literal.group(2)) else literal.group(2)
    return literal.group(1).replace("''", "'")
