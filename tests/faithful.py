"""Helpers for the byte-faithfulness property tests (tests/core/files/test_faithful.py): Hypothesis strategies
that write JSON/JSONC/TOML the way people do (comments, odd number spellings, escapes, spacing, CRLF, no final newline),
and the invariants an edit must keep (what a file says outside the values meant to change, byte for byte)."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import strategies as st

from taotoken_cli.core.formats import jsonc

# ------------------------------------------------------------------------------------------- JSON writing

NUMBERS = ["0", "-0", "7", "-12", "1e5", "1E+5", "2.50", "1.0", "-0.0", "1e-3", "6.02e23", "123456789012345678901"]
WORDS = ["x", "café", "naïve", "日本", "a/b", 'q"q', "back\\slash", "tab\there", "line\nbreak", "", "sk-not-a-key"]
KEYS = st.sampled_from(["a", "b", "model", "editor.fontSize", "permissions", "café", "x-y", "nested", "list", "z"])


def spell_string(value: str, mode: str) -> str:
    """One JSON spelling of `value`: plain, \\u escapes for non-ASCII, escapes for everything, upper-case hex."""
    if mode == "plain":
        return json.dumps(value, ensure_ascii=False)
    if mode == "ascii":
        return json.dumps(value, ensure_ascii=True)
    out = []
    for char in value:
        code = f"{ord(char):04x}" if mode == "escaped" else f"{ord(char):04X}"
        out.append(f"\\u{code}" if ord(char) < 0x10000 else json.dumps(char)[1:-1])
    return '"' + "".join(out) + '"'


@st.composite
def leaf(draw) -> tuple[str, Any]:
    """(text as written, value)."""
    kind = draw(st.sampled_from(["number", "string", "string", "literal"]))
    if kind == "number":
        raw = draw(st.sampled_from(NUMBERS))
        return raw, json.loads(raw)
    if kind == "literal":
        raw = draw(st.sampled_from(["true", "false", "null"]))
        return raw, json.loads(raw)
    value = draw(st.sampled_from(WORDS))
    return spell_string(value, draw(st.sampled_from(["plain", "plain", "ascii", "escaped", "upper"]))), value


@st.composite
def layout(draw, comments: bool) -> dict:
    """Whole-file style choices."""
    return {"newline": draw(st.sampled_from(["\n", "\r\n"])), "unit": draw(st.sampled_from(["  ", "    ", "\t"])),
            "colon": draw(st.sampled_from([": ", ":", " : "])), "final": draw(st.booleans()),
            "bom": draw(st.booleans()) and draw(st.booleans()), "comments": comments,
            "inline": draw(st.sampled_from([False, False, True]))}


class Writer:
    """Renders a tree of ("obj", [(key, node)]), ("arr", [node]) and ("leaf", raw, value) in a drawn style."""

    def __init__(self, draw, style: dict) -> None:
        self.draw, self.style = draw, style

    def comment(self) -> str:
        if not self.style["comments"] or self.draw(st.integers(0, 3)) != 0:
            return ""
        return self.draw(st.sampled_from(["/* note */ ", "/*é*/", "/* a, b: {c} */ "]))

    def line_comment(self, indent: str) -> str:
        if not self.style["comments"] or self.draw(st.integers(0, 3)) != 0:
            return ""
        return indent + self.draw(st.sampled_from(["// why", "// \"quoted\" {x}", "//"])) + self.style["newline"]

    def render(self, node: tuple, indent: str = "", inline: bool = False) -> str:
        if node[0] == "leaf":
            return node[1]
        items = node[1]
        open_, close = ("{", "}") if node[0] == "obj" else ("[", "]")
        parts = [self.part(node[0], item) for item in items]
        trailing = bool(items) and self.style["comments"] and self.draw(st.booleans())
        if not items:
            return open_ + self.draw(st.sampled_from(["", " "])) + close
        if inline or self.style["inline"] or self.draw(st.integers(0, 5)) == 0:
            gap = self.draw(st.sampled_from([", ", ","]))
            body = gap.join(self.comment() + self.render_part(p, indent, True) for p in parts)
            return open_ + body + ("," if trailing else "") + close
        nl, inner = self.style["newline"], indent + self.style["unit"]
        lines = []
        for index, part in enumerate(parts):
            comma = "," if index < len(parts) - 1 or trailing else ""
            after = self.draw(st.sampled_from(["", "", " /* n */", " // end"])) if self.style["comments"] else ""
            lines.append(self.line_comment(inner) + inner + self.render_part(part, inner, False) + comma + after)
        return open_ + nl + nl.join(lines) + nl + indent + close

    def part(self, kind: str, item) -> tuple:
        return ("member", item[0], item[1]) if kind == "obj" else ("element", None, item)

    def render_part(self, part: tuple, indent: str, inline: bool) -> str:
        _, key, node = part
        value = self.render(node, indent, inline)
        if key is None:
            return value
        spelled = spell_string(key, self.draw(st.sampled_from(["plain", "plain", "ascii"])))
        return spelled + self.style["colon"] + value

    def document(self, node: tuple) -> str:
        text = self.line_comment("") + self.render(node)
        text += self.style["newline"] if self.style["final"] else ""
        return ("\ufeff" if self.style["bom"] else "") + text


def tree(value: Any, draw) -> tuple:
    """A tree for Writer from plain data; strings and numbers get a drawn spelling."""
    if isinstance(value, dict):
        return ("obj", [(k, tree(v, draw)) for k, v in value.items()])
    if isinstance(value, list):
        return ("arr", [tree(v, draw) for v in value])
    if isinstance(value, str):
        return ("leaf", spell_string(value, draw(st.sampled_from(["plain", "ascii", "escaped"]))), value)
    return ("leaf", json.dumps(value), value)


@st.composite
def extra_tree(draw, depth: int = 2) -> tuple:
    """Unrelated content a user keeps in the file: nested objects and arrays with odd leaves."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        raw, value = draw(leaf())
        return ("leaf", raw, value)
    if draw(st.booleans()):
        keys = draw(st.lists(KEYS, max_size=3, unique=True))
        return ("obj", [(k, draw(extra_tree(depth - 1))) for k in keys])
    return ("arr", [draw(extra_tree(depth - 1)) for _ in range(draw(st.integers(0, 3)))])


