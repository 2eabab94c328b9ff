"""A real terminal for tests: a program in a tmux window of a given size, driven by keys, read from the screen.

    with Tmux(["bash", "--norc"], width=80, cwd=tmp) as term:
        term.send("taotoken init --target cod", "Tab")
        term.wait_for(lambda screen: "codex" in screen)

Each Tmux runs its own tmux server (a private socket, no config file), so a developer's tmux is never
touched. Tests that use it skip when tmux is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest


def require_tmux() -> None:
    if not shutil.which("tmux"):
        pytest.skip("tmux is not installed here (.ci/run installs it)")


class Tmux:
    def __init__(self, command: Sequence[str], *, width: int = 80, height: int = 50, cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.socket = f"taotoken-test-{uuid.uuid4().hex[:12]}"
        self.command, self.width, self.height = list(command), width, height
        self.cwd = cwd
        self.env = {**os.environ, **(env or {})}
        self.env.pop("TMUX", None)
        self.env.pop("COLUMNS", None)  # the width is the window's, as in a terminal
        self.env.pop("LINES", None)

    def _tmux(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True,
                              text=True, env=self.env, check=False)
        if check and proc.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout

    def __enter__(self) -> Tmux:
        import shlex

        self._tmux("new-session", "-d", "-s", "t", "-x", str(self.width), "-y", str(self.height),
                   *(["-c", str(self.cwd)] if self.cwd else []), shlex.join(self.command))
        self._tmux("set-option", "-t", "t", "remain-on-exit", "on")  # the screen stays readable after an exit
        return self

    def __exit__(self, *exc: object) -> None:
        self._tmux("kill-server", check=False)

    def send(self, *keys: str, literal: bool = False) -> None:
        """tmux key names ("Tab", "Enter", "C-u") or, with `literal`, text typed as is."""
        self._tmux("send-keys", "-t", "t", *(["-l"] if literal else []), *keys)

    def type(self, text: str) -> None:
        self.send(text, literal=True)

    def screen(self, joined: bool = False, history: bool = False) -> str:
        """The window's text; `joined`: lines the terminal wrapped are one line again; `history`: the
        scrollback too."""
        return self._tmux("capture-pane", "-p", "-t", "t", *(["-J"] if joined else []),
                          *(["-S", "-"] if history else []))

    def wait_for(self, ready: Callable[[str], bool], timeout: float = 15, **screen_options: bool) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen(**screen_options)
            if ready(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; the screen shows:\n{text}")
            time.sleep(0.05)

    def record(self, path: Path) -> None:
        """From now on, every byte the program writes to the terminal (escape sequences, carriage returns and
        all, as the terminal received them) is appended to `path`: what was drawn, not only what stayed."""
        import shlex

        self._tmux("pipe-pane", "-o", "-t", "t", f"cat >> {shlex.quote(str(path))}")

    def dead(self) -> bool:
        """Has the program in the window exited?"""
        return self._tmux("display-message", "-p", "-t", "t", "#{pane_dead}").strip() == "1"
