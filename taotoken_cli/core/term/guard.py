"""Turning exceptions into messages and exit codes: shared by the Typer app and `check`'s fast path.

The labels ("error:", "fix:") are in the user's language; the message and fix come translated from whoever
raised the error."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Callable, Mapping

from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Fix
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.base.oserrors import os_error_text


def report_error(exc: TaotokenError) -> None:
    from taotoken_cli.core.base.masking import SECRETS, mask_unknown_keys
    from taotoken_cli.core.term.layout import terminal_width, wrap

    width = terminal_width(os.environ, sys.stderr)
    lines = wrap(exc.message + (f" [{exc.code}]" if exc.code else ""), width, _("error: "), "  ")
    fix = fix_in_users_shell(exc.fix, os.environ)
    if fix:
        lines += wrap(fix, width, "  " + _("fix: "))
    _write_error(mask_unknown_keys(SECRETS("\n".join(lines))) + "\n")
    json_error(exc.code or "error", exc.exit_code, exc.message, fix)


def fix_in_users_shell(fix: Fix | str | None, env: Mapping[str, str]) -> Fix | str | None:
    """An error's fix as the user types it: a command that sets variables is written once, in POSIX (`export X=…`),
    and said here in the shell `env` tells (PowerShell, cmd, fish)."""
    from taotoken_cli.core.platform.shells import in_shell_fix, syntax

    return fix if fix is None else in_shell_fix(fix, syntax(env))


def _json_wanted() -> bool:
    """`--json` among the arguments (before a `--`): a script reads stdout, so an error is a JSON object there too."""
    args = sys.argv[1:]
    return "--json" in (args[:args.index("--")] if "--" in args else args)


def json_error(code: str, exit_code: int, message: str, fix: Fix | str | None) -> None:
    """Under --json, the error as one object on stdout (the same in every language but for message and fix): a
    TaotokenError's, and a usage error's (cmd.options: Click prints those itself, on stderr). `fix` is the line, as
    always; `fix_step` the same fix structured (its commands), as doctor's `fix_steps`."""
    if not _json_wanted():
        return
    import json

    from taotoken_cli.core.base.masking import SECRETS, mask_unknown_keys
    from taotoken_cli.core.term.output import machine_object

    data = machine_object({"ok": False, "code": code, "message": str(message),
                           "fix": None if fix is None else str(fix),
                           "fix_step": None if fix is None else Fix.coerce(fix).to_dict()},
                          schema=1, exit_code=exit_code)
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write(mask_unknown_keys(SECRETS(json.dumps(data, ensure_ascii=True))) + "\n")
        sys.stdout.flush()


def _write_error(text: str) -> None:
    """stderr, control characters escaped (a server's message may carry them); nothing when stderr is gone."""
    from taotoken_cli.core.term.output import escape_controls

    try:
        if sys.stderr is not None:
            sys.stderr.write(escape_controls(text))
            sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed or full: the exit code still says it
        pass


def _ensure_streams() -> None:
    """A stream the shell closed (`check -q >&-`, `init --key-stdin <&-`) is None in Python: it becomes the null
    device, so output is dropped, stdin reads as empty, and the exit status still tells."""
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))  # noqa: SIM115 - lives as long as the process


_OUTPUT_ERRNOS = {errno.ENOSPC, errno.EIO, errno.EBADF, getattr(errno, "EDQUOT", errno.ENOSPC)}


def _output_failed() -> OSError | None:
    """The error writing stdout gives now (a full disk: `>/dev/full`, a vanished terminal), or None."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        return exc
    except ValueError:  # closed
        return None
    return None


def _drop_stdout() -> None:
    """Nothing more can reach stdout: point it at the null device so exit does not fail on the buffered rest."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _output_error(exc: OSError) -> None:
    _drop_stdout()
    _write_error(_("error: ") + _("cannot write the output: {error}").format(error=os_error_text(exc)) + "\n  "
                 + _("fix: ") + _("write to a file on a disk with space, or to a terminal") + "\n")
    sys.exit(Exit.FAILURE)


def _current_directory() -> None:
    """A working directory deleted under the shell: say so instead of failing wherever the path is first used."""
    try:
        os.getcwd()
    except FileNotFoundError:
        raise TaotokenError(_("the current directory no longer exists (it was deleted or moved)"),
                            _("cd into an existing directory, then run the command again"), Exit.FAILURE,
                            code="input.no_cwd") from None


def run_guarded(body: Callable[[], object]) -> None:
    """Run `body`; expected failures end in a message and a stable exit code, never a traceback.

    An int returned by `body` is the exit status (the fast path); SystemExit passes through. Closed streams, a full
    stdout, a deleted working directory and input nested too deep to read are reported like any other failure.
    """
    from taotoken_cli.core.term.layout import ignore_odd_columns

    _ensure_streams()
    ignore_odd_columns(os.environ)
    try:
        _current_directory()
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
    except SystemExit:
        failed = _output_failed()
        if failed is not None:
            _output_error(failed)
        raise
    except RecursionError:  # a server's or a file's JSON nested thousands of levels deep
        report_error(TaotokenError(_("the input is nested too deeply to read (thousands of levels of JSON)"),
                                   _("this is not an answer any gateway sends; check the base URL, or the file "
                                     "named above"), Exit.BAD_RESPONSE, code="resp.not_json"))
        sys.exit(Exit.BAD_RESPONSE)
    except NotADirectoryError as exc:  # HOME (or CODEX_HOME, XDG_CONFIG_HOME, …) names a regular file
        if exc.filename is None:
            _internal(exc)
        report_error(TaotokenError(_("{path} cannot be read: a directory above it is a file").format(path=exc.filename),
                                   _("check HOME and the variables that name directories (XDG_CONFIG_HOME, "
                                     "CODEX_HOME, TAOTOKEN_CONFIG)"), Exit.CONFIG, code="config.unparsable"))
        sys.exit(Exit.CONFIG)
    except OSError as exc:
        # A write to stdout that failed carries no file name (a file taotoken opened would name it).
        failed = exc if exc.filename is None and exc.errno in _OUTPUT_ERRNOS else _output_failed()
        if failed is None and os.environ.get("TAOTOKEN_DEBUG"):
            raise
        if failed is not None:
            _output_error(failed)
        _internal(exc)
    except Exception as exc:  # an unexpected bug: say so briefly, traceback only on request
        if os.environ.get("TAOTOKEN_DEBUG"):
            raise
        _internal(exc)
    if isinstance(status, int):
        failed = _output_failed()
        if failed is not None:
            _output_error(failed)
        sys.exit(status)
    failed = _output_failed()
    if failed is not None:
        _output_error(failed)


def _internal(exc: BaseException) -> None:
    """An unexpected bug: said briefly, traceback only on request."""
    from taotoken_cli.core.base.masking import SECRETS, mask_unknown_keys

    text = _("internal error ({name}: {error})").format(name=type(exc).__name__, error=exc)
    fix = _("run again with TAOTOKEN_DEBUG=1 for the traceback and report it")
    error, fix_label = _("error: "), _("fix: ")
    _write_error(mask_unknown_keys(SECRETS(f"{error}{text}\n  {fix_label}{fix}\n")))
    json_error("internal", Exit.FAILURE, text, fix)
    sys.exit(Exit.FAILURE)
