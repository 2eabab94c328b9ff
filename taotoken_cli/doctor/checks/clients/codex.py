"""Codex's checks: config.toml's selected provider (base_url, wire_api, the key's source), legacy profiles,
auth.json and a project config."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taotoken_cli.clients import codex as codex_client
from taotoken_cli.clients.base import ClientState, ConfigFile
from taotoken_cli.doctor.checks.clients.common import (
    CODEX_FORM,
    SECTION,
    client_base_url_result,
    client_check,
    codex_url_why,
    installed,
    json_repair,
    parse_failure,
    permissions,
    toml_repair,
    unless,
)
from taotoken_cli.doctor.context import DoctorContext
from taotoken_cli.doctor.model import Issues, Repair, Result
from taotoken_cli.doctor.registry import check
from taotoken_cli.masking import mask_key


@dataclass(frozen=True)
class Codex:
    """What Codex reads: its parsed files, and the provider config.toml selects."""

    state: ClientState
    config: ConfigFile  # ~/.codex/config.toml
    data: dict  # its content ({} when it does not parse)
    provider_id: Any  # model_provider, as written
    provider: dict | None  # the [model_providers.<id>] table it selects, if there is one


def codex_found(ctx: DoctorContext) -> Codex | Result:
    found = installed(ctx, codex_client.NAME, "config", "no ~/.codex, no `codex` on PATH")
    if isinstance(found, Result):
        return found
    state, config = found
    data = config.data if isinstance(config.data, dict) else {}
    provider_id = data.get("model_provider")
    providers = data.get("model_providers") if isinstance(data.get("model_providers"), dict) else {}
    provider = providers.get(provider_id) if isinstance(provider_id, str) else None
    return Codex(state, config, data, provider_id, provider if isinstance(provider, dict) else None)


# codex.config reports a config.toml that does not parse or selects no provider table; the checks that
# read them skip.
codex_parsed = unless(codex_found, lambda codex: bool(codex.config.error),
                      "config.toml does not parse (see codex.config)")
codex_provider = unless(codex_parsed, lambda codex: codex.provider is None,
                        "no custom provider selected (see codex.config)")


@client_check("codex.config", "Codex config.toml", codex_found)
def codex_config(ctx: DoctorContext, codex: Codex) -> Result:
    config, data, provider_id, provider = codex.config, codex.data, codex.provider_id, codex.provider
    if config.error:
        return parse_failure(config)
    if not config.exists:
        return Result.warn(f"no {config.path}: Codex uses OpenAI, not the gateway", fixes=["taotoken init"])
    issues = Issues()
    permissions(issues, config, holds_key="experimental_bearer_token" in str(data))
    if provider_id is None or provider_id == "openai":
        if data.get("openai_base_url"):
            return Result.ok(f"built-in openai provider with openai_base_url = {data['openai_base_url']}")
        issues.warn(f"{config.path} selects no custom provider (model_provider is "
                    f"{provider_id or 'unset'}): Codex talks to OpenAI", fixes=["taotoken init"])
    elif provider is None:
        issues.fail(f"model_provider = {provider_id!r} but there is no [model_providers.{provider_id}] in "
                    f"{config.path}", fixes=["taotoken init   (writes the provider table)"])
    model = data.get("model")
    if model and ctx.model and model != ctx.model:
        issues.details.append(f"model = {model} (taotoken's model is {ctx.model})")
    return issues.result(f"{config.path} parses; provider {provider_id}, model {model or '(default)'}")


@client_check("codex.base_url", "Codex provider base_url", codex_provider)
def codex_base_url(ctx: DoctorContext, codex: Codex) -> Result:
    assert codex.provider is not None
    value = codex.provider.get("base_url")
    table = f"[model_providers.{codex.provider_id}]"
    path = codex.config.path
    if not isinstance(value, str) or not value:
        return Result.fail(f"{table} has no base_url in {path}", fixes=["taotoken init"])

    def repair(url: str) -> Repair:
        def edit(doc) -> None:
            doc["model_providers"][codex.provider_id]["base_url"] = url

        return toml_repair(path, f"set {table} base_url to {url}", edit)

    return client_base_url_result(
        ctx, f"{table} base_url = {value!r}", value, CODEX_FORM, why=codex_url_why,
        set_fix=lambda url: f'set base_url = "{url}" in {table} of {path}', repair=repair,
        differs=f"{table} base_url = {value} differs from taotoken's base URL {ctx.base_url}/v1")


@client_check("codex.wire_api", "Codex wire_api", codex_parsed)
def codex_wire_api(ctx: DoctorContext, codex: Codex) -> Result:
    config, data, provider = codex.config, codex.data, codex.provider
    providers = data.get("model_providers") if isinstance(data.get("model_providers"), dict) else {}
    chat = [pid for pid, table in providers.items() if isinstance(table, dict) and table.get("wire_api") == "chat"]
    if not chat:
        if provider is None:
            return Result.skipped("no custom provider selected (see codex.config)")
        return Result.ok(f'wire_api = "{provider.get("wire_api", "responses")}"')

    def edit(doc) -> None:
        for pid in chat:
            doc["model_providers"][pid]["wire_api"] = "responses"

    tables = ", ".join(f"[model_providers.{pid}]" for pid in chat)
    return Result.fail(f'wire_api = "chat" in {tables}: Codex refuses to start ("wire_api = \\"chat\\" is no longer '
                       'supported")',
                       details=["the gateway must then serve /v1/responses (see gateway.responses)"],
                       fixes=[f'set wire_api = "responses" in {tables} of {config.path}'],
                       repairs=[toml_repair(config.path, f'set wire_api = "responses" in {tables}', edit)])


@client_check("codex.profiles", "Codex legacy profiles", codex_parsed)
def codex_profiles(ctx: DoctorContext, codex: Codex) -> Result:
    config, data = codex.config, codex.data
    profiles = data.get("profiles") if isinstance(data.get("profiles"), dict) else {}
    selector = data.get("profile")
    if not profiles and selector is None:
        return Result.ok("no legacy [profiles.*] or profile = in config.toml")
    home = codex_client.paths(ctx.machine).home
    names = sorted(profiles)
    what = ", ".join([f"[profiles.{n}]" for n in names] + ([f"profile = {selector!r}"] if selector is not None else []))
    fixes = [f"move [profiles.{n}] into {home / (n + '.config.toml')} (without the [profiles.{n}] header) and start "
             f"Codex with --profile {n}" for n in names]
    fixes.append(f"delete {what} from {config.path}")
    repairs: list[Repair] = []
    targets = [home / f"{n}.config.toml" for n in names]
    if names and not any(t.exists() for t in targets) and all(isinstance(profiles[n], dict) for n in names):
        repairs = _profile_repairs(config.path, names, targets)
    return Result.fail(f"legacy {what} in {config.path}: rejected since Codex 0.134",
                       details=["profiles are now separate <name>.config.toml files selected with --profile"],
                       fixes=fixes, repairs=repairs)


def _profile_repairs(config_path: Path, names: list[str], targets: list[Path]) -> list[Repair]:
    from taotoken_cli import tomledit
    from taotoken_cli.clients.base import parse_toml_doc

    def new_file(name: str) -> Callable[[str], str]:
        def transform(_text: str) -> str:
            # The table's own text moves: its comments, blank lines and sub-tables come along.
            config_text = config_path.read_bytes().decode("utf-8")
            body = tomledit.table_text(parse_toml_doc(config_text, config_path), ("profiles", name))
            header = f"# moved from [profiles.{name}] of {config_path} by taotoken doctor --fix\n"
            return tomledit.like(header + body, config_text)
        return transform

    def strip(doc) -> None:
        tomledit.remove_in(doc, ("profiles",))
        tomledit.remove_in(doc, ("profile",))

    repairs = [Repair(target, f"create {target.name} from [profiles.{name}]", new_file(name), secret=True)
               for name, target in zip(names, targets, strict=True)]
    # The config edit comes last: the new files read the tables from config.toml before it is rewritten.
    repairs.append(toml_repair(config_path, "remove the legacy [profiles] table and profile =", strip))
    return repairs


@client_check("codex.auth_json", "Codex auth.json", codex_found)
def codex_auth_json(ctx: DoctorContext, codex: Codex) -> Result:
    config, provider = codex.config, codex.provider
    auth = codex.state.files["auth"]
    if auth.error:
        return parse_failure(auth)
    if not auth.exists:
        return Result.ok("no auth.json (the key comes from the provider settings)")
    issues = Issues()
    content = auth.data if isinstance(auth.data, dict) else {}
    permissions(issues, auth, holds_key=bool(content.get("OPENAI_API_KEY")))
    stray = [k for k in content if k in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "base_url")]
    if stray:
        def edit(doc: dict) -> None:
            for key in stray:
                doc.pop(key, None)

        issues.warn(f"{', '.join(stray)} in {auth.path} is never read: auth.json holds no base URL",
                    fixes=[f"remove {', '.join(stray)} from {auth.path}; the base URL belongs in {config.path} "
                           "(base_url of the provider)"],
                    repairs=[json_repair(auth.path, f"remove {', '.join(stray)}", edit, secret=True)])
    key = content.get("OPENAI_API_KEY")
    if provider is not None and provider.get("requires_openai_auth") and isinstance(key, str) and ctx.api_key \
            and key.strip() != ctx.api_key:
        issues.warn(f"OPENAI_API_KEY in {auth.path} = {mask_key(key)} differs from taotoken's key "
                    f"{mask_key(ctx.api_key)}", fixes=["taotoken init"])
    return issues.result(f"{auth.path}: auth_mode {content.get('auth_mode', '(unset)')}")


@client_check("codex.env_key", "Codex key variable exported", codex_provider)
def codex_env_key(ctx: DoctorContext, codex: Codex) -> Result:
    provider_id, provider = codex.provider_id, codex.provider
    assert provider is not None
    var = provider.get("env_key")
    if not var:
        source = next((s for s in ("experimental_bearer_token", "requires_openai_auth", "auth") if provider.get(s)),
                      None)
        if source:
            return Result.ok(f"the key comes from {source}")
        return Result.fail(f"[model_providers.{provider_id}] has no env_key, experimental_bearer_token or "
                           "requires_openai_auth: Codex sends no key", fixes=["taotoken init"])
    value = ctx.env.get(var)
    if not value:
        return Result.fail(f"env_key = {var!r} but {var} is not set in this shell: Codex stops with a missing "
                           "environment variable error",
                           fixes=[f"export {var}=sk-…   (in ~/.bashrc or ~/.profile, so IDE-launched Codex sees "
                                  "it too)"])
    if ctx.api_key and value.strip() != ctx.api_key:
        return Result.warn(f"{var} = {mask_key(value.strip())} differs from taotoken's key {mask_key(ctx.api_key)}",
                           fixes=[f"export {var}=sk-…   (the key taotoken uses)"])
    if value != value.strip():
        return Result.fail(f"{var} has whitespace or a newline around the key",
                           fixes=[f"export {var}=sk-…   (no quotes, no newline)"])
    return Result.ok(f"{var} is set ({mask_key(value)})")


@check("codex.project", SECTION, "Codex project config")
def codex_project(ctx: DoctorContext) -> Result:
    from taotoken_cli.clients.base import read_toml

    home_config = codex_client.paths(ctx.machine).config
    found = codex_client.project_config(ctx.machine)
    if found is None:
        return Result.skipped("no project .codex/config.toml here")
    file = read_toml(found)
    if file.error:
        return parse_failure(file)
    data = file.data if isinstance(file.data, dict) else {}
    ignored = [k for k in ("model_provider", "model_providers") if k in data]
    if ignored:
        return Result.warn(f"{found} sets {', '.join(ignored)}: Codex ignores them in a project config "
                           "(since about 0.129)", fixes=[f"move {', '.join(ignored)} to {home_config}"])
    return Result.ok(f"{found} sets no provider")
