"""Reading back the env files the shell target writes (env.sh, env.ps1): which variables they set. Kept apart from
the modules that write them (core.clients.shell, winshell, macshell), which all read them."""

from __future__ import annotations

import re
import shlex

_EXPORT_RE = re.compile(r"^\s*export\s+([A-Z_][A-Z0-9_]*)=(.*)$")
_PS_ASSIGNMENT = re.compile(r"^\$env:([A-Za-z_][A-Za-z0-9_]*) = '((?:[^']|'')*)'\s*$")


def parse_env_ps1(text: str) -> dict[str, str]:
    """The variables an env.ps1 written by init sets (`$env:NAME = 'value'`, '' inside for one ')."""
    values = {}
    for line in text.splitlines():
        match = _PS_ASSIGNMENT.match(line)
        if match:
            values[match.group(1)] = match.group(2).replace("''", "'")
    return values


def parse_env_sh(text: str) -> dict[str, str]:
    """The variables an env.sh written by init exports (for doctor)."""
    values = {}
    for line in text.splitlines():
        match = _EXPORT_RE.match(line)
        if match:
            parts = shlex.split(match.group(2))
            values[match.group(1)] = parts[0] if parts else ""
    return values
