"""`taotoken completion [SHELL]...`: print a completion script, or install it (and the man pages) for this user."""

from __future__ import annotations

import typer

from taotoken_cli.cmd import options as _options
from taotoken_cli.core.base.i18n import _

# Values shell completion offers (autocompletion=), taken from the code that accepts them; gen_docs writes them
# into the static completion scripts. Imports happen only when asked.


def complete_targets() -> list[str]:
    from taotoken_cli.cmd.completion.install import TARGETS

    return list(TARGETS)


def register(app: typer.Typer) -> None:
    app.command("completion", help=_("Print the Tab completion script for a shell, or install it and the man "
                                     "pages for this user."))(completion)


def completion(
    targets: list[str] | None = typer.Argument(None, metavar="SHELL", autocompletion=complete_targets,
                                               help=_("bash, zsh, fish or powershell; with --install or "
                                                      "--uninstall also man (default: your shell and man).")),
    install: bool = typer.Option(False, "--install", help=_("Put each completion and the man pages where the "
                                                            "shell and man look for them, for this user.")),
    uninstall: bool = typer.Option(False, "--uninstall", help=_("Remove what --install put there.")),
    yes: bool = typer.Option(False, "--yes", "-y", help=_("Apply without asking (for scripts).")),
    dry_run: bool = typer.Option(False, "--dry-run", help=_("Show what would change, as unified diffs; write "
                                                            "nothing.")),
) -> None:
    from taotoken_cli.cmd.completion.run import CompletionOptions, run

    raise typer.Exit(run(CompletionOptions(targets=list(targets or []), install=install, uninstall=uninstall,
                                           yes=yes, dry_run=dry_run), _options.io()))
