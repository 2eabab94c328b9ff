"""Cline's checks: providers.json (the 4.x extension and CLI 3.x), the stores of older versions (3.66–3.89 and
CLI 2.x: globalState.json + secrets.json; ≤ 3.65: VS Code's state database, the key encrypted), and cline.*
keys in VS Code's settings that Cline never reads."""

from __future__ import annotations

from pathlib import Path

from taotoken_cli import jsonc
from taotoken_cli.clients import cline as cline_client
from taotoken_cli.clients import cline_legacy as cline_legacy_store
from taotoken_cli.clients import vscode
from taotoken_cli.doctor.checks.clients.common import (
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
from taotoken_cli.doctor.context import DoctorContext
from taotoken_cli.doctor.model import Issues, Repair, Result
from taotoken_cli.doctor.registry import check
from taotoken_cli.masking import mask_key


def _cline_base_url(ctx: DoctorContext, base: str, path: Path, provider_key: str, schema_fix: list[str]) -> Result:
    # Cline validates providers.json as a whole: an unusable baseUrl is a schema failure, not just a bad URL.
    if clean_root(base)[0] is None or "://" not in base:
        return Result.fail(f"baseUrl {base!r} is not a valid URL: Cline rejects the whole file", fixes=schema_fix)

    def repair(url: str) -> Repair:
        def edit(doc: dict) -> None:
            doc["providers"][provider_key]["settings"]["baseUrl"] = url

        return json_repair(path, f"set baseUrl to {url}", edit, secret=True)

    return client_base_url_result(
        ctx, f"baseUrl {base!r}", base, CLINE_FORM,
        why=lambda wanted, _changes: f"should be {wanted} (Cline calls <baseUrl>/chat/completions)",
        set_fix=lambda url: f'set "baseUrl": "{url}" in {path}', repair=repair,
        differs=f"baseUrl {base} differs from taotoken's {ctx.base_url}/v1")


@check("cline.providers", SECTION, "Cline providers.json")
def cline_providers(ctx: DoctorContext) -> Result:
    found = installed(ctx, cline_client.NAME, "providers", "no ~/.cline, no extension, no `cline` on PATH")
    if isinstance(found, Result):
        return found
    state, providers = found
    if providers.error:
        return parse_failure(providers)
    if not providers.exists:
        legacy = state.files.get("global_state")
        hint = f" (only the pre-4.0 store {legacy.path} exists)" if legacy is not None and legacy.exists else ""
        return Result.warn(f"no {providers.path}: Cline 4.x / CLI 3.x are not configured{hint}",
                           fixes=["taotoken init",
                                  f"or: cline auth --provider openai-compatible --apikey sk-… --modelid "
                                  f"{ctx.model or '<model>'} --baseurl {ctx.base_url or '<root>'}/v1"])
    issues = Issues()
    data = providers.data if isinstance(providers.data, dict) else {}
    table = data.get("providers")
    schema_fix = [f"move {providers.path} away and run `taotoken init` (Cline reads an invalid file as empty: "
                  "logged out)"]
    if not isinstance(data.get("version"), int) or not isinstance(table, dict):
        return Result.fail(f"{providers.path} does not match Cline's schema (needs \"version\": 1 and a "
                           "\"providers\" object): Cline reads it as empty", fixes=schema_fix)
    permissions(issues, providers, holds_key=True)
    last = data.get("lastUsedProvider")
    if last and last not in table:
        issues.fail(f'lastUsedProvider "{last}" has no entry under "providers"', fixes=schema_fix)
    entry = table.get(last) if last in table else table.get(cline_client.PROVIDER_ID)
    settings = entry.get("settings") if isinstance(entry, dict) else None
    if not isinstance(settings, dict) or not isinstance(settings.get("provider"), str):
        if entry is not None:
            issues.fail(f"the {last or cline_client.PROVIDER_ID} entry has no settings.provider: fails Cline's schema",
                        fixes=schema_fix)
        return issues.result(f"{providers.path}: provider {last or '(none)'}")
    provider_key = last if last in table else cline_client.PROVIDER_ID
    base = settings.get("baseUrl")
    if isinstance(base, str) and base:
        issues.add_result(_cline_base_url(ctx, base, providers.path, provider_key, schema_fix))
    key = settings.get("apiKey")
    if isinstance(key, str) and key != key.strip():
        clean = key.strip()

        def strip(doc: dict) -> None:
            doc["providers"][provider_key]["settings"]["apiKey"] = clean

        issues.fail("apiKey has whitespace or a newline around it",
                    fixes=["taotoken doctor --fix"],
                    repairs=[json_repair(providers.path, "strip whitespace from apiKey", strip, secret=True)])
    elif isinstance(key, str) and ctx.api_key and key != ctx.api_key:
        issues.warn(f"apiKey {mask_key(key)} differs from taotoken's key {mask_key(ctx.api_key)}",
                    fixes=["taotoken init"])
    if settings.get("model") and ctx.model and settings["model"] != ctx.model:
        issues.details.append(f"model {settings['model']} (taotoken's model is {ctx.model})")
    return issues.result(f"{providers.path}: {settings['provider']} at {base or '(default URL)'}")


@check("cline.vscode", SECTION, "Cline keys in VS Code settings.json")
def cline_vscode(ctx: DoctorContext) -> Result:
    files = vscode.settings_files(ctx.machine)
    if not files:
        return Result.skipped("no VS Code user settings.json")
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

        where = ", ".join(f"{key} (line {line})" for key, line in found)
        issues.warn(f"{path}: {where} — Cline has no settings here and never reads them",
                    fixes=[f"remove the cline.* lines from {path}; configure Cline in "
                           "~/.cline/data/settings/providers.json (taotoken init does it)"],
                    repairs=[json_repair(path, f"remove {', '.join(keys)} (never read by Cline)", remove,
                                         allow_comments=True)])
    return issues.result(f"no cline.* keys in {', '.join(str(p) for p in files)}")


_CHECK_IN_CLINE = ("open Cline's settings (the gear icon in its panel): API Provider \"OpenAI Compatible\", Base URL, "
                   "API Key and Model ID are what it uses")


@check("cline.legacy", SECTION, "Cline before 4.0: globalState/secrets")
def cline_legacy(ctx: DoctorContext) -> Result:
    """The provider of a Cline extension older than 4.0 (or CLI 2.x), which does not read providers.json."""
    versions = vscode.extension_versions(ctx.machine, vscode.CLINE_EXTENSION)
    state = client_state(ctx, cline_client.NAME)
    files = cline_legacy_store.from_files(state.files["global_state"], state.files["secrets"])
    newest = versions[0][0] if versions else None
    if newest is None and files is None:
        return Result.skipped("no Cline extension and no pre-4.0 store (~/.cline/data/globalState.json)")
    store = cline_legacy_store.store_of(newest) if newest else "file"
    providers = state.files["providers"]
    if store == "providers":
        return Result.skipped(f"Cline {cline_legacy_store.version_text(newest)} reads providers.json "
                              "(see cline.providers)")
    if newest is None and providers.exists:  # CLI 3.x reads providers.json; globalState.json is what 2.x left
        return Result.skipped(f"no Cline extension; the CLI (3.x) reads {providers.path} (see cline.providers)")
    who = f"Cline {cline_legacy_store.version_text(newest)}" if newest else "Cline CLI 2.x"
    issues = Issues()
    if newest and providers.exists:
        issues.warn(f"{who} does not read {providers.path} (Cline 4.0+ and CLI 3.x do)",
                    fixes=["update the Cline extension to 4.x (it moves its settings into providers.json)",
                           f"or: {_CHECK_IN_CLINE}"])
    if store == "file":
        seen = _check_file_store(ctx, issues, who, files, state.files["secrets"])
    else:
        seen = _check_vscode_store(ctx, issues, who)
    return issues.result(f"{who}: " + ("; ".join(seen) or "no provider set"))


def _check_file_store(ctx: DoctorContext, issues: Issues, who: str, config, secrets) -> list[str]:
    if config is None:
        issues.warn(f"{who} keeps its provider in ~/.cline/data/globalState.json, which is missing or does not parse",
                    fixes=[_CHECK_IN_CLINE])
        return []
    permissions(issues, secrets, holds_key=bool(config.api_key))
    seen = [_check_legacy_config(ctx, issues, who, config)]
    key = config.api_key
    if config.provider != cline_legacy_store.OPENAI:
        return seen
    if not isinstance(key, str) or not key:
        issues.fail(f"no {cline_legacy_store.KEY} in {secrets.path}: Cline sends no key", fixes=[_CHECK_IN_CLINE])
    elif key != key.strip():
        issues.fail(f"{cline_legacy_store.KEY} in {secrets.path} has whitespace or a newline around it",
                    fixes=[f"paste the key again in Cline's settings (API Key) — {_CHECK_IN_CLINE}"])
    elif ctx.api_key and key != ctx.api_key:
        issues.warn(f"{cline_legacy_store.KEY} {mask_key(key)} differs from taotoken's key {mask_key(ctx.api_key)}",
                    fixes=[_CHECK_IN_CLINE])
    else:
        seen.append(f"key {mask_key(key)}")
    return seen


def _check_vscode_store(ctx: DoctorContext, issues: Issues, who: str) -> list[str]:
    stores = cline_legacy_store.from_vscode(ctx.machine)
    unreadable = "its API key is a VS Code SecretStorage secret: stored encrypted in state.vscdb with a key held " \
                 "by the OS keychain (\"Code Safe Storage\"), so taotoken cannot read or compare it"
    if not stores:
        issues.warn(f"{who} keeps its provider in VS Code's state database (state.vscdb), and none was found",
                    fixes=[_CHECK_IN_CLINE])
        return []
    seen = []
    for found in stores:
        if found.error:
            issues.warn(f"{found.path} could not be read ({found.error}; VS Code may be writing it)",
                        fixes=["close VS Code and run taotoken doctor again", _CHECK_IN_CLINE])
            continue
        if found.config is None:
            issues.details.append(f"{found.path}: no Cline settings")
            continue
        seen.append(_check_legacy_config(ctx, issues, who, found.config))
        if found.config.provider == cline_legacy_store.OPENAI:
            stored = "an OpenAI Compatible key is stored" if found.config.key_stored else "no OpenAI Compatible key"
            issues.details.append(f"{stored}; {unreadable}")
            if not found.config.key_stored:
                issues.fail(f"{who}: no API key for OpenAI Compatible in {found.path}", fixes=[_CHECK_IN_CLINE])
            else:
                issues.details.append(f"to check it: {_CHECK_IN_CLINE}")
    return seen


def _check_legacy_config(ctx: DoctorContext, issues: Issues, who: str, config) -> str:
    """Check the provider, base URL and model one store holds; returns what it found, in a few words."""
    where = config.where
    seen = f"{config.provider or 'no provider'} in {where} ({config.mode} mode)"
    if config.provider != cline_legacy_store.OPENAI:
        if config.provider is not None:
            issues.warn(f"{who} uses provider {config.provider!r}, not OpenAI Compatible: it does not talk to "
                        "TaoToken", fixes=[_CHECK_IN_CLINE])
        return seen
    base = config.base_url
    if not isinstance(base, str) or not base:
        issues.fail(f"{who}: OpenAI Compatible has no Base URL ({where})",
                    fixes=[f"in Cline's settings set Base URL to {ctx.base_url or '<root>'}/v1"])
        return seen
    issues.add_result(client_base_url_result(
        ctx, f"openAiBaseUrl {base!r}", base, CLINE_FORM,
        why=lambda wanted, _changes: f"should be {wanted} (Cline calls <Base URL>/chat/completions)",
        set_fix=lambda url: f"in Cline's settings set Base URL to {url}",
        differs=f"openAiBaseUrl {base} differs from taotoken's {ctx.base_url}/v1"))
    if config.model and ctx.model and config.model != ctx.model:
        issues.details.append(f"model {config.model} (taotoken's model is {ctx.model})")
    return f"OpenAI Compatible at {base}, model {config.model or '(none)'} ({where}, {config.mode} mode)"
