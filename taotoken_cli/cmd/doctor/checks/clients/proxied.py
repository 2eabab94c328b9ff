"""The clients started from a shell take its proxy variables (core.clients.proxy_rules.proxied_clients: Codex,
Cline, Gemini CLI, OpenClaw, OpenCode, Qwen Code), and their real proxy rules (checked against the real clients) do
not exempt a gateway on this machine: the request goes to the proxy, which connects to its own loopback,
or hangs when it is down. One body for every client's `<client>.proxy` check, registered beside the client's other
checks with `proxy_check`; the repair is what init writes: env.sh (and env.fish) add the host to NO_PROXY. (Claude
Code's settings outrank the shell: claude.proxy.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from taotoken_cli.cmd.doctor.checks.clients.common import client_check
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Repair, Result
from taotoken_cli.core.base.fix import Fix
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.clients import CLIENTS, shell, shellproxy, winshell
from taotoken_cli.core.net.urlform import OPENAI_V1
from taotoken_cli.core.platform import system


def proxy_check(check_id: str, title: str, client: str, found: Callable[[DoctorContext], Any]) -> None:
    """Register `check_id` (`<the client's check prefix>.proxy`, `title` marked N_()) for `client` (its init target
    name, one of proxy_rules.proxied_clients()): skipped as the client's other checks are when `found` says it is not
    installed."""

    @client_check(check_id, title, found)
    def run(ctx: DoctorContext, _found: Any) -> Result:
        return loopback_proxy(ctx, client)


def loopback_proxy(ctx: DoctorContext, client: str) -> Result:
    label = CLIENTS[client].LABEL
    root = ctx.base_url
    host = shell.loopback_host(root)
    if root is None or host is None:
        return Result.skipped(_("the gateway is not on this machine: {client} takes the shell's proxy, like the "
                                "shell (see net.proxy)").format(client=label))
    found = shellproxy.shell_proxy(OPENAI_V1.url(root), ctx.machine, client)
    if found is None:
        return Result.ok(_("{client}'s requests to {host} go direct").format(client=label, host=host))
    variable, proxy, where = found
    where_env = shell.paths(ctx.machine)
    env_ps1 = ctx.machine.config_dir / winshell.ENV_PS1  # Windows: PowerShell's (winshell)
    files = [(path, path.suffix) for path in (where_env.env_sh, where_env.env_fish, env_ps1) if path.exists()]
    if files and all(shell.exempted(path.read_text(encoding="utf-8", errors="replace"), host) for path, _s in files) \
            and _loaded(ctx):
        return Result.ok(_("{client}'s requests to {host} go direct: {variable}={proxy} ({where}) is set, and env.sh "
                           "adds {host} to NO_PROXY").format(client=label, host=host, variable=variable, proxy=proxy,
                                                             where=where))
    issues = Issues()
    fixes: list[Fix | str] = [Fix.run("taotoken config sync")] if files else [
        Fix.run("taotoken init --target shell"),
        Fix.of(_("or {command} in your shell start-up file"), command=shellproxy.no_proxy_command(ctx.machine, host))]
    issues.warn(_("{client} sends its requests to the gateway on this machine through {proxy} ({variable}, {where}): "
                  "it does not exempt loopback (a dead proxy hangs it; a remote one connects to its own {host})")
                .format(client=label, proxy=proxy, variable=variable, where=where, host=host), fixes=fixes)
    for path, suffix in files:
        issues.repairs.append(Repair(path, _("add {host} to NO_PROXY in {path} (the gateway on this machine goes "
                                             "direct; your entries are kept)").format(host=host, path=path),
                                     lambda text, suffix=suffix: shell.with_exemption(
                                         text, host, fish=suffix == ".fish", powershell=suffix == ".ps1"),
                                     secret=True))
    return issues.result("")


def _loaded(ctx: DoctorContext) -> bool:
    """Is env.sh loaded by a new shell (a start-up file holds the marked line, not commented out)?"""
    where = shell.paths(ctx.machine)
    profiles = winshell.profiles(ctx.machine) if system.current().windows else []
    return any(shell.line_states((*shell.start_up_files(where), where.fish_conf, *profiles)).values())
