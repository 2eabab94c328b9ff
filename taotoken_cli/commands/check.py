"""`taotoken check`: one fast request that says "works" or names the failure and its fix."""

from __future__ import annotations

import typer

from taotoken_cli.commands import _common


def register(app: typer.Typer) -> None:
    app.command("check")(check)


def check(
    chat: bool = typer.Option(False, "--chat", help="Also send a 1-token chat completion and prove 'choices'."),
    stream: bool = typer.Option(False, "--stream", help="Like --chat, streamed: proves content arrives and the "
                                "stream ends properly."),
    model: str | None = typer.Option(None, "--model", "-m", help="Check that this model is listed (default: the "
                                     "configured model, reported but not required)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Nothing on success; one line (code, cause, fix) on "
                               "failure. For .bashrc."),
    code: bool = typer.Option(False, "--code", help="Print only the HTTP status (000 when there was no response)."),
    json_out: bool = _common.JSON,
    timeout: float = typer.Option(5.0, "--timeout", "-t", min=0.1, help="Total time limit in seconds."),
    no_proxy: bool = typer.Option(False, "--no-proxy", help="Ignore HTTP(S)_PROXY/ALL_PROXY from the environment."),
    profile: str | None = _common.PROFILE,
    base_url: str | None = _common.BASE_URL,
) -> None:
    """Check the base URL, key and model with one request (exit code names the failure class)."""
    from taotoken_cli import check_view
    from taotoken_cli.checking import CheckOptions, run_check
    from taotoken_cli.output import Output

    result = run_check(CheckOptions(profile=profile, base_url=base_url, model=model, chat=chat, stream=stream,
                                    timeout_s=timeout, no_proxy=no_proxy))
    out = Output()
    if json_out:
        check_view.render_json(out, result)
    elif code:
        check_view.render_code(out, result)
    elif quiet:
        check_view.render_quiet(out, result)
    else:
        check_view.render_line(out, result)
    raise typer.Exit(result.exit_code)
