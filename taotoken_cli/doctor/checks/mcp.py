"""MCP servers (Clients section): every server definition whose `env` carries the gateway variables, in Claude
Code's, Codex's and Cline's files (clients.mcp), checked against the triple. Servers pointing at TaoToken are copies
of it (`taotoken init --target mcp` and the one-truth sync keep them in step); servers pointing elsewhere are only
listed, never changed."""

from __future__ import annotations

from taotoken_cli import gitrepo
from taotoken_cli.clients import mcp
from taotoken_cli.clients.envvars import KEY, MIXED, MODEL, TAOTOKEN, URL
from taotoken_cli.doctor.checks.clients.common import SECTION
from taotoken_cli.doctor.checks.gateway_vars import check_copy, hosts, sync_fix
from taotoken_cli.doctor.context import DoctorContext
from taotoken_cli.doctor.model import Issues, Result
from taotoken_cli.doctor.registry import check
from taotoken_cli.masking import mask_key, remember_secret

_NONE = "no MCP server carries gateway variables"


def scan(ctx: DoctorContext) -> mcp.Scan:
    def read() -> mcp.Scan:
        found = mcp.scan(ctx.machine, hosts(ctx))
        for server in found.servers:
            for value in server.copy.of_role(KEY).values():
                remember_secret(value)
        return found

    return ctx.memo("mcp:scan", read)


def ours(ctx: DoctorContext) -> list[mcp.McpServer]:
    return [server for server in scan(ctx).servers if server.copy.points == TAOTOKEN]


def _set_fix(server: mcp.McpServer):
    return lambda name, url: f"set {name} = {url} in the env of MCP server {server.short} ({server.file.path})"


@check("mcp.servers", SECTION, "MCP servers with gateway variables")
def mcp_servers(ctx: DoctorContext) -> Result:
    found = scan(ctx)
    issues = Issues()
    for _, file in found.files:
        if file.error is not None:
            issues.warn(f"{file.error.message}: its MCP servers are not checked", fixes=[file.error.fix or ""])
    if not found.files:
        return Result.skipped("no MCP settings files (Claude Code, Codex, Cline)")
    if not found.servers:
        issues.details.append("looked in: " + ", ".join(str(mcp_file.path) for mcp_file, _ in found.files))
        return issues.result(_NONE)
    for server in found.servers:
        copy = server.copy
        names = ", ".join(copy.names)
        if copy.points == TAOTOKEN:
            issues.details.append(f"{server.label}: {names} → TaoToken (kept in step by the sync)")
        else:
            issues.details.append(f"{server.label}: {names} — {server.where_left_alone(found.hosts)}; left alone")
        if copy.references:
            issues.details.append(f"{server.label} takes {', '.join(copy.references)} from the environment")
        if copy.points == MIXED:
            issues.warn(f"MCP server {server.label} {server.where_left_alone(found.hosts)}: a sync leaves it alone",
                        fixes=[f"point every URL in the env of {server.short} at one gateway ({server.file.path})"])
    count = len(ours(ctx))
    others = len(found.servers) - count
    return issues.result(f"{len(found.servers)} server(s) carry gateway variables: {count} point at TaoToken"
                         + (f", {others} elsewhere (listed, never changed)" if others else ""))


@check("mcp.base_url", SECTION, "MCP servers' base URLs")
def mcp_base_url(ctx: DoctorContext) -> Result:
    servers = [server for server in ours(ctx) if server.copy.hosts]
    if not servers:
        return Result.skipped("no MCP server pointing at TaoToken sets a base URL")
    issues = Issues()
    for server in servers:
        check_copy(issues, ctx, server.copy.of_role(URL), f"MCP server {server.label}", fix=sync_fix(ctx, mcp.NAME),
                   set_fix=_set_fix(server))
    return issues.result(f"{len(servers)} server(s): every base URL in the form its variable needs")


@check("mcp.key", SECTION, "MCP servers' keys")
def mcp_key(ctx: DoctorContext) -> Result:
    found = scan(ctx)
    with_keys = [server for server in found.servers if server.copy.of_role(KEY)]
    if not with_keys:
        return Result.skipped("no MCP server holds a key in a gateway variable")
    issues = Issues()
    for server in with_keys:
        keys = server.copy.of_role(KEY)
        if server.file.project and gitrepo.tracked(server.file.path):
            issues.fail(f"MCP server {server.label} holds {', '.join(keys)} in a file git tracks: a committed key "
                        "is a leak",
                        fixes=[f"replace each value by a reference: {server.from_environment(next(iter(keys)))}",
                               "rotate the key in the TaoToken console (git history keeps the old one)"])
        if server.copy.points == TAOTOKEN:
            check_copy(issues, ctx, keys, f"MCP server {server.label}", fix=sync_fix(ctx, mcp.NAME),
                       set_fix=_set_fix(server))
        elif ctx.api_key and ctx.api_key in keys.values():
            where = ", ".join(server.copy.other_hosts(found.hosts)) or "its SDK's default host (no base URL set)"
            issues.warn(f"MCP server {server.label} sends taotoken's key {mask_key(ctx.api_key)} to {where}",
                        fixes=[f"point it at TaoToken ({ctx.base_url}) or give it that service's own key"])
    return issues.result(f"{len(with_keys)} server(s): keys in step with taotoken's")


@check("mcp.model", SECTION, "MCP servers' models listed", network=True)
def mcp_model(ctx: DoctorContext) -> Result:
    from taotoken_cli.diagnosis.models import close_model_matches, model_ids
    from taotoken_cli.doctor import probes

    servers = [server for server in ours(ctx) if server.copy.of_role(MODEL)]
    if not servers:
        return Result.skipped("no MCP server pointing at TaoToken sets a model variable")
    if not (ctx.base_url and ctx.api_key):
        return Result.skipped("no usable base URL or key to ask for the model list (see Configuration)")
    obs = probes.models(ctx)
    ids = model_ids(obs.json()) if obs.ok_status else []
    if not ids:
        return Result.skipped(f"not checked: no model list from {ctx.base_url} (see gateway.model)")
    issues = Issues()
    for server in servers:
        for name, value in server.copy.of_role(MODEL).items():
            if value in ids:
                continue
            close = close_model_matches(value, ids, limit=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            issues.fail(f"MCP server {server.label}: {name} = {value!r} is not among the {len(ids)} models your "
                        f"key can use{hint}",
                        fixes=[f"set {name} in the env of {server.short} ({server.file.path}) to "
                               f"{close[0] if close else 'a listed model'}"])
    if issues.items:
        issues.details.append("available: " + ", ".join(ids[:8]) + (f", … ({len(ids)} in all)" if len(ids) > 8 else ""))
    return issues.result(f"{len(servers)} server(s): every model is listed")
