"""`taotoken check --client NAME`: run that client once, the way the user starts it, against the configured
gateway (the runner in core.clients.live), and say whether it reached the gateway, with what, and in its own
words why not. Exit status: the documented class of what happened (0 when it answered).
"""

from __future__ import annotations

from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.clients import live
from taotoken_cli.core.term.iostreams import IOStreams

NAMES = tuple(client.name for client in live.LIVE_CLIENTS)


def run_client_check(name: str, io: IOStreams, *, json_out: bool = False,
                     timeout_s: float = live.DEFAULT_TIMEOUT_S) -> int:
    client = live.BY_NAME.get(name)
    if client is None:
        raise InputError(_("--client {name} is not a client taotoken can run").format(name=repr(name)),
                         _("choose one of: {names}").format(names=listed(NAMES)))
    out = io.out
    if not json_out:
        out.wrapped(_("running {client} once: it sends one small request to the configured gateway").format(
            client=client.label), hang="  ")
    with out.spinner(lambda: _("running {client}…").format(client=client.label), enabled=not json_out):
        run = live.run_client(client, io.env, io.cwd, timeout_s=timeout_s)
    verdict = live.describe(run, io.cwd)
    if json_out:
        out.json({"client": client.name, "outcome": verdict.state, "status": verdict.status,
                  "ok": verdict.state == live.ANSWERED, "client_exit_code": run.exit_code,
                  "timed_out": run.timed_out, "elapsed_s": round(run.elapsed_s, 3), "message": verdict.message,
                  "details": verdict.details}, exit_code=verdict.exit)
        return verdict.exit
    write = out.wrapped if verdict.state == live.ANSWERED else out.error_wrapped
    write(verdict.message)
    for line in verdict.details:
        write(line, "  ", "    ")
    if verdict.state not in (live.ANSWERED, live.NOT_INSTALLED):
        out.error_wrapped(Fix.of(_("see why: {command}   (its static checks name the cause)"),
                                 command=Command("taotoken doctor --live")), hang="  ")
    return verdict.exit
