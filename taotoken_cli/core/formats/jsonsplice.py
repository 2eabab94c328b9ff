"""The text splices behind `jsonedit.edit_json`: set, delete and insert one member or element of a JSON/JSONC
text, copying the style around it (indentation of the siblings, `"key": value` spacing, the gap after commas,
a trailing comma, CRLF) and touching no other byte.

Each operation re-parses the current text (`jsonc.parse`), so positions are always exact; files are small and
an edit is a handful of operations.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from taotoken_cli.core.formats import jsonc


class Style(Protocol):
    """How the file writes new text (jsonedit.JsonStyle)."""

    indent: str | None  # the indent unit, or None for a file on one line
    ensure_ascii: bool

    @property
    def separators(self) -> tuple[str, str]: ...


_COLON = re.compile(r"[ \t]*:[ \t]*")
_INLINE_GAP = re.compile(r"[ \t]*")


class Splicer:
    def __init__(self, text: str, allow_comments: bool, style: Style, newline: str) -> None:
        self.text = text
        self.allow_comments = allow_comments
        self.style = style
        self.newline = newline
        self.unit = style.indent or "  "

    # -------------------------------------------------------------------------------------------- operations

    def parse(self, focus: tuple) -> jsonc.Node:
        root = jsonc.parse(self.text, jsonc=self.allow_comments, focus=focus).root
        assert root is not None
        return root

    def apply(self, op: tuple) -> None:
        kind, path = op[0], op[1]
        root = self.parse(path[:-1] if kind in ("set", "delete") and path else path)
        if kind == "set":
            self.set(root, path, op[2])
        elif kind == "delete":
            self.delete(root, path)
        else:
            parent = _locate(root, path)
            if kind == "insert":
                key, value, after = op[2], op[3], op[4]
                index = 0 if after is None else parent.entries.index(parent.member(after)) + 1
            else:
                key, value, index = None, op[2], len(parent.entries)
            self.insert(parent, index, key, value)

    def set(self, root: jsonc.Node, path: tuple, value: Any) -> None:
        if not path:
            self.splice(root.start, root.end, self.render(value, self.line_indent(root.start)))
            return
        entry = _entry(_locate(root, path[:-1]), path[-1])
        assert entry is not None
        indent = self.line_indent(entry.start, own_line=True) if self.style.indent is not None else None
        self.splice(entry.value.start, entry.value.end, self.render(value, indent))

    def delete(self, root: jsonc.Node, path: tuple) -> None:
        parent = _locate(root, path[:-1])
        entry = _entry(parent, path[-1])
        while entry is not None:  # a key written twice: every copy goes, or the other one would count
            self.remove(parent, parent.entries.index(entry))
            if isinstance(path[-1], int):
                return
            parent = _locate(self.parse(path[:-1]), path[:-1])
            entry = parent.member(path[-1])

    # --------------------------------------------------------------------------------------------- insertion

    def insert(self, node: jsonc.Node, index: int, key: str | None, value: Any) -> None:
        entries = node.entries
        if not entries:
            self.insert_into_empty(node, key, value)
            return
        sibling = entries[index - 1] if index > 0 else entries[0]
        indent = self.line_indent(sibling.start, own_line=True)
        if indent is not None and not self.on_one_line(sibling.start, node.end):
            text = self.member_text(node, key, value, indent)
            if index > 0:
                if self.insert_after_line(sibling, text, trailing=sibling.comma is not None):
                    return
            else:
                at = self.end_of_line_trivia(node.start + 1)
                if self.at_line_end(at):
                    self.splice(at, at, self.newline + indent + text + ",")
                    return
        text = self.member_text(node, key, value, None)
        gap = self.inline_gap(node)
        if index == 0:
            self.splice(sibling.start, sibling.start, text + "," + gap)
        elif sibling.comma is not None:
            self.splice(sibling.comma + 1, sibling.comma + 1, gap + text + ",")  # the next entry, or a trailing comma
        else:
            self.splice(sibling.value.end, sibling.value.end, "," + gap + text)

    def insert_after_line(self, sibling: jsonc.Entry, text: str, *, trailing: bool) -> bool:
        """Put `text` on a new line after `sibling`'s line (after a comment ending that line); False when the
        line goes on with something else."""
        comma = sibling.comma
        at = self.end_of_line_trivia(comma + 1 if comma is not None else sibling.value.end)
        if not self.at_line_end(at):
            return False
        indent = self.line_indent(sibling.start, own_line=True) or ""
        addition = self.newline + indent + text + ("," if trailing else "")
        if comma is None:  # the last member gets the comma the new one needs
            end = sibling.value.end
            self.text = self.text[:end] + "," + self.text[end:at] + addition + self.text[at:]
        else:
            self.splice(at, at, addition)
        return True

    def insert_into_empty(self, node: jsonc.Node, key: str | None, value: Any) -> None:
        inner_start, inner_end = node.start + 1, node.end - 1
        interior = self.text[inner_start:inner_end]
        if self.style.indent is not None and self.ends_its_line(node):
            base = self.line_indent(node.start) or ""
            indent = base + self.unit
            text = self.member_text(node, key, value, indent)
            if interior.strip(" \t\r\n"):  # comments inside: they stay after the new member
                self.splice(inner_start, inner_start, self.newline + indent + text)
            else:
                self.splice(inner_start, inner_end, self.newline + indent + text + self.newline + base)
            return
        text = self.member_text(node, key, value, None)
        if interior.strip(" \t\r\n"):
            self.splice(inner_start, inner_start, text)
        else:
            pad = " " if interior else ""
            self.splice(inner_start, inner_end, pad + text + pad)

    # ---------------------------------------------------------------------------------------------- deletion

    def remove(self, node: jsonc.Node, index: int) -> None:
        entries = node.entries
        entry = entries[index]
        start, end = entry.start, entry.value.end
        cuts: list[tuple[int, int]] = []
        if entry.comma is not None:
            end = entry.comma + 1
        elif index > 0:
            comma = entries[index - 1].comma
            assert comma is not None
            if self.text[comma + 1:start].strip(" \t\r\n") or self.line_indent(start, own_line=True) is not None:
                cuts.append((comma, comma + 1))  # the comma only: a comment between stays, or the line goes below
            else:
                start = comma
        after = _INLINE_GAP.match(self.text, end).end()
        line_start = self.text.rfind("\n", 0, start) + 1
        if self.line_indent(start, own_line=True) is not None and self.at_line_end(after):
            start, end = line_start, self.past_newline(after)
        elif entry.comma is not None:
            end = after
        cuts.append((start, end))
        for cut_start, cut_end in sorted(cuts, reverse=True):
            self.splice(cut_start, cut_end, "")
        if len(entries) == 1:
            node_end = node.end - sum(b - a for a, b in cuts)
            interior = self.text[node.start + 1:node_end - 1]
            if not interior.strip(" \t\r\n"):
                self.splice(node.start + 1, node_end - 1, "")  # {} rather than a brace pair with a blank line

    # ------------------------------------------------------------------------------------------------ render

    def render(self, value: Any, indent: str | None, colon: str | None = None) -> str:
        """`value` as JSON text in the file's style: several lines at `indent`, or one line (indent None);
        nested members get `colon` between key and value."""
        ascii_only = self.style.ensure_ascii
        comma, colon = self.style.separators[0], colon or self.style.separators[1]
        if indent is None or not isinstance(value, (dict, list)) or not value:
            return json.dumps(value, ensure_ascii=ascii_only, separators=(comma, colon))
        text = json.dumps(value, indent=self.unit, ensure_ascii=ascii_only, separators=(",", colon))
        return text.replace("\n", self.newline + indent)

    def member_text(self, node: jsonc.Node, key: str | None, value: Any, indent: str | None) -> str:
        colon = self.colon(node)
        rendered = self.render(value, indent, colon)
        if key is None:
            return rendered
        return json.dumps(key, ensure_ascii=self.style.ensure_ascii) + colon + rendered

    def colon(self, node: jsonc.Node) -> str:
        for entry in node.entries:
            gap = self.text[entry.key_end:entry.value.start] if entry.key_end is not None else ""
            if _COLON.fullmatch(gap):
                return gap
        return self.style.separators[1]

    def inline_gap(self, node: jsonc.Node) -> str:
        """What follows the commas between this container's entries on one line (" " or "")."""
        for entry, following in zip(node.entries, node.entries[1:], strict=False):
            if entry.comma is not None:
                gap = self.text[entry.comma + 1:following.start]
                if _INLINE_GAP.fullmatch(gap):
                    return gap
        return self.style.separators[0][1:]

    # -------------------------------------------------------------------------------------------------- text

    def splice(self, start: int, end: int, new: str) -> None:
        self.text = self.text[:start] + new + self.text[end:]

    def line_indent(self, pos: int, *, own_line: bool = False) -> str | None:
        """The whitespace that starts `pos`'s line; with `own_line`, None unless only whitespace precedes `pos`."""
        line_start = self.text.rfind("\n", 0, pos) + 1
        if line_start == 0 and self.text.startswith("\ufeff"):
            line_start = 1
        before = self.text[line_start:pos]
        lead = before[:len(before) - len(before.lstrip(" \t"))]
        if own_line and lead != before:
            return None
        return lead

    def on_one_line(self, start: int, end: int) -> bool:
        return "\n" not in self.text[start:end]

    def end_of_line_trivia(self, pos: int) -> int:
        """Past spaces and comments that end on this line (not past the line break)."""
        text = self.text
        while True:
            pos = _INLINE_GAP.match(text, pos).end()
            if text.startswith("//", pos):
                newline = text.find("\n", pos)
                pos = len(text) if newline < 0 else newline - (1 if text[newline - 1] == "\r" else 0)
            elif text.startswith("/*", pos):
                close = text.find("*/", pos + 2)
                if close < 0 or "\n" in text[pos:close]:
                    return pos
                pos = close + 2
            else:
                return pos

    def at_line_end(self, pos: int) -> bool:
        return pos == len(self.text) or self.text.startswith(("\n", "\r\n"), pos)

    def past_newline(self, pos: int) -> int:
        if self.text.startswith("\r\n", pos):
            return pos + 2
        return pos + 1 if self.text.startswith("\n", pos) else pos

    def ends_its_line(self, node: jsonc.Node) -> bool:
        """Nothing but a comma, a closing bracket or a comment follows `node` on its line."""
        at = _INLINE_GAP.match(self.text, node.end).end()
        if self.text.startswith(",", at):
            at += 1
        at = self.end_of_line_trivia(at)
        while self.text[at:at + 1] in ("}", "]") and at < len(self.text):
            at = self.end_of_line_trivia(at + 1)
            if self.text.startswith(",", at):
                at = self.end_of_line_trivia(at + 1)
        return self.at_line_end(at)


def _entry(node: jsonc.Node, step: str | int) -> jsonc.Entry | None:
    if isinstance(step, int):
        return node.entries[step] if node.kind == "array" and step < len(node.entries) else None
    return node.member(step) if node.kind == "object" else None


def _locate(root: jsonc.Node, path: tuple) -> jsonc.Node:
    node = root
    for step in path:
        entry = _entry(node, step)
        if entry is None:
            raise KeyError(step)
        node = entry.value
    return node
