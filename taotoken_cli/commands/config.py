"""`taotoken config show|path|set|profiles`."""

from __future__ import annotations

import typer

from taotoken_cli.commands import _options

config_app = typer.Typer(help="Show and edit taotoken's own configuration.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")


@config_app.command("show")
def show(
    origin: bool = typer.Option(False, "--origin", help="Also show where each value came from."),
    json_out: bool = _options.JSON,
    profile: str | None = _options.PROFILE,
) -> None:
    """Show the resolved base URL, key (masked), model and routes."""
    from taotoken_cli.config.view import show_settings

    show_settings(_options.io(), profile, with_origin=origin, json_out=json_out)


@config_app.command("path")
def path() -> None:
    """Print the path of the config file (whether or not it exists)."""
    from taotoken_cli.config import config_path

    io = _options.io()
    io.out.line(str(config_path(io.env)))


@config_app.command("set")
def set_value(
    key: str = typer.Argument(..., help="base_url, api_key, model or default_profile."),
    value: str = typer.Argument(..., help="The value; for api_key use '-' to type it hidden (or pipe it in)."),
    profile: str | None = _options.PROFILE,
) -> None:
    """Set one value in the config file (cleaned first; every change is reported)."""
    from taotoken_cli.config.edit import set_value

    set_value(_options.io(), key, value, profile)


@config_app.command("profiles")
def profiles(json_out: bool = _options.JSON) -> None:
    """List the profiles in the config file; the active one is marked."""
    from taotoken_cli.config.view import show_profiles

    show_profiles(_options.io(), json_out)
