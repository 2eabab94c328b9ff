"""Editing users' TOML files (Codex's config.toml, taotoken's own) so that only the values we mean change.

tomlkit keeps comments, order and spelling of what it does not touch. Where it does not, these helpers do:
- `dumps(doc, original)`: tomlkit writes new lines with LF and ends the file with a newline; a CRLF file
  keeps CRLF and a file without a final newline stays without one.
- `set_in` / `remove_in` (a path from the document root): a new root key goes right after the last root
  key, not under a comment that belongs to the first table; an inline table (`p = { a = 1, b = 2 }`) is
  rewritten in its own spacing (tomlkit drops the blank before `}` and the one after a new comma); a key
  removed from a table leaves the comment that was on its line, on a line of its own.
- `table_text(doc, path)`: a table's body as a document of its own (the legacy Codex profile that
  `doctor --fix` moves into `<name>.config.toml`), comments and sub-tables included.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from taotoken_cli.core.files.fsutil import endings_like


def dumps(doc: Any, original: str) -> str:
    """tomlkit's text of `doc`, with the line endings of `original`, its (missing) final newline and its byte-order
    mark (Windows editors write one; parse_toml_doc reads past it)."""
    import tomlkit

    bom = "\ufeff" if original.startswith("\ufeff") else ""
    return bom + endings_like(tomlkit.dumps(doc), original.removeprefix("\ufeff")).removeprefix("\ufeff")


def _is_inline(item: Any) -> bool:
    from tomlkit.items import InlineTable

    return isinstance(item, InlineTable)


def set_in(doc: Any, path: tuple[str, ...], value: Any) -> None:
    """doc[path[0]]...[path[-1]] = value, creating tables on the way (inline ones inside an inline table)."""
    import tomlkit

    parent = doc
    for depth, step in enumerate(path[:-1]):
        child = parent.get(step)
        if _is_inline(child):
            _set_inline(parent, step, path[depth + 1:], value)
            return
        if child is None:
            child = tomlkit.table(is_super_table=depth < len(path) - 2)
            _add(parent, step, child)
            child = parent[step]
        parent = child
    key = path[-1]
    if key in parent:
        parent[key] = value
    else:
        _add(parent, key, value)


def remove_in(doc: Any, path: tuple[str, ...]) -> None:
    """Delete doc[path...] if present; the comment on its line stays (on a line of its own)."""
    parent = doc
    for depth, step in enumerate(path[:-1]):
        child = parent.get(step)
        if child is None:
            return
        if _is_inline(child):
            _remove_inline(parent, step, path[depth + 1:])
            return
        parent = child
    key = path[-1]
    if key in parent:
        _remove_keeping_comment(parent, key)


def _add(parent: Any, key: str, value: Any) -> None:
    """A new key: a root value goes after the last root value (tomlkit would put it after a comment that
    introduces the first table); everything else where tomlkit puts it."""
    from tomlkit import TOMLDocument
    from tomlkit.items import AoT, Table

    if isinstance(parent, TOMLDocument) and not isinstance(value, (Table, AoT, Mapping)):
        last = [i for i, (k, v) in enumerate(parent.body) if k is not None and not isinstance(v, (Table, AoT))]
        if last:
            try:
                # tomlkit has no public insert; _insert_at is there from 0.11 to 0.15 (_insert_after is gone in 0.15)
                parent._insert_at(last[-1] + 1, key, value)  # noqa: SLF001
                return
            except (AttributeError, KeyError, TypeError, ValueError):
                pass
    parent[key] = value


def _remove_keeping_comment(parent: Any, key: str) -> None:
    from tomlkit.items import Comment, Table, Trivia

    container = parent.value if isinstance(parent, Table) else parent
    item = container.item(key)
    comment = getattr(getattr(item, "trivia", None), "comment", "")
    index = getattr(container, "_map", {}).get(key) if comment else None
    del parent[key]
    if isinstance(index, int):
        with contextlib.suppress(AttributeError, IndexError, TypeError):  # another tomlkit: the comment goes
            container._body[index] = (None, Comment(Trivia(indent=item.trivia.indent, comment_ws="",  # noqa: SLF001
                                                           comment=comment, trail=item.trivia.trail or "\n")))


# -------------------------------------------------------------------------------------------- inline tables

def _set_inline(parent: Any, name: str, rest: tuple[str, ...], value: Any) -> None:
    original = parent[name]
    data = original.unwrap()
    node = data
    for step in rest[:-1]:
        node = node.setdefault(step, {})
    node[rest[-1]] = _plain(value)
    _replace_inline(parent, name, original, data)


def _remove_inline(parent: Any, name: str, rest: tuple[str, ...]) -> None:
    original = parent[name]
    data = original.unwrap()
    node = data
    for step in rest[:-1]:
        node = node.get(step)
        if not isinstance(node, dict):
            return
    if rest[-1] in node:
        del node[rest[-1]]
        _replace_inline(parent, name, original, data)


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def _replace_inline(parent: Any, name: str, original: Any, data: dict) -> None:
    import tomlkit

    text = inline_text(original, data)
    parent[name] = tomlkit.parse(f"x = {text}")["x"]


def inline_text(original: Any, data: dict, style: tuple[str, str, str, str] | None = None) -> str:
    """`data` as an inline table written like `original`: its padding inside the braces, its gap after
    commas, its `k = v` or `k=v`, a trailing comma; unchanged entries keep their exact text. A new inline
    table inside one is written in the `style` of the one around it."""
    import tomlkit

    body = list(original.value.body) if original is not None else []
    entries = {k.key: (k, v) for k, v in body if k is not None}
    if any(k.is_dotted() for k, _ in entries.values()):
        rebuilt = tomlkit.inline_table()
        rebuilt.update(data)
        return rebuilt.as_string()
    left, right, gap, equals, trailing = _inline_style(body, entries) if original is not None else \
        (*(style or ("", "", " ", " = ")), False)
    parts = []
    for key, value in data.items():
        old = entries[key][1] if key in entries else None
        if old is not None and _plain(old) == value and type(_plain(old)) is type(value):
            k = entries[key][0]
            parts.append(f"{k.as_string()}{k.sep}{old.as_string()}")
            continue
        if isinstance(value, dict):
            rendered = inline_text(old if _is_inline(old) else None, value, (left, right, gap, equals))
        else:
            rendered = tomlkit.item(value).as_string()
        parts.append(f"{tomlkit.key(key).as_string()}{equals}{rendered}")
    if not parts:
        return "{" + left + "}"
    return "{" + left + ("," + gap).join(parts) + ("," if trailing else "") + right + "}"


def _inline_style(body: list, entries: dict) -> tuple[str, str, str, str, bool]:
    """(space after `{`, space before `}`, space after a comma, `=` with its spaces, trailing comma)."""
    from tomlkit.items import Whitespace

    def space(index: int) -> str | None:
        item = body[index][1] if -len(body) <= index < len(body) else None
        return item.s if isinstance(item, Whitespace) else None

    if len(body) == 1 and space(0) is not None and "," not in (space(0) or ""):
        left = right = space(0) or ""  # `{ }`
        trailing = False
    else:
        left = space(0) if space(0) and "," not in (space(0) or "") else ""
        right = space(-1) if space(-1) and "," not in (space(-1) or "") else ""
        trailing = "," in (space(-1) or "") or bool(right and "," in (space(-2) or ""))
    equals = " = "
    for k, _ in entries.values():
        text = k.as_string()
        equals = text[len(text.rstrip()):] + k.sep
        break
    spaces = [v.s for _, v in body if isinstance(v, Whitespace)]
    gaps = [spaces[i + 1] for i, s in enumerate(spaces[:-1]) if s == ","]
    gap = gaps[0] if gaps and "," not in gaps[0] else (" " if left or equals != "=" else "")
    return left or "", right or "", gap, equals, trailing


# ---------------------------------------------------------------------------------------------- move a table

def table_text(doc: Any, path: tuple[str, ...]) -> str:
    """The body of the table at `path` as a document of its own: its keys, its comments and blank lines,
    and its sub-tables with the `path` prefix taken off their headers."""
    import tomlkit

    table = doc
    for step in path:
        table = table[step]
    out = tomlkit.document()
    for key, item in table.value.body:
        if key is None:
            out.add(item)
        else:
            out.append(key, item)
    return tomlkit.dumps(out)
