"""The Typer layer: parse options, call the core, render. No business logic lives here.

Each command sits in its own module under `taotoken_cli.commands` and registers itself on the
app. Command modules import only typer at module level; the work is imported when a command
runs, so `taotoken check` starts fast.
"""

from __future__ import annotations

import os
import sys

import typer

from taotoken_cli import __version__
from taotoken_cli.errors import TaotokenError
from taotoken_cli.exitcodes import Exit

app = typer.Typer(
    name="taotoken",
    help="Set up and diagnose access to the TaoToken LLM gateway for every AI coding client.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"taotoken {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """taotoken — one base URL, one key, many models: configured right in every client."""


from taotoken_cli.commands import check as _check_cmd  # noqa: E402
from taotoken_cli.commands import config as _config_cmd  # noqa: E402
from taotoken_cli.commands import explain as _explain_cmd  # noqa: E402
from taotoken_cli.commands import route as _route_cmd  # noqa: E402

_config_cmd.register(app)
_check_cmd.register(app)
_explain_cmd.register(app)
_route_cmd.register(app)
from taotoken_cli.commands import init as _init_cmd  # noqa: E402

_init_cmd.register(app)
from taotoken_cli.commands import doctor as _doctor_cmd  # noqa: E402

_doctor_cmd.register(app)


def report_error(exc: TaotokenError) -> None:
    from taotoken_cli.masking import SECRETS, mask_unknown_keys

    text = f"error: {exc.message}"
    if exc.code:
        text += f" [{exc.code}]"
    if exc.fix:
        text += f"\n  fix: {exc.fix}"
    sys.stderr.write(mask_unknown_keys(SECRETS(text)) + "\n")


def run(argv: list[str] | None = None) -> None:
    """Run the app; expected failures end in a message and a stable exit code, never a traceback."""
    try:
        app(args=argv, prog_name="taotoken")
    except TaotokenError as exc:
        report_error(exc)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(Exit.INTERRUPTED)
    except BrokenPipeError:
        # `taotoken … | head`: the reader went away; that is not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(Exit.OK)
    except Exception as exc:  # an unexpected bug: say so briefly, traceback only on request
        if os.environ.get("TAOTOKEN_DEBUG"):
            raise
        from taotoken_cli.masking import SECRETS, mask_unknown_keys

        name = type(exc).__name__
        sys.stderr.write(mask_unknown_keys(SECRETS(
            f"error: internal error ({name}: {exc})\n"
            "  fix: run again with TAOTOKEN_DEBUG=1 for the traceback and report it\n")))
        sys.exit(Exit.FAILURE)
