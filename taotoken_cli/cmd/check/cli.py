"""`taotoken check`: one fast request that says "works" or names the failure and its fix."""

from __future__ import annotations

import typer

from taotoken_cli.cmd import options as _options
from taotoken_cli.cmd.check import DEFAULT_TIMEOUT_S
from taotoken_cli.core.base.i18n import _


def complete_check_clients() -> list[str]:
    """The clients `--client` can run."""
    from taotoken_cli.cmd.check.client import NAMES

    return list(NAMES)


def register(app: typer.Typer) -> None:
    app.command("check", help=_("Check the base URL, key and model with one request (exit code names the "
                                "failure class)."))(check)


def check(
    chat: bool = typer.Option(False, "--chat", help=_("Also send a 1-token chat completion and prove 'choices'.")),
    stream: bool = typer.Option(False, "--stream", help=_("Like --chat, streamed: proves content arrives and the "
                                  "stream ends properly.")),
    model: str | None = typer.Option(None, "--model", "-m", metavar="MODEL", help=_("Check this model instead of "
                                       "the configured one: it must be listed (see `taotoken models`).")),
    allow_unlisted: bool = typer.Option(False, "--allow-unlisted", help=_("A model the gateway does not list is a "
                                          "note, not a failure (for gateways that hide some models).")),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=_("Nothing on success; one line (code, cause, fix) on "
                                 "failure. For .bashrc.")),
    code: bool = typer.Option(False, "--code", help=_("Print only the HTTP status (000 when there was no response).")),
    json_out: bool = _options.JSON,
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", "-t", metavar="SECONDS",
                                  callback=_options.in_range(0.1, seconds=True),
                                  help=_("Total time limit in seconds (0.1 or more).")),
    no_proxy: bool = _options.NO_PROXY,
    client: str | None = typer.Option(None, "--client", metavar="NAME", autocompletion=complete_check_clients,
                                      help=_("Run this client (claude-code, codex, cline, gemini-cli, openclaw, "
                                             "opencode, qwen-code) once with a one-line prompt, started as you start "
                                             "it: it sends one small request.")),
    profile: str | None = _options.PROFILE,
    base_url: str | None = _options.BASE_URL,
) -> None:
    if client is not None:
        from taotoken_cli.cmd.check.client import run_client_check

        raise typer.Exit(run_client_check(client, _options.io(), json_out=json_out))
    from taotoken_cli.cmd.check.fastpath import pick_mode
    from taotoken_cli.cmd.check.run import CheckOptions, run

    options = CheckOptions(profile=profile, base_url=base_url, model=model, chat=chat, stream=stream,
                           timeout_s=timeout, no_proxy=no_proxy, allow_unlisted=allow_unlisted,
                           mode=pick_mode(json_out=json_out, code=code, quiet=quiet))
    raise typer.Exit(run(options, _options.io()))
