"""Cline's checks: providers.json (the 4.x extension and CLI 3.x), the stores of older versions (3.66–3.89 and
CLI 2.x: globalState.json + secrets.json; ≤ 3.65: VS Code's state database, the key encrypted), and cline.*
keys in VS Code's settings that Cline never reads."""

from __future__ import annotations

from pathlib import Path

from taotoken_cli.cmd.doctor.checks.clients.common import (
    CLINE_FORM,
    SECTION,
    clean_root,
    client_base_url_result,
    client_state,
    installed,
    json_repair,
    parse_failure,
    permissions,
)
from taotoken_cli.cmd.doctor.checks.clients.proxied import proxy_check
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Repair, Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import cline as cline_client
from taotoken_cli.core.clients import cline_legacy as cline_legacy_store
from taotoken_cli.core.clients import vscode
from taotoken_cli.core.clients.base import ClientState, ConfigFile
from taotoken_cli.core.formats import jsonc


def _cline_base_url(ctx: DoctorContext, base: str, path: Path, provider_key: str, schema_fix: list[str]) -> Result:
    # Cline validates providers.json as a whole: an unusable baseUrl is a schema failure, not just a bad URL.
    if clean_root(base)[0] is None or "://" not in base:
        return Result.fail(_("baseUrl {value} is not a valid URL: Cline rejects the whole file").format(
            value=repr(base)), fixes=schema_fix)

    def repair(url: str) -> Repair:
        def edit(doc: dict) -> None:
            doc["providers"][provider_key]["settings"]["baseUrl"] = url

        return json_repair(path, _("set baseUrl to {url}").format(url=url), edit, secret=True)

    return client_base_url_result(
        ctx, f"baseUrl {base!r}", base, CLINE_FORM,
        why=lambda wanted, _changes: _("should be {url} (Cline calls <baseUrl>/chat/completions)").format(url=wanted),
        set_fix=lambda url: _('set "{name}": "{value}" in {path}').format(name="baseUrl", value=url, path=path),
        repair=repair, differs=_("{setting} {value} differs from taotoken's {url}").format(
            setting="baseUrl", value=base, url=CLINE_FORM.url(ctx.base_url)))


def cline_found(ctx: DoctorContext) -> tuple[ClientState, ConfigFile] | Result:
    return installed(ctx, cline_client.NAME, "providers", _("no ~/.cline, no extension, no `cline` on PATH"))


@check("cline.providers", SECTION, N_("Cline providers.json"))
def cline_providers(ctx: DoctorContext) -> Result:
    found = cline_found(ctx)
    if isinstance(found, Result):
        return found
    state, providers = found
    if providers.error:
        return parse_failure(providers)
    if not providers.exists:
        legacy = state.files.get("global_state")
        message = _("no {path}: Cline 4.x / CLI 3.x are not configured (only the pre-4.0 store {legacy} "
                    "exists)").format(path=providers.path, legacy=legacy.path) \
            if legacy is not None and legacy.exists else \
            _("no {path}: Cline 4.x / CLI 3.x are not configured").format(path=providers.path)
        return Result.warn(message, fixes=[Fix.run("taotoken init"), Fix.of(_("or: {fix}"), fix=Command(
            f"cline auth --provider openai-compatible --apikey sk-… --modelid {ctx.model or '<model>'} "
            f"--baseurl {CLINE_FORM.url(ctx.base_url or '<root>')}"))])
    issues = Issues()
    data = providers.data if isinstance(providers.data, dict) else {}
    table = data.get("providers")
    schema_fix = [Fix.of(_("move {path} away and run {command} (Cline reads an invalid file as empty: logged "
                           "out)"), path=providers.path, command=Command("taotoken init"))]
    if not isinstance(data.get("version"), int) or not isinstance(table, dict):
        return Result.fail(_('{path} does not match Cline\'s schema (needs "version": 1 and a "providers" object): '
                             "Cline reads it as empty").format(path=providers.path), fixes=schema_fix)
    permissions(issues, providers, holds_key=True)
    last = data.get("lastUsedProvider")
    if last and last not in table:
        issues.fail(_('lastUsedProvider "{name}" has no entry under "providers"').format(name=last),
                    fixes=schema_fix)
    entry = table.get(last) if last in table else table.get(cline_client.PROVIDER_ID)
    settings = entry.get("settings") if isinstance(entry, dict) else None
    if not isinstance(settings, dict) or not isinstance(settings.get("provider"), str):
        if entry is not None:
            issues.fail(_("the {name} entry has no settings.provider: fails Cline's schema").format(
                name=last or cline_client.PROVIDER_ID), fixes=schema_fix)
        return issues.result(_("{path}: provider {provider}").format(path=providers.path,
                                                                    provider=last or _("(none)")))
    provider_key = last if last in table else cline_client.PROVIDER_ID
    base = settings.get("baseUrl")
    if isinstance(base, str) and base:
        issues.add_result(_cline_base_url(ctx, base, providers.path, provider_key, schema_fix))
    key = settings.get("apiKey")
    if isinstance(key, str) and key != key.strip():
        clean = key.strip()

        def strip(doc: dict) -> None:
            doc["providers"][provider_key]["settings"]["apiKey"] = clean

        issues.fail(_("{name} has whitespace or a newline around it").format(name="apiKey"),
                    fixes=[Fix.run("taotoken doctor --fix")],
                    repairs=[json_repair(providers.path, _("strip whitespace from apiKey"), strip, secret=True)])
    elif isinstance(key, str) and ctx.api_key and key != ctx.api_key:
        issues.warn(_("{name} {value} differs from taotoken's key {ours}").format(
            name="apiKey", value=mask_key(key), ours=mask_key(ctx.api_key)), fixes=[Fix.run("taotoken init")])
    if settings.get("model") and ctx.model and settings["model"] != ctx.model:
        issues.details.append(_("model {model} (taotoken's model is {ours})").format(model=settings["model"],
                                                                                    ours=ctx.model))
    return issues.result(_("{path}: {provider} at {url}").format(path=providers.path, provider=settings["provider"],
                                                                 url=base or _("(default URL)")))


