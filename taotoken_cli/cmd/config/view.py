"""Showing taotoken's configuration: Settings as a stable dict (`--json`) or text (`config show`, `profiles`)."""

from __future__ import annotations

from typing import Any

from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.settings import FIELDS, Overrides, Settings, load_settings
from taotoken_cli.core.term.iostreams import IOStreams
from taotoken_cli.core.term.layout import cell_width, pad
from taotoken_cli.core.term.output import Output


def display_value(settings: Settings, name: str) -> str:
    item = settings.value(name)
    if name == "api_key":
        return mask_key(item.value or item.raw)
    return item.value if item.value is not None else (item.raw or _("(not set)"))


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
    # The names are the settings' own (`config set base_url …`); "profile", "routes" and "config" are words.
    heads = {"profile": _("profile"), **{name: name for name in FIELDS}, "config": _("config")}
    column = max(9, *(cell_width(head) for head in heads.values())) + 1
    indent = " " * column
    def origin(text: str, where: object) -> str:
        return _("{value}   ({origin})").format(value=text, origin=where) if with_origin else text

    out.wrapped(origin(settings.profile, settings.profile_origin), pad(heads["profile"], column))
    for name in FIELDS:
        item = settings.value(name)
        out.wrapped(origin(display_value(settings, name), item.origin), pad(heads[name], column))
        for note in item.notes:
            out.wrapped(note, indent + _("note: "))
        if item.error:
            out.wrapped(Fix.of(_("{error} — fix: {fix}"), error=item.error, fix=item.fix) if item.fix else item.error,
                        indent + _("error: "))
    if settings.routes:
        out.line(_("routes"))
        for kind, model in settings.routes.items():
            out.line(f"  {kind:<12} {model}")
    if with_origin:
        path = str(settings.config_path)
        out.wrapped(path if settings.config_exists else _("{path} (does not exist yet)").format(path=path),
                    pad(heads["config"], column))


def render_profiles(out: Output, settings: Settings, json_out: bool) -> None:
    names = settings.profiles or []
    if json_out:
        out.json({"active": settings.profile, "profiles": names}, exit_code=0)
        return
    if not names:
        out.wrapped(Fix.of(_("no profiles yet in {path}; {command} creates one"), path=settings.config_path,
                           command=Command("taotoken init")), hang="  ")
        return
    for name in names:
        out.line(("* " if name == settings.profile else "  ") + name)


def show_settings(io: IOStreams, profile: str | None, *, with_origin: bool, json_out: bool) -> None:
    settings = load_settings(Overrides(profile=profile), io.env)
    if json_out:
        io.out.json(settings_to_dict(settings), exit_code=0)
    else:
        render_settings(io.out, settings, with_origin=with_origin)


def show_profiles(io: IOStreams, json_out: bool) -> None:
    render_profiles(io.out, load_settings(env=io.env), json_out)
