"""Is a program running for this user? Found by executable name, never by a whole command line (a shell or an
editor with the name in its arguments is not the program).

- Linux: `/proc/<pid>/comm` (the kernel's name, 15 characters at most) and the base name of argv[0]
  (`/proc/<pid>/cmdline`), for the current user's processes; zombies are skipped. Given `home`, a process whose
  environment says another HOME is skipped (it keeps another home's files).
- macOS and the BSDs: `pgrep -i -x -U <uid>` (the process name, case-insensitive).
- Windows: `tasklist /FO CSV /NH` (image names), filtered by the current user name.
Names are compared normalised: lower case, without `.exe`, spaces, `-` and `_` ("CC Switch" = "cc-switch").
`find` answers None when none of these can be asked, so a caller can say it does not know.
"""

from __future__ import annotations

import csv
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Process:
    pid: int
    name: str  # as the system reports it


def normalise(name: str) -> str:
    base = re.split(r"[\\/]", name.strip())[-1].lower()
    base = base.removesuffix(".exe")
    return re.sub(r"[\s_-]+", "", base)


def find(names: Iterable[str], *, proc: Path = PROC, home: Path | None = None) -> list[Process] | None:
    """The current user's processes called one of `names` (this process excluded); None when unknown. With `home`,
    where the system tells a process's environment (Linux), only those running with that HOME."""
    names = tuple(names)
    wanted = {normalise(n) for n in names}
    if (proc / "self").is_dir():
        return _scan_proc(proc, wanted, home)
    if sys.platform.startswith("win"):
        return _tasklist(wanted)
    return _pgrep(names)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:  # the process ended meanwhile, or is not ours to read
        return None


def _other_home(entry: Path, home: Path) -> bool:
    """Does the process's environment name a HOME other than `home`? (Unreadable or unset: not known, so no.)"""
    for item in (_read(entry / "environ") or b"").split(b"\0"):
        if item.startswith(b"HOME="):
            try:
                return Path(os.fsdecode(item[5:])).resolve() != home.resolve()
            except (OSError, ValueError):
                return False
    return False


def _scan_proc(proc: Path, wanted: set[str], home: Path | None = None) -> list[Process]:
    found = []
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if uid is not None and entry.stat().st_uid != uid:
                continue
        except OSError:
            continue
        stat = _read(entry / "stat") or b""
        if stat.rpartition(b")")[2].split()[:1] == [b"Z"]:  # a zombie holds no state
            continue
        comm = (_read(entry / "comm") or b"").decode("utf-8", "replace").strip()
        argv0 = (_read(entry / "cmdline") or b"").split(b"\0")[0].decode("utf-8", "replace")
        for name in (comm, argv0):
            if name and normalise(name) in wanted:
                if home is None or not _other_home(entry, home):
                    found.append(Process(int(entry.name), name))
                break
    return sorted(found, key=lambda p: p.pid)


def _pgrep(names: Iterable[str]) -> list[Process] | None:
    # "CC Switch" and "cc-switch" both become cc[-_ ]?switch (a POSIX extended regular expression)
    pattern = "|".join(sorted({re.sub(r"[\s_-]+", "[-_ ]?", n.strip().lower().removesuffix(".exe")) for n in names}))
    command = ["pgrep", "-i", "-x", "-l", pattern]
    if hasattr(os, "getuid"):
        command[1:1] = ["-U", str(os.getuid())]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode not in (0, 1):  # 1: nothing matched; anything else: pgrep could not tell
        return None
    found = []
    for line in proc.stdout.splitlines():
        pid, _, name = line.strip().partition(" ")
        if pid.isdigit() and int(pid) != os.getpid():
            found.append(Process(int(pid), name or pid))
    return found


def _tasklist(wanted: set[str]) -> list[Process] | None:
    user = os.environ.get("USERNAME")
    command = ["tasklist", "/FO", "CSV", "/NH"] + (["/FI", f"USERNAME eq {user}"] if user else [])
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    found = []
    for row in csv.reader(proc.stdout.splitlines()):
        if len(row) >= 2 and row[1].isdigit() and normalise(row[0]) in wanted and int(row[1]) != os.getpid():
            found.append(Process(int(row[1]), row[0]))
    return found


def interrupt(proc: subprocess.Popen) -> None:
    """Stop a child as Ctrl-C would, so it can say goodbye (the mock prints its summary): SIGINT. Windows cannot send
    Ctrl-C to one child of the same console (`send_signal(SIGINT)` raises ValueError there), so it is terminated."""
    from taotoken_cli.core.platform import system

    if system.current().windows:
        proc.terminate()
    else:
        proc.send_signal(signal.SIGINT)
