"""Editing taotoken's own config file: `render_config_update` (tomlkit keeps comments and layout) and
the core of `taotoken config set`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from taotoken_cli.config.loader import (
    Overrides,
    clean_value,
    config_path,
    load_settings,
    read_config_file,
)
from taotoken_cli.errors import ConfigFileError, InputError, TaotokenError
from taotoken_cli.fsutil import atomic_write
from taotoken_cli.iostreams import IOStreams
from taotoken_cli.masking import mask_key, remember_secret

_PROFILE_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def validate_profile_name(name: str) -> str:
    if not _PROFILE_NAME_RE.match(name):
        raise InputError(f"profile name {name!r} is not allowed",
                         "use letters, digits, '.', '_' or '-' (at most 64 characters)")
    return name


SETTABLE_KEYS = ("base_url", "api_key", "model", "default_profile")


def _table(parent, name: str, *, super_table: bool = False):
    """parent[name] as a TOML table, created (empty) when missing."""
    import tomlkit

    if name not in parent:
        parent[name] = tomlkit.table(is_super_table=super_table)
    return parent[name]


def _apply(table, updates: Mapping[str, str | None]) -> None:
    """Set each key to its value; None removes it."""
    for key, value in updates.items():
        if value is not None:
            table[key] = value
        elif key in table:
            del table[key]


def render_config_update(current_text: str, path: Path, profile: str, updates: Mapping[str, str | None],
                         routes: Mapping[str, str | None] | None = None,
                         default_profile: str | None = None) -> str:
    """Return the config file text with `updates` applied to [profiles.<profile>].

    tomlkit keeps comments, order and formatting of everything else. A value of None removes
    the key. Input is expected to be cleaned already (see `clean_value`).
    """
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        doc = tomlkit.parse(current_text) if current_text.strip() else tomlkit.document()
    except ParseError as exc:
        raise ConfigFileError(str(path), exc.line, exc.col, f"invalid TOML: {exc}",
                              "fix the file at that position, or move it away and run `taotoken init`") from None
    if not current_text.strip():
        doc.add(tomlkit.comment("taotoken configuration: edit with `taotoken config set` or by hand."))
        doc.add(tomlkit.comment("The API key is a secret: this file is kept at mode 0600."))
    if default_profile is not None:
        doc["default_profile"] = default_profile
    elif "default_profile" not in doc:
        doc["default_profile"] = profile
    table = _table(_table(doc, "profiles", super_table=True), profile)
    _apply(table, updates)
    if routes:
        _apply(_table(table, "routes"), routes)
    return tomlkit.dumps(doc)


def set_value(io: IOStreams, key: str, value: str, profile: str | None) -> None:
    """`taotoken config set KEY VALUE`: one value into the profile, cleaned first; every change reported.

    For the key, VALUE `-` asks for it: hidden input on a terminal, the whole of stdin otherwise."""
    out = io.out
    if key not in SETTABLE_KEYS:
        raise InputError(f"unknown setting {key!r}", f"choose one of: {', '.join(SETTABLE_KEYS)}"
                         " (routes: `taotoken route set KIND=MODEL`)")
    if key == "api_key" and value == "-":
        value = io.prompter.secret("API key")
        remember_secret(value)
    elif key == "api_key":
        remember_secret(value)
        out.error_line("warning: a key given as an argument lands in your shell history; "
                       "prefer `taotoken config set api_key -` and paste it")
    path = config_path(io.env)
    current = read_config_file(path)  # raises with line/column when the file is broken
    del current
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    settings = load_settings(Overrides(profile=profile), io.env)
    target_profile = settings.profile
    if key == "default_profile":
        new_text = render_config_update(text, path, validate_profile_name(value), {},
                                        default_profile=validate_profile_name(value))
        shown = value
    else:
        validate_profile_name(target_profile)
        cleaned = clean_value(key, value, settings.value(key).origin)
        if cleaned.error:
            raise InputError(cleaned.error, cleaned.fix)
        for note in cleaned.notes:
            out.error_line(f"note: {note}")
        new_text = render_config_update(text, path, target_profile, {key: cleaned.value})
        shown = mask_key(cleaned.value) if key == "api_key" else cleaned.value
    if new_text == text:
        out.line(f"{key} is already {shown} — nothing changed")
        return
    try:
        atomic_write(path, new_text, secret=True)
    except OSError as exc:
        raise TaotokenError(f"cannot write {path}: {exc.strerror or exc}",
                            f"check that {path.parent} is writable") from None
    where = "" if key == "default_profile" else f" in profile {target_profile!r}"
    out.line(f"set {key} = {shown}{where} ({path})")
    if key != "default_profile" and settings.value(key).origin.kind == "env":
        out.error_line(f"note: {settings.value(key).origin.detail} is set in your environment and "
                       "takes precedence over the file")
