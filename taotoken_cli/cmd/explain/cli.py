"""`taotoken explain CODE`: what a failure code means, its likely causes and the fix."""

from __future__ import annotations

import typer

from taotoken_cli.cmd import options as _options
from taotoken_cli.core.base.i18n import _

# Values shell completion offers (autocompletion=), taken from the code that accepts them; gen_docs writes
# them into the static completion scripts, so Tab never starts Python. Imports happen only when asked.


def complete_failure_codes() -> list[str]:
    from taotoken_cli.core.diagnosis.catalogue import CATALOGUE

    return list(CATALOGUE)



def register(app: typer.Typer) -> None:
    app.command("explain", help=_("Explain a failure code, an HTTP status or a server's message: the causes "
                                  "and the fix."))(explain)


def explain(
    code: str | None = typer.Argument(None, metavar="CODE|STATUS|MESSAGE", autocompletion=complete_failure_codes,
                                      help=_("A failure code (auth.invalid_key), an HTTP status (429) or a server's "
                                        "message, Chinese or English ('无效的令牌'); see --list.")),
    list_all: bool = typer.Option(False, "--list", "-l", help=_("List every code with its exit status and title.")),
    json_out: bool = _options.JSON,
) -> None:
    from taotoken_cli.cmd.explain.run import ExplainOptions, run

    raise typer.Exit(run(ExplainOptions(code=code, list_all=list_all, json_out=json_out), _options.io()))
