"""`taotoken doctor`: check everything (env, config, clients, network, gateway, devices) in one run."""

from __future__ import annotations

import typer

from taotoken_cli.cmd import options as _options
from taotoken_cli.cmd.doctor import DEFAULT_TIMEOUT_S
from taotoken_cli.core.base.i18n import _

# Values shell completion offers (autocompletion=), taken from the code that accepts them; gen_docs writes
# them into the static completion scripts, so Tab never starts Python. Imports happen only when asked.


def complete_doctor_checks() -> list[str]:
    """Check ids, their prefixes (`gateway`) and the sections, as `--check` takes them."""
    from taotoken_cli.cmd.doctor.model import SECTIONS
    from taotoken_cli.cmd.doctor.registry import all_checks

    ids = [c.id for c in all_checks()]
    prefixes = {i.split(".")[0] for i in ids}
    return sorted(prefixes | {s.lower() for s in SECTIONS}) + ids



def register(app: typer.Typer) -> None:
    app.command("doctor", help=_("Find every cause of a broken setup and print the fix for each."))(doctor)


def doctor(
    verbose: bool = typer.Option(False, "--verbose", "-v", help=_("Show every check with its details.")),
    json_out: bool = _options.JSON,
    only: list[str] = typer.Option(None, "--check", metavar="ID", autocompletion=complete_doctor_checks,
                                   help=_("Run only this check (id, id prefix such as 'gateway', or a section "
                                     "name); repeatable.")),
    list_checks: bool = typer.Option(False, "--list", help=_("List the checks and exit.")),
    offline: bool = typer.Option(False, "--offline", help=_("Skip every check that needs the network.")),
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", "-t", metavar="SECONDS",
                                  callback=_options.in_range(0.5, 600, seconds=True),
                                  help=_("Deadline for the whole run, in seconds (0.5 to 600).")),
    strict: bool = typer.Option(False, "--strict", help=_("Exit 1 on warnings too.")),
    fix: bool = typer.Option(False, "--fix", help=_("Offer the safe repairs found (backed up; undo with "
                               "`taotoken init --undo`).")),
    yes: bool = typer.Option(False, "--yes", "-y", help=_("With --fix: apply without asking.")),
    live: bool = typer.Option(False, "--live", help=_("Also run each installed client (Claude Code, Codex, Cline, "
                                "Gemini CLI, OpenClaw, OpenCode, Qwen Code) once with a one-line prompt: each sends "
                                "one small request to the gateway.")),
    profile: str | None = _options.PROFILE,
    base_url: str | None = _options.BASE_URL,
    model: str | None = _options.MODEL,
    _c: str | None = _options.retired("-c", "--check"),
) -> None:
    from taotoken_cli.cmd.doctor.run import DoctorOptions, run
    from taotoken_cli.core.settings import Overrides

    options = DoctorOptions(overrides=Overrides(profile=profile, base_url=base_url, model=model), only=list(only or []),
                            list_checks=list_checks, offline=offline, timeout_s=timeout, strict=strict,
                            verbose=verbose, json_out=json_out, fix=fix, yes=yes, live=live)
    _exit(run(options, _options.io()))


def _exit(code: int) -> None:
    """Exit; when a probe thread is still stuck past the deadline, do not wait for it."""
    import os
    import sys

    from taotoken_cli.cmd.doctor.runner import abandoned_threads

    if abandoned_threads():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # a thread blocked in getaddrinfo cannot be cancelled; interpreter shutdown would wait
    raise typer.Exit(code)
