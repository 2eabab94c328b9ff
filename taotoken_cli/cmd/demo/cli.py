"""`taotoken demo`: run every command against a local mock gateway in a temporary HOME, then clean up."""

from __future__ import annotations

import typer

from taotoken_cli.cmd import options as _options
from taotoken_cli.core.base.i18n import _

# Values shell completion offers (autocompletion=), taken from the code that accepts them; gen_docs writes
# them into the static completion scripts, so Tab never starts Python. Imports happen only when asked.


def complete_demo_steps() -> list[str]:
    from taotoken_cli.cmd.demo.steps import STEP_NAMES

    return list(STEP_NAMES)



def register(app: typer.Typer) -> None:
    app.command("demo", help=_("Walk through init, check, doctor, route and bench offline, against a local "
                               "mock gateway."))(demo)


def demo(
    keep: bool = typer.Option(False, "--keep", help=_("Leave the temporary directory and print its path.")),
    step: str | None = typer.Option(None, "--step", metavar="NAME", autocompletion=complete_demo_steps,
                                    help=_("Run one step: init, check, doctor, route or bench (its "
                                      "prerequisites run quietly first).")),
    fast: bool = typer.Option(False, "--fast", help=_("No simulated gateway latency, fewer requests.")),
) -> None:
    from taotoken_cli.cmd.demo.run import DemoOptions, run

    raise typer.Exit(run(DemoOptions(keep=keep, step=step, fast=fast), _options.io()))
