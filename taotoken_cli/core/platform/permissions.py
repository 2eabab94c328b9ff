"""Keeping a file private, per permission model (core.platform.system: `permissions`).

POSIX: the mode (0600 for a file holding the key). Windows: modes are always 0o666 and mean nothing, so a
private file gets an ACL naming the user alone (core.platform.winacl), and "readable by others" is read from the
ACL, not the mode. `private_fix(path)` is the command that makes it private by hand, in the OS's own terms.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from taotoken_cli.core.platform import system

SECRET_MODE = 0o600


def set_mode(fd: int, path: Path, mode: int, *, secret: bool) -> None:
    """Give the open file `fd` (at `path`) `mode`, or make it private when it holds a secret: before its content
    is written, so the key never sits in a file others can read."""
    if system.current().permissions == "acl":
        if secret:
            from taotoken_cli.core.platform import winacl

            winacl.make_private(path)
        return  # os.fchmod is missing before Python 3.13 there, and a mode only sets the read-only flag
    os.fchmod(fd, mode)


def make_private(path: Path) -> None:
    """Only the user may read `path` from now on (raises OSError)."""
    if system.current().permissions == "acl":
        from taotoken_cli.core.platform import winacl

        winacl.make_private(path)
    else:
        os.chmod(path, SECRET_MODE)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def others_can_read(path: Path) -> bool:
    """Can an account other than the user read `path`? False when it cannot be told (missing file)."""
    if system.current().permissions == "acl":
        from taotoken_cli.core.platform import winacl

        return bool(winacl.readers_besides_user(path))
    try:
        return bool(mode_of(path) & 0o044)
    except OSError:
        return False


def private_fix(path: Path) -> str:
    """The command that makes `path` private by hand."""
    if system.current().permissions == "acl":
        # icacls: drop inherited entries, then grant the user alone full control
        return _icacls(path, "/inheritance:r /grant:r", "F")
    return f"chmod 600 {_posix_quote(path)}"


def access_fix(path: Path, *, directory: bool = False) -> str:
    """The command that gives the user back access to `path`: reading and writing a file; for a directory, making
    files in it too (`chmod u+rwx DIR`; on Windows an ACL entry granting the user full control, which a directory
    passes on to what is made in it)."""
    if system.current().permissions == "acl":
        return _icacls(path, "/grant", "(OI)(CI)F" if directory else "F")
    return f"chmod {'u+rwx' if directory else 'u+rw'} {_posix_quote(path)}"


def _icacls(path: Path, options: str, rights: str) -> str:
    """icacls in the user's shell: the user's name is %USERNAME% in cmd, ${env:USERNAME} in PowerShell, "$USERNAME"
    in Git Bash, whose MSYS runtime would also turn `/grant` into a path unless MSYS_NO_PATHCONV says not to."""
    from taotoken_cli.core.platform import shells

    shell = shells.syntax(os.environ)
    if shell in (shells.CMD, shells.POWERSHELL):
        user = "%USERNAME%" if shell == shells.CMD else "${env:USERNAME}"
        return f'icacls "{path}" {options} "{user}:{rights}"'
    return f'MSYS_NO_PATHCONV=1 icacls "{path}" {options} "$USERNAME:{rights}"'


def _posix_quote(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))
