"""MCP servers (Clients section): every server definition whose `env` carries the gateway variables, in Claude
Code's, Codex's and Cline's files (clients.mcp), checked against the triple. Servers pointing at TaoToken are copies
of it (`taotoken init --target mcp` and the one-truth sync keep them in step); servers pointing elsewhere are only
listed, never changed."""

from __future__ import annotations

from taotoken_cli.cmd.doctor.checks.clients.common import SECTION
from taotoken_cli.cmd.doctor.checks.gateway_vars import (
    check_copy,
    gateway_label,
    hosts,
    owned_values,
    sync_fix,
    written,
)
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.i18n import N_, _, listed, ngettext
from taotoken_cli.core.base.masking import mask_key, remember_secret
from taotoken_cli.core.clients import mcp
from taotoken_cli.core.clients.envvars import KEY, MIXED, MODEL, TAOTOKEN, URL, left_alone
from taotoken_cli.core.files import gitrepo

_NONE = N_("no MCP server carries gateway variables")


def scan(ctx: DoctorContext) -> mcp.Scan:
    def read() -> mcp.Scan:
        found = mcp.scan(ctx.machine, hosts(ctx), written(ctx))
        for server in found.servers:
            for value in server.copy.of_role(KEY).values():
                remember_secret(value)
        return found

    return ctx.memo("mcp:scan", read)


def ours(ctx: DoctorContext) -> list[mcp.McpServer]:
    return [server for server in scan(ctx).servers if server.copy.points == TAOTOKEN]


def _set_fix(server: mcp.McpServer):
    return lambda name, url: _("set {name} = {url} in the env of MCP server {server} ({path})").format(
        name=name, url=url, server=server.short, path=server.file.path)


@check("mcp.servers", SECTION, N_("MCP servers with gateway variables"))
def mcp_servers(ctx: DoctorContext) -> Result:
    found = scan(ctx)
    issues = Issues()
    for _mcp_file, file in found.files:
        if file.error is not None:
            issues.warn(_("{error}: its MCP servers are not checked").format(error=file.error.message),
                        fixes=[file.error.fix or ""])
    if not found.files:
        return Result.skipped(_("no MCP settings files (Claude Code, Codex, Cline)"))
    if not found.servers:
        issues.details.append(_("looked in: {paths}").format(
            paths=listed(str(mcp_file.path) for mcp_file, _file in found.files)))
        return issues.result(_(_NONE))
    for server in found.servers:
        copy = server.copy
        names = listed(copy.names)
        if copy.points == TAOTOKEN:
            issues.details.append(_("{server}: {names} → {gateway} (kept in step by the sync)").format(
                server=server.label, names=listed(n for n in copy.names if n not in copy.foreign),
                gateway=gateway_label(ctx)))
            issues.details += [_("{server}: {why}").format(server=server.label, why=why) for why in left_alone(copy)]
        else:
            issues.details.append(_("{server}: {names} — {where}; left alone").format(
                server=server.label, names=names, where=server.where_left_alone(found.hosts)))
        if copy.references:
            issues.details.append(_("{server} takes {names} from the environment").format(
                server=server.label, names=listed(copy.references)))
        if copy.points == MIXED:
            # where_left_alone is a predicate ("points partly at TaoToken and partly at …")
            issues.warn(_("MCP server {server} {where}: a sync leaves it alone").format(
                server=server.label, where=server.where_left_alone(found.hosts)),
                        fixes=[_("point every URL in the env of {server} at one gateway ({path})").format(
                            server=server.short, path=server.file.path)])
    count = len(ours(ctx))
    others = len(found.servers) - count
    gateway = gateway_label(ctx)
    if others:
        # Both counts as "N at X", so no verb has to agree with them.
        message = ngettext(
            "{n} server carries gateway variables: {count} at {gateway}, {others} elsewhere (listed, never changed)",
            "{n} servers carry gateway variables: {count} at {gateway}, {others} elsewhere (listed, never changed)",
            len(found.servers)).format(n=len(found.servers), count=count, others=others, gateway=gateway)
    else:
        message = ngettext("{n} server carries gateway variables, pointing at {gateway}",
                           "{n} servers carry gateway variables, all pointing at {gateway}",
                           len(found.servers)).format(n=len(found.servers), gateway=gateway)
    kept = [f"{name} ({server.short})" for server in ours(ctx) for name in server.copy.foreign]
    if kept:  # said without -v too: a key the sync will never touch, and why is in the details
        message = ngettext("{message}; left alone: {keys}, another service's key",
                           "{message}; left alone: {keys}, other services' keys", len(kept)).format(
            message=message, keys=", ".join(kept))
    return issues.result(message)