@check("cline.vscode", SECTION, N_("Cline keys in VS Code settings.json"))
def cline_vscode(ctx: DoctorContext) -> Result:
    files = vscode.settings_files(ctx.machine)
    if not files:
        return Result.skipped(_("no VS Code user settings.json"))
    issues = Issues()
    for path in files:
        file = vscode.read_settings(path)
        if file.error is not None or not isinstance(file.data, dict):
            continue  # claude.vscode reports a settings.json that does not parse
        text = file.text or ""
        root = jsonc.parse(text, jsonc=True).root
        found = [(e.key, text.count("\n", 0, e.start) + 1) for e in (root.entries if root else [])
                 if isinstance(e.key, str) and e.key.startswith("cline.")]
        if not found:
            continue
        keys = sorted({key for key, _ in found})

        def remove(data: dict, keys: list[str] = keys) -> None:
            for key in keys:
                data.pop(key, None)

        where = listed(_("{key} (line {line})").format(key=key, line=line) for key, line in found)
        issues.warn(_("{path}: {keys} — Cline has no settings here and never reads them").format(path=path, keys=where),
                    fixes=[Fix.of(_("remove the cline.* lines from {path}; configure Cline in "
                                    "~/.cline/data/settings/providers.json ({command} does it)"), path=path,
                                  command=Command("taotoken init"))],
                    repairs=[json_repair(path, _("remove {keys} (never read by Cline)").format(keys=listed(keys)),
                                         remove, allow_comments=True)])
    return issues.result(_("no cline.* keys in {paths}").format(paths=listed(str(p) for p in files)))


_CHECK_IN_CLINE = N_("open Cline's settings (the gear icon in its panel): API Provider \"OpenAI Compatible\", Base "
                      "URL, API Key and Model ID are what it uses")


@check("cline.legacy", SECTION, N_("Cline before 4.0: globalState/secrets"))
def cline_legacy(ctx: DoctorContext) -> Result:
    """The provider of a Cline extension older than 4.0 (or CLI 2.x), which does not read providers.json."""
    versions = vscode.extension_versions(ctx.machine, vscode.CLINE_EXTENSION)
    state = client_state(ctx, cline_client.NAME)
    files = cline_legacy_store.from_files(state.files["global_state"], state.files["secrets"])
    newest = versions[0][0] if versions else None
    if newest is None and files is None:
        return Result.skipped(_("no Cline extension and no pre-4.0 store (~/.cline/data/globalState.json)"))
    store = cline_legacy_store.store_of(newest) if newest else "file"
    providers = state.files["providers"]
    if store == "providers":
        return Result.skipped(_("Cline {version} reads providers.json (see cline.providers)").format(
            version=cline_legacy_store.version_text(newest)))
    if newest is None and providers.exists:  # CLI 3.x reads providers.json; globalState.json is what 2.x left
        return Result.skipped(_("no Cline extension; the CLI (3.x) reads {path} (see cline.providers)").format(
            path=providers.path))
    who = f"Cline {cline_legacy_store.version_text(newest)}" if newest else "Cline CLI 2.x"
    issues = Issues()
    if newest and providers.exists:
        issues.warn(_("{who} does not read {path} (Cline 4.0+ and CLI 3.x do)").format(who=who, path=providers.path),
                    fixes=[_("update the Cline extension to 4.x (it moves its settings into providers.json)"),
                           _("or: {fix}").format(fix=_(_CHECK_IN_CLINE))])
    if store == "file":
        seen = _check_file_store(ctx, issues, who, files, state.files["secrets"])
    else:
        seen = _check_vscode_store(ctx, issues, who)
    if not seen:
        return issues.result(_("{who}: no provider set").format(who=who))
    return issues.result(_("{label}: {text}").format(label=who, text=_("; ").join(seen)))


