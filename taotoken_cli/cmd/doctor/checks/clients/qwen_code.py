"""Qwen Code's checks: its settings files (the auth type, the model and the model-provider entry it selects,
settings files over the user's own), the base URL that entry (or OPENAI_BASE_URL) gives, and the key it sends,
read the way Qwen Code resolves them (core.clients.qwen_code.effective)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.cmd.doctor.checks.clients.common import (
    QWEN_FORM,
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
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import qwen_code as qwen_client
from taotoken_cli.core.clients.base import ClientState, ConfigFile

_INIT = Fix.run("taotoken init --target qwen-code")
# Keys a settings file over the user's own may set, and what they change.
_OVERRIDING = ("model", "modelProviders", "security", "env")


@dataclass(frozen=True)
class Qwen:
    state: ClientState
    settings: ConfigFile  # the user's settings.json
    found: qwen_client.Effective


def qwen_found(ctx: DoctorContext) -> Qwen | Result:
    found = installed(ctx, qwen_client.NAME, "settings", _("no ~/.qwen, no `qwen` on PATH"))
    if isinstance(found, Result):
        return found
    state = client_state(ctx, qwen_client.NAME)
    return Qwen(state, state.files["settings"], qwen_client.effective(ctx.machine, state))


def _broken(qwen: Qwen) -> list[ConfigFile]:
    return [f for role, f in qwen.state.files.items() if not role.startswith("env:") and f.error is not None]


_NOT_OPENAI = N_("Qwen Code does not use an OpenAI-compatible provider (see qwen.settings)")
qwen_openai = unless(qwen_found, lambda q: bool(_broken(q)) or q.found.auth_type != qwen_client.AUTH_TYPE,
                     _NOT_OPENAI)


def _own_entry(qwen: Qwen) -> bool:
    """The entry the model selects lives in the user's settings.json (so `doctor --fix` may edit it)."""
    return qwen.found.entry is not None and qwen.found.entry_from == str(qwen.settings.path)


def _edit_entry(qwen: Qwen, field: str, value: str, description: str) -> Repair:
    entry = qwen.found.entry or {}

    def edit(doc: dict) -> None:
        for item in doc["modelProviders"][qwen_client.AUTH_TYPE]:
            if isinstance(item, dict) and item.get("id") == entry.get("id") and \
                    item.get("baseUrl") == entry.get("baseUrl"):
                item[field] = value
                return

    return json_repair(qwen.settings.path, description, edit, secret=True, allow_comments=True)


@client_check("qwen.settings", N_("Qwen Code settings.json"), qwen_found)
def qwen_settings(ctx: DoctorContext, qwen: Qwen) -> Result:
    broken = _broken(qwen)
    if broken:
        return parse_failure(broken[0])
    settings, found = qwen.settings, qwen.found
    issues = Issues()
    permissions(issues, settings, holds_key="env" in (settings.data or {}) or "apiKey" in str(settings.data))
    if isinstance(settings.data, dict) and qwen_client.is_v1(settings.data):
        then = Fix.of(_("start Qwen Code once, then run {command}"),
                      command=Command("taotoken init --target qwen-code"))
        issues.warn(_("{path} is in the old settings format (version 1): Qwen Code converts it when it next "
                      "starts").format(path=settings.path), fixes=[then])
    if found.auth_type is None:
        issues.warn(_("no auth type is selected (security.auth.selectedType): Qwen Code asks for a login and, "
                      "headless, stops"), fixes=[_INIT])
        return issues.result("")
    if found.auth_type != qwen_client.AUTH_TYPE:
        issues.warn(_("auth type {type} ({source}): Qwen Code does not talk to the gateway").format(
            type=repr(found.auth_type), source=found.auth_from), fixes=[_INIT])
        return issues.result("")
    for role in ("project", "system"):
        file = qwen.state.files.get(role)
        keys = [k for k in _OVERRIDING if isinstance(file.data, dict) and k in file.data] if file else []
        if keys:
            issues.warn(_("{path} sets {keys} over your own settings").format(path=file.path, keys=", ".join(keys)),
                        fixes=[_("remove {keys} from {path}, or set the gateway there").format(
                            keys=", ".join(keys), path=file.path)])
    if found.entry is None:
        issues.details.append(_("no modelProviders.openai entry has id {model}: the key and URL come from "
                                "OPENAI_API_KEY / OPENAI_BASE_URL or security.auth").format(model=repr(found.model)))
    if ctx.model and found.model != ctx.model:  # a stale copy is config.copies' finding (it knows which side is right)
        issues.details.append(_("model {model} (taotoken's model is {ours})").format(model=found.model, ours=ctx.model))
    return issues.result(_("{path}: model {model} ({type})").format(path=settings.path, model=found.model,
                                                                    type=found.auth_type))


