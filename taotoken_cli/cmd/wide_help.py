"""Typer's help, wrapped by taotoken's own rule when the language is written without spaces.

Rich breaks a line only at a space and cuts a longer run with "…": a Chinese help sentence is one such run,
so the options panel lost the end of it (`使用这种设备类型的路由（cuda、gpu、opencl、cpu…`). In Chinese, the texts
Typer builds for help are made `WideText`, which wraps as every view does (taotoken_cli.core.term.layout: between wide
characters too, never before a closing mark, commands and words kept whole). English help stays as rich wraps it.

Typer offers no hook for this, so `use_wide_help_text` wraps its one function that makes those texts
(`typer.rich_utils._make_rich_text`); where a Typer lacks it, help is left as rich wraps it.
"""

from __future__ import annotations

from typing import Any

from rich.containers import Lines
from rich.measure import Measurement
from rich.text import Text

from taotoken_cli.core.term import layout


def break_offsets(plain: str, width: int) -> list[int] | None:
    """Where `layout.wrap` breaks the line `plain` at `width` columns, as offsets into `plain` (None: its lines
    are not pieces of `plain`, which does not happen for one line of text)."""
    offsets: list[int] = []
    position = 0
    for number, line in enumerate(layout.wrap(plain, max(1, width), hang="")):
        if number:
            while position < len(plain) and plain[position] == " ":
                position += 1
            offsets.append(position)
        if not plain.startswith(line, position):
            return None
        position += len(line)
    return offsets


class WideText(Text):
    """A rich Text that wraps by taotoken_cli.core.term.layout's rule."""

    def wrap(self, console: Any, width: int, *, justify: Any = None, overflow: Any = None, tab_size: int = 8,
             no_wrap: bool | None = None) -> Lines:
        wrap_overflow = overflow or self.overflow or "fold"
        if no_wrap or self.no_wrap or overflow == "ignore":
            return super().wrap(console, width, justify=justify, overflow=overflow, tab_size=tab_size,
                                no_wrap=no_wrap)
        lines = Lines()
        for line in self.split(allow_blank=True):
            if "\t" in line:
                line.expand_tabs(tab_size)
            offsets = break_offsets(line.plain, width)
            if offsets is None:
                lines.extend(Text.wrap(line, console, width, justify=justify, overflow=overflow, tab_size=tab_size))
                continue
            pieces = line.divide(offsets)
            for piece in pieces:
                piece.rstrip()
                piece.truncate(width, overflow=wrap_overflow)
            lines.extend(pieces)
        return lines

    def __rich_measure__(self, console: Any, options: Any) -> Measurement:
        lines = self.plain.splitlines() or [""]
        widest = max(layout.cell_width(line) for line in lines)
        # the narrowest it can be: its widest unbreakable piece (each alone on a line when wrapped at one column)
        narrowest = max((layout.cell_width(piece) for line in lines for piece in layout.wrap(line, 1, hang="")),
                        default=widest)
        return Measurement(min(narrowest, widest), widest)


def wide(text: Text) -> WideText:
    return WideText(text.plain, style=text.style, justify=text.justify, overflow=text.overflow,
                    no_wrap=text.no_wrap, end=text.end, tab_size=text.tab_size, spans=list(text.spans))


def use_wide_help_text() -> None:
    """From now on, Typer's help texts are WideText (once per process; nothing when Typer has no such function)."""
    from typer import rich_utils

    make = getattr(rich_utils, "_make_rich_text", None)
    if make is None or getattr(make, "wide", False):
        return

    def make_wide(*args: Any, **kwargs: Any) -> Any:
        made = make(*args, **kwargs)
        return wide(made) if type(made) is Text else made

    make_wide.wide = True  # type: ignore[attr-defined]
    rich_utils._make_rich_text = make_wide
