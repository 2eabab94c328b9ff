"""A shell's proxy and a gateway on this machine: which of the clients started from a shell (proxy_rules.
proxied_clients) a proxy that a new shell has would carry there, by their real rules; what init says about it; and
the NO_PROXY command that exempts the gateway in the user's shell. env.sh's exemption itself is core.clients.shell's
(env.ps1's, winshell's); doctor's `<client>.proxy` checks read the same."""

from __future__ import annotations

import shlex

from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.clients.base import Machine, Triple
from taotoken_cli.core.clients.claude_code import no_proxy_with, shell_value
from taotoken_cli.core.clients.proxy_rules import RULES, proxied_clients
from taotoken_cli.core.clients.shell import NAME, loopback_host
from taotoken_cli.core.net.urlform import OPENAI_V1
from taotoken_cli.core.platform import shells, system


def shell_proxy(url: str, machine: Machine, client: str) -> tuple[str, str, str] | None:
    """(variable, proxy, where it is set) when `client`'s real proxy rule (core.clients.proxy_rules) sends a request
    to `url` through a proxy a new shell has (a start-up file's export, else this shell's), before env.sh; else
    None."""
    rule = RULES[client]
    shell_env: dict[str, str] = {}
    places: dict[str, list[str]] = {}
    for variable in (*rule.http, *rule.https, *rule.no_proxy):
        value, where = shell_value(variable, machine)
        if value:
            shell_env[variable], places[variable] = value, where
    variable = rule.variable_for(url, shell_env)
    if variable is None:
        return None
    return variable, shell_env[variable], ", ".join(places[variable]) or _("this shell")


def no_proxy_command(machine: Machine, host: str) -> Command:
    """`export NO_PROXY=…` (POSIX: doctor's runner and init say it in the user's shell) with the entries a new
    shell has and `host` (NO_PROXY's, else no_proxy's, as env.sh does); no_proxy too, the same list, where a new
    shell sets it (Qwen Code and OpenClaw read it first)."""
    spellings = ("NO_PROXY", "no_proxy")
    env = {name: value for name in spellings if (value := shell_value(name, machine)[0])}
    value = shlex.quote(no_proxy_with(env, host))
    return Command("; ".join(f"export {name}={value}" for name in spellings if name == "NO_PROXY" or name in env))


def proxied_gateway(triple: Triple, machine: Machine, targets: list[str]) -> list[str | Fix]:
    """For each client among `targets` started from a shell (proxied_clients) whose real proxy rule would send its
    requests to a gateway on this machine through a proxy a new shell has: a line that says so, where that proxy is
    set, and what init does about it (env.sh exempts the host) or, without the shell target, what to do (the
    command in the user's shell)."""
    host = loopback_host(triple.base_url)
    if host is None or system.current().windows:
        return []
    lines: list[str | Fix] = []
    for name, label in proxied_clients().items():
        found = shell_proxy(triple.url_for(OPENAI_V1), machine, name) if name in targets else None
        if found is None:
            continue
        variable, proxy, where = found
        if NAME in targets:
            lines.append(_("{client}: {variable}={proxy} ({where}) would carry its requests to the gateway on this "
                           "machine ({client} does not exempt loopback): env.sh now adds {host} to NO_PROXY").format(
                client=label, variable=variable, proxy=proxy, where=where, host=host))
        else:
            command = no_proxy_command(machine, host)
            lines.append(Fix.of(_("warning: {client}: {variable}={proxy} ({where}) carries its requests to the "
                                  "gateway on this machine ({client} does not exempt loopback); fix: add --target "
                                  "shell (env.sh then adds {host} to NO_PROXY), or {command} in your shell start-up "
                                  "file"), client=label, variable=variable, proxy=proxy, where=where, host=host,
                                command=Command(shells.in_shell(command.line, shells.syntax(machine.env)))))
    return lines
