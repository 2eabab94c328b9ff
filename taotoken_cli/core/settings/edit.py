"""Editing the text of taotoken's own config file: `render_config_update` (tomlkit keeps comments, order and
layout). Planning a change over every copy of the triple is `config.update`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from taotoken_cli.core.base.errors import ConfigFileError, InputError
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.formats.tomlerrors import toml_message

_PROFILE_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def validate_profile_name(name: str) -> str:
    if not _PROFILE_NAME_RE.match(name):
        raise InputError(_("profile name {name} is not allowed").format(name=repr(name)),
                         _("use letters, digits, '.', '_' or '-' (at most 64 characters)"))
    return name


SETTABLE_KEYS = ("base_url", "api_key", "model", "default_profile", "lang")
TOP_LEVEL_KEYS = ("default_profile", "lang")  # settings of the file, not of a profile


def _apply(doc, path: tuple[str, ...], updates: Mapping[str, str | None]) -> None:
    """Set each key of the table at `path` to its value; None removes it (a comment on its line stays)."""
    from taotoken_cli.core.formats import tomledit

    for key, value in updates.items():
        if value is not None:
            tomledit.set_in(doc, (*path, key), value)
        else:
            tomledit.remove_in(doc, (*path, key))


def render_config_update(current_text: str, path: Path, profile: str, updates: Mapping[str, str | None],
                         routes: Mapping[str, str | None] | None = None,
                         default_profile: str | None = None, top: Mapping[str, str | None] | None = None) -> str:
    """Return the config file text with `updates` applied to [profiles.<profile>] (and `top` to the file's own
    settings, such as `lang`).

    tomlkit keeps comments, order and formatting of everything else (tomledit: line endings, a missing final
    newline, inline tables). A value of None removes the key. Input is expected to be cleaned already (see
    `clean_value`).
    """
    import tomlkit
    from tomlkit.exceptions import ParseError

    from taotoken_cli.core.formats import tomledit

    try:
        doc = tomlkit.parse(current_text.removeprefix("\ufeff")) if current_text.strip() else tomlkit.document()
    except ParseError as exc:
        raise ConfigFileError(str(path), exc.line, exc.col, _("invalid TOML: {detail}").format(
                              detail=toml_message(str(exc))),
                              Fix.of(_("fix the file at that position, or move it away and run {command}"),
                                     command=Command("taotoken init"))) from None
    if not current_text.strip():
        doc.add(tomlkit.comment("taotoken configuration: edit with `taotoken config set` or by hand."))
        doc.add(tomlkit.comment("The API key is a secret: this file is kept at mode 0600."))
    if default_profile is not None:
        tomledit.set_in(doc, ("default_profile",), default_profile)
    elif "default_profile" not in doc:
        tomledit.set_in(doc, ("default_profile",), profile)
    for key, value in (top or {}).items():
        if value is not None:
            tomledit.set_in(doc, (key,), value)
        elif key in doc:
            del doc[key]
    if "profiles" not in doc:
        doc["profiles"] = tomlkit.table(is_super_table=True)
    if profile not in doc["profiles"]:
        tomledit.set_in(doc, ("profiles", profile), tomlkit.table())
    _apply(doc, ("profiles", profile), updates)
    if routes:
        _apply(doc, ("profiles", profile, "routes"), routes)
    return tomledit.dumps(doc, current_text)


_MISSING = object()


def _leaves(data: Mapping, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
    """Every value of a parsed TOML document by its path of keys (a table is walked into; a list is one value)."""
    found: dict[tuple[str, ...], object] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            found.update(_leaves(value, (*prefix, key)) or {(*prefix, key): {}})
        else:
            found[(*prefix, key)] = value
    return found


OWN_MERGE = "taotoken-config"  # the name fileplan.undo_last knows revert_own_change by (FileChange.merge)


def revert_own_change(before: bytes | None, after: bytes, current: bytes | None) -> bytes | None:
    """Undo one run's change to taotoken's own config on a file edited since (`route set`, `config set lang`, a hand
    edit): each value the run changed goes back to what it was, where it still holds what the run wrote; every
    other value stays as it is now, comments and layout too. None when the three cannot be read as TOML (the undo
    then reports the file as edited, as before)."""
    import tomlkit

    from taotoken_cli.core.formats import tomledit
    from taotoken_cli.core.settings import tomllib

    try:
        old, new = (tomllib.loads(text.decode("utf-8").removeprefix("\ufeff")) if text else {}
                    for text in (before, after))
        now_text = (current or b"").decode("utf-8")
        now = tomllib.loads(now_text.removeprefix("\ufeff"))
        doc = tomlkit.parse(now_text.removeprefix("\ufeff")) if now_text.strip() else tomlkit.document()
    except (UnicodeDecodeError, ValueError, tomlkit.exceptions.ParseError):
        return None
    old_leaves, new_leaves, now_leaves = _leaves(old), _leaves(new), _leaves(now)
    for path in sorted(set(old_leaves) | set(new_leaves), key=len, reverse=True):
        was, wrote = old_leaves.get(path, _MISSING), new_leaves.get(path, _MISSING)
        if was == wrote or now_leaves.get(path, _MISSING) != wrote:
            continue  # not the run's change, or changed again since: what is there now stays
        if was is _MISSING:
            tomledit.remove_in(doc, path)
            _drop_empty_tables(doc, path[:-1], old)
        else:
            tomledit.set_in(doc, path, was)
    text = tomledit.dumps(doc, now_text)
    if not tomllib.loads(text.removeprefix("\ufeff")) and before is None:
        return b""  # nothing is left of a file the run created: the undo removes it
    return text.encode("utf-8")


def _drop_empty_tables(doc, path: tuple[str, ...], old: Mapping) -> None:
    """Remove the tables on `path` the run created and that are empty now (innermost first)."""
    from taotoken_cli.core.formats import tomledit

    for depth in range(len(path), 0, -1):
        table, existed = doc, old
        for key in path[:depth]:
            table = table.get(key) if hasattr(table, "get") else None
            existed = existed.get(key) if isinstance(existed, Mapping) else None
        if table is None or existed is not None or len(table) > 0:
            return
        tomledit.remove_in(doc, path[:depth])
