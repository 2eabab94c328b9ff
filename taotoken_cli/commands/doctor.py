"""`taotoken doctor`: check everything (env, config, clients, network, gateway, devices) in one run."""

from __future__ import annotations

import typer

from taotoken_cli.commands import _options

DEFAULT_TIMEOUT_S = 8.0  # with every host hanging the run still ends in about 9 s (start-up included)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)


def doctor(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show every check with its details."),
    json_out: bool = _options.JSON,
    only: list[str] = typer.Option(None, "--check", "-c", help="Run only this check (id, id prefix such as "
                                   "'gateway', or a section name); repeatable."),
    list_checks: bool = typer.Option(False, "--list", help="List the checks and exit."),
    offline: bool = typer.Option(False, "--offline", help="Skip every check that needs the network."),
    timeout: float = typer.Option(DEFAULT_TIMEOUT_S, "--timeout", min=0.5, max=600,
                                  help="Deadline for the whole run, in seconds."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 on warnings too."),
    fix: bool = typer.Option(False, "--fix", help="Offer the safe repairs found (backed up; undo with "
                             "`taotoken init --undo`)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --fix: apply without asking."),
    profile: str | None = _options.PROFILE,
    base_url: str | None = _options.BASE_URL,
    model: str | None = _options.MODEL,
) -> None:
    """Find every cause of a broken setup and print the fix for each."""
    from taotoken_cli.config import Overrides
    from taotoken_cli.doctor import DoctorContext, all_checks, run_doctor, select
    from taotoken_cli.doctor.view import render_list, render_text, report_to_dict
    from taotoken_cli.errors import InputError
    from taotoken_cli.output import Output

    if fix and json_out:
        raise InputError("--fix cannot be combined with --json (--fix shows a diff and may ask to confirm)",
                         "run `taotoken doctor --json` to read the findings, then `taotoken doctor --fix`")
    out = Output()
    checks = select(only) if only else all_checks()
    if list_checks:
        render_list(out, checks, json_out=json_out)
        return
    ctx = DoctorContext(overrides=Overrides(profile=profile, base_url=base_url, model=model), offline=offline,
                        timeout=timeout)
    report = run_doctor(ctx, checks, strict=strict)
    if json_out:
        out.json(report_to_dict(report))
    else:
        render_text(out, report, verbose=verbose)
    code = report.exit_code
    if fix and not json_out:
        from taotoken_cli.doctor.fix import offer_repairs

        offer_repairs(out, report, assume_yes=yes)
    _exit(code)


def _exit(code: int) -> None:
    """Exit; when a probe thread is still stuck past the deadline, do not wait for it."""
    import os
    import sys

    from taotoken_cli.doctor.runner import abandoned_threads

    if abandoned_threads():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # a thread blocked in getaddrinfo cannot be cancelled; interpreter shutdown would wait
    raise typer.Exit(code)
