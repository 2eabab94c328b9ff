"""Safe file primitives: atomic writes that keep modes and symlinks, parse errors with positions, a file's line
endings."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from pathlib import Path

from taotoken_cli.core.platform import permissions
from taotoken_cli.core.platform.permissions import SECRET_MODE


def resolve_target(path: Path) -> Path:
    """The file a write must land in: a symlink's target, so the link itself survives."""
    path = Path(os.path.expanduser(str(path)))
    if path.is_symlink():
        return Path(os.path.realpath(path))
    return path


def atomic_write(path: Path, data: bytes | str, *, secret: bool = False, mode: int | None = None) -> Path:
    """Write `data` to `path` so that readers see the old or the new file, never half of one.

    Temporary file in the same directory, fsync, rename. An existing file keeps its mode; a new one
    gets `mode`, or 0600 when it holds a secret. Symlinks are followed. Returns the path written.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    target = resolve_target(path)
    if target.is_dir():
        raise IsADirectoryError(f"{target} is a directory")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        new_mode = stat.S_IMODE(target.stat().st_mode)
        if secret:
            # A file holding the key never stays group- or world-readable.
            new_mode = (new_mode & 0o700) or SECRET_MODE
    else:
        new_mode = SECRET_MODE if secret else (mode if mode is not None else 0o644)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        permissions.set_mode(fd, Path(tmp_name), new_mode, secret=secret)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(target.parent)
    return target


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def is_world_readable(path: Path) -> bool:
    """Can another account read `path`? The mode on POSIX, the ACL on Windows (core.platform.permissions)."""
    return permissions.others_can_read(path)


def private_fix(path: Path) -> str:
    """The command that makes `path` readable by its user alone (`chmod 600 …`, or icacls on Windows)."""
    return permissions.private_fix(path)


def newline_of(text: str) -> str:
    """The file's line ending: CRLF when most lines end so."""
    return "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"


def endings_like(text: str, original: str) -> str:
    """`text` (new content, LF line endings, ending with a newline) with the line endings of `original` and, when
    that had none, no final newline."""
    if not original:
        return text
    if newline_of(original) == "\r\n":
        text = re.sub(r"(?<!\r)\n", "\r\n", text)
    if not original.endswith("\n") and text.endswith("\n"):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    return text
