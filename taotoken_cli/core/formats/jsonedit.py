"""Editing users' JSON (and JSONC) files: only the values that change are rewritten, as text splices.

`edit_json(text, new_data)` parses the text with positions (`jsonc`), compares the old data with
`new_data`, and for each difference rewrites just that member: a changed value is replaced in place, a
removed member is cut out with its comma (its line too when it had one to itself; a comment on that line
stays), a new member goes after the member that precedes it in `new_data`, indented like its siblings,
with their `"key": value` spacing and their trailing-comma habit. Everything else — comments, number
spellings (`1e5` stays `1e5`), escapes (`\\u00e9` stays), key order, indentation, CRLF line endings, a
missing final newline, a BOM — keeps its bytes. New values are written in the file's style (its indent
unit, its choice between literal non-ASCII and \\u escapes, one line or several).

Parse errors become ConfigFileError with file:line:column and a fix. `dumps_like` writes a new file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taotoken_cli.core.base.errors import ConfigFileError
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.files.fsutil import endings_like, newline_of
from taotoken_cli.core.formats import jsonc
from taotoken_cli.core.formats.jsonsplice import Splicer


@dataclass(frozen=True)
class JsonStyle:
    """How a JSON file is laid out, so new text looks like the original."""

    indent: str | None = "  "  # None: everything on one line
    trailing_newline: bool = True
    ensure_ascii: bool = False
    compact_separators: bool = False  # one-line files written as {"a":1} rather than {"a": 1}

    @property
    def separators(self) -> tuple[str, str]:
        return (",", ":") if self.compact_separators else (", ", ": ")

    def dumps(self, data: Any) -> str:
        if self.indent is None:
            text = json.dumps(data, ensure_ascii=self.ensure_ascii, separators=self.separators)
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
    ensure_ascii = "\\u" in text and not any(ord(ch) > 126 for ch in text.lstrip("\ufeff"))
    if "\n" not in stripped:
        bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', stripped)  # separators inside strings say nothing
        compact = bool(re.search(r'"\s*:\S', bare)) or bool(re.search(r'[\]}"\d],["{\[]', bare))
        return JsonStyle(None, trailing_newline, ensure_ascii, compact)
    match = _INDENT_RE.search(stripped)
    if not match:
        return JsonStyle("  ", trailing_newline, ensure_ascii)
    indent = match.group(1)
    if "\t" in indent:
        indent = "\t"
    return JsonStyle(indent, trailing_newline, ensure_ascii)


def parse_json(text: str, path: Path | str, *, allow_comments: bool = False) -> Any:
    """Parse JSON (or JSONC with `allow_comments`); errors name file:line:column and how to fix it.

    A JSONC text with no value at all (empty, or only comments) is {}."""
    body = text[1:] if text.startswith("\ufeff") else text
    if not allow_comments:
        try:
            return json.loads(body, parse_constant=_not_json)
        except RecursionError:
            raise ConfigFileError(str(path), None, None, _("invalid JSON: {detail}").format(
                                      detail=_("nested too deeply")),
                                  _("this is not a settings file taotoken can edit; move it away")) from None
        except _NotJson as exc:
            raise ConfigFileError(str(path), None, None, _("invalid JSON: {word} (not a JSON number)").format(word=exc),
                                  _("replace {word} by a number or null").format(word=exc)) from None
        except json.JSONDecodeError as exc:
            fix: Fix | str = Fix.of(_("fix the JSON at line {line}, column {column} (a missing comma or quote, or a "
                                      "trailing comma, is the usual cause); {command} shows the error too"),
                                    line=exc.lineno, column=exc.colno, command=Command(f"python3 -m json.tool {path}"))
            if _parses_as_jsonc(body):
                fix = _("remove the comments and trailing commas: this file must be plain JSON (the program that reads "
                        "it rejects the whole file otherwise); the first one is at line {line}, column {column}"
                        ).format(line=exc.lineno, column=exc.colno)
            raise ConfigFileError(str(path), exc.lineno, exc.colno,
                                  _("invalid JSON: {detail}").format(detail=jsonc.json_message(exc.msg)), fix) from None
    try:
        document = jsonc.parse(text, jsonc=True)
    except jsonc.JsonSyntaxError as exc:
        raise ConfigFileError(str(path), exc.line, exc.column, _("invalid JSON: {detail}").format(detail=exc.msg),
                              _("fix the JSON at line {line}, column {column} (comments and trailing commas are fine "
                                "in this file; a missing comma or quote is the usual cause)").format(
                                  line=exc.line, column=exc.column)) from None
    return {} if document.root is None else document.root.value


class _NotJson(ValueError):
    pass


def _not_json(name: str) -> None:
    raise _NotJson(name)  # Python's json accepts NaN and Infinity; JSON.parse and serde_json do not


def _parses_as_jsonc(text: str) -> bool:
    try:
        jsonc.parse(text, jsonc=True)
    except (jsonc.JsonSyntaxError, RecursionError):
        return False
    return True


def dumps_like(data: Any, original_text: str | None) -> str:
    """Serialise `data` in the style of `original_text` (or 2-space JSON with a newline for new files)."""
    style = detect_style(original_text) if original_text else DEFAULT_STYLE
    return style.dumps(data)


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values: true is not 1, 1 is not 1.0, key order does not count."""
    if a is b:
        return True
    if a != b:
        return False
    if repr(a) == repr(b):  # == says True == 1 == 1.0; repr tells them apart (both at C speed)
        return True
    if isinstance(a, dict) and isinstance(b, dict):  # equal but written in another key order
        return all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and repr(a) == repr(b)


