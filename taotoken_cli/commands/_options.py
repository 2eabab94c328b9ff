"""Options shared by several commands, declared once."""

from __future__ import annotations

import typer

PROFILE = typer.Option(None, "--profile", "-p", envvar=None, help="Profile to use (default: TAOTOKEN_PROFILE, "
                       "then default_profile in the config file).")
BASE_URL = typer.Option(None, "--base-url", help="Override the base URL (API root, e.g. https://taotoken.net/api).")
MODEL = typer.Option(None, "--model", "-m", help="Override the model ID.")
JSON = typer.Option(False, "--json", help="Print a stable JSON object instead of text.")


def load(profile: str | None = None, base_url: str | None = None, model: str | None = None,
         api_key: str | None = None):
    """Resolve settings from flags, env, file and defaults (see taotoken_cli.config)."""
    from taotoken_cli.config import Overrides, load_settings

    return load_settings(Overrides(profile=profile, base_url=base_url, model=model, api_key=api_key))
