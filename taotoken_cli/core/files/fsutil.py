"""Safe file primitives: atomic writes that keep modes and symlinks, parse errors with positions, a file's line
endings."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from pathlib import Path

from taotoken_cli.core.platform import permissions, system
from taotoken_cli.core.platform.permissions import SECRET_MODE

# Ownership (POSIX only; Windows keeps its ACLs: this is the one place to extend). Under `sudo` the process is
# root while HOME is the user's: a file root creates there would be root's, and the user's client could no longer
# read it. So an edited file keeps its owner and group, and a new file or directory is given to the owner of the
# nearest directory that exists above it. GIVEN records to whom, so a run can say it once.
GIVEN: set[str] = set()


def _as_root() -> bool:
    return not system.current().windows and hasattr(os, "geteuid") and os.geteuid() == 0


def owner_for(target: Path) -> tuple[int, int] | None:
    """(uid, gid) a file written at `target` must have, when that differs from what this process would give it;
    None when nothing needs changing (not root, or the place is root's own)."""
    if not _as_root():
        return None
    place = target
    while not place.exists() and place != place.parent:
        place = place.parent
    try:
        info = place.stat()
    except OSError:
        return None
    if info.st_uid == 0 and info.st_gid == 0:
        return None
    return info.st_uid, info.st_gid


def give_owner(path: Path | int, owner: tuple[int, int] | None) -> None:
    if owner is None:
        return
    with contextlib.suppress(OSError):
        if isinstance(path, int):
            os.fchown(path, *owner)
        else:
            os.chown(path, *owner)
        GIVEN.add(_user_name(owner[0]))


def _user_name(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return str(uid)


def make_dirs(directory: Path, mode: int = 0o777) -> None:
    """`mkdir -p`, each directory created given to the owner of the one above it (owner_for)."""
    owner = owner_for(directory)
    missing = []
    place = directory
    while not place.exists() and place != place.parent:
        missing.append(place)
        place = place.parent
    directory.mkdir(parents=True, exist_ok=True, mode=mode)
    for created in reversed(missing):
        give_owner(created, owner)


def resolve_target(path: Path) -> Path:
    """The file a write must land in: a symlink's target, so the link itself survives."""
    path = Path(os.path.expanduser(str(path)))
    if path.is_symlink():
        return Path(os.path.realpath(path))
    return path


def atomic_write(path: Path, data: bytes | str, *, secret: bool = False, mode: int | None = None) -> Path:
    """Write `data` to `path` so that readers see the old or the new file, never half of one.

    Temporary file in the same directory, fsync, rename. An existing file keeps its mode, owner and group; a new
    one gets `mode`, or 0600 when it holds a secret, and (run as root) the owner of its directory. Symlinks are
    followed. Returns the path written.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    target = resolve_target(path)
    if target.is_dir():
        raise IsADirectoryError(f"{target} is a directory")
    owner = owner_for(target)  # the file's own owner, or (new) the owner of the directory above it
    make_dirs(target.parent)
    if target.exists():
        new_mode = stat.S_IMODE(target.stat().st_mode)
        if secret:
            # A file holding the key never stays group- or world-readable.
            new_mode = (new_mode & 0o700) or SECRET_MODE
    else:
        new_mode = SECRET_MODE if secret else (mode if mode is not None else 0o644)
    remove_stale_temps(target)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.{TEMP_TAG}-{os.getpid()}-",
                                    suffix=".tmp")
    try:
        permissions.set_mode(fd, Path(tmp_name), new_mode, secret=secret)
        give_owner(fd, owner)
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


# Temporary files are named `.<name>.taotoken-<pid>-<random>.tmp`: a run killed between writing one and renaming
# it (SIGKILL, power loss) leaves it behind, holding the new content (perhaps the key). A later write to the same
# file removes those whose process is gone; a name without the tag or with a live pid is another program's, or
# a run still writing, and is never touched.
TEMP_TAG = "taotoken"


def remove_stale_temps(target: Path) -> list[Path]:
    """Remove our own leftover temporary files of `target` (their writer has exited); returns those removed."""
    prefix, removed = f".{target.name}.{TEMP_TAG}-", []
    try:
        names = os.listdir(target.parent)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid = name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                os.unlink(target.parent / name)
                removed.append(target.parent / name)
    return removed


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (POSIX signal 0). Elsewhere every writer counts as alive: nothing is removed."""
    if system.current().windows:  # os.kill(pid, 0) would end the process there (TerminateProcess)
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, and is another user's
        return True
    return True


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def stays_inside(directory: Path, path: Path) -> bool:
    """Whether `path` (a file name derived from user data, e.g. a profile name) is a file directly in `directory`:
    no `/`, `\\`, `..` or NUL can take a write elsewhere."""
    name = path.name
    if path.parent != directory or not name or name in (".", "..") or any(c in name for c in "/\\\0"):
        return False
    try:
        return path.resolve().parent == directory.resolve()
    except (OSError, ValueError):
        return False


def is_world_readable(path: Path) -> bool:
    """Can another account read `path`? The mode on POSIX, the ACL on Windows (core.platform.permissions)."""
    return permissions.others_can_read(path)


def private_fix(path: Path) -> str:
    """The command that makes `path` readable by its user alone (`chmod 600 …`, or icacls on Windows)."""
    return permissions.private_fix(path)


def text_encoding(raw: bytes) -> str:
    """The encoding a user's text file is in: UTF-16 where it starts with that BOM (Windows PowerShell 5.1 writes a
    profile so with `>` or Out-File), else UTF-8. Decoding with it keeps the BOM as U+FEFF, so encoding the edited
    text with it gives the same bytes back where nothing else changed."""
    if raw.startswith(b"\xff\xfe"):
        return "utf-16-le"
    if raw.startswith(b"\xfe\xff"):
        return "utf-16-be"
    return "utf-8"


def read_user_text(path: Path) -> str:
    """A user's text file (a shell start-up file, env.sh) as text, in its own encoding; undecodable bytes replaced
    (for reading what it holds, never for writing it back). Raises OSError."""
    raw = path.read_bytes()
    return raw.decode(text_encoding(raw), errors="replace")


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


def tilde(path: Path, home: Path) -> str:
    """`~/.bashrc` rather than /home/someone/.bashrc: the form users type."""
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)
