"""What the MCP server checks and the project env file checks share: the copies of the triple held in gateway
variables (clients.envvars), each checked against the triple taotoken uses: a URL in the form its variable needs
(through the one base-URL check, clients.common), the key (masked), the one-truth fix that brings copies in step."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from taotoken_cli.cmd.doctor.checks.clients.common import UrlForm, client_base_url_result, strip_key
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _
from taotoken_cli.core.base.masking import mask_key, remember_secret
from taotoken_cli.core.clients.envvars import KEY, URL, VARIABLES, EnvCopy, key_mark, taotoken_hosts


def recorded(ctx: DoctorContext):
    """The record init left for this profile (copies.Record), or None."""
    from taotoken_cli.core.clients.copies import read_record

    def read():
        record = read_record(ctx.machine)
        return record if record is not None and record.profile == ctx.settings.profile else None

    return ctx.memo("copies:record", read)


def hosts(ctx: DoctorContext) -> frozenset[str]:
    """TaoToken's hosts: the base URL's, and those init recorded for this profile."""
    record = recorded(ctx)
    return taotoken_hosts(ctx.base_url, record.options.taotoken_hosts if record else ())


def written(ctx: DoctorContext) -> tuple[str, ...]:
    """The marks of the keys taotoken wrote (envvars.key_mark): those init recorded, and the key it uses now."""
    record = recorded(ctx)
    marks = [*(record.options.written_keys if record else ()), *((key_mark(ctx.api_key),) if ctx.api_key else ())]
    return tuple(dict.fromkeys(marks))


def gateway_label(ctx: DoctorContext) -> str:
    """How a message names the gateway copies should point at: "TaoToken" for taotoken.net, else "the configured
    gateway HOST" (with a local relay or the mock, "points at taotoken.net, not TaoToken" would say nonsense)."""
    from taotoken_cli.core.clients.envvars import host_key, shown_host

    host = host_key(ctx.base_url)
    if host is None or host.split(":")[0] == "taotoken.net" or host.split(":")[0].endswith(".taotoken.net"):
        return "TaoToken"
    return _("the configured gateway {host}").format(host=shown_host(host))


def owned_values(copy: EnvCopy) -> dict[str, str]:
    """The variables of a copy that are TaoToken's: the only ones checked against the triple (and synced)."""
    return {name: value for name, value in copy.values.items() if name in copy.owned}


def sync_fix(ctx: DoctorContext, target: str, recorded_here: bool | None = None) -> Fix:
    """The one command that brings this target's copies in step with the triple."""
    record = recorded(ctx)
    if record is not None and target in record.targets and recorded_here is not False:
        return Fix.of(_("{command}   (or: {command2})"), command=Command("taotoken config sync"),
                      command2=Command("taotoken doctor --fix"))
    return Fix.of(_("{command}   (and later changes follow: {command2})"),
                  command=Command(f"taotoken init --target {target}"), command2=Command("taotoken config set"))


def show(name: str, value: str) -> str:
    return mask_key(value) if VARIABLES[name].role == KEY else repr(value)


def check_copy(issues: Issues, ctx: DoctorContext, values: Mapping[str, str], where: str, *, fix: str,
               set_fix: Callable[[str, str], str]) -> None:
    """Add what is wrong with gateway variables that should hold the triple: each URL in its variable's form and on
    taotoken's root, each key equal to taotoken's. `where` names the copy in messages; `set_fix(name, url)` is the
    edit that sets one URL there; `fix` the command that syncs the whole copy."""
    for name, value in values.items():
        var = VARIABLES[name]
        if var.role == URL:
            form = UrlForm(var.reader, var.form, N_("root + /v1") if var.suffix else N_("the bare root"),
                           same_root_fix=fix)
            issues.add_result(client_base_url_result(
                ctx, f"{where}: {name} = {value!r}", value, form,
                why=lambda wanted, _changes, var=var: _("should be {url}: {reason}").format(url=wanted,
                                                                                          reason=var.reason),
                set_fix=lambda url, name=name: set_fix(name, url)))
        elif var.role == KEY:
            remember_secret(value)
            if strip_key(value) != value:
                issues.fail(_("{where}: {name} has whitespace, a newline or quotes around the key (an HTTP header "
                              "cannot carry them: 401)").format(where=where, name=name), fixes=[fix])
            elif ctx.api_key and value != ctx.api_key:
                issues.warn(_("{where}: {name} = {value} differs from taotoken's key {ours}").format(
                    where=where, name=name, value=mask_key(value), ours=mask_key(ctx.api_key)), fixes=[fix])