@check("mcp.base_url", SECTION, N_("MCP servers' base URLs"))
def mcp_base_url(ctx: DoctorContext) -> Result:
    servers = [server for server in ours(ctx) if server.copy.hosts]
    if not servers:
        return Result.skipped(_("no MCP server pointing at TaoToken sets a base URL"))
    issues = Issues()
    for server in servers:
        urls = {name: value for name, value in owned_values(server.copy).items() if name in server.copy.of_role(URL)}
        check_copy(issues, ctx, urls, _("MCP server {server}").format(server=server.label),
                   fix=sync_fix(ctx, mcp.NAME), set_fix=_set_fix(server))
    return issues.result(ngettext("{n} server: every base URL in the form its variable needs",
                                  "{n} servers: every base URL in the form its variable needs",
                                  len(servers)).format(n=len(servers)))


@check("mcp.key", SECTION, N_("MCP servers' keys"))
def mcp_key(ctx: DoctorContext) -> Result:
    found = scan(ctx)
    with_keys = [server for server in found.servers if server.copy.of_role(KEY)]
    if not with_keys:
        return Result.skipped(_("no MCP server holds a key in a gateway variable"))
    compared = [server for server in with_keys if server.copy.points == TAOTOKEN]
    issues = Issues()
    for server in with_keys:
        keys = server.copy.of_role(KEY)
        if server.file.project and gitrepo.tracked(server.file.path):
            issues.fail(_("MCP server {server} holds {names} in a file git tracks: a committed key is a leak").format(
                server=server.label, names=listed(keys)),
                        fixes=[_("replace each value by a reference: {reference}").format(
                            reference=server.from_environment(next(iter(keys)))),
                               _("rotate the key in the TaoToken console (git history keeps the old one)")])
        if server.copy.points == TAOTOKEN:
            mine = {name: value for name, value in keys.items() if name in server.copy.owned}
            check_copy(issues, ctx, mine, _("MCP server {server}").format(server=server.label),
                       fix=sync_fix(ctx, mcp.NAME), set_fix=_set_fix(server))
        elif ctx.api_key and ctx.api_key in keys.values():
            where = listed(server.copy.other_hosts(found.hosts)) or _("its SDK's default host (no base URL set)")
            issues.warn(_("MCP server {server} sends taotoken's key {key} to {where}").format(
                server=server.label, key=mask_key(ctx.api_key), where=where),
                        fixes=[_("point it at TaoToken ({url}) or give it that service's own key").format(
                            url=ctx.base_url)])
    elsewhere = len(with_keys) - len(compared)
    if not compared:  # no "keys in step" for keys that were never compared
        return issues.result(ngettext("{n} server holds a key, pointing elsewhere: not TaoToken's, not compared",
                                      "{n} servers hold keys, pointing elsewhere: not TaoToken's, not compared",
                                      elsewhere).format(n=elsewhere))
    message = ngettext("{n} server at {gateway}: keys in step with taotoken's",
                       "{n} servers at {gateway}: keys in step with taotoken's", len(compared)).format(
        n=len(compared), gateway=gateway_label(ctx))
    if elsewhere:
        message = ngettext("{message} ({n} pointing elsewhere: not compared)",
                           "{message} ({n} pointing elsewhere: not compared)", elsewhere).format(message=message,
                                                                                              n=elsewhere)
    return issues.result(message)


@check("mcp.model", SECTION, N_("MCP servers' models listed"), network=True)
def mcp_model(ctx: DoctorContext) -> Result:
    from taotoken_cli.cmd.doctor import probes
    from taotoken_cli.core.diagnosis.model_ids import close_model_matches, model_ids

    servers = [server for server in ours(ctx) if server.copy.of_role(MODEL)]
    if not servers:
        return Result.skipped(_("no MCP server pointing at TaoToken sets a model variable"))
    if not (ctx.base_url and ctx.api_key):
        return Result.skipped(_("no usable base URL or key to ask for the model list (see Configuration)"))
    obs = probes.models(ctx)
    ids = model_ids(obs.json()) if obs.ok_status else []
    if not ids:
        return Result.skipped(_("not checked: no model list from {url} (see gateway.model)").format(url=ctx.base_url))
    issues = Issues()
    for server in servers:
        for name, value in server.copy.of_role(MODEL).items():
            if value in ids:
                continue
            close = close_model_matches(value, ids, limit=1)
            values = {"server": server.label, "name": name, "value": repr(value), "n": len(ids)}
            if close:
                message = _("MCP server {server}: {name} = {value} is not among the {n} models your key can use; did "
                            "you mean {suggestion}?").format(**values, suggestion=repr(close[0]))
                fix = _("set {name} in the env of {server} ({path}) to {model}").format(
                    name=name, server=server.short, path=server.file.path, model=close[0])
            else:
                message = _("MCP server {server}: {name} = {value} is not among the {n} models your key can "
                            "use").format(**values)
                fix = _("set {name} in the env of {server} ({path}) to a listed model").format(
                    name=name, server=server.short, path=server.file.path)
            issues.fail(message, fixes=[fix])
    if issues.items:
        shown = listed(ids[:8])
        issues.details.append(_("available: {models}, … ({n} in all)").format(models=shown, n=len(ids))
                              if len(ids) > 8 else _("available: {models}").format(models=shown))
    return issues.result(ngettext("{n} server: every model is listed", "{n} servers: every model is listed",
                                  len(servers)).format(n=len(servers)))
