"""Options shared by several commands, declared once."""

from __future__ import annotations

import typer

PROFILE = typer.Option(None, "--profile", "-p", envvar=None, help="Profile to use (default: TAOTOKEN_PROFILE, "
                       "then default_profile in the config file).")
BASE_URL = typer.Option(None, "--base-url", help="Override the base URL (API root, e.g. https://taotoken.net/api).")
MODEL = typer.Option(None, "--model", "-m", help="Override the model ID.")
JSON = typer.Option(False, "--json", help="Print a stable JSON object instead of text.")
NO_PROXY = typer.Option(False, "--no-proxy", help="Ignore HTTP(S)_PROXY/ALL_PROXY from the environment.")


def io():
    """The process's streams, environment and working directory, for a command's core."""
    from taotoken_cli.iostreams import IOStreams

    return IOStreams.system()
