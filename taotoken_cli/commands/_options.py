"""Options shared by several commands, declared once, and what every command's help has in common.

Short flags mean one thing across all commands (tests/test_cli_surface.py checks it):
  -m --model   -p --profile   -q --quiet   -y --yes   -v --verbose   -V --version   -h --help
  -t --timeout (as hey/oha/ab: seconds)    -n --requests, -c --concurrency, -z --duration (bench; as hey/ab)
  -d --device (route)   -l --list (explain)   -P --port (mock)
A short flag a command once had with another meaning is `retired`: it stays a usage error that names the
long option to write instead.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

PROFILE = typer.Option(None, "--profile", "-p", envvar=None, metavar="NAME",
                       help="Profile to use (default: TAOTOKEN_PROFILE, then default_profile in the config file).")
BASE_URL = typer.Option(None, "--base-url", metavar="URL",
                        help="Override the base URL (API root, e.g. https://taotoken.net/api).")
MODEL = typer.Option(None, "--model", "-m", metavar="MODEL", help="Override the model ID.")
JSON = typer.Option(False, "--json", help="Print a stable JSON object instead of text.")
NO_PROXY = typer.Option(False, "--no-proxy", help="Ignore HTTP(S)_PROXY/ALL_PROXY from the environment.")


def io():
    """The process's streams, environment and working directory, for a command's core."""
    from taotoken_cli.iostreams import IOStreams

    return IOStreams.system()


def in_range(low: float, high: float | None = None, unit: str = "") -> Any:
    """A callback refusing numbers outside [low, high] as a usage error. (Typer's min=/max= would print
    `<float range> [x>=0.1]` in the help; the help says the range in words instead.)"""
    unit = f" {unit}" if unit else ""

    def check(value: float | None) -> float | None:
        if value is None:
            return value
        if not value >= low:  # also refuses nan
            raise typer.BadParameter(f"{value:g} is too small: give at least {low:g}{unit}")
        if high is not None and value > high:
            raise typer.BadParameter(f"{value:g} is too large: give at most {high:g}{unit}")
        return value

    return check


def retired(flag: str, long: str) -> Any:
    """A short flag this command no longer has: using it is a usage error naming the long option."""

    def refuse(value: str | None) -> None:
        if value is not None:
            raise typer.BadParameter(f"{flag} no longer means {long} (a short flag means one thing in every "
                                     f"command); write: {long} {value}")

    return typer.Option(None, flag, hidden=True, callback=refuse, expose_value=True)


class _TypeNamesHidden:
    """typer 0.2x prints each parameter's Python type in help (`<bool>` for every flag, `<str>`, `<list[str]>`):
    show an option's metavar (SECONDS, URL, FILE), nothing for flags and arguments (their name is shown)."""

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if hasattr(param, "display_type_rich"):
                shown = None if getattr(param, "is_flag", True) else param.metavar
                param.display_type_rich = lambda ctx=None, shown=shown: shown
        return params


class Command(_TypeNamesHidden, TyperCommand):
    pass


class Group(_TypeNamesHidden, TyperGroup):
    pass


def _ours(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, _TypeNamesHidden)


def tidy_help(app: typer.Typer) -> None:
    """Give every command and group of `app` (registered so far) the help without type names."""
    if not _ours(app.info.cls):
        app.info.cls = Group
    for command in app.registered_commands:
        if not _ours(command.cls):
            command.cls = Command
    for group in app.registered_groups:
        if group.typer_instance is not None:
            tidy_help(group.typer_instance)
