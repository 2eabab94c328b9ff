"""Codex's checks: config.toml's selected provider (base_url, wire_api, the key's source), legacy profiles,
auth.json and a project config."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taotoken_cli.cmd.doctor.checks.clients.common import (
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
from taotoken_cli.cmd.doctor.checks.clients.proxied import proxy_check
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Repair, Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import codex as codex_client
from taotoken_cli.core.clients.base import ClientState, ConfigFile
from taotoken_cli.core.platform import desktopenv, system


@dataclass(frozen=True)
class Codex:
    """What Codex reads: its parsed files, and the provider config.toml selects."""

    state: ClientState
    config: ConfigFile  # ~/.codex/config.toml
    data: dict  # its content ({} when it does not parse)
    provider_id: Any  # model_provider, as written
    provider: dict | None  # the [model_providers.<id>] table it selects, if there is one


def codex_found(ctx: DoctorContext) -> Codex | Result:
    found = installed(ctx, codex_client.NAME, "config", _("no ~/.codex, no `codex` on PATH"))
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
                      N_("config.toml does not parse (see codex.config)"))
_NO_PROVIDER = N_("no custom provider selected (see codex.config)")
codex_provider = unless(codex_parsed, lambda codex: codex.provider is None, _NO_PROVIDER)


@client_check("codex.config", N_("Codex config.toml"), codex_found)
def codex_config(ctx: DoctorContext, codex: Codex) -> Result:
    config, data, provider_id, provider = codex.config, codex.data, codex.provider_id, codex.provider
    if config.error:
        return parse_failure(config)
    if not config.exists:
        return Result.warn(_("no {path}: Codex uses OpenAI, not the gateway").format(path=config.path),
                           fixes=[Fix.run("taotoken init")])
    issues = Issues()
    permissions(issues, config, holds_key="experimental_bearer_token" in str(data))
    if provider_id is None or provider_id == "openai":
        if data.get("openai_base_url"):
            return Result.ok(_("built-in openai provider with openai_base_url = {url}").format(
                url=data["openai_base_url"]))
        issues.warn(_("{path} selects no custom provider (model_provider is {value}): Codex talks to OpenAI").format(
            path=config.path, value=provider_id) if provider_id else
                    _("{path} selects no custom provider (model_provider is unset): Codex talks to OpenAI").format(
            path=config.path), fixes=[Fix.run("taotoken init")])
    elif provider is None:
        issues.fail(_("model_provider = {value} but there is no {table} in {path}").format(
            value=repr(provider_id), table=f"[model_providers.{provider_id}]", path=config.path),
                    fixes=[Fix.of(_("{command}   (writes the provider table)"), command=Command("taotoken init"))])
    model = data.get("model")
    if model and ctx.model and model != ctx.model:
        issues.details.append(_("model = {model} (taotoken's model is {ours})").format(model=model, ours=ctx.model))
    return issues.result(_("{path} parses; provider {provider}, model {model}").format(
        path=config.path, provider=provider_id, model=model or _("(default)")))


@client_check("codex.base_url", N_("Codex provider base_url"), codex_provider)
def codex_base_url(ctx: DoctorContext, codex: Codex) -> Result:
    assert codex.provider is not None
    value = codex.provider.get("base_url")
    table = f"[model_providers.{codex.provider_id}]"
    path = codex.config.path
    if not isinstance(value, str) or not value:
        return Result.fail(_("{table} has no base_url in {path}").format(table=table, path=path),
                           fixes=[Fix.run("taotoken init")])

    def repair(url: str) -> Repair:
        def edit(doc) -> None:
            doc["model_providers"][codex.provider_id]["base_url"] = url

        return toml_repair(path, _("set {table} base_url to {url}").format(table=table, url=url), edit)

    return client_base_url_result(
        ctx, f"{table} base_url = {value!r}", value, CODEX_FORM, why=codex_url_why,
        set_fix=lambda url: _('set base_url = "{url}" in {table} of {path}').format(url=url, table=table, path=path),
        repair=repair, differs=_("{label} differs from taotoken's base URL {url}").format(
            label=f"{table} base_url = {value}", url=CODEX_FORM.url(ctx.base_url)))


@client_check("codex.wire_api", N_("Codex wire_api"), codex_parsed)
def codex_wire_api(ctx: DoctorContext, codex: Codex) -> Result:
    config, data, provider = codex.config, codex.data, codex.provider
    providers = data.get("model_providers") if isinstance(data.get("model_providers"), dict) else {}
    chat = [pid for pid, table in providers.items() if isinstance(table, dict) and table.get("wire_api") == "chat"]
    if not chat:
        if provider is None:
            return Result.skipped(_(_NO_PROVIDER))
        return Result.ok(f'wire_api = "{provider.get("wire_api", "responses")}"')

    def edit(doc) -> None:
        for pid in chat:
            doc["model_providers"][pid]["wire_api"] = "responses"

    tables = listed(f"[model_providers.{pid}]" for pid in chat)
    return Result.fail(_('wire_api = "chat" in {tables}: Codex refuses to start ("wire_api = \\"chat\\" is no '
                         'longer supported")').format(tables=tables),
                       details=[_("the gateway must then serve /v1/responses (see gateway.responses)")],
                       fixes=[_('set wire_api = "responses" in {tables} of {path}').format(tables=tables,
                                                                                           path=config.path)],
                       repairs=[toml_repair(config.path, _('set wire_api = "responses" in {tables}').format(
                           tables=tables), edit)])


@client_check("codex.profiles", N_("Codex legacy profiles"), codex_parsed)
def codex_profiles(ctx: DoctorContext, codex: Codex) -> Result:
    config, data = codex.config, codex.data
    profiles = data.get("profiles") if isinstance(data.get("profiles"), dict) else {}
    selector = data.get("profile")
    if not profiles and selector is None:
        return Result.ok(_("no legacy [profiles.*] or profile = in config.toml"))
    home = codex_client.paths(ctx.machine).home
    names = sorted(profiles)
    what = listed([f"[profiles.{n}]" for n in names] + ([f"profile = {selector!r}"] if selector is not None else []))
    fixes = [_("move {table} into {path} (without the {table} header) and start Codex with --profile {name}").format(
        table=f"[profiles.{n}]", path=home / f"{n}.config.toml", name=n) for n in names]
    fixes.append(_("delete {what} from {path}").format(what=what, path=config.path))
    repairs: list[Repair] = []
    targets = [home / f"{n}.config.toml" for n in names]
    from taotoken_cli.core.files.fsutil import stays_inside

    inside = all(stays_inside(home, t) for t in targets)  # a name such as ../../x must not write outside CODEX_HOME
    if not inside:
        fixes.insert(0, _("rename each profile whose name is not a plain file name (no / \\ or ..), then move it"))
    if names and inside and not any(t.exists() for t in targets) and all(isinstance(profiles[n], dict)
                                                                         for n in names):
        repairs = _profile_repairs(config.path, names, targets)
    return Result.fail(_("legacy {what} in {path}: rejected since Codex 0.134").format(what=what, path=config.path),
                       details=[_("profiles are now separate <name>.config.toml files selected with --profile")],
                       fixes=fixes, repairs=repairs)


def _profile_repairs(config_path: Path, names: list[str], targets: list[Path]) -> list[Repair]:
    from taotoken_cli.core.clients.base import parse_toml_doc
    from taotoken_cli.core.files.fsutil import endings_like
    from taotoken_cli.core.formats import tomledit

    def new_file(name: str) -> Callable[[str], str]:
        def transform(_text: str) -> str:
            # The table's own text moves: its comments, blank lines and sub-tables come along. The header is part
            # of the file, not a message: it stays English, whatever the language of the run.
            config_text = config_path.read_bytes().decode("utf-8")
            body = tomledit.table_text(parse_toml_doc(config_text, config_path), ("profiles", name))
            header = f"# moved from [profiles.{name}] of {config_path} by taotoken doctor --fix\n"
            return endings_like(header + body, config_text)
        return transform

    def strip(doc) -> None:
        tomledit.remove_in(doc, ("profiles",))
        tomledit.remove_in(doc, ("profile",))

    repairs = [Repair(target, _("create {file} from {table}").format(file=target.name, table=f"[profiles.{name}]"),
                      new_file(name), secret=True)
               for name, target in zip(names, targets, strict=True)]
    # The config edit comes last: the new files read the tables from config.toml before it is rewritten.
    repairs.append(toml_repair(config_path, _("remove the legacy [profiles] table and profile ="), strip))
    return repairs


@client_check("codex.auth_json", N_("Codex auth.json"), codex_found)
def codex_auth_json(ctx: DoctorContext, codex: Codex) -> Result:
    config, provider = codex.config, codex.provider
    auth = codex.state.files["auth"]
    if auth.error:
        return parse_failure(auth)
    if not auth.exists:
        return Result.ok(_("no auth.json (the key comes from the provider settings)"))
    issues = Issues()
    content = auth.data if isinstance(auth.data, dict) else {}
    permissions(issues, auth, holds_key=bool(content.get("OPENAI_API_KEY")))
    stray = [k for k in content if k in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "base_url")]
    if stray:
        def edit(doc: dict) -> None:
            for key in stray:
                doc.pop(key, None)

        names = listed(stray)
        issues.warn(_("{names} in {path} is never read: auth.json holds no base URL").format(names=names,
                                                                                             path=auth.path),
                    fixes=[_("remove {names} from {path}; the base URL belongs in {config} (base_url of the "
                             "provider)").format(names=names, path=auth.path, config=config.path)],
                    repairs=[json_repair(auth.path, _("remove {names}").format(names=names), edit, secret=True)])
    key = content.get("OPENAI_API_KEY")
    if provider is not None and provider.get("requires_openai_auth") and isinstance(key, str) and ctx.api_key \
            and key.strip() != ctx.api_key:
        issues.warn(_("OPENAI_API_KEY in {path} = {value} differs from taotoken's key {ours}").format(
            path=auth.path, value=mask_key(key), ours=mask_key(ctx.api_key)), fixes=[Fix.run("taotoken init")])
    return issues.result(_("{path}: auth_mode {mode}").format(path=auth.path,
                                                              mode=content.get("auth_mode", _("(unset)"))))


@client_check("codex.env_key", N_("Codex key variable exported"), codex_provider)
def codex_env_key(ctx: DoctorContext, codex: Codex) -> Result:
    provider_id, provider = codex.provider_id, codex.provider
    assert provider is not None
    var = provider.get("env_key")
    if not var:
        source = next((s for s in ("experimental_bearer_token", "requires_openai_auth", "auth") if provider.get(s)),
                      None)
        if source:
            return Result.ok(_("the key comes from {source}").format(source=source))
        return Result.fail(_("{table} has no env_key, experimental_bearer_token or requires_openai_auth: Codex sends "
                             "no key").format(table=f"[model_providers.{provider_id}]"),
                           fixes=[Fix.run("taotoken init")])
    value = ctx.env.get(var)
    facts = system.current()
    # set by init for programs started from the desktop (HKCU\Environment, launchctl): new windows have it
    registered = None if value else desktopenv.get([var], ctx.env)[var]
    if registered and facts.windows:
        return Result.warn(_("{name} is set in your Windows user environment ({value}) but not in this window: "
                             "programs started from here do not see it").format(name=var, value=mask_key(registered)),
                           fixes=[_("open a new terminal window (programs started from the Start menu get it)")])
    if registered:
        return Result.warn(_("{name} is set for apps started from the Dock ({value}) but not in this shell: "
                             "programs started from here do not see it").format(name=var, value=mask_key(registered)),
                           fixes=[_("open a new terminal window (it loads env.sh)")])
    if not value and facts.windows:
        return Result.fail(_("env_key = {quoted} but {name} is not set in this shell: Codex stops with a missing "
                             "environment variable error").format(quoted=repr(var), name=var),
                           fixes=[Fix.of(_("{command}   (sets it in your Windows user environment and PowerShell "
                                           "profile, so IDE-launched Codex sees it too)"),
                                         command=Command("taotoken init --target shell"))])
    if not value and facts.macos:
        return Result.fail(_("env_key = {quoted} but {name} is not set in this shell: Codex stops with a missing "
                             "environment variable error").format(quoted=repr(var), name=var),
                           fixes=[Fix.of(_("{command}   (env.sh for your shells and launchctl for apps started from "
                                           "the Dock, so IDE-launched Codex sees it too)"),
                                         command=Command("taotoken init --target shell"))])
    if not value:
        return Result.fail(_("env_key = {quoted} but {name} is not set in this shell: Codex stops with a missing "
                             "environment variable error").format(quoted=repr(var), name=var),
                           fixes=[Fix.of(_("{command}   (in ~/.bashrc or ~/.profile, so IDE-launched Codex sees "
                                           "it too)"), command=Command(f"export {var}=sk-…"))])
    if ctx.api_key and value.strip() != ctx.api_key:
        return Result.warn(_("{name} = {value} differs from taotoken's key {ours}").format(
            name=var, value=mask_key(value.strip()), ours=mask_key(ctx.api_key)),
                           fixes=[Fix.of(_("{command}   (the key taotoken uses)"),
                                         command=Command(f"export {var}=sk-…"))])
    if value != value.strip():
        return Result.fail(_("{name} has whitespace or a newline around the key").format(name=var),
                           fixes=[Fix.of(_("{command}   (no quotes, no newline)"),
                                         command=Command(f"export {var}=sk-…"))])
    return Result.ok(_("{name} is set ({value})").format(name=var, value=mask_key(value)))


proxy_check("codex.proxy", N_("Codex and a proxy for a gateway on this machine"), codex_client.NAME, codex_found)


@check("codex.project", SECTION, N_("Codex project config"))
def codex_project(ctx: DoctorContext) -> Result:
    from taotoken_cli.core.clients.base import read_toml

    home_config = codex_client.paths(ctx.machine).config
    found = codex_client.project_config(ctx.machine)
    if found is None:
        return Result.skipped(_("no project .codex/config.toml here"))
    file = read_toml(found)
    if file.error:
        return parse_failure(file)
    data = file.data if isinstance(file.data, dict) else {}
    ignored = [k for k in ("model_provider", "model_providers") if k in data]
    if ignored:
        names = listed(ignored)
        return Result.warn(_("{path} sets {names}: Codex ignores them in a project config (since about 0.129)").format(
            path=found, names=names), fixes=[_("move {names} to {path}").format(names=names, path=home_config)])
    return Result.ok(_("{path} sets no provider").format(path=found))
