"""`taotoken config show|path|set|profiles`."""

from __future__ import annotations

import typer

from taotoken_cli.cmd import options as _options
from taotoken_cli.core.base.i18n import _

# Values shell completion offers (autocompletion=), taken from the code that accepts them; gen_docs writes
# them into the static completion scripts, so Tab never starts Python. Imports happen only when asked.


def complete_config_keys() -> list[str]:
    from taotoken_cli.core.settings.edit import SETTABLE_KEYS

    return list(SETTABLE_KEYS)


def complete_config_values(ctx) -> list[str]:
    """VALUE of `config set KEY VALUE`, where KEY's values are a fixed list (`lang`); `ctx` is Click's context
    (Typer passes it by this name), holding the KEY typed before."""
    if ctx.params.get("key") == "lang":
        from taotoken_cli.core.base.i18n import LANG_SETTINGS

        return list(LANG_SETTINGS)
    return []


config_app = typer.Typer(help=_("Show and edit taotoken's own configuration."), no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")


@config_app.command("show", help=_("Show the resolved base URL, key (masked), model and routes."))
def show(
    origin: bool = typer.Option(False, "--origin", help=_("Also show where each value came from.")),
    json_out: bool = _options.JSON,
    profile: str | None = _options.PROFILE,
) -> None:
    from taotoken_cli.cmd.config.view import show_settings

    show_settings(_options.io(), profile, with_origin=origin, json_out=json_out)


@config_app.command("path", help=_("Print the path of the config file (whether or not it exists)."))
def path() -> None:
    from taotoken_cli.core.settings import config_path

    io = _options.io()
    io.out.line(str(config_path(io.env)))


@config_app.command("set", help=_("Set one value (cleaned first); base URL, key and model reach every client "
                                  "init wrote."))
def set_value(
    key: str = typer.Argument(..., metavar="KEY", autocompletion=complete_config_keys,
                              help=_("base_url, api_key, model, default_profile or lang (en, zh, auto).")),
    value: str = typer.Argument(..., metavar="VALUE", autocompletion=complete_config_values,
                                help=_("The value; for api_key use '-' to type it hidden (or pipe it in).")),
    yes: bool = typer.Option(False, "--yes", "-y", help=_("Also update every copy init wrote without asking.")),
    no_sync: bool = typer.Option(False, "--no-sync", help=_("Change only taotoken's own config file.")),
    allow_unlisted: bool = typer.Option(False, "--allow-unlisted",
                                        help=_("Set a model without asking the gateway whether it lists it (for "
                                               "gateways that hide some models).")),
    profile: str | None = _options.PROFILE,
) -> None:
    from taotoken_cli.cmd.config.run import set_value

    raise typer.Exit(set_value(_options.io(), key, value, profile, yes=yes, sync=not no_sync,
                               check_listed=not allow_unlisted))


@config_app.command("sync", help=_("Bring every copy init wrote (client files, env.sh, CC Switch links) in "
                                   "step with the config."))
def sync(
    yes: bool = typer.Option(False, "--yes", "-y", help=_("Apply without asking (for scripts).")),
    dry_run: bool = typer.Option(False, "--dry-run", help=_("Show unified diffs (key masked); write nothing.")),
    profile: str | None = _options.PROFILE,
) -> None:
    from taotoken_cli.cmd.config.run import sync

    raise typer.Exit(sync(_options.io(), profile, yes=yes, dry_run=dry_run))


@config_app.command("profiles", help=_("List the profiles in the config file; the active one is marked."))
def profiles(json_out: bool = _options.JSON) -> None:
    from taotoken_cli.cmd.config.view import show_profiles

    show_profiles(_options.io(), json_out)
