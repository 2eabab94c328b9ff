"""Text that fits the terminal: display widths, wrapping with hanging indents, plain tables. Every view
wraps through here, so one rule holds everywhere:

- the width is COLUMNS when set, else the terminal's own width, else 80 (pipes and files);
- prose wraps at spaces, and between two wide (CJK) characters, never before a closing mark such as
  `，` or `）`; continuation lines hang under the text (`hang`), never at column 0;
- these stay whole, even when that means a line runs past the width: a word (so a URL or a path is
  never split, not even at a hyphen or a slash), a `code` span, and a command of a `Fix` (core.base.fix: the
  producer says what is a command; nothing here guesses it from the words);
- widths count display columns: East Asian wide characters take two, combining marks none.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping, MutableMapping, Sequence

from taotoken_cli.core.base.fix import Fix

DEFAULT_WIDTH = 80
_MIN_TEXT = 16  # columns kept for text when a hanging indent would leave less

_NO_LINE_START = frozenset("，。、；：！？）」』】》〉…・ー)]}.,;:!?%")
_NO_LINE_END = frozenset("（「『【《〈([{")


def char_width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def cell_width(text: str) -> int:
    """Columns `text` takes in a terminal (CJK characters two, combining marks none)."""
    if text.isascii():
        return len(text)
    return sum(char_width(c) for c in text)


def truncate(text: str, width: int, ellipsis: str = "…") -> str:
    """`text` cut to `width` columns, ending in `ellipsis` when cut (a wide character is never split)."""
    if cell_width(text) <= width:
        return text
    room, kept, used = width - cell_width(ellipsis), [], 0
    for char in text:
        used += char_width(char)
        if used > room:
            break
        kept.append(char)
    return "".join(kept) + ellipsis


def pad(text: str, width: int, align: str = "l") -> str:
    """`text` padded with spaces to `width` columns, left ("l") or right ("r") aligned."""
    room = " " * max(0, width - cell_width(text))
    return room + text if align == "r" else text + room


# No terminal is wider; a larger COLUMNS (`99999999999999999999`) is a mistake, and Rich, which renders the usage
# errors, cannot even pad a line to it.
MAX_WIDTH = 10_000


def columns_setting(env: Mapping[str, str]) -> int | None:
    """COLUMNS when it is a width a terminal can have (1 to MAX_WIDTH), else None."""
    try:
        columns = int(env.get("COLUMNS", ""))
    except ValueError:
        return None
    return columns if 0 < columns <= MAX_WIDTH else None


def ignore_odd_columns(env: MutableMapping[str, str]) -> None:
    """Drop a COLUMNS no terminal has (0, negative, not a number, absurdly wide) from the process's environment,
    so nothing that reads it on its own (Rich, for the usage errors) fails on it."""
    if "COLUMNS" in env and columns_setting(env) is None:
        del env["COLUMNS"]


def terminal_width(env: Mapping[str, str] | None = None, stream: object = None) -> int:
    """COLUMNS when it is a width a terminal can have, else the width of the terminal `stream` is, else 80."""
    env = os.environ if env is None else env
    columns = columns_setting(env)
    if columns is not None:
        return columns
    try:
        if stream is not None and stream.isatty():  # type: ignore[attr-defined]
            return os.get_terminal_size(stream.fileno()).columns or DEFAULT_WIDTH  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        pass
    return DEFAULT_WIDTH


# -- splitting text into pieces that may not be broken -------------------------------------------------

def _is_wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


def _pieces(text: str) -> list[tuple[str, str]]:
    """(separator before it, piece) for each word or `code` span of `text`."""
    return _glued(_prose_pieces(text))


def _wide_parts(word: str) -> list[str]:
    """A word split where a line may break inside it: next to a wide character (CJK needs no spaces),
    but never before a closing mark nor after an opening one."""
    if word.isascii():
        return [word]
    parts, start = [], 0
    for i in range(1, len(word)):
        before, after = word[i - 1], word[i]
        if ((_is_wide(before) or _is_wide(after)) and after not in _NO_LINE_START
                and before not in _NO_LINE_END and not (before.isascii() and after.isascii())):
            parts.append(word[start:i])
            start = i
    parts.append(word[start:])
    return parts


# -- wrapping ---------------------------------------------------------------------------------------

def wrap(text: str | Fix, width: int, prefix: str = "", hang: str | None = None) -> list[str]:
    """`prefix` + `text` as lines of at most `width` columns; continuation lines start with `hang` (default:
    spaces as wide as `prefix`, so they hang under the text). Lines in `text` stay separate lines. A `Fix`'s
    commands are pieces of their own, whole, whatever their words."""
    hang = " " * cell_width(prefix) if hang is None else hang
    if width - cell_width(hang) < _MIN_TEXT:
        hang = hang[:max(0, width - _MIN_TEXT)]
    lines: list[str] = []
    for number, paragraph in enumerate(_paragraphs(text)):
        lines += _wrap_paragraph(paragraph, width, prefix if number == 0 else hang, hang)
    return lines


def _paragraphs(text: str | Fix) -> list[list[tuple[str, str]]]:
    """The pieces of each line of `text`."""
    if not isinstance(text, Fix):
        return [_pieces(paragraph) for paragraph in text.split("\n")]
    paragraphs: list[list[tuple[str, str]]] = [[]]
    sep = ""
    for part in text.parts:
        if part.command is not None:
            paragraphs[-1].append((sep, part.text))
            sep = ""
            continue
        for number, line in enumerate(part.text.split("\n")):
            if number:
                paragraphs.append([])
                sep = ""
            stripped = line.lstrip(" ")
            sep += line[:len(line) - len(stripped)]
            if not stripped:
                continue
            pieces = _prose_pieces(stripped)
            paragraphs[-1].append((sep, pieces[0][1]))
            paragraphs[-1].extend(pieces[1:])
            sep = stripped[len(stripped.rstrip(" ")):]
    return [_glued(pieces) for pieces in paragraphs]


def _glued(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Pieces with nothing between them joined where a line may not break: before a closing mark (`）`, `.`)
    or after an opening one (`（`)."""
    out: list[tuple[str, str]] = []
    for sep, piece in pieces:
        if out and not sep and (piece[0] in _NO_LINE_START or out[-1][1][-1] in _NO_LINE_END):
            out[-1] = (out[-1][0], out[-1][1] + piece)
        else:
            out.append((sep, piece))
    return out