# ------------------------------------------------------------------------------------------- invariants

_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/', re.DOTALL)


def comments(text: str) -> list[str]:
    return [m.group(0).rstrip("\r") for m in _COMMENT_OR_STRING.finditer(text) if not m.group(0).startswith('"')]


def spans(text: str, allow_comments: bool) -> dict[tuple, tuple[str, str, str]]:
    """path -> (indentation before it on its line, key as written, value as written) for every entry."""
    found: dict[tuple, tuple[str, str, str]] = {}
    root = jsonc.parse(text, jsonc=allow_comments).root

    def walk(node, path: tuple) -> None:
        for index, entry in enumerate(node.entries):
            sub = path + ((entry.key,) if node.kind == "object" else (index,))
            line_start = text.rfind("\n", 0, entry.start) + 1
            lead = text[line_start:entry.start]
            indent = lead if not lead.strip(" \t\ufeff") else ""
            key = text[entry.start:entry.key_end] if entry.key_end is not None else ""
            value = text[entry.value.start:entry.value.end] if entry.value.kind == "scalar" else entry.value.kind
            found[sub] = (indent, key, value)
            walk(entry.value, sub)

    if root is not None:
        walk(root, ())
    return found


def under(path: tuple, prefixes: list[tuple]) -> bool:
    return any(path[:len(p)] == p for p in prefixes)


def assert_faithful(before: str, after: str, intended: list[tuple], allow_comments: bool = False) -> None:
    """Everything of `before` outside the `intended` paths is in `after` as written: every other entry with its
    key, value text and indentation, every comment in order, the line endings, the BOM, a final newline or not."""
    old, new = spans(before, allow_comments), spans(after, allow_comments)
    for path, written in old.items():
        if under(path, intended):
            continue
        assert path in new, (path, before, after)
        if isinstance(path[-1], int) and any(under(p, [path[:-1]]) for p in intended):
            continue  # an element of an array that had elements removed: positions moved
        assert new[path] == written, (path, written, new[path], before, after)
    assert comments(before) == comments(after), (before, after)
    assert after.startswith("\ufeff") == before.startswith("\ufeff")
    assert after.endswith("\n") == before.endswith("\n")
    if "\n" in before and before.count("\r\n") == before.count("\n"):
        assert after.count("\r\n") == after.count("\n"), after
    if "\r" not in before:
        assert "\r" not in after


