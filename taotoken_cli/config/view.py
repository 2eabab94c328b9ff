"""Showing taotoken's configuration: Settings as a stable dict (`--json`) or text (`config show`, `profiles`)."""

from __future__ import annotations

from typing import Any

from taotoken_cli.config import FIELDS, Overrides, Settings, load_settings
from taotoken_cli.iostreams import IOStreams
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
        text = display_value(settings, name)
        if with_origin:
            text += f"   ({item.origin})"
        out.wrapped(text, f"{name:<9} ")
        for note in item.notes:
            out.wrapped(note, "          note: ")
        if item.error:
            out.wrapped(item.error + (f" — fix: {item.fix}" if item.fix else ""), "          error: ")
    if settings.routes:
        out.line("routes")
        for kind, model in settings.routes.items():
            out.line(f"  {kind:<12} {model}")
    if with_origin:
        out.wrapped(f"{settings.config_path}" + ("" if settings.config_exists else " (does not exist yet)"),
                    "config    ")


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


def show_settings(io: IOStreams, profile: str | None, *, with_origin: bool, json_out: bool) -> None:
    settings = load_settings(Overrides(profile=profile), io.env)
    if json_out:
        io.out.json(settings_to_dict(settings))
    else:
        render_settings(io.out, settings, with_origin=with_origin)


def show_profiles(io: IOStreams, json_out: bool) -> None:
    render_profiles(io.out, load_settings(env=io.env), json_out)