@client_check("qwen.base_url", N_("Qwen Code base URL"), qwen_openai)
def qwen_base_url(ctx: DoctorContext, qwen: Qwen) -> Result:
    found = qwen.found
    value = found.base_url or ""
    own = _own_entry(qwen)
    label = f"baseUrl {value!r}" if found.entry is not None else f"{found.base_url_from} = {value!r}"

    def repair(url: str) -> Repair:
        return _edit_entry(qwen, "baseUrl", url, _("set the baseUrl of model {model} to {url}").format(
            model=repr(found.model), url=url))

    return client_base_url_result(
        ctx, label, value, QWEN_FORM,
        why=lambda wanted, _changes: _("should be {url} (Qwen Code posts to <baseUrl>/chat/completions)").format(
            url=wanted),
        set_fix=lambda url: _('set "baseUrl": "{url}" in the modelProviders.openai entry of {model} in {path}').format(
            url=url, model=found.model, path=found.entry_from) if found.entry is not None else
        _("in {source} set {url}").format(source=found.base_url_from, url=url),
        repair=repair if own else None)


@client_check("qwen.key", N_("Qwen Code key"), qwen_openai)
def qwen_key(ctx: DoctorContext, qwen: Qwen) -> Result:
    found = qwen.found
    issues = Issues()
    if not found.key:
        variable = (found.entry or {}).get("envKey") or "OPENAI_API_KEY"
        issues.fail(_("no key: ${variable} is set nowhere Qwen Code looks (environment, .env files, settings "
                      "env)").format(variable=variable), fixes=[_INIT])
        return issues.result("")
    in_settings = found.key_from == f"env.{found.key_variable} ({qwen.settings.path})"
    variable = found.key_variable

    def set_key(value: str) -> Repair | None:
        if not in_settings:
            return None

        def edit(doc: dict) -> None:
            doc["env"][variable] = value

        return json_repair(qwen.settings.path, _("set {name}").format(name=f"env.{variable}"), edit, secret=True,
                           allow_comments=True)

    def wins_over_settings() -> None:  # a .env file (or an export) wins over the settings: it must go, or hold the key
        where = found.key_from or ""
        line = qwen_client.dotenv_line(Path(where), variable) if not where.startswith(("$", "env.")) else None
        issues.fail(_("Qwen Code sends {key} from {source}, which wins over {settings}: not taotoken's key "
                      "{ours}").format(key=mask_key(found.key), source=where, settings=qwen.settings.path,
                                       ours=mask_key(ctx.api_key)),
                    fixes=[_("delete the line {place} ({variable}=…)").format(place=f"{where}:{line}",
                                                                              variable=variable)
                           if line else _("unset {variable} where it is exported").format(variable=variable)])

    return sent_key(issues, ctx, qwen_client.LABEL, found.key, found.key_from or "", set_key,
                    other_fix=_("remove the whitespace in {source}").format(source=found.key_from),
                    compare=variable == qwen_client.ENV_KEY, unrepairable=wins_over_settings)


proxy_check("qwen.proxy", N_("Qwen Code and a proxy for a gateway on this machine"), qwen_client.NAME, qwen_found)