def _prose_pieces(text: str) -> list[tuple[str, str]]:
    """(separator before it, piece) for each word or `code` span of prose; words holding wide characters split
    where a line may break between them."""
    pieces: list[tuple[str, str]] = []
    i, sep = 0, ""
    while i < len(text):
        if text[i] == " ":
            j = i
            while j < len(text) and text[j] == " ":
                j += 1
            sep, i = text[i:j], j
            continue
        if text[i] == "`" and "`" in text[i + 1:]:
            end = text.index("`", i + 1) + 1
            while end < len(text) and text[end] not in " ":  # trailing punctuation stays with the span
                end += 1
            pieces.append((sep, text[i:end]))
        else:
            end = text.find(" ", i)
            end = len(text) if end < 0 else end
            for number, part in enumerate(_wide_parts(text[i:end])):
                pieces.append((sep if number == 0 else "", part))
        i, sep = end, ""
    return pieces


def _wrap_paragraph(pieces: list[tuple[str, str]], width: int, prefix: str, hang: str) -> list[str]:
    text = "".join(sep + piece for sep, piece in pieces)
    if cell_width(prefix) + cell_width(text) <= width:
        return [(prefix + text).rstrip()]
    lines: list[str] = []
    line, used, empty = prefix, cell_width(prefix), True
    for sep, piece in pieces:
        size = cell_width(piece)
        if empty:
            line, used, empty = line + piece, used + size, False
        elif used + cell_width(sep) + size <= width:
            line, used = line + sep + piece, used + cell_width(sep) + size
        else:
            lines.append(line.rstrip())
            line, used = hang + piece, cell_width(hang) + size
    lines.append(line.rstrip() if line.strip() else prefix.rstrip())
    return lines


def labelled(label: str, text: str | Fix, width: int, indent: str = "") -> list[str]:
    """`indent` + `label` + `text`, continuation lines under the text: `fix: taotoken init`."""
    return wrap(text, width, indent + label)


# -- tables -----------------------------------------------------------------------------------------

def table(header: Sequence[str] | None, rows: Sequence[Sequence[str]], width: int, indent: str = "  ",
          drop: tuple[int, ...] = (), align: str | None = None, gap: int = 2) -> list[str]:
    """Columns as wide as their widest cell, `gap` spaces apart; `align` per column ("l"/"r"; default: the
    first left, the others right). Columns in `drop` (indexes, first dropped first) go while the table is
    too wide; if it still is, the last column wraps under itself."""
    all_rows = [list(r) for r in ([header] if header is not None else []) + list(rows)]
    if not all_rows:
        return []
    count = len(all_rows[0])
    align = align or "l" + "r" * (count - 1)
    keep = list(range(count))
    for index in (*drop, None):
        widths = [max(cell_width(r[i]) for r in all_rows) for i in keep]
        total = cell_width(indent) + sum(widths) + gap * (len(keep) - 1)
        if total <= width or index is None:
            break
        keep.remove(index)
    last_room = width - (total - widths[-1])
    wrap_last = total > width and len(keep) > 1 and last_room >= _MIN_TEXT
    if wrap_last:
        widths[-1] = last_room
    lines = []
    for row in all_rows:
        cells = [pad(row[i], w, align[i]) for i, w in zip(keep, widths, strict=True)]
        lead = indent + (" " * gap).join(cells[:-1]) + (" " * gap if len(cells) > 1 else "")
        if wrap_last and cell_width(row[keep[-1]]) > widths[-1]:
            lines += wrap(row[keep[-1]], width, lead, " " * cell_width(lead))
        else:
            lines.append((lead + cells[-1]).rstrip())
    return lines
