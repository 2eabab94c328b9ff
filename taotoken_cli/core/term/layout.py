"""Text that fits the terminal: display widths, wrapping with hanging indents, plain tables. Every view
wraps through here, so one rule holds everywhere:

- the width is COLUMNS when set, else the terminal's own width, else 80 (pipes and files);
- widths are rich's (`rich.cells`, the library that draws the tables and the live view): East Asian wide
  characters and emoji take two columns, combining marks none, an emoji sequence joined by ZWJ (a family)
  or widened by VS16 counts once, as terminals draw it;
- prose wraps at spaces, and between two wide (CJK) characters, but never inside a Chinese word of the
  lexicon (the glossary's terms, `API 密钥`, `配置档`, and the common words: core.term.zh_words), never
  inside an emoji sequence, never before a closing mark such as `，` or `）`; continuation lines hang under
  the text (`hang`), never at column 0;
- these stay whole: a word (so a URL or a path is never split, not even at a hyphen or a slash), a `code`
  span, and a command of a `Fix` (core.base.fix: the producer says what is a command; nothing here guesses it
  from the words). A command that does not fit after the hanging indent but fits the terminal gets a line
  of its own from column 0 (a `.bashrc` one-liner, a backup path: the terminal never splits it); only one
  longer than the terminal runs past it. `fold=True` (a model ID in a heading) breaks such a word after a `/`,
  `-`, `_`, `:` or `.` instead.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from functools import lru_cache
from typing import NamedTuple

from taotoken_cli.core.base.fix import Fix

DEFAULT_WIDTH = 80
_MIN_TEXT = 16  # columns kept for text when a hanging indent would leave less

_NO_LINE_START = frozenset("，。、；：！？）」』】》〉…・ー)]}.,;:!?%")
_NO_LINE_END = frozenset("（「『【《〈([{")
_ZWJ = "\u200d"
_FOLD_AFTER = frozenset("/-_:.@")


# Set by `taotoken demo` for its steps: paths under $HOME are shown as `~/…` before lines are wrapped, so the
# transcript wraps around the short form (replacing the path after wrapping left ragged lines).
ENV_HOME_AS_TILDE = "TAOTOKEN_HOME_AS_TILDE"
_shown: Callable[[str], str] | None = None


def show_home_as_tilde(env: Mapping[str, str]) -> Callable[[str], str] | None:
    """From now on (this process's output: core.term.output.Output calls it), text is wrapped with $HOME shown as
    `~` when ENV_HOME_AS_TILDE asks for it; returns that rewrite (None: text is shown as it is)."""
    global _shown
    home = env.get("HOME", "").rstrip("/\\")
    _shown = None
    if env.get(ENV_HOME_AS_TILDE) and len(home) > 1:
        pattern = re.compile(re.escape(home) + r"(?![\w.-])")

        def shown(text: str) -> str:
            return pattern.sub("~", text) if home in text else text

        _shown = shown
    return _shown


def cell_width(text: str) -> int:
    """Columns `text` takes in a terminal, as rich measures it (CJK and emoji two, combining marks none, an
    emoji ZWJ sequence once)."""
    if text.isascii():
        return len(text)
    return _rich_cells().cell_len(text)


@lru_cache(maxsize=1)
def _rich_cells():
    # Imported on the first non-ASCII text only: `check` prints ASCII at shell start-up and skips rich (~10 ms).
    from rich import cells

    return cells


def truncate(text: str, width: int, ellipsis: str = "…") -> str:
    """`text` cut to `width` columns, ending in `ellipsis` when cut (a wide character is never split)."""
    if cell_width(text) <= width:
        return text
    room = width - cell_width(ellipsis)
    if room <= 0:
        return ellipsis[:max(0, width)]
    if text.isascii():
        return text[:room] + ellipsis
    return _rich_cells().chop_cells(text, room)[0] + ellipsis  # whole graphemes: an emoji sequence is never cut


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


def _is_ideograph(char: str) -> bool:
    return "\u4e00" <= char <= "\u9fff" or "\u3400" <= char <= "\u4dbf"


def _extends(char: str) -> bool:
    """A character drawn with the one before it: a combining mark, ZWJ, a variation selector, a skin tone."""
    return (unicodedata.category(char) in ("Mn", "Me", "Cf") or "\ufe00" <= char <= "\ufe0f"
            or "\U0001f3fb" <= char <= "\U0001f3ff")


def _may_break(before: str, after: str) -> bool:
    """May a line break between these two characters of a word? Next to a wide character (CJK needs no spaces),
    but never before a closing mark, after an opening one, or inside an emoji sequence."""
    return ((_is_wide(before) or _is_wide(after)) and after not in _NO_LINE_START and before not in _NO_LINE_END
            and not (before.isascii() and after.isascii()) and before != _ZWJ and not _extends(after))


@lru_cache(maxsize=1)
def _lexicon() -> dict[str, tuple[str, ...]]:
    """The words a line never breaks inside, by first character, longest first."""
    from taotoken_cli.core.term.zh_words import WORDS

    index: dict[str, list[str]] = {}
    for word in WORDS:
        index.setdefault(word[0], []).append(word)
    return {first: tuple(sorted(words, key=len, reverse=True)) for first, words in index.items()}


def _kept_together(text: str) -> frozenset[int]:
    """Indexes i where no line may break between text[i-1] and text[i]: inside a word of the lexicon, found
    longest first from the left (the space of `API 密钥` included)."""
    if text.isascii():
        return frozenset()
    index, kept, i = _lexicon(), set(), 0
    while i < len(text):
        word = next((w for w in index.get(text[i], ()) if text.startswith(w, i)), None)
        if word is None:
            i += 1
            continue
        kept.update(range(i + 1, i + len(word)))
        i += len(word)
    return frozenset(kept)


def _wide_parts(text: str, start: int, end: int, kept: frozenset[int]) -> list[str]:
    """The word text[start:end] split where a line may break inside it (`_may_break`, not inside a word of the
    lexicon)."""
    word = text[start:end]
    if word.isascii():
        return [word]
    parts, first = [], start
    for i in range(start + 1, end):
        if i not in kept and _may_break(text[i - 1], text[i]):
            parts.append(text[first:i])
            first = i
    parts.append(text[first:end])
    return parts


def _fold_cut(piece: str, room: int) -> str:
    """The start of a word too long for `room` columns that fits there, ending after a `/ - _ : . @` where one is
    in its second half (a model ID: `accounts/fireworks/models/` | `llama-v3p1-405b-instruct`)."""
    cut = piece[:room] if piece.isascii() else _rich_cells().chop_cells(piece, room)[0]
    at = max((i + 1 for i, char in enumerate(cut) if char in _FOLD_AFTER), default=0)
    return cut[:at] if at > len(cut) // 2 else cut


# -- wrapping ---------------------------------------------------------------------------------------

def wrap(text: str | Fix, width: int, prefix: str = "", hang: str | None = None, *, fold: bool = False) -> list[str]:
    """`prefix` + `text` as lines of at most `width` columns; continuation lines start with `hang` (default:
    spaces as wide as `prefix`, so they hang under the text). Lines in `text` stay separate lines. A `Fix`'s
    commands are pieces of their own, whole, whatever their words. `fold`: a word too long for a line breaks
    after its punctuation rather than run past the width (model IDs in headings)."""
    if _shown is not None:
        text, prefix = text.mapped(_shown) if isinstance(text, Fix) else _shown(text), _shown(prefix)
    hang = " " * cell_width(prefix) if hang is None else hang
    if width - cell_width(hang) < _MIN_TEXT:
        hang = hang[:max(0, width - _MIN_TEXT)]
    lines: list[str] = []
    for number, paragraph in enumerate(_paragraphs(text)):
        lines += _wrap_paragraph(paragraph, width, prefix if number == 0 else hang, hang, fold)
    return lines


class _Piece(NamedTuple):
    sep: str  # the spaces before it ("" where a line may break between two wide characters)
    text: str
    whole: bool = False  # a command of a Fix (or a path given as one): gets a line of its own rather than overflow


def _paragraphs(text: str | Fix) -> list[list[_Piece]]:
    """The pieces of each line of `text`."""
    if not isinstance(text, Fix):
        return [_glued(_prose_pieces(paragraph)) for paragraph in text.split("\n")]
    paragraphs: list[list[_Piece]] = [[]]
    sep = ""
    for part in text.parts:
        if part.command is not None:
            paragraphs[-1].append(_Piece(sep, part.text, True))
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
            paragraphs[-1].append(pieces[0]._replace(sep=sep))
            paragraphs[-1].extend(pieces[1:])
            sep = stripped[len(stripped.rstrip(" ")):]
    return [_glued(pieces) for pieces in paragraphs]


def _glued(pieces: list[_Piece]) -> list[_Piece]:
    """Pieces with nothing between them joined where a line may not break: before a closing mark (`）`, `.`)
    or after an opening one (`（`)."""
    out: list[_Piece] = []
    for piece in pieces:
        if out and not piece.sep and (piece.text[0] in _NO_LINE_START or out[-1].text[-1] in _NO_LINE_END):
            out[-1] = _Piece(out[-1].sep, out[-1].text + piece.text, out[-1].whole or piece.whole)
        else:
            out.append(piece)
    return out


def _prose_pieces(text: str) -> list[_Piece]:
    """A piece for each word or `code` span of prose; words holding wide characters split where a line may
    break between them, words of the lexicon (`API 密钥`) kept whole."""
    kept = _kept_together(text)
    pieces: list[_Piece] = []
    i, sep = 0, ""
    while i < len(text):
        if text[i] == " " and i not in kept:
            j = i
            while j < len(text) and text[j] == " ":
                j += 1
            sep, i = text[i:j], j
            continue
        if text[i] == "`" and "`" in text[i + 1:]:
            end = text.index("`", i + 1) + 1
            while end < len(text) and text[end] not in " ":  # trailing punctuation stays with the span
                end += 1
            pieces.append(_Piece(sep, text[i:end]))
        else:
            end = i
            while end < len(text) and (text[end] != " " or end in kept):
                end += 1
            if sep == " " and pieces and _is_ideograph(pieces[-1].text[-1]) and _is_ideograph(text[i]):
                sep = ""  # `来自 文件`: a translated word put after a space in a template; Chinese needs none
            for number, part in enumerate(_wide_parts(text, i, end, kept)):
                pieces.append(_Piece(sep if number == 0 else "", part))
        i, sep = end, ""
    return pieces


def _wrap_paragraph(pieces: list[_Piece], width: int, prefix: str, hang: str, fold: bool = False) -> list[str]:
    text = "".join(piece.sep + piece.text for piece in pieces)
    if cell_width(prefix) + cell_width(text) <= width:
        return [(prefix + text).rstrip()]
    lines: list[str] = []
    line, used = prefix, cell_width(prefix)
    empty = True  # nothing after the prefix yet
    room = max(1, width - cell_width(hang))
    for sep, piece, whole in pieces:
        size = cell_width(piece)
        if fold and size > room:  # fill this line with its start, the next ones with the rest
            gap = 0 if empty else cell_width(sep)
            if width - used - gap >= min(room, 8):
                start = _fold_cut(piece, width - used - gap)
                line, piece = line + ("" if empty else sep) + start, piece[len(start):]
            while piece:
                lines.append(line.rstrip())
                start = _fold_cut(piece, room) if cell_width(piece) > room else piece
                line, piece = hang + start, piece[len(start):]
            used, empty = cell_width(line), False
            continue
        # a command that fits the terminal but not after what is before it: a line of its own, under the hang
        # when it fits there, else from column 0 (the terminal never splits a `.bashrc` line or a backup path)
        own_line = whole and used + (0 if empty else cell_width(sep)) + size > width >= size
        if empty and not own_line:
            line, used, empty = line + piece, used + size, False
        elif not empty and not own_line and used + cell_width(sep) + size <= width:
            line, used = line + sep + piece, used + cell_width(sep) + size
        else:
            if line.strip():
                lines.append(line.rstrip())
            lead = "" if whole and cell_width(hang) + size > width >= size else hang
            line, used, empty = lead + piece, cell_width(lead) + size, False
    lines.append(line.rstrip() if line.strip() else prefix.rstrip())
    return lines


def wrap_items(items: Sequence[str], width: int, sep: str = " · ", hang: str = "  ") -> list[str]:
    """`items` joined by `sep` in as few lines as fit `width`, a line breaking only between two items (its
    separator left at the end of the line); an item too long for a line wraps as prose."""
    lines: list[str] = []
    line = ""
    for item in items:
        if line and cell_width(line + sep + item) <= width:
            line += sep + item
            continue
        if line:
            lines.append((line + sep).rstrip())
        wrapped = wrap(item, width, hang if lines else "", hang)
        lines += wrapped[:-1]
        line = wrapped[-1]
    return [*lines, line] if line else lines


def labelled(label: str, text: str | Fix, width: int, indent: str = "") -> list[str]:
    """`indent` + `label` + `text`, continuation lines under the text: `fix: taotoken init`."""
    return wrap(text, width, indent + label)


# -- tables -----------------------------------------------------------------------------------------

def table(header: Sequence[str] | None, rows: Sequence[Sequence[str]], width: int, indent: str = "  ",
          drop: tuple[int, ...] = (), align: str | None = None, gap: int = 2) -> list[str]:
    """Columns as wide as their widest cell, `gap` spaces apart; `align` per column ("l"/"r"; default: the
    first left, the others right). Columns in `drop` (indexes, first dropped first) go while the table is
    too wide; if it still is, the last column wraps under itself."""
    all_rows = [[_shown(c) if _shown else c for c in r] for r in ([header] if header is not None else []) + list(rows)]
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
