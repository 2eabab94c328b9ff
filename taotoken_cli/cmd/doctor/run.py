"""`taotoken doctor` from options to exit status: select the checks, run them, render, offer repairs."""

from __future__ import annotations

from dataclasses import dataclass, field

from taotoken_cli.cmd.doctor import DEFAULT_TIMEOUT_S
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.registry import all_checks, select
from taotoken_cli.cmd.doctor.runner import run_doctor
from taotoken_cli.cmd.doctor.view import JSON_SCHEMA, progress_text, render_list, render_text, report_to_dict
from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.settings import Overrides
from taotoken_cli.core.term.iostreams import IOStreams


@dataclass
class DoctorOptions:
    overrides: Overrides = field(default_factory=Overrides)
    only: list[str] = field(default_factory=list)  # check ids, id prefixes or section names
    list_checks: bool = False
    offline: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_S
    strict: bool = False
    verbose: bool = False
    json_out: bool = False
    fix: bool = False
    yes: bool = False
    live: bool = False  # also run each installed client once against the gateway (cmd/doctor/live.py)


def run(options: DoctorOptions, io: IOStreams) -> int:
    if options.fix and options.json_out:
        raise InputError(_("--fix cannot be combined with --json (--fix shows a diff and may ask to confirm)"),
                         Fix.of(_("run {read} to read the findings, then {fix}"),
                                read=Command("taotoken doctor --json"), fix=Command("taotoken doctor --fix")))
    out = io.out
    checks = select(options.only) if options.only else all_checks()
    if options.list_checks:
        render_list(out, checks, json_out=options.json_out)
        return Exit.OK
    ctx = DoctorContext(env=io.env, cwd=io.cwd, overrides=options.overrides, offline=options.offline,
                        timeout=options.timeout_s)
    done: set[str] = set()
    if options.live and options.offline:
        raise InputError(_("--live cannot be combined with --offline (each client sends a request)"),
                         Fix.of(_("run {command} without --offline"), command=Command("taotoken doctor --live")))
    if options.live and not options.json_out:
        from taotoken_cli.cmd.doctor.live import notice
        from taotoken_cli.core.clients.live import LIVE_CLIENTS, find

        installed = [client for client in LIVE_CLIENTS if find(client, io.env)]
        if installed:  # said before anything runs; the clients not installed are findings of their own
            out.wrapped(notice(installed), hang="  ")
    with out.spinner(lambda: progress_text(checks, done), enabled=not options.json_out):
        report = run_doctor(ctx, checks, strict=options.strict, on_done=lambda check: done.add(check.id))
    if options.live:
        from taotoken_cli.cmd.doctor.live import run_live

        with out.spinner(lambda: _("running the clients…"), enabled=not options.json_out):
            report.findings.extend(run_live(io.env, io.cwd, report))
    if options.json_out:
        out.json(report_to_dict(report), schema=JSON_SCHEMA, exit_code=report.exit_code)
    else:
        render_text(out, report, verbose=options.verbose)
    if options.fix:
        from taotoken_cli.cmd.doctor.fix import offer_repairs

        if offer_repairs(io, report, assume_yes=options.yes).interrupted:
            return Exit.INTERRUPTED
    return report.exit_code
