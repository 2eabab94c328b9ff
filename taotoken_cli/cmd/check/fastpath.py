"""`taotoken check` without Typer: `check` runs in .bashrc, so `python -m taotoken_cli check …` with ordinary
options skips Typer (whose import and per-parameter adapters cost more than the whole request). Anything
this small parser does not recognise — `--help`, a typo, a bad value — falls back to the Typer command,
which produces the usual help and usage errors. Both paths call `check.run.run`.
"""

from __future__ import annotations

from taotoken_cli.cmd.check import DEFAULT_TIMEOUT_S

_FLAGS = {"--chat": ("chat", True), "--stream": ("stream", True), "-q": ("mode", "quiet"),
          "--quiet": ("mode", "quiet"), "--code": ("mode", "code"), "--json": ("mode", "json"),
          "--no-proxy": ("no_proxy", True), "--allow-unlisted": ("allow_unlisted", True)}
_VALUED = {"--model": "model", "-m": "model", "--timeout": "timeout_s", "-t": "timeout_s", "--profile": "profile",
           "-p": "profile", "--base-url": "base_url", "--client": "client"}


def parse_fast(argv: list[str]) -> dict | None:
    """Keyword arguments for CheckOptions, or None when Typer should handle these arguments."""
    options: dict = {"timeout_s": DEFAULT_TIMEOUT_S}
    args = list(argv)
    modes: set[str] = set()
    while args:
        arg = args.pop(0)
        name, eq, inline = arg.partition("=")
        if not eq and arg in _FLAGS:
            field, value = _FLAGS[arg]
            options[field] = value
            if field == "mode":
                modes.add(value)
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
    if "client" in options:  # running a client takes seconds: Typer's start-up does not matter there
        return None
    # With several output modes the most machine-readable wins, as in the Typer command.
    options["mode"] = pick_mode(json_out="json" in modes, code="code" in modes, quiet="quiet" in modes)
    try:
        options["timeout_s"] = float(options["timeout_s"])
    except ValueError:
        return None
    if not 0.1 <= options["timeout_s"] <= 86_400:  # also rejects nan and inf: Typer says why (cmd.options)
        return None
    return options


def pick_mode(*, json_out: bool, code: bool, quiet: bool) -> str:
    return "json" if json_out else "code" if code else "quiet" if quiet else "line"


def main_fast(argv: list[str]) -> bool:
    """Handle `check ARGS` without Typer when possible; False means "not handled, use Typer"."""
    options = parse_fast(argv)
    if options is None:
        return False
    import sys

    # `import httpx` also imports its optional command-line client (click, pygments, rich: ~45 ms) whenever
    # click happens to be installed (typer < 0.16 needs it); check never uses it, so it is not loaded.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    from taotoken_cli.cmd.check.run import CheckOptions, run
    from taotoken_cli.core.term.guard import run_guarded
    from taotoken_cli.core.term.iostreams import IOStreams

    run_guarded(lambda: run(CheckOptions(**options), IOStreams.system()))
    return True
