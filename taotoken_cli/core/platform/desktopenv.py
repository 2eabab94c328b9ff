"""The environment that programs started from the desktop get (the Start menu, Explorer, the Dock, Spotlight), as
against a shell's, which its start-up files set:

- Windows: the user environment, `HKCU\\Environment` (what `setx` writes), then the broadcast that tells Explorer
  (core.platform.winenv).
- macOS: launchd's user session, `launchctl setenv NAME VALUE` (until logout; core.clients.macshell adds the
  LaunchAgent that sets it again at each login). `launchctl` is found on PATH, so a test can put a stand-in first.
- Elsewhere there is none: desktop sessions read the shell's start-up files or ~/.profile.

`STAND_IN` (a variable naming a JSON file) replaces it with that file: a sandbox (the demo, the tests) then
changes nothing outside its own directory, the registry and the login session included.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from taotoken_cli.core.platform import system

STAND_IN = system.ENV_DESKTOP
FILE, REGISTRY, LAUNCHCTL = "file", "registry", "launchctl"
_LAUNCHCTL_TIMEOUT_S = 10.0


def kind(env: Mapping[str, str]) -> str | None:
    """Which desktop environment there is to write here: FILE (the stand-in), REGISTRY, LAUNCHCTL, or None."""
    if env.get(STAND_IN):
        return FILE
    facts = system.current()
    if facts.windows:
        try:
            import winreg  # type: ignore[import-not-found]  # noqa: F401
        except ImportError:  # Windows' facts asked for on another OS (tests)
            return None
        return REGISTRY
    if facts.macos and _launchctl(env):
        return LAUNCHCTL
    return None


def get(names: Iterable[str], env: Mapping[str, str]) -> dict[str, str | None]:
    """Each variable's value there (None: unset, or no desktop environment)."""
    where = kind(env)
    if where == FILE:
        stored = _read_stand_in(env)
        return {name: stored.get(name) for name in names}
    if where == REGISTRY:
        from taotoken_cli.core.platform import winenv

        return {name: winenv.get(name) for name in names}
    if where == LAUNCHCTL:
        return {name: _launchctl_get(name, env) for name in names}
    return {name: None for name in names}


def set_values(values: Mapping[str, str | None], env: Mapping[str, str]) -> None:
    """Set each variable (None: remove it). Raises OSError (a failed launchctl too)."""
    where = kind(env)
    if where == FILE:
        stored = _read_stand_in(env)
        for name, value in values.items():
            if value is None:
                stored.pop(name, None)
            else:
                stored[name] = value
        path = Path(env[STAND_IN])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stored, indent=2) + "\n", encoding="utf-8", newline="\n")
    elif where == REGISTRY:
        from taotoken_cli.core.platform import winenv

        winenv.set_values(values)
    elif where == LAUNCHCTL:
        for name, value in values.items():
            # The value is launchctl's argument for the moment it runs: it has no other way to take one.
            args = ["setenv", name, value] if value is not None else ["unsetenv", name]
            _run_launchctl(args, env)


def _read_stand_in(env: Mapping[str, str]) -> dict[str, str]:
    try:
        data = json.loads(Path(env[STAND_IN]).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _launchctl(env: Mapping[str, str]) -> str | None:
    return shutil.which("launchctl", path=env.get("PATH", os.defpath))


def _run_launchctl(args: list[str], env: Mapping[str, str]) -> str:
    program = _launchctl(env)
    if program is None:
        raise OSError(2, "launchctl not found")
    try:
        proc = subprocess.run([program, *args], capture_output=True, text=True, env=dict(env),
                              timeout=_LAUNCHCTL_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise OSError(62, f"launchctl {args[0]} did not answer within {_LAUNCHCTL_TIMEOUT_S:g} s") from exc
    if proc.returncode != 0:
        raise OSError(proc.returncode, (proc.stderr.strip() or f"launchctl {args[0]} exited {proc.returncode}"))
    return proc.stdout


def _launchctl_get(name: str, env: Mapping[str, str]) -> str | None:
    """`launchctl getenv NAME` prints the value and a newline, or nothing when it is unset."""
    try:
        out = _run_launchctl(["getenv", name], env)
    except OSError:
        return None
    value = out[:-1] if out.endswith("\n") else out
    return value or None
