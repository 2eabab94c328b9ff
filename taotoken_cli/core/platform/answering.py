
"""Run a program that asks a yes/no question on its terminal, and answer it.

Some programs confirm a destructive step only on a terminal and have no flag to skip the question (cc-switch's
`provider delete` asks through inquire, which refuses a stdin that is not a TTY). Where a pseudo-terminal exists
(POSIX), the program gets one as its stdin, stdout and stderr; once its output shows `prompt`, `answer` and Enter are
typed. Elsewhere (Windows) nothing is run: the caller says which command to type.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from taotoken_cli.core.base.oserrors import os_error_text


@dataclass
class Answered:
    returncode: int | None  # None: not run (no pseudo-terminal here) or killed at the timeout
    output: str  # what the program showed on its terminal


def supported() -> bool:
    try:
        import pty  # noqa: F401  (POSIX only)
    except ImportError:
        return False
    return hasattr(os, "openpty")


def run(argv: Sequence[str], prompt: str, answer: str, env: Mapping[str, str], *, timeout_s: float = 30.0) -> Answered:
    if not supported():
        return Answered(None, "")
    leader, follower = os.openpty()
    try:
        proc = subprocess.Popen(list(argv), stdin=follower, stdout=follower, stderr=follower, env=dict(env),
                                start_new_session=True, close_fds=True)
    except OSError as exc:
        os.close(leader)
        os.close(follower)
        return Answered(127, os_error_text(exc))
    os.close(follower)
    seen, answered = b"", False
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _w, _x = select.select([leader], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:  # the program closed its terminal: it ended
                    break
                if not chunk:
                    break
                seen += chunk
            if not answered and prompt.encode() in seen:
                os.write(leader, answer.encode() + b"\r")  # Enter as a terminal sends it (raw mode reads \r)
                answered = True
            if proc.poll() is not None and not ready:
                break
        else:
            proc.kill()
        returncode = proc.wait(timeout=5)
    finally:
        os.close(leader)
    return Answered(returncode if returncode >= 0 else None, seen.decode("utf-8", "replace"))
