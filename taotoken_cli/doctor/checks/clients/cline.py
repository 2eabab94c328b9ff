"""Cline's checks: providers.json (the 4.x extension and CLI 3.x), and cline.* keys in VS Code's settings that
Cline never reads."""

from __future__ import annotations

from pathlib import Path

from taotoken_cli import jsonc
from taotoken_cli.clients import cline as cline_client
from taotoken_cli.clients import vscode
from taotoken_cli.doctor.checks.clients.common import (
    CLINE_FORM,
    SECTION,
    clean_root,
    client_base_url_result,
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
