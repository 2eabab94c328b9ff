"""Run checks concurrently under one global deadline.

Every check runs in its own daemon thread: network probes overlap, and a probe stuck in DNS or
on a silent server cannot hold the run past its deadline (a daemon thread is simply abandoned
when the process exits). Checks that share a probe wait on the same memoised call.

What a check cut by the deadline reports does not depend on who wins a race: its probes end at the deadline and
classify what they saw (net.timeout for a gateway that did not answer); a network check that has still not reported
when the grace after the deadline ends (a loaded machine, a thread stuck in DNS) is reported as the same timeout,
net.timeout, by the runner.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from taotoken_cli.cmd.doctor.context import DeadlinePassed, DoctorContext
from taotoken_cli.cmd.doctor.model import Check, Finding, Report, Result, Status
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.platform.shells import in_shell_fix, syntax

TIMEOUT_CODE = "net.timeout"  # the catalogue's "did not answer in time": doctor's own limit ran out


def _timed_out(check: Check, ctx: DoctorContext) -> Result:
    """The finding of a check the deadline cut: said as a probe that timed out says it (probes.diagnose)."""
    from taotoken_cli.cmd.doctor.probes import timeout_fixes
    from taotoken_cli.core.diagnosis import catalogue

    message = _("doctor's own time limit ({seconds} s, --timeout) ran out before this check finished").format(
        seconds=f"{ctx.timeout:g}")
    if check.network:
        message = _("{title}: {error}").format(title=_(catalogue.get(TIMEOUT_CODE).title), error=message)
    return Result.fail(
        message,
        details=[_("the probe was still waiting when the run's deadline passed")],
        fixes=timeout_fixes(ctx),
        code=TIMEOUT_CODE if check.network else None,
        timed_out=True,
    )


def _run_one(check: Check, ctx: DoctorContext) -> Result:
    try:
        result = check.run(ctx)
    except DeadlinePassed:
        return _timed_out(check, ctx)
    except Exception as exc:  # a bug in one check must not take the others down
        if os.environ.get("TAOTOKEN_DEBUG"):
            raise
        return Result.fail(_("the check itself failed ({error})").format(error=f"{type(exc).__name__}: {exc}"),
                           fixes=[_("run again with TAOTOKEN_DEBUG=1 for the traceback and report it")])
    # The checks write a variable's fix once, in POSIX (`export X=…`); the user reads it in their shell's syntax.
    shell = syntax(ctx.env)
    result.fixes = [in_shell_fix(fix, shell) for fix in result.fixes]
    return result


def run_checks(ctx: DoctorContext, checks: list[Check],
               on_done: Callable[[Check], None] | None = None) -> list[Finding]:
    """Every check's Finding, in the order of `checks`; `on_done` hears of each check as it ends (from the
    check's thread)."""
    findings: list[Finding | None] = [None] * len(checks)
    tell = on_done or (lambda check: None)
    ctx.check_ids = frozenset(c.id for c in checks if not (c.network and ctx.offline))
    threads: list[tuple[int, threading.Thread]] = []

    def work(index: int, check: Check) -> None:
        started = time.monotonic()
        result = _run_one(check, ctx)
        findings[index] = Finding(check, result, time.monotonic() - started)
        tell(check)

    for index, check in enumerate(checks):
        if check.network and ctx.offline:
            findings[index] = Finding(check, Result.skipped(_("--offline: no network probes")))
            tell(check)
            continue
        thread = threading.Thread(target=work, args=(index, check), name=f"doctor:{check.id}", daemon=True)
        thread.start()
        threads.append((index, thread))
    for index, thread in threads:
        thread.join(max(0.0, ctx.cutoff - time.monotonic()))
        if findings[index] is None:
            findings[index] = Finding(checks[index], _timed_out(checks[index], ctx), ctx.timeout)
    done = [f for f in findings if f is not None]
    ran = {f.check.id for f in done}
    for f in done:
        if f.status is Status.SKIPPED and f.result.blocked_by and f.result.blocked_by not in ran:
            f.result.status = Status.FAIL  # the explaining check was not run: do not hide the problem
    return done


def abandoned_threads() -> bool:
    """Are check threads still running (stuck past the deadline)?"""
    return any(t.name.startswith("doctor:") and t.is_alive() for t in threading.enumerate())


def run_doctor(ctx: DoctorContext, checks: list[Check], *, strict: bool = False,
               on_done: Callable[[Check], None] | None = None) -> Report:
    from taotoken_cli.core.base.masking import mask_key

    findings = run_checks(ctx, checks, on_done)
    s = ctx.settings
    return Report(
        findings=findings,
        elapsed_s=time.monotonic() - ctx.started,
        deadline_s=ctx.timeout,
        offline=ctx.offline,
        profile=s.profile,
        config_path=str(s.config_path),
        triple={"base_url": s.base_url.value,
                "api_key": mask_key(s.api_key.value or s.api_key.raw) if (s.api_key.value or s.api_key.raw) else None,
                "model": s.model.value},
        strict=strict,
    )
