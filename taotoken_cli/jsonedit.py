"""Editing hand-written JSON config files without disturbing what we did not change.

Parse errors become ConfigFileError with file:line:column and a fix. Re-serialising keeps the key
order (dicts are ordered), the file's indentation (2/4 spaces or tabs, detected), its trailing
newline and its choice between literal non-ASCII and \\u escapes, so unrelated keys come out byte
for byte the same as long as the file was written by a standard serialiser (JSON.stringify,
serde_json pretty, json.dumps).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taotoken_cli.errors import ConfigFileError


@dataclass(frozen=True)
class JsonStyle:
    """How a JSON file is laid out, so a rewrite looks like the original."""

    indent: str | None = "  "  # None: everything on one line
    trailing_newline: bool = True
    ensure_ascii: bool = False
    compact_separators: bool = False  # one-line files written as {"a":1} rather than {"a": 1}

    def dumps(self, data: Any) -> str:
        if self.indent is None:
            separators = (",", ":") if self.compact_separators else (", ", ": ")
            text = json.dumps(data, ensure_ascii=self.ensure_ascii, separators=separators)
        else:
            text = json.dumps(data, indent=self.indent, ensure_ascii=self.ensure_ascii)
        return text + ("\n" if self.trailing_newline else "")


DEFAULT_STYLE = JsonStyle()
_INDENT_RE = re.compile(r"^([ \t]+)\S", re.MULTILINE)


def detect_style(text: str) -> JsonStyle:
    """Indentation = the whitespace before the first indented line (the first nesting level)."""
    stripped = text.strip()
    if not stripped:
        return DEFAULT_STYLE
    trailing_newline = text.endswith("\n")
    # json.dumps(ensure_ascii=True) escapes everything outside space..tilde, DEL (0x7f) included.
    ensure_ascii = "\\u" in text and not any(ord(ch) > 126 for ch in text)
    if "\n" not in stripped:
        compact = bool(re.search(r'"\s*:\S', stripped)) or bool(re.search(r'[\]}"\d],["{\[]', stripped))
        return JsonStyle(None, trailing_newline, ensure_ascii, compact)
    match = _INDENT_RE.search(stripped)
    if not match:
        return JsonStyle("  ", trailing_newline, ensure_ascii)
    indent = match.group(1)
    if "\t" in indent:
        indent = "\t"
    return JsonStyle(indent, trailing_newline, ensure_ascii)


def parse_json(text: str, path: Path | str) -> Any:
    """Parse JSON text; errors name file:line:column and how to fix it."""
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigFileError(
            str(path), exc.lineno, exc.colno, f"invalid JSON: {exc.msg}",
            f"fix the JSON at line {exc.lineno}, column {exc.colno} (a missing comma or quote, or a trailing "
            f"comma, is the usual cause); `python3 -m json.tool {path}` shows the error too",
        ) from None


def dumps_like(data: Any, original_text: str | None) -> str:
    """Serialise `data` in the style of `original_text` (or 2-space JSON with a newline for new files)."""
    style = detect_style(original_text) if original_text else DEFAULT_STYLE
    return style.dumps(data)
