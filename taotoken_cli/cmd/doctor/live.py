"""`doctor --live`: each installed client run once against the configured gateway (the runner in
`core.clients.live`), as findings of their own in the Clients section, each tied to the static findings that
explain a failure. The static checks run first, so a live failure can name its cause.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

from taotoken_cli.cmd.doctor.model import Check, Finding, Report, Result, Status
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.clients import live

SECTION = "Clients"
# The static checks whose findings can explain a client's live failure.
_EXPLAINERS = {"claude-code": ("claude.", "env.anthropic", "net."),
               "codex": ("codex.", "env.openai", "env.proxy", "net."),
               "cline": ("cline.", "env.proxy", "net."),
               "gemini-cli": ("gemini.", "env.proxy", "net."),
               "openclaw": ("openclaw.", "env.proxy", "net."),
               "opencode": ("opencode.", "env.proxy", "net."),
               "qwen-code": ("qwen.", "env.proxy", "net.")}


def live_check(client: live.LiveClient) -> Check:
    # the title is the client's name (not translated); these checks run only with --live, outside the registry
    return Check(f"live.{client.name}", SECTION, client.label, lambda ctx: Result.skipped(""), network=True)


def notice(clients: list[live.LiveClient]) -> str:
    """What is about to happen, said before it happens."""
    return _("running {clients} once each: each sends one small request to the configured gateway").format(
        clients=listed(c.label for c in clients))


def run_live(env: Mapping[str, str], cwd: Path, report: Report, names: list[str] | None = None,
             timeout_s: float = live.DEFAULT_TIMEOUT_S) -> list[Finding]:
    """Every chosen client run at the same time (each waits on its gateway, not on the CPU)."""
    clients = [c for c in live.LIVE_CLIENTS if not names or c.name in names]
    findings: list[Finding | None] = [None] * len(clients)

    def work(index: int, client: live.LiveClient) -> None:
        run = live.run_client(client, env, cwd, timeout_s=timeout_s)
        findings[index] = Finding(live_check(client), judge(run, report, cwd), run.elapsed_s)

    threads = [threading.Thread(target=work, args=(i, c), daemon=True) for i, c in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [f for f in findings if f is not None]


def judge(run: live.LiveRun, report: Report | None, cwd: Path) -> Result:
    """The LiveRun as a finding: what happened, what the client used, its own words, and the static findings
    that explain a failure (their fixes become this finding's fixes)."""
    verdict = live.describe(run, cwd)
    if verdict.state == live.NOT_INSTALLED:
        return Result.skipped(verdict.message)
    if verdict.state == live.ANSWERED:
        return Result.ok(verdict.message, details=verdict.details)
    causes = explaining(run.client.name, report)
    details = verdict.details + [_("explained by {id}: {message}").format(id=f.check.id, message=f.result.message)
                                 for f in causes]
    fixes = [fix for f in causes for fix in f.result.fixes]
    if not causes:
        fixes.append(Fix.of(_("no static finding explains it: run the client yourself to see its whole output: "
                              "{command}"), command=Command(live.rerun_command(run.client))))
    return Result.fail(verdict.message, details=details, fixes=list(dict.fromkeys(fixes)))


def explaining(name: str, report: Report | None) -> list[Finding]:
    """The static findings (warnings and failures) that bear on this client, failures first."""
    if report is None:
        return []
    prefixes = _EXPLAINERS.get(name, ())
    found = [f for f in report.findings if f.status in (Status.FAIL, Status.WARN)
             and f.check.id.startswith(prefixes) and not f.check.id.startswith("live.")]
    return sorted(found, key=lambda f: f.status is not Status.FAIL)
