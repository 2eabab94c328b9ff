"""Core of `taotoken config`: turning Settings into dicts/text, and `config set`."""

from __future__ import annotations

from typing import Any

from taotoken_cli.config import (
    ENV_PROFILE,
    FIELDS,
    SETTABLE_KEYS,
    Overrides,
    Settings,
    clean_value,
    config_path,
    load_settings,
    read_config_file,
    render_config_update,
    validate_profile_name,
)
from taotoken_cli.errors import InputError, TaotokenError
from taotoken_cli.fsutil import atomic_write
from taotoken_cli.masking import mask_key
from taotoken_cli.output import Output


def display_value(settings: Settings, name: str) -> str:
    item = settings.value(name)
    if name == "api_key":
        return mask_key(item.value or item.raw)
    return item.value if item.value is not None else (item.raw or "(not set)")


def settings_to_dict(settings: Settings) -> dict[str, Any]:
    """Stable JSON shape; the key is masked."""
    values = {}
    for name in FIELDS:
        item = settings.value(name)
        values[name] = {
            "value": display_value(settings, name) if item.value or item.raw else None,
            "origin": item.origin.kind,
            "origin_detail": item.origin.detail,
            "notes": item.notes,
            "error": item.error,
        }
    return {
        "profile": settings.profile,
        "profile_origin": str(settings.profile_origin),
        "config_path": str(settings.config_path),
        "config_exists": settings.config_exists,
        "values": values,
        "routes": dict(settings.routes),
        "profiles": settings.profiles,
    }


def render_settings(out: Output, settings: Settings, with_origin: bool) -> None:
    out.line(f"profile   {settings.profile}" + (f"   ({settings.profile_origin})" if with_origin else ""))
    for name in FIELDS:
        item = settings.value(name)
        text = f"{name:<9} {display_value(settings, name)}"
        if with_origin:
            text += f"   ({item.origin})"
        out.line(text)
        for note in item.notes:
            out.line(f"          note: {note}")
        if item.error:
            out.line(f"          error: {item.error}" + (f" — fix: {item.fix}" if item.fix else ""))
    if settings.routes:
        out.line("routes")
        for kind, model in settings.routes.items():
            out.line(f"  {kind:<12} {model}")
    if with_origin:
        out.line(f"config    {settings.config_path}" + ("" if settings.config_exists else " (does not exist yet)"))


def render_profiles(out: Output, settings: Settings, json_out: bool) -> None:
    names = settings.profiles or []
    if json_out:
        out.json({"active": settings.profile, "profiles": names})
        return
    if not names:
        out.line(f"no profiles yet in {settings.config_path}; `taotoken init` creates one")
        return
    for name in names:
        out.line(("* " if name == settings.profile else "  ") + name)


def set_config_value(out: Output, key: str, value: str, profile: str | None) -> None:
    if key not in SETTABLE_KEYS:
        raise InputError(f"unknown setting {key!r}", f"choose one of: {', '.join(SETTABLE_KEYS)}"
                         " (routes: `taotoken route set KIND=MODEL`)")
    path = config_path()
    current = read_config_file(path)  # raises with line/column when the file is broken
    del current
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    settings = load_settings(Overrides(profile=profile))
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
    if key != "default_profile" and ENV_PROFILE and settings.value(key).origin.kind == "env":
        out.error_line(f"note: {settings.value(key).origin.detail} is set in your environment and "
                       "takes precedence over the file")