# ------------------------------------------------------------------------------------------- TOML writing

TOML_VALUES = ["1", "1_000", "0x1F", "+5", "1e5", "6.02E23", "-0.0", "true", '"caf\\u00e9"', '"café"', "'literal \\ x'",
               '"a \\"quoted\\" b"', "[1, 2, ]", "[ 'a' ,'b' ]", "1979-05-27T07:32:00Z", '""']
TOML_KEYS = ["a", "b", "model_reasoning_effort", "approval_policy", "\"quoted key\"", "x-y"]


@st.composite
def toml_document(draw, provider: str | None) -> str:
    """A config.toml in a drawn style: root keys, tables, an inline table, comments everywhere, CRLF or not,
    a final newline or not; `provider` plants [model_providers.<provider>] (or an inline table of it)."""
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    spacing = draw(st.sampled_from([" = ", "=", "  =  "]))

    def comment(prefix: str = "") -> str:
        return prefix + draw(st.sampled_from(["# note", "#", "# é = [x]", "#  spaced"])) if draw(st.booleans()) else ""

    def pairs(count: int) -> list[str]:
        keys = draw(st.lists(st.sampled_from(TOML_KEYS), max_size=count, unique=True))
        return [k + spacing + draw(st.sampled_from(TOML_VALUES)) + comment("  ") for k in keys]

    lines = [c for c in [comment()] if c] + pairs(3)
    if draw(st.booleans()):
        lines.append("inline" + spacing + draw(st.sampled_from(["{ a = 1, b = 'x' }", "{a=1,b='x'}", "{}"])))
    for name in draw(st.lists(st.sampled_from(["tools", "features", "mcp_servers.docs"]), max_size=2, unique=True)):
        lines += [""] + [c for c in [comment()] if c] + [f"[{name}]" + comment("  ")] + pairs(2)
    if provider is not None:
        body = [f'name{spacing}"Old"', f'base_url{spacing}"https://old.example/v1"', f'env_key{spacing}"OLD_KEY"',
                f'wire_api{spacing}"chat"']
        if draw(st.booleans()):
            lines += ["", f"[model_providers.{provider}]" + comment("  ")] + [line + comment("  ") for line in body]
        else:
            lines += ["", "[model_providers]", f"{provider}{spacing}{{ " + ", ".join(body[:2]) + " }"]
    text = nl.join(lines)
    return text + (nl if draw(st.booleans()) else "")


def toml_leaves(text: str) -> dict[tuple, str]:
    """path -> the value as written, for every key (tables and inline tables walked)."""
    import tomlkit
    from tomlkit.items import InlineTable, Table

    found: dict[tuple, str] = {}

    def walk(container, path: tuple) -> None:
        body = container.value if isinstance(container, (Table, InlineTable)) else container
        for key in list(body.keys()):
            item, sub = body.item(key), path + (key,)
            if isinstance(item, (Table, InlineTable, dict)):
                walk(item, sub)
            else:
                found[sub] = item.as_string()

    walk(tomlkit.parse(text), ())
    return found


def toml_comments(text: str) -> list[str]:
    return [m.group(0).rstrip("\r") for m in re.finditer(r"#[^\n]*", text)]


def assert_toml_faithful(before: str, after: str, intended: list[tuple]) -> None:
    old, new = toml_leaves(before), toml_leaves(after)
    for path, written in old.items():
        if not under(path, intended):
            assert new.get(path) == written, (path, written, new.get(path), before, after)
    assert toml_comments(before) == [c for c in toml_comments(after) if c in toml_comments(before)], (before, after)
    if before.strip():
        assert after.endswith("\n") == before.endswith("\n"), (before, after)
    if "\n" in before and before.count("\r\n") == before.count("\n"):
        assert after.count("\r\n") == after.count("\n"), after
    if "\r" not in before:
        assert "\r" not in after
