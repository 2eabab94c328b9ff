"""OpenCode's checks: its config files (the model it starts with, the provider that model names, files over the
user's own that change them), the provider's baseURL, and the key it sends (config apiKey, auth.json or a
variable), read the way OpenCode merges them (core.clients.opencode.effective)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.cmd.doctor.checks.clients.common import (
    OPENCODE_FORM,
    client_base_url_result,
    client_check,
    client_state,
    installed,
    json_repair,
    parse_failure,
    permissions,
    sent_key,
    unless,
)
from taotoken_cli.cmd.doctor.checks.clients.proxied import proxy_check
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Repair, Result
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _
from taotoken_cli.core.clients import opencode as opencode_client
from taotoken_cli.core.clients.base import ClientState, ConfigFile

_INIT = Fix.run("taotoken init --target opencode")


@dataclass(frozen=True)
class OpenCode:
    state: ClientState
    found: opencode_client.Effective
    broken: list[ConfigFile]  # the config files that do not parse


def opencode_found(ctx: DoctorContext) -> OpenCode | Result:
    found = installed(ctx, opencode_client.NAME, "config", _("no ~/.config/opencode, no `opencode` on PATH"))
    if isinstance(found, Result):
        return found
    state = client_state(ctx, opencode_client.NAME)
    broken = [file for file in state.files.values() if file.error is not None]
    return OpenCode(state, opencode_client.effective(ctx.machine, state), broken)


_NOT_OURS = N_("OpenCode does not use a provider of the gateway (see opencode.config)")
opencode_selected = unless(opencode_found, lambda oc: oc.found.entry is None or bool(oc.broken), _NOT_OURS)


def _editable(ctx: DoctorContext, where: str | None) -> Path | None:
    """`where` as a file `doctor --fix` may edit: not $OPENCODE_CONFIG_CONTENT, not an administrator's folder."""
    return opencode_client.user_file(ctx.machine, where)


@client_check("opencode.config", N_("OpenCode config"), opencode_found)
def opencode_config(ctx: DoctorContext, oc: OpenCode) -> Result:
    if oc.broken:
        return parse_failure(oc.broken[0])
    found, pid = oc.found, oc.found.provider_id
    if found.model is None:
        return Result.warn(_("no model is set: OpenCode starts with the last model it used, not the gateway's"),
                           fixes=[_INIT])
    issues = Issues()
    if found.entry is None:
        issues.fail(_('model "{model}" ({path}) uses provider {provider}, which no config file defines: OpenCode does '
                      'not send it to the gateway').format(model=found.model, path=found.model_from, provider=pid),
                    fixes=[_INIT])
        return issues.result("")
    for path, what in found.overridden:
        issues.warn(_("{path} sets {keys} over your own config").format(path=path, keys=what),
                    fixes=[_("remove {keys} from {path}, or set the gateway there").format(keys=what, path=path)])
    npm = found.entry.get("npm", opencode_client.PROVIDER_NPM)
    if npm != opencode_client.PROVIDER_NPM and pid == opencode_client.PROVIDER_ID:
        issues.fail(_('provider {provider} uses the package {npm}: the gateway speaks {wanted}').format(
            provider=pid, npm=npm, wanted=opencode_client.PROVIDER_NPM), fixes=[_INIT])
    model_id = found.model.split("/", 1)[1]
    models = found.entry.get("models") if isinstance(found.entry.get("models"), dict) else {}
    if model_id not in models:
        def add(doc: dict) -> None:
            doc.setdefault("provider", {}).setdefault(pid, {}).setdefault("models", {})[model_id] = {"name": model_id}

        file = _editable(ctx, found.provider_from)
        issues.fail(_('model {model} is not listed under provider.{provider}.models: OpenCode stops with '
                      '"Model not found"').format(model=repr(model_id), provider=pid),
                    fixes=[_INIT], repairs=[json_repair(file, _("add {model} to provider.{provider}.models").format(
                        model=repr(model_id), provider=pid), add, allow_comments=True)] if file else [])
    if ctx.model and model_id != ctx.model:  # a stale copy is config.copies' finding (it knows which side is right)
        issues.details.append(_("model {model} (taotoken's model is {ours})").format(model=model_id, ours=ctx.model))
    return issues.result(_("{path}: model {model}").format(path=found.model_from, model=found.model))


@client_check("opencode.base_url", N_("OpenCode provider baseURL"), opencode_selected)
def opencode_base_url(ctx: DoctorContext, oc: OpenCode) -> Result:
    found, pid = oc.found, oc.found.provider_id
    label = f"provider.{pid}.options.baseURL"
    if not found.base_url:
        return Result.fail(_("{name} is not set: OpenCode has no URL to send to").format(name=label), fixes=[_INIT])
    where = _editable(ctx, found.base_url_from)

    def repair(url: str) -> Repair:
        def edit(doc: dict) -> None:
            doc["provider"][pid].setdefault("options", {})["baseURL"] = url

        return json_repair(where, _("set {name} to {url}").format(name=label, url=url), edit, allow_comments=True)

    return client_base_url_result(
        ctx, f"{label} {found.base_url!r}", found.base_url, OPENCODE_FORM,
        why=lambda wanted, _changes: _("should be {url} (OpenCode posts to <baseURL>/chat/completions)").format(
            url=wanted),
        set_fix=lambda url: _('set "{name}": "{value}" in {path}').format(name=label, value=url,
                                                                         path=found.base_url_from),
        repair=repair if where else None)


@client_check("opencode.key", N_("OpenCode key"), opencode_selected)
def opencode_key(ctx: DoctorContext, oc: OpenCode) -> Result:
    found, pid = oc.found, oc.found.provider_id
    issues = Issues()
    auth = oc.state.files["auth"]
    permissions(issues, auth, holds_key=auth.exists)
    config = oc.state.files["config"]
    permissions(issues, config, holds_key=opencode_client.literal_key(opencode_client.provider_entry(config.data))
                is not None)
    if not found.key:
        issues.fail(_("no key for provider {provider}: OpenCode sends none (no options.apiKey, nothing in {auth}, no "
                      "variable)").format(provider=pid, auth=auth.path),
                    fixes=[_INIT, Fix.of(_("or: {command}"), command=Command("opencode auth login"))])
        return issues.result("")
    in_auth = found.key_from == str(auth.path)
    in_config = found.key_from is not None and found.key_from.startswith(f"provider.{pid}.options.apiKey (")

    def set_key(value: str) -> Repair | None:
        if in_auth:
            def edit_auth(doc: dict) -> None:
                doc[pid]["key"] = value

            return json_repair(auth.path, _("set the key of {provider} in {path}").format(provider=pid, path=auth.path),
                               edit_auth, secret=True)
        path = _editable(ctx, found.key_from.rsplit(" (", 1)[1].rstrip(")")) if in_config else None
        if path is None:
            return None

        def edit_config(doc: dict) -> None:
            doc["provider"][pid]["options"]["apiKey"] = value

        return json_repair(path, _("set {name}").format(name=f"provider.{pid}.options.apiKey"), edit_config,
                           secret=True, allow_comments=True)

    return sent_key(issues, ctx, opencode_client.LABEL, found.key, found.key_from or "", set_key, other_fix=_INIT,
                    compare=pid == opencode_client.PROVIDER_ID)


proxy_check("opencode.proxy", N_("OpenCode and a proxy for a gateway on this machine"), opencode_client.NAME,
            opencode_found)
