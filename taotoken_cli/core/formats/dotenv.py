"""Reading and editing dotenv files (`.env`) the way the common loaders and `sh` read them.

The syntax: `KEY=value` lines, an optional `export ` prefix, blank lines and `#` comments; an unquoted value ends
at a ` #` comment and loses surrounding whitespace; a single-quoted value is literal (python-dotenv also reads
`\\'` and `\\\\` there); a double-quoted value reads the escapes `\\n \\t \\r \\" \\\\` and may span lines; `KEY=` is
the empty string. Edits replace only the value's characters, so comments and layout stay as they were.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from taotoken_cli.core.files.fsutil import newline_of

_ASSIGNMENT = re.compile(r"[ \t]*(export[ \t]+)?([A-Za-z_][A-Za-z0-9_.]*)[ \t]*=[ \t]*")
_DOUBLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "$": "$"}


@dataclass(frozen=True)
class Assignment:
    name: str
    value: str
    line: int  # 1-based, where the assignment starts
    exported: bool  # written as `export NAME=…` (meant to be sourced by a shell)
    span: tuple[int, int]  # the value as written (quotes included), as character offsets in the text


def _line_end(text: str, index: int) -> int:
    end = text.find("\n", index)
    return len(text) if end < 0 else end


def _quoted(text: str, start: int) -> tuple[str, int] | None:
    """(value, index after the closing quote) of the quoted value at `start`, or None when it is not closed."""
    quote = text[start]
    chars: list[str] = []
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == quote:
            return "".join(chars), index + 1
        if char == "\\" and index + 1 < len(text):
            following = text[index + 1]
            if quote == '"' and following in _DOUBLE_ESCAPES:
                chars.append(_DOUBLE_ESCAPES[following])
                index += 2
                continue
            if quote == "'" and following in "'\\":
                chars.append(following)
                index += 2
                continue
        chars.append(char)
        index += 1
    return None


def parse(text: str) -> list[Assignment]:
    """Every assignment, in order (a later one of the same name wins, in loaders and in `sh` alike)."""
    found: list[Assignment] = []
    index = 0
    while index < len(text):
        end = _line_end(text, index)
        match = _ASSIGNMENT.match(text, index, end)
        if match is None:  # blank, comment, or not an assignment (`KEY` alone): skipped, as loaders do
            index = end + 1
            continue
        line = text.count("\n", 0, index) + 1
        start = match.end()
        if start < end and text[start] in "'\"":
            quoted = _quoted(text, start)
            if quoted is None:  # never closed: loaders reject the line
                index = end + 1
                continue
            value, stop = quoted
            index = _line_end(text, stop) + 1
        else:
            raw = text[start:end]
            comment = re.search(r"[ \t]#", raw)
            raw = raw[:comment.start()] if comment else raw
            value = raw.strip()
            stop = start + len(raw.rstrip())
            index = end + 1
        found.append(Assignment(match.group(2), value, line, bool(match.group(1)), (start, stop)))
    return found


def values(text: str) -> dict[str, str]:
    """NAME -> value, the last assignment winning."""
    return {a.name: a.value for a in parse(text)}


def quote(value: str) -> str:
    """A value both `sh` and the dotenv loaders read back unchanged."""
    return shlex.quote(value) if value else "''"


def set_values(text: str, wanted: dict[str, str], *, export: bool = True) -> str:
    """`text` with each NAME's value(s) replaced by `wanted[NAME]`, everything else kept; names not yet assigned are
    appended (as `export NAME=…` lines when `export`)."""
    assigned = parse(text)
    for assignment in sorted((a for a in assigned if a.name in wanted), key=lambda a: a.span, reverse=True):
        start, stop = assignment.span
        text = text[:start] + quote(wanted[assignment.name]) + text[stop:]
    missing = [name for name in wanted if name not in {a.name for a in assigned}]
    if missing:
        # The file's line ending; a file that ended without a newline still does.
        newline = newline_of(text)
        prefix = "export " if export else ""
        lines = [f"{prefix}{name}={quote(wanted[name])}" for name in missing]
        if not text or text.endswith("\n"):
            text += newline.join(lines) + newline
        else:
            text += newline + newline.join(lines)
    return text
