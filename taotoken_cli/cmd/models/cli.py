"""`taotoken models [FILTER]`: the models the key can use, the configured and routed ones marked."""

from __future__ import annotations

import typer

from taotoken_cli.cmd import options as _options
from taotoken_cli.cmd.models import DEFAULT_TIMEOUT_S
from taotoken_cli.core.base.i18n import _


def register(app: typer.Typer) -> None:
    app.command("models", help=_("List the models this key can use (one ID a line when piped; a table on a "
                                 "terminal)."))(models)


def models(
    pattern: str | None = typer.Argument(None, metavar="[FILTER]", help=_("Only IDs containing this text "
                                           "(case-insensitive), or matching a glob such as 'gpt-4*'.")),
    json_out: bool = _options.JSON,
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", "-t", metavar="SECONDS",
                                  callback=_options.in_range(0.1, seconds=True),
                                  help=_("Time limit in seconds (0.1 or more).")),
    no_proxy: bool = _options.NO_PROXY,
    profile: str | None = _options.PROFILE,
    base_url: str | None = _options.BASE_URL,
) -> None:
    from taotoken_cli.cmd.models.run import ModelsOptions, run

    options = ModelsOptions(pattern=pattern, profile=profile, base_url=base_url, timeout_s=timeout,
                            no_proxy=no_proxy, json_out=json_out)
    raise typer.Exit(run(options, _options.io()))
