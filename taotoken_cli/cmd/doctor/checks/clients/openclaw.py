"""OpenClaw's check: the provider its default model names in ~/.openclaw/openclaw.json (core/clients/openclaw.py),
its baseUrl in the form its adapter needs, and its key against taotoken's."""

from __future__ import annotations

from taotoken_cli.cmd.doctor.checks.clients.common import (
    SECTION,
    UrlForm,
    client_base_url_result,
    installed,
    parse_failure,
    permissions,
)
from taotoken_cli.cmd.doctor.checks.clients.proxied import proxy_check
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.fix import Fix
from taotoken_cli.core.base.i18n import N_, _
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import openclaw
from taotoken_cli.core.clients.base import ClientState, ConfigFile

OPENCLAW_FORM = UrlForm("OpenClaw", openclaw.URL_FORM, N_("root + /v1"), same_root_fix=Fix.run("taotoken init"))
_INIT = Fix.run(f"taotoken init --target {openclaw.NAME}")


def _found(ctx: DoctorContext) -> tuple[ClientState, ConfigFile] | Result:
    return installed(ctx, openclaw.NAME, "config", _("no ~/.openclaw, no `openclaw` on PATH"))


@check("openclaw.config", SECTION, N_("OpenClaw openclaw.json"))
def openclaw_config(ctx: DoctorContext) -> Result:
    found = _found(ctx)
    if isinstance(found, Result):
        return found
    _state, file = found
    if file.error:
        return parse_failure(file)
    data = file.data if isinstance(file.data, dict) else {}
    chosen = openclaw.primary(data)
    if not chosen or "/" not in chosen:
        return Result.warn(_("{path}: no default model (agents.defaults.model.primary): OpenClaw uses its own "
                             "default provider").format(path=file.path), fixes=[_INIT])
    provider_id, _slash, model = chosen.partition("/")
    models = data.get("models") if isinstance(data.get("models"), dict) else {}
    providers = models.get("providers") if isinstance(models.get("providers"), dict) else {}
    entry = providers.get(provider_id)
    if not isinstance(entry, dict) or not isinstance(entry.get("baseUrl"), str):
        return Result.ok(_("{path}: default model {model} is a built-in provider's, not the gateway's").format(
            path=file.path, model=chosen))
    issues = Issues()
    permissions(issues, file, holds_key=True)
    api = entry.get("api") or openclaw.API
    if api != openclaw.API:
        issues.details.append(_("adapter {api}: requests go to {url}").format(
            api=api, url=entry["baseUrl"].rstrip("/") + openclaw.ENDPOINTS.get(api, "")))
    else:
        issues.add_result(client_base_url_result(
            ctx, f"models.providers.{provider_id}.baseUrl {entry['baseUrl']!r}", entry["baseUrl"], OPENCLAW_FORM,
            why=lambda wanted, _changes: _("should be {url} (OpenClaw calls <baseUrl>/chat/completions)").format(
                url=wanted),
            set_fix=lambda url: _('set "{name}": "{value}" in {path}').format(name="baseUrl", value=url,
                                                                             path=file.path)))
    key = entry.get("apiKey")
    if not isinstance(key, str) or not key.strip():
        issues.fail(_("models.providers.{provider}.apiKey is empty: requests go out without a key").format(
            provider=provider_id), fixes=[_INIT])
    elif ctx.api_key and key.strip() != ctx.api_key:
        issues.warn(_("{name} {value} differs from taotoken's key {ours}").format(
            name=f"models.providers.{provider_id}.apiKey", value=mask_key(key), ours=mask_key(ctx.api_key)),
            fixes=[_INIT])
    if ctx.model and model != ctx.model:
        issues.details.append(_("model {model} (taotoken's model is {ours})").format(model=model, ours=ctx.model))
    return issues.result(_("{path}: {model} at {url}").format(path=file.path, model=chosen, url=entry["baseUrl"]))


proxy_check("openclaw.proxy", N_("OpenClaw and a proxy for a gateway on this machine"), openclaw.NAME, _found)
