"""The shared entry of `taotoken check`: option parsing for the fast path, and execute().

`check` runs in .bashrc, so `python -m taotoken_cli check …` with ordinary options skips Typer
(whose import and per-parameter pydantic adapters cost more than the whole request). Anything
the small parser does not recognise — `--help`, a typo, a bad value — falls back to the Typer
command, which produces the usual help and usage errors. Both paths call `execute`.
"""

from __future__ import annotations

_FLAGS = {"--chat": "chat", "--stream": "stream", "-q": "quiet", "--quiet": "quiet", "--code": "code",
          "--json": "json_out", "--no-proxy": "no_proxy"}
_VALUED = {"--model": "model", "-m": "model", "--timeout": "timeout", "-t": "timeout", "--profile": "profile",
           "-p": "profile", "--base-url": "base_url"}
DEFAULT_TIMEOUT_S = 5.0


def parse_fast(argv: list[str]) -> dict | None:
    """Options for `execute`, or None when Typer should handle these arguments."""
    options: dict = {"timeout": DEFAULT_TIMEOUT_S}
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, eq, inline = arg.partition("=")
        if not eq and arg in _FLAGS:
            options[_FLAGS[arg]] = True
        elif name in _VALUED:
            if eq:
                value = inline
            elif args:
                value = args.pop(0)
            else:
                return None
            options[_VALUED[name]] = value
        else:
            return None
    try:
        options["timeout"] = float(options["timeout"])
    except ValueError:
        return None
    if not options["timeout"] >= 0.1:  # also rejects nan
        return None
    return options


def execute(*, chat: bool = False, stream: bool = False, quiet: bool = False, code: bool = False,
            json_out: bool = False, no_proxy: bool = False, model: str | None = None,
            timeout: float = DEFAULT_TIMEOUT_S, profile: str | None = None, base_url: str | None = None) -> int:
    """Run the check, render it in the chosen mode, return the exit status."""
    from taotoken_cli.check import view as check_view
    from taotoken_cli.check.run import CheckOptions, run_check
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
    return result.exit_code


def main_fast(argv: list[str]) -> bool:
    """Handle `check ARGS` without Typer when possible; False means "not handled, use Typer"."""
    options = parse_fast(argv)
    if options is None:
        return False
    from taotoken_cli.guard import run_guarded

    run_guarded(lambda: execute(**options))
    return True
