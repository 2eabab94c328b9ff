"""The Typer layer: parse options, call the core, render. No business logic lives here.

Each command sits in its own package under `taotoken_cli.cmd` (`cmd/<command>/cli.py`) and registers itself on the
app. Command modules import only typer at module level; the work is imported when a command
runs, so `taotoken check` starts fast.
"""

from __future__ import annotations

import typer

from taotoken_cli import __version__
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.term.guard import report_error, run_guarded  # noqa: F401 - report_error re-exported

# Help texts are translated when this module is imported: taotoken_cli.__main__ chooses the language first.
app = typer.Typer(
    name="taotoken",
    help=_("Set up and diagnose access to the TaoToken LLM gateway for every AI coding client."),
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
                                 help=_("Print the version and exit.")),
) -> None:
    """taotoken — one base URL, one key, many models: configured right in every client."""


from taotoken_cli.cmd import options as _options  # noqa: E402
from taotoken_cli.cmd.bench import cli as _bench_cmd  # noqa: E402
from taotoken_cli.cmd.check import cli as _check_cmd  # noqa: E402
from taotoken_cli.cmd.completion import cli as _completion_cmd  # noqa: E402
from taotoken_cli.cmd.config import cli as _config_cmd  # noqa: E402
from taotoken_cli.cmd.demo import cli as _demo_cmd  # noqa: E402
from taotoken_cli.cmd.doctor import cli as _doctor_cmd  # noqa: E402
from taotoken_cli.cmd.explain import cli as _explain_cmd  # noqa: E402
from taotoken_cli.cmd.init import cli as _init_cmd  # noqa: E402
from taotoken_cli.cmd.mock import cli as _mock_cmd  # noqa: E402
from taotoken_cli.cmd.models import cli as _models_cmd  # noqa: E402
from taotoken_cli.cmd.route import cli as _route_cmd  # noqa: E402

_config_cmd.register(app)
_init_cmd.register(app)
_check_cmd.register(app)
_models_cmd.register(app)
_explain_cmd.register(app)
_route_cmd.register(app)
_doctor_cmd.register(app)
_bench_cmd.register(app)
_mock_cmd.register(app)
_demo_cmd.register(app)
_completion_cmd.register(app)
_options.tidy_help(app)


def run(argv: list[str] | None = None) -> None:
    """Run the app; expected failures end in a message and a stable exit code, never a traceback."""
    run_guarded(lambda: app(args=argv, prog_name="taotoken"))
