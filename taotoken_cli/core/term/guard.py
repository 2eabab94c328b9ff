"""Turning exceptions into messages and exit codes: shared by the Typer app and `check`'s fast path.

The labels ("error:", "fix:") are in the user's language; the message and fix come translated from whoever
raised the error."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.i18n import _


def report_error(exc: TaotokenError) -> None:
    from taotoken_cli.core.base.masking import SECRETS, mask_unknown_keys
    from taotoken_cli.core.term.layout import terminal_width, wrap

    width = terminal_width(os.environ, sys.stderr)
    lines = wrap(exc.message + (f" [{exc.code}]" if exc.code else ""), width, _("error: "), "  ")
    if exc.fix:
        lines += wrap(exc.fix, width, "  " + _("fix: "))
    _write_error(mask_unknown_keys(SECRETS("\n".join(lines))) + "\n")


def _write_error(text: str) -> None:
    """stderr, control characters escaped (a server's message may carry them); nothing when stderr is gone."""
    from taotoken_cli.core.term.output import escape_controls

    try:
        if sys.stderr is not None:
            sys.stderr.write(escape_controls(text))
            sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed or full: the exit code still says it
        pass


def run_guarded(body: Callable[[], object]) -> None:
    """Run `body`; expected failures end in a message and a stable exit code, never a traceback.

    An int returned by `body` is the exit status (the fast path); SystemExit passes through.
    """
    try:
        status = body()
    except TaotokenError as exc:
        report_error(exc)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _write_error(_("interrupted") + "\n")
        sys.exit(Exit.INTERRUPTED)
    except BrokenPipeError:
        # `taotoken … | head`: the reader went away; that is not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(Exit.OK)
    except Exception as exc:  # an unexpected bug: say so briefly, traceback only on request
        if os.environ.get("TAOTOKEN_DEBUG"):
            raise
        from taotoken_cli.core.base.masking import SECRETS, mask_unknown_keys

        text = _("internal error ({name}: {error})").format(name=type(exc).__name__, error=exc)
        fix = _("run again with TAOTOKEN_DEBUG=1 for the traceback and report it")
        error, fix_label = _("error: "), _("fix: ")
        _write_error(mask_unknown_keys(SECRETS(f"{error}{text}\n  {fix_label}{fix}\n")))
        sys.exit(Exit.FAILURE)
    if isinstance(status, int):
        sys.stdout.flush()
        sys.exit(status)
