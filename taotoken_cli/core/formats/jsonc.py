"""A concrete-syntax parser for JSON and JSONC: the values, and where each one is in the text.

`parse(text, jsonc=...)` returns the root `Node`; every node knows its span in the source, every object
member its key span and the position of the comma after it, so `jsonedit` can change one value by
splicing the text and leave every other byte (comments, number spellings, escapes, spacing, line
endings) as the user wrote it. Strict JSON is what Claude Code, Codex, Cline and CC Switch read
(JSON.parse / serde_json reject comments); JSONC (comments `//` and `/* */`, trailing commas) is
VS Code's settings.json.

Scalars are decoded with the json module, so escapes and numbers mean exactly what `json.loads` says;
NaN/Infinity (not JSON) are rejected. Duplicate keys: the last one wins, as in json.loads and JSON.parse.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from taotoken_cli.core.base.i18n import N_, _

_WS = re.compile(r"[ \t\n\r]*")
_TRIVIA = re.compile(r"(?:[ \t\n\r]+|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
_STRING = re.compile(r'"[^"\\\x00-\x1f]*(?:\\.[^"\\\x00-\x1f]*)*"', re.DOTALL)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
MAX_DEPTH = 500


class JsonSyntaxError(ValueError):
    """Where the text stops being JSON: `pos` (0-based offset), `line` and `column` (1-based)."""

    def __init__(self, message: str, text: str, pos: int) -> None:
        self.msg = message
        self.pos = pos
        self.line = text.count("\n", 0, pos) + 1
        self.column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        super().__init__(f"{message}: line {self.line} column {self.column}")


@dataclass
class Entry:
    """An object member or an array element."""

    start: int  # the key's opening quote (members) or the value's start (elements)
    value: Node
    key: str | None = None
    key_end: int | None = None  # just after the key's closing quote
    comma: int | None = None  # offset of the comma that follows the value, if any


@dataclass
class Node:
    """A value: "object", "array" or "scalar", with its span [start, end) and decoded value."""

    kind: str
    start: int
    end: int
    value: Any = None
    entries: list[Entry] = field(default_factory=list)

    def member(self, key: str) -> Entry | None:
        """The member that counts (the last one with this key)."""
        found = None
        for entry in self.entries:
            if entry.key == key:
                found = entry
        return found


@dataclass
class Document:
    text: str
    root: Node | None  # None: no value at all (an empty JSONC file, or only comments)
    jsonc: bool

    @property
    def value(self) -> Any:
        return None if self.root is None else self.root.value


def parse(text: str, *, jsonc: bool = False, focus: tuple | None = None) -> Document:
    """Parse `text` (a leading BOM is skipped). Raises JsonSyntaxError with the position of the problem.

    With `focus` (a path of keys and indices), strict JSON is parsed in detail only along that path: the
    containers on it get their entries, every other value is one node decoded by the json module's C scanner
    (an edit of a 5 MB ~/.claude.json then takes a tenth of a second, not seconds)."""
    parser = _Parser(text, jsonc, None if jsonc else focus)
    return Document(text, parser.document(), jsonc)


def _no_constants(name: str) -> None:
    raise ValueError(_("{word} is not JSON").format(word=name))


_DECODER = json.JSONDecoder(parse_constant=_no_constants)

# The messages of Python's json module (it gives the position apart), shown in the user's language.
_JSON_MODULE_MESSAGES = frozenset((
    N_("Expecting value"), N_("Expecting property name enclosed in double quotes"), N_("Expecting ':' delimiter"),
    N_("Expecting ',' delimiter"), N_("Unterminated string starting at"), N_("Invalid control character at"),
    N_("Invalid \\escape"), N_("Invalid \\uXXXX escape"), N_("Extra data"),
    N_("Illegal trailing comma before end of object"), N_("Illegal trailing comma before end of array"),
))


def json_message(message: str) -> str:
    """A message of Python's json module in the user's language (one this table lacks as it is)."""
    return _(message) if message in _JSON_MODULE_MESSAGES else message


class _Parser:
    def __init__(self, text: str, jsonc: bool, focus: tuple | None = None) -> None:
        self.text = text
        self.jsonc = jsonc
        self.focus = focus
        self.pos = 1 if text.startswith("\ufeff") else 0

    def error(self, message: str, pos: int | None = None) -> JsonSyntaxError:
        return JsonSyntaxError(message, self.text, self.pos if pos is None else pos)

    def skip(self) -> None:
        if self.jsonc:
            end = _TRIVIA.match(self.text, self.pos).end()
            if self.text.startswith("/*", end):
                raise self.error(_("unterminated /* comment */"), end)
        else:
            end = _WS.match(self.text, self.pos).end()
            if self.text.startswith(("//", "/*"), end):
                raise self.error(_("comments are not allowed in JSON"), end)
        self.pos = end

    def document(self) -> Node | None:
        self.skip()
        if self.pos == len(self.text) and self.jsonc:
            return None
        try:
            root = self.value(0, ())
        except RecursionError:
            raise self.error(_("nested too deeply")) from None
        self.skip()
        if self.pos != len(self.text):
            raise self.error(_("extra data after the JSON value"))
        return root

    def value(self, depth: int, path: tuple) -> Node:
        if depth > MAX_DEPTH:
            raise self.error(_("nested too deeply"))
        text, start = self.text, self.pos
        char = text[start:start + 1]
        if self.focus is not None and path != self.focus[:len(path)] and char in ("{", "["):
            return self.skipped(start)
        if char == "{":
            return self.container(depth, path, "object", "}")
        if char == "[":
            return self.container(depth, path, "array", "]")
        if char == '"':
            return self.scalar(self.string_end(start))
        match = _NUMBER.match(text, start)
        if match is not None and match.end() > start:
            return self.scalar(match.end())
        for word in _LITERALS:
            if text.startswith(word, start):
                return self.scalar(start + len(word))
        raise self.error(_("expected a value") if char else _("unexpected end of text"))

    def string_end(self, start: int) -> int:
        match = _STRING.match(self.text, start)
        if match is None:
            raise self.error(_("unterminated string, or a control character (a raw newline or tab) inside one"))
        return match.end()

    def scalar(self, end: int) -> Node:
        start, self.pos = self.pos, end
        raw = self.text[start:end]
        try:
            value = _LITERALS[raw] if raw in _LITERALS else json.loads(raw)
        except ValueError:
            raise self.error(_("invalid escape in string"), start) from None
        return Node("scalar", start, end, value)

    def skipped(self, start: int) -> Node:
        """A container off the focus path: decoded in one go, its span known, its entries not listed."""
        try:
            value, end = _DECODER.raw_decode(self.text, start)
        except ValueError as exc:
            raise self.error(json_message(str(exc).split(":")[0]), getattr(exc, "pos", start)) from None
        self.pos = end
        return Node("object" if isinstance(value, dict) else "array", start, end, value)

    def container(self, depth: int, path: tuple, kind: str, close: str) -> Node:
        text, start = self.text, self.pos
        node = Node(kind, start, start, {} if kind == "object" else [])
        self.pos += 1
        self.skip()
        while text[self.pos:self.pos + 1] != close:
            if kind == "object":
                entry = self.member(depth, path)
            else:
                entry = Entry(self.pos, self.value(depth + 1, path + (len(node.entries),)))
            node.entries.append(entry)
            if kind == "object":
                node.value[entry.key] = entry.value.value
            else:
                node.value.append(entry.value.value)
            self.skip()
            char = text[self.pos:self.pos + 1]
            if char == ",":
                entry.comma = self.pos
                self.pos += 1
                self.skip()
                if text[self.pos:self.pos + 1] == close and not self.jsonc:
                    raise self.error(_("trailing comma (not allowed in JSON)"), entry.comma)
            elif char != close:
                raise self.error(_("expected ',' or '{close}'").format(close=close) if char
                                 else _("unexpected end of text"))
        self.pos += 1
        node.end = self.pos
        return node

    def member(self, depth: int, path: tuple) -> Entry:
        start = self.pos
        if self.text[start:start + 1] != '"':
            raise self.error(_("expected a \"key\" in double quotes"))
        key = self.scalar(self.string_end(start))
        self.skip()
        if self.text[self.pos:self.pos + 1] != ":":
            raise self.error(_("expected ':' after the key"))
        self.pos += 1
        self.skip()
        return Entry(start, self.value(depth + 1, path + (key.value,)), key.value, key.end)

