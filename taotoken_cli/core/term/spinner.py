"""A one-line spinner on stderr while a command waits (doctor's checks, route's device probe and requests).

Only on a terminal, and never in machine output (the caller passes `enabled=False` for --json, --export,
-q). It draws only after a short delay, so quick runs show nothing, and it erases its line before the
command prints anything, so no stale line is left. On TERM=dumb nothing moves the cursor (not even a carriage
return): after the delay, one plain line ("… 12 of 51 checks done") every DUMB_INTERVAL_S, left as it is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import IO

from taotoken_cli.core.term.layout import cell_width, truncate

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
ASCII_FRAMES = "|/-\\"
DELAY_S = 0.25  # nothing is drawn for waits shorter than this
INTERVAL_S = 0.1
DUMB_DELAY_S = 2.0  # TERM=dumb: the first plain line after this, then one every DUMB_INTERVAL_S
DUMB_INTERVAL_S = 5.0
_HIDE_CURSOR, _SHOW_CURSOR, _ERASE_LINE = "\x1b[?25l", "\x1b[?25h", "\x1b[2K"
_CYAN, _RESET = "\x1b[36m", "\x1b[0m"


class Spinner:
    """`with Spinner(stream, "probing CUDA and OpenCL…", width=80):` — `text` may be a function, called at
    every frame (e.g. "12 of 51 checks done"), or changed with `update()`."""

    def __init__(self, stream: IO[str], text: str | Callable[[], str], *, width: int, unicode: bool = True,
                 color: bool = False, dumb: bool = False, delay_s: float = DELAY_S) -> None:
        self._stream = stream
        self._text = text
        self._width = max(10, width - 3)  # never the last column (some terminals wrap there), and room for a "^C"
        self._frames = FRAMES if unicode else ASCII_FRAMES
        self._color = color and not dumb
        self._dumb = dumb
        self._delay_s = DUMB_DELAY_S if dumb and delay_s == DELAY_S else delay_s
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._drawn = 0  # columns on screen, 0 when nothing is

    def update(self, text: str | Callable[[], str]) -> None:
        self._text = text

    def _current(self) -> str:
        text = self._text() if callable(self._text) else self._text
        return " ".join(text.split())  # one line, whatever the text holds

    def _draw(self, frame: str) -> None:
        text = truncate(f"{frame} {self._current()}", self._width)
        used = cell_width(text)
        if self._color:
            text = f"{_CYAN}{frame}{_RESET}{text[len(frame):]}"
        with self._lock:
            if self._stop.is_set():
                return
            if self._dumb:  # a line of its own, never redrawn
                self._write(truncate(self._current(), self._width) + "\n")
                return
            self._write(("" if self._drawn else _HIDE_CURSOR) + "\r" + _ERASE_LINE + text)
            self._drawn = used

    def _write(self, text: str) -> None:
        try:
            getattr(self._stream, "write_control", self._stream.write)(text)
            self._stream.flush()
        except (OSError, ValueError):  # the terminal went away: nothing left to draw on
            self._stop.set()

    def _run(self) -> None:
        if self._stop.wait(self._delay_s):
            return
        index = 0
        while not self._stop.is_set():
            self._draw(self._frames[index % len(self._frames)])
            index += 1
            self._stop.wait(DUMB_INTERVAL_S if self._dumb else INTERVAL_S)

    def __enter__(self) -> Spinner:
        self._thread = threading.Thread(target=self._run, name="spinner", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._stop.set()
            if self._drawn:  # (a dumb terminal's lines stay: nothing was drawn over)
                self._write("\r" + _ERASE_LINE + _SHOW_CURSOR)
                self._drawn = 0
        if self._thread is not None:
            self._thread.join(1.0)


class NoSpinner:
    """What `Output.spinner` returns when there is no terminal to draw on."""

    def update(self, text: str | Callable[[], str]) -> None:
        pass

    def __enter__(self) -> NoSpinner:
        return self

    def __exit__(self, *exc: object) -> None:
        pass
