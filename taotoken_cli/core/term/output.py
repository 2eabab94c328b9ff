"""Rendering helpers shared by all commands: colour decisions, redacted output, JSON.

Computing and rendering are separate: commands build result objects, and renderers turn them
into rich tables (TTY), plain text (pipes, NO_COLOR) or JSON. Everything written passes through
a Redactor so the key cannot leak even when a server echoes it back.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import IO, Any

from taotoken_cli.core.base.fix import Fix
from taotoken_cli.core.base.masking import SECRETS, Redactor
from taotoken_cli.core.platform.console import is_terminal
from taotoken_cli.core.term import layout
from taotoken_cli.core.term.encoding import encodable
from taotoken_cli.core.term.layout import terminal_width, wrap


def _encodes(text: str, encoding: str | None) -> bool:
    try:
        text.encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def isatty(stream: object) -> bool:
    """Whether `stream` is a terminal (False for anything without a working isatty, e.g. a closed file, and for
    NUL on Windows, which says it is one: core.platform.console)."""
    return is_terminal(stream)


def _set(value: str | None) -> bool:
    """A forcing variable is on when set to anything but empty, 0 or false (FORCE_COLOR=0 is Node's "off")."""
    return bool(value) and value.strip().lower() not in ("0", "false")


def color_enabled(stream: IO[str], env: Mapping[str, str] | None = None, tty: bool | None = None) -> bool:
    """Colour by the conventions, first that says wins: NO_COLOR (any value: never; https://no-color.org) >
    CLICOLOR_FORCE or FORCE_COLOR (always, terminal or not) > CLICOLOR=0 (never) > a terminal that is not
    TERM=dumb (https://bixense.com/clicolors)."""
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return False
    if _set(env.get("CLICOLOR_FORCE")) or _set(env.get("FORCE_COLOR")):
        return True
    if env.get("CLICOLOR") == "0":
        return False
    if dumb_terminal(env):
        return False
    return tty if tty is not None else isatty(stream)


def dumb_terminal(env: Mapping[str, str]) -> bool:
    """TERM=dumb (Emacs' shell, some CI logs): no cursor movement at all, so nothing is redrawn in place; progress
    is at most a plain line every few seconds (spinner.Spinner, bench's PlainProgress)."""
    return env.get("TERM") == "dumb"


def machine_object(obj: Mapping[str, Any], *, schema: int, exit_code: int | None) -> dict[str, Any]:
    """What every --json object starts with (docs/json.md): `schema`, the version of this command's shape (raised
    only when a key changes meaning or goes away; new keys do not raise it), and `exit_code`, the status the
    process exits with (left out only for the records of a stream, such as mock's request lines)."""
    head: dict[str, Any] = {"schema": schema}
    if exit_code is not None:
        head["exit_code"] = int(exit_code)
    return {**head, **{key: value for key, value in obj.items() if key not in head}}


def json_line(obj: Mapping[str, Any], *, schema: int = 1, exit_code: int | None = None) -> str:
    """One JSON Lines record (mock's --json log): compact, on one line, `schema` first (no newline)."""
    return json.dumps(machine_object(obj, schema=schema, exit_code=exit_code), ensure_ascii=False, default=str)


_WIDE_LABEL_MAX = 6  # the longest label before a full-width colon (`提示`, `警告`, `codex`)


def split_label(note: str) -> tuple[str, str]:
    """(`label: ` or `标签：`, the rest) of a labelled note such as `warning: …` or `警告：…`: the text before the
    first colon, when it is one word; ("", note) otherwise."""
    ascii_at, wide_at = note.find(": "), note.find("：")
    if ascii_at > 0 and (wide_at < 0 or ascii_at < wide_at) and " " not in note[:ascii_at]:
        return note[:ascii_at + 2], note[ascii_at + 2:]
    if wide_at > 0 and (ascii_at < 0 or wide_at < ascii_at) and " " not in note[:wide_at] \
            and wide_at <= _WIDE_LABEL_MAX:
        return note[:wide_at + 1], note[wide_at + 1:]
    return "", note


# Terminal safety: text from a server or a file may carry control characters that a terminal obeys (ESC ] 0 sets
# the window title, ESC [ 2 J clears the screen, a C1 CSI does the same without ESC, BEL rings, CR overwrites the
# line). Every character of C0 but tab and newline, DEL, and C1 is shown escaped (`\x1b`, `\u009b`: valid inside
# --json strings too). Only taotoken's own colours pass: SGR sequences (ESC [ … m), and only on a stream with
# colour on; the spinner draws through write_control.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SGR_OR_CONTROL = re.compile(r"\x1b\[[0-9;]*m|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"  # DEL and C1: as JSON can carry them


# What rich itself writes to redraw a live view on a terminal: CR, erase line, cursor up, cursor hide/show, and its
# colours. Nothing else passes (no title, no screen clear); rich also drops BEL/BS/VT/FF/CR from the text it is given.
_RICH_OR_CONTROL = re.compile(r"\r|\x1b\[(?:[0-9;]*m|2K|[0-9]*A|\?25[lh])|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_controls(text: str, *, keep_colour: bool = False) -> str:
    """`text` with every control character shown escaped; `keep_colour` lets SGR colour sequences through."""
    if keep_colour:
        return _SGR_OR_CONTROL.sub(lambda m: m.group(0) if len(m.group(0)) > 1 else _escape(m.group(0)), text)
    return _CONTROLS.sub(lambda m: _escape(m.group(0)), text)


class RedactingStream:
    """A text stream wrapper that masks secrets in everything written through it, and shows control characters
    escaped (escape_controls)."""

    def __init__(self, stream: IO[str], redactor: Redactor, *, colour: bool = False,
                 shown: Callable[[str], str] | None = None) -> None:
        self._stream = stream
        self._redact = redactor if shown is None else (lambda text: shown(redactor(text)))
        self.colour = colour

    def write(self, text: str) -> int:
        # A code page without ✓ or █ (cp1252, ASCII) gets lookalikes: a write never fails (core.term.encoding).
        self._stream.write(encodable(escape_controls(self._redact(text), keep_colour=self.colour),
                                     getattr(self._stream, "encoding", None)))
        return len(text)

    def write_rich(self, text: str) -> int:
        """What rich renders: on a terminal its redrawing codes pass (its colours only with colour on); every other
        control character is escaped."""
        if not self.isatty():
            return self.write(text)

        def keep(match: re.Match[str]) -> str:
            code = match.group(0)
            if code.endswith("m") and len(code) > 1:
                return code if self.colour else ""
            return code if len(code) > 1 or code == "\r" else _escape(code)

        safe = _RICH_OR_CONTROL.sub(keep, self._redact(text))
        self._stream.write(encodable(safe, getattr(self._stream, "encoding", None)))
        return len(text)

    def write_control(self, text: str) -> int:
        """The spinner's own drawing (CR, cursor and erase codes) and text it built: redacted, not escaped."""
        self._stream.write(encodable(self._redact(text), getattr(self._stream, "encoding", None)))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        try:
            return self._stream.isatty()
        except (AttributeError, ValueError):
            return False

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", "utf-8") or "utf-8"


class Output:
    """Where a command writes. Injected, so commands run without a terminal in tests."""

    def __init__(self, redactor: Redactor | None = None, stdout: IO[str] | None = None,
                 stderr: IO[str] | None = None, *, env: Mapping[str, str] | None = None,
                 out_tty: bool | None = None, err_tty: bool | None = None) -> None:
        self.redactor = redactor or SECRETS
        self._raw_out = stdout or sys.stdout
        self._raw_err = stderr or sys.stderr
        self.env = os.environ if env is None else env
        self.color = color_enabled(self._raw_out, env, out_tty)
        self.err_color = color_enabled(self._raw_err, env, err_tty)
        # the demo's steps: $HOME shown as ~, in what is wrapped (layout) and in every other line (the streams)
        self._shown = layout.show_home_as_tilde(self.env)
        self.out = RedactingStream(self._raw_out, self.redactor, colour=self.color, shown=self._shown)
        self.err = RedactingStream(self._raw_err, self.redactor, colour=self.err_color, shown=self._shown)
        self._console = None
        self._err_console = None

    def add_secret(self, secret: str | None) -> None:
        self.redactor.add(secret)

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def error_line(self, text: str) -> None:
        self.err.write(text + "\n")

    def wrapped(self, text: str | Fix, prefix: str = "", hang: str | None = None) -> None:
        """`prefix` + `text` wrapped to the width of stdout, continuation lines hanging (core.term.layout)."""
        for line in wrap(text, self.width, prefix, hang):
            self.line(line)

    def error_wrapped(self, text: str | Fix, prefix: str = "", hang: str | None = None) -> None:
        for line in wrap(text, self.err_width, prefix, hang):
            self.error_line(line)

    def error_note(self, note: str) -> None:
        """A labelled line (`note: …`, `warning: …`, `提示：…`) on stderr, wrapped under its text."""
        label, text = split_label(note)
        if label:
            self.error_wrapped(text, label)
        else:
            self.error_wrapped(note, hang="  ")

    @property
    def width(self) -> int:
        """Columns to fit stdout's lines into: COLUMNS, else the terminal's width, else 80."""
        return terminal_width(self.env, self._raw_out)

    @property
    def err_width(self) -> int:
        return terminal_width(self.env, self._raw_err)

    @property
    def unicode(self) -> bool:
        """Can stdout show ✓ ✗ • → …? (Not on a C/POSIX locale or a cp1252 console.)"""
        return _encodes("✓✗•→…", self.out.encoding)

    def spinner(self, text: str | Callable[[], str], *, enabled: bool = True):
        """A spinner on stderr while the command waits, when stdout and stderr are both a terminal (as gh does:
        not under `| less`) and `enabled` (not for --json and the like); it is gone before anything else is
        printed. See taotoken_cli.core.term.spinner."""
        from taotoken_cli.core.term.spinner import NoSpinner, Spinner

        if not (enabled and isatty(self._raw_out) and isatty(self._raw_err)):
            return NoSpinner()
        return Spinner(self.err, text, width=self.err_width, unicode=_encodes("⠋", self.err.encoding),
                       color=self.err_color, dumb=dumb_terminal(self.env))

    def json(self, obj: Mapping[str, Any], *, exit_code: int, schema: int = 1) -> None:
        """A command's --json: one object, its `schema` and `exit_code` first (machine_object; docs/json.md)."""
        self.out.write(json.dumps(machine_object(obj, schema=schema, exit_code=exit_code), indent=2,
                                  ensure_ascii=False, default=str) + "\n")


    @property
    def console(self):  # rich.console.Console, created on first use (rich is slow to import)
        if self._console is None:
            self._console = _make_console(self.out, self.color)
        return self._console

    @property
    def err_console(self):
        if self._err_console is None:
            self._err_console = _make_console(self.err, self.err_color)
        return self._err_console


class _RichFile:
    """The file rich writes to: RedactingStream.write_rich (its live view's redrawing codes kept on a terminal)."""

    def __init__(self, stream: RedactingStream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write_rich(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _make_console(stream: RedactingStream, color: bool):
    from rich.console import Console

    return Console(file=_RichFile(stream), no_color=not color, color_system="auto" if color else None,
                   highlight=False, soft_wrap=not stream.isatty(), emoji=False)
