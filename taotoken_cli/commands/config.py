"""`taotoken config show|path|set|profiles`."""

from __future__ import annotations

import sys

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
    from taotoken_cli.config.view import render_settings, settings_to_dict
    from taotoken_cli.output import Output

    settings = _options.load(profile)
    out = Output()
    if json_out:
        out.json(settings_to_dict(settings))
    else:
        render_settings(out, settings, with_origin=origin)


@config_app.command("path")
def path() -> None:
    """Print the path of the config file (whether or not it exists)."""
    from taotoken_cli.config import config_path

    typer.echo(str(config_path()))


@config_app.command("set")
def set_value(
    key: str = typer.Argument(..., help="base_url, api_key, model or default_profile."),
    value: str = typer.Argument(..., help="The value; for api_key use '-' to read it from stdin."),
    profile: str | None = _options.PROFILE,
) -> None:
    """Set one value in the config file (cleaned first; every change is reported)."""
    from taotoken_cli.config.edit import set_config_value
    from taotoken_cli.output import Output

    if key == "api_key" and value == "-":
        value = sys.stdin.read()
    elif key == "api_key":
        Output().error_line("warning: a key given as an argument lands in your shell history; "
                            "prefer `taotoken config set api_key -` and paste it on stdin")
    set_config_value(Output(), key, value, profile)


@config_app.command("profiles")
def profiles(json_out: bool = _options.JSON) -> None:
    """List the profiles in the config file; the active one is marked."""
    from taotoken_cli.config.view import render_profiles
    from taotoken_cli.output import Output

    render_profiles(Output(), _options.load(), json_out)
