"""A non-blocking exclusive lock on an open file: fcntl.flock on POSIX, msvcrt.locking on Windows. Either lock
goes with the process: closing the file (or the process ending, a crash too) releases it."""

from __future__ import annotations

import os

from taotoken_cli.core.platform import system


def try_lock(fd: int) -> bool:
    """Take the lock on `fd`; False when another process holds it."""
    if system.current().locks == "msvcrt":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)  # msvcrt locks bytes from the current position: always the first one
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:  # EACCES/EDEADLOCK: held by another process
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
