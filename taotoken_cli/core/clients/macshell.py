"""The shell target on macOS, beyond env.sh and ~/.zshrc: apps started from the Dock, Spotlight or Finder (VS Code and
Codex in it, a GUI SDK script) are started by launchd and never read ~/.zshrc, so they get the variables from
launchd's user session (`launchctl setenv`).

- A LaunchAgent, `~/Library/LaunchAgents/net.taotoken.env.plist`, that at each login loads env.sh in `/bin/sh` and
  runs `launchctl setenv` for OPENAI_BASE_URL and OPENAI_API_KEY. It names env.sh and never holds the key, which
  stays in the 0600 env.sh alone. fileplan writes, backs up and undoes it like any file.
- Now, after init applied: `launchctl setenv` from env.sh (core.platform.desktopenv), so apps started from this
  login on get them without logging out. After an undo the session follows the files again: while an agent is
  there (an earlier run's), env.sh's values; once it is gone, the variables are unset. A value set by hand before
  init is not put back (init says so when it replaces one): the session's values are never written to a file.
"""

from __future__ import annotations

import plistlib
from collections.abc import Mapping
from pathlib import Path

from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.base.oserrors import os_error_text
from taotoken_cli.core.clients.base import Machine, read_text, text_change
from taotoken_cli.core.clients.envfiles import parse_env_sh
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.platform import desktopenv

LABEL = "net.taotoken.env"
NAMES = ("OPENAI_BASE_URL", "OPENAI_API_KEY")
# $0 is env.sh (an argument: no path is ever parsed as shell code); a variable env.sh does not set is left alone
# rather than set empty. launchctl is found on launchd's PATH (/usr/bin:/bin:/usr/sbin:/sbin).
_SCRIPT = '. "$0" || exit 1; ' + "".join(f'[ -n "${name}" ] && launchctl setenv {name} "${name}"; ' for name in NAMES) \
    + "exit 0"


def agent_path(machine: Machine) -> Path:
    return machine.home / "Library" / "LaunchAgents" / f"{LABEL}.plist"


def agent_plist(env_sh: Path) -> dict:
    return {"Label": LABEL, "ProgramArguments": ["/bin/sh", "-c", _SCRIPT, str(env_sh)], "RunAtLoad": True,
            "ProcessType": "Background"}


def agent_text(env_sh: Path) -> str:
    return plistlib.dumps(agent_plist(env_sh), sort_keys=False).decode("utf-8")


def read_agent(path: Path) -> dict | None:
    """The agent as written (a dict), None when missing or not a property list."""
    try:
        data = plistlib.loads(path.read_bytes())
    except (OSError, plistlib.InvalidFileException, ValueError):
        return None
    return data if isinstance(data, dict) else None


def add_to_plan(plan: Plan, machine: Machine, env_sh: Path, target: str) -> None:
    agent = agent_path(machine)
    plan.add(text_change(read_text(agent), agent_text(env_sh), target=target,
                         summary=[_("at each login, `launchctl setenv` from {env} for apps started from the Dock "
                                    "(the agent names env.sh; it holds no key)").format(env=env_sh)]))
    if desktopenv.kind(machine.env) == desktopenv.LAUNCHCTL:
        ours = exported_by(env_sh)
        set_by_others = [name for name, value in desktopenv.get(NAMES, machine.env).items()
                         if value and value != ours.get(name)]
        if set_by_others:
            plan.notes.append(_("shell: {names} already set for apps started from the Dock (launchctl, not by "
                                "taotoken): replaced; undo unsets them rather than putting them back").format(
                names=listed(set_by_others)))
    plan.notes.append(_("shell: apps started from the Dock or Spotlight from now on get the variables too "
                        "(launchctl setenv; already running apps: quit and start them again)"))


def after_apply(machine: Machine, env_sh: Path) -> str | None:
    """While the agent is there, launchd's session gets env.sh's values now. An error message, or None."""
    if not (agent_path(machine).exists() and env_sh.exists()):
        return None
    exported = exported_by(env_sh)
    return _set(machine, {name: exported[name] for name in NAMES if name in exported})


def exported_by(env_sh: Path) -> dict[str, str]:
    try:
        return parse_env_sh(env_sh.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return {}


def before_undo(machine: Machine) -> bool:
    """Is the agent there before the undo (so the session's variables are taotoken's)?"""
    return agent_path(machine).exists()


def after_undo(machine: Machine, env_sh: Path, had_agent: bool) -> str | None:
    """The session follows the files again: an earlier run's agent and env.sh, or, the agent gone, nothing."""
    if agent_path(machine).exists():
        return after_apply(machine, env_sh)
    return _set(machine, dict.fromkeys(NAMES)) if had_agent else None


def _set(machine: Machine, values: Mapping[str, str | None]) -> str | None:
    if not values or desktopenv.kind(machine.env) is None:  # Linux, or macOS' facts asked for in a test
        return None
    try:
        desktopenv.set_values(values, machine.env)
    except OSError as exc:
        return _("could not set the variables for apps started from the Dock (launchctl: {error})").format(
            error=os_error_text(exc))
    return None
