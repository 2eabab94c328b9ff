"""Gemini CLI's checks: what it will use (its env file or the shell's variables, its settings files: see
core/clients/gemini_cli.py), and whether the gateway serves the Gemini API at all (it speaks nothing else)."""

from __future__ import annotations

from taotoken_cli.cmd.doctor.checks.clients.common import (
    SECTION,
    UrlForm,
    clean_root,
    client_base_url_result,
    client_state,
    parse_failure,
    permissions,
)
from taotoken_cli.cmd.doctor.checks.clients.proxied import proxy_check
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import gemini_cli

GEMINI_FORM = UrlForm("Gemini CLI", gemini_cli.URL_FORM, N_("bare root"), same_root_fix=Fix.run("taotoken init"),
                      trims=True)
_INIT = Fix.run(f"taotoken init --target {gemini_cli.NAME}")


def _not_found(ctx: DoctorContext) -> Result | None:
    state = client_state(ctx, gemini_cli.NAME)
    if not state.detection.found and not state.files["settings"].exists and not state.files["env"].exists:
        return Result.skipped(_("{client} not found ({where})").format(
            client=gemini_cli.LABEL, where=_("no ~/.gemini, no `gemini` on PATH")))
    return None


@check("gemini.config", SECTION, N_("Gemini CLI settings and env file"))
def gemini_config(ctx: DoctorContext) -> Result:
    skipped = _not_found(ctx)
    if skipped is not None:
        return skipped
    state = client_state(ctx, gemini_cli.NAME)
    for file in state.files.values():
        if file.error:
            return parse_failure(file)
    used = gemini_cli.effective(ctx.machine, state)
    issues = Issues(details=[_("env file it loads: {path}").format(path=used.env_file or _("(none)"))])
    permissions(issues, state.files["env"], holds_key=True)
    for name in gemini_cli.OTHER_AUTH:
        if ctx.env.get(name, "").lower() == "true":
            issues.fail(_("{variable}=true: Gemini CLI uses Google's endpoints, not the gateway").format(variable=name),
                        fixes=[Fix.of(_("{command} and remove it from your shell start-up files"),
                                      command=Command(f"unset {name}"))])
    if used.auth_type is None or used.auth_type.value != gemini_cli.AUTH_TYPE:
        shown = repr(used.auth_type.value) if used.auth_type else _("not set")
        issues.fail(_("security.auth.selectedType is {value}: Gemini CLI does not use a key from its env file "
                      "without {wanted}").format(value=shown, wanted=repr(gemini_cli.AUTH_TYPE)), fixes=[_INIT])
    if used.base_url is None:  # signed in with Google, or not set up: not a copy of the triple
        return Result.ok(_("not pointed at a gateway (no {variable}): Gemini CLI calls Google; to use TaoToken: "
                           "{command}").format(variable=gemini_cli.BASE_URL,
                                               command=f"taotoken init --target {gemini_cli.NAME}"),
                         details=issues.details)
    else:
        issues.add_result(client_base_url_result(
            ctx, f"{gemini_cli.BASE_URL} = {used.base_url.value!r} ({used.base_url.where})", used.base_url.value,
            GEMINI_FORM, set_fix=lambda url: _("set {name}={value} in {path}").format(
                name=gemini_cli.BASE_URL, value=url, path=used.base_url.where if used.base_url else ""),
            why=lambda wanted, _changes: _("should be {url}: Gemini CLI appends /v1beta/models/… itself").format(
                url=wanted)))
    if used.api_key is None:
        issues.fail(_("{variable} is not set: Gemini CLI sends no key").format(variable=gemini_cli.API_KEY),
                    fixes=[_INIT])
    elif ctx.api_key and used.api_key.value.strip() != ctx.api_key:
        issues.fail(_("{variable} = {value} ({where}) differs from taotoken's key {ours}").format(
            variable=gemini_cli.API_KEY, value=mask_key(used.api_key.value), where=used.api_key.where,
            ours=mask_key(ctx.api_key)), fixes=[_INIT])
    if used.model is not None and ctx.model and used.model.value != ctx.model:
        issues.details.append(_("model {model} from {where} (taotoken's model is {ours})").format(
            model=used.model.value, where=used.model.where, ours=ctx.model))
    key = mask_key(used.api_key.value) if used.api_key else _("(none)")
    return issues.result(_("{url}, key {key}, model {model}").format(
        url=used.base_url.value if used.base_url else _("(Google)"), key=key,
        model=used.model.value if used.model else _("(default)")))


@check("gemini.api", SECTION, N_("The gateway serves the Gemini API"), network=True)
def gemini_api_served(ctx: DoctorContext) -> Result:
    from taotoken_cli.cmd.doctor import probes
    from taotoken_cli.core.diagnosis import gemini_api

    skipped = _not_found(ctx)
    if skipped is not None:
        return skipped
    if not (ctx.base_url and ctx.api_key and ctx.model):
        return Result.skipped(_("no base URL, key and model to ask the gateway with"))
    found = probes.gemini(ctx)
    if found.served:
        return Result.ok(_("{url}: {reason}").format(url=found.url, reason=found.reason))
    used = gemini_cli.effective(ctx.machine, client_state(ctx, gemini_cli.NAME))
    pointed = used.base_url is not None and clean_root(used.base_url.value)[0] == ctx.base_url
    if found.served is False and not pointed:
        return Result.ok(_("{url}: {reason}: this gateway does not serve the Gemini API; Gemini CLI is not pointed "
                           "at it (init leaves it out)").format(url=found.url, reason=found.reason))
    if found.served is False:
        return Result.fail(_("{url}: {reason}: this gateway does not serve the Gemini API, the only one Gemini CLI "
                             "speaks").format(url=found.url, reason=found.reason), code=gemini_api.CODE,
                           fixes=[Fix.of(_("use Claude Code, Codex or Cline with this gateway ({command}), or ask "
                                           "its operator to enable the Gemini API"), command=Command("taotoken init"))])
    return Result.warn(_("could not tell whether the gateway serves the Gemini API ({url}: {reason})").format(
        url=found.url, reason=found.reason), code=found.diagnosis.code if found.diagnosis else None,
        fixes=[Fix.run("taotoken check --chat")])


proxy_check("gemini.proxy", N_("Gemini CLI and a proxy for a gateway on this machine"), gemini_cli.NAME,
            lambda ctx: _not_found(ctx) or client_state(ctx, gemini_cli.NAME))