def _check_file_store(ctx: DoctorContext, issues: Issues, who: str, config, secrets) -> list[str]:
    if config is None:
        issues.warn(_("{who} keeps its provider in ~/.cline/data/globalState.json, which is missing or does not "
                      "parse").format(who=who), fixes=[_(_CHECK_IN_CLINE)])
        return []
    permissions(issues, secrets, holds_key=bool(config.api_key))
    seen = [_check_legacy_config(ctx, issues, who, config)]
    key = config.api_key
    if config.provider != cline_legacy_store.OPENAI:
        return seen
    if not isinstance(key, str) or not key:
        issues.fail(_("no {name} in {path}: Cline sends no key").format(name=cline_legacy_store.KEY,
                                                                         path=secrets.path),
                    fixes=[_(_CHECK_IN_CLINE)])
    elif key != key.strip():
        issues.fail(_("{name} in {path} has whitespace or a newline around it").format(name=cline_legacy_store.KEY,
                                                                                        path=secrets.path),
                    fixes=[_("paste the key again in Cline's settings (API Key) — {how}").format(
                        how=_(_CHECK_IN_CLINE))])
    elif ctx.api_key and key != ctx.api_key:
        issues.warn(_("{name} {value} differs from taotoken's key {ours}").format(
            name=cline_legacy_store.KEY, value=mask_key(key), ours=mask_key(ctx.api_key)),
                    fixes=[_(_CHECK_IN_CLINE)])
    else:
        seen.append(_("key {value}").format(value=mask_key(key)))
    return seen


def _check_vscode_store(ctx: DoctorContext, issues: Issues, who: str) -> list[str]:
    stores = cline_legacy_store.from_vscode(ctx.machine)
    unreadable = _('its API key is a VS Code SecretStorage secret: stored encrypted in state.vscdb with a key held '
                   'by the OS keychain ("Code Safe Storage"), so taotoken cannot read or compare it')
    if not stores:
        issues.warn(_("{who} keeps its provider in VS Code's state database (state.vscdb), and none was found").format(
            who=who), fixes=[_(_CHECK_IN_CLINE)])
        return []
    seen = []
    for found in stores:
        if found.error:
            issues.warn(_("{path} could not be read ({error}; VS Code may be writing it)").format(
                path=found.path, error=found.error),
                        fixes=[Fix.of(_("close VS Code and run {command} again"), command=Command("taotoken doctor")),
                               _(_CHECK_IN_CLINE)])
            continue
        if found.config is None:
            issues.details.append(_("{path}: no Cline settings").format(path=found.path))
            continue
        seen.append(_check_legacy_config(ctx, issues, who, found.config))
        if found.config.provider == cline_legacy_store.OPENAI:
            issues.details.append(_("an OpenAI Compatible key is stored; {why}").format(why=unreadable)
                                  if found.config.key_stored else
                                  _("no OpenAI Compatible key; {why}").format(why=unreadable))
            if not found.config.key_stored:
                issues.fail(_("{who}: no API key for OpenAI Compatible in {path}").format(who=who, path=found.path),
                            fixes=[_(_CHECK_IN_CLINE)])
            else:
                issues.details.append(_("to check it: {how}").format(how=_(_CHECK_IN_CLINE)))
    return seen


def _check_legacy_config(ctx: DoctorContext, issues: Issues, who: str, config) -> str:
    """Check the provider, base URL and model one store holds; returns what it found, in a few words."""
    where = config.where
    seen = _("{provider} in {where} ({mode} mode)").format(provider=config.provider, where=where, mode=config.mode) \
        if config.provider else _("no provider in {where} ({mode} mode)").format(where=where, mode=config.mode)
    if config.provider != cline_legacy_store.OPENAI:
        if config.provider is not None:
            issues.warn(_("{who} uses provider {provider}, not OpenAI Compatible: it does not talk to TaoToken").format(
                who=who, provider=repr(config.provider)), fixes=[_(_CHECK_IN_CLINE)])
        return seen
    base = config.base_url
    if not isinstance(base, str) or not base:
        issues.fail(_("{who}: OpenAI Compatible has no Base URL ({where})").format(who=who, where=where),
                    fixes=[_("in Cline's settings set Base URL to {url}").format(
                        url=CLINE_FORM.url(ctx.base_url or '<root>'))])
        return seen
    issues.add_result(client_base_url_result(
        ctx, f"openAiBaseUrl {base!r}", base, CLINE_FORM,
        why=lambda wanted, _changes: _("should be {url} (Cline calls <Base URL>/chat/completions)").format(url=wanted),
        set_fix=lambda url: _("in Cline's settings set Base URL to {url}").format(url=url),
        differs=_("{setting} {value} differs from taotoken's {url}").format(setting="openAiBaseUrl", value=base,
                                                                           url=CLINE_FORM.url(ctx.base_url))))
    if config.model and ctx.model and config.model != ctx.model:
        issues.details.append(_("model {model} (taotoken's model is {ours})").format(model=config.model,
                                                                                    ours=ctx.model))
    return _("OpenAI Compatible at {url}, model {model} ({where}, {mode} mode)").format(
        url=base, model=config.model or _("(none)"), where=where, mode=config.mode)


proxy_check("cline.proxy", N_("Cline and a proxy for a gateway on this machine"), cline_client.NAME, cline_found)