def edit_json(text: str, new_data: Any, *, allow_comments: bool = False) -> str:
    """`text` changed so that it parses to `new_data`, rewriting only the values that differ.

    Raises jsonc.JsonSyntaxError when `text` does not parse (callers parse it first and report errors)."""
    document = jsonc.parse(text, jsonc=allow_comments, focus=())
    if document.root is None:
        return _fresh(text, new_data, keep_comments=True)
    old = document.root.value
    if same(old, new_data):
        return text
    if document.root.kind != "scalar" and not document.root.entries and isinstance(new_data, (dict, list)) and \
            re.sub(r"[\ufeff \t\r\n]", "", text) in ("{}", "[]"):
        return _fresh(text, new_data)  # nothing of the user's to keep: write it like a new file
    ops: list[tuple] = []
    diff(old, new_data, (), ops)
    splicer = Splicer(text, allow_comments, detect_style(text), newline_of(text))
    try:
        for op in ops:
            splicer.apply(op)
        if same(_value_of(splicer.text, allow_comments), new_data):
            return splicer.text
    except (jsonc.JsonSyntaxError, ValueError, KeyError, IndexError, AssertionError, RecursionError):
        pass
    # A splice that went wrong is a bug (the property tests look for them); the data must still be right.
    return dumps_like(new_data, text)


def _value_of(text: str, allow_comments: bool) -> Any:
    if allow_comments:
        root = jsonc.parse(text, jsonc=True).root
        return None if root is None else root.value
    return json.loads(text[1:] if text.startswith("\ufeff") else text)


def _fresh(text: str, data: Any, *, keep_comments: bool = False) -> str:
    """A file with no value yet (or only `{}`): written like a new file, keeping its BOM, line endings, final
    newline and (JSONC) comments."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    rest = text[len(bom):]
    body = endings_like(DEFAULT_STYLE.dumps(data), rest)
    comments = rest.rstrip() if keep_comments else ""  # a JSONC file holding only comments keeps them on top
    return bom + (comments + newline_of(text) if comments else "") + body


def diff(old: Any, new: Any, path: tuple, ops: list[tuple]) -> None:
    """The edits that turn `old` into `new`: ("set", path, value), ("delete", path),
    ("insert", object path, key, value, key it follows or None), ("append", array path, value)."""
    if isinstance(old, (dict, list)) and same(old, new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        ops.extend(("delete", path + (key,)) for key in old if key not in new)
        previous = None
        for key, value in new.items():
            if key in old:
                diff(old[key], value, path + (key,), ops)
            else:
                ops.append(("insert", path, key, value, previous))
            previous = key
    elif isinstance(old, list) and isinstance(new, list):
        if len(new) == len(old):
            for index, (before, after) in enumerate(zip(old, new, strict=True)):
                diff(before, after, path + (index,), ops)
        elif len(new) > len(old) and all(same(a, b) for a, b in zip(old, new, strict=False)):
            ops.extend(("append", path, value) for value in new[len(old):])
        elif (removed := _removed(old, new)) is not None:
            ops.extend(("delete", path + (index,)) for index in reversed(removed))
        else:
            ops.append(("set", path, new))
    elif not same(old, new):
        ops.append(("set", path, new))


def _removed(old: list, new: list) -> list[int] | None:
    """The indices of `old` whose removal leaves `new`, if `new` is `old` with some elements taken out."""
    removed, at = [], 0
    for index, value in enumerate(old):
        if at < len(new) and same(value, new[at]):
            at += 1
        else:
            removed.append(index)
    return removed if at == len(new) else None
