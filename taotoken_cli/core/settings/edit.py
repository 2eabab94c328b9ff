"""Editing the text of taotoken's own config file: `render_config_update` (tomlkit keeps comments, order and
layout). Planning a change over every copy of the triple is `config.update`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from taotoken_cli.core.base.errors import ConfigFileError, InputError
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
                              _("fix the file at that position, or move it away and run `taotoken init`")) from None
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
