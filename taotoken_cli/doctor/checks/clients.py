"""Clients: Claude Code, Codex, Cline and CC Switch, read through taotoken_cli.clients (the same readers
`init` writes with). Each trap from reference/client-configs.md is its own check with a stable id."""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from taotoken_cli import hygiene
from taotoken_cli.doctor.context import DoctorContext
from taotoken_cli.doctor.model import Issues, Repair, Result
from taotoken_cli.doctor.registry import check
from taotoken_cli.errors import InputError
from taotoken_cli.fsutil import is_world_readable
from taotoken_cli.masking import mask_key

if TYPE_CHECKING:
    from taotoken_cli.clients.base import ClientState, ConfigFile

SECTION = "Clients"
Found = TypeVar("Found")


# -- plumbing ------------------------------------------------------------------------------------------

def client_module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"taotoken_cli.clients.{name}")
    except ImportError:
        return None


def client_state(ctx: DoctorContext, name: str):
    """The client's ClientState (parsed files, parse errors kept), read once per run; None if unsupported."""
    module = client_module(name)
    if module is None:
        return None

    def read():
        if name == "claude_code":
            return module.read(ctx.env, cwd=ctx.cwd)
        return module.read(ctx.env)

    return ctx.memo(f"client:{name}", read)


def _missing_module(label: str) -> Result:
    return Result.skipped(f"{label} support is not part of this build yet")


def installed(ctx: DoctorContext, name: str, label: str, role: str,
              not_found: str) -> tuple[ModuleType, ClientState, ConfigFile] | Result:
    """(client module, parsed files, the file in `role`), or skipped when the client is neither detected nor
    has that file (`not_found` says where doctor looked)."""
    module = client_module(name)
    if module is None:
        return _missing_module(label)
    state = client_state(ctx, name)
    file = state.files[role]
    if not state.detection.found and not file.exists:
        return Result.skipped(f"{label} not found ({not_found})")
    return module, state, file


def json_repair(path: Path, description: str, edit: Callable[[Any], None], *, secret: bool = False) -> Repair:
    """A repair that edits parsed JSON and writes it back in the file's own style."""
    from taotoken_cli.jsonedit import dumps_like, parse_json

    def transform(text: str) -> str:
        data = parse_json(text, path) if text.strip() else {}
        edit(data)
        return dumps_like(data, text)

    return Repair(path, description, transform, secret=secret)


def toml_repair(path: Path, description: str, edit: Callable[[Any], None], *, secret: bool = False) -> Repair:
    """A repair that edits the TOML document with tomlkit (comments and layout kept)."""
    import tomlkit

    from taotoken_cli.clients.base import parse_toml_doc

    def transform(text: str) -> str:
        doc = parse_toml_doc(text, path)
        edit(doc)
        return tomlkit.dumps(doc)

    return Repair(path, description, transform, secret=secret)


def parse_failure(file) -> Result:
    err = file.error
    return Result.fail(err.message, fixes=[err.fix] if err.fix else [])


def clean_root(value: str) -> tuple[str | None, list[str]]:
    """(API root, what cleaning changed) for a base URL found in a client file."""
    try:
        cleaned = hygiene.clean_base_url(value)
    except InputError as exc:
        return None, [exc.message]
    return cleaned.value, cleaned.changes


def _strip_key(value: Any) -> str | None:
    return value.strip().strip("'\"") if isinstance(value, str) else None


def _permissions(issues: Issues, file, holds_key: bool) -> None:
    if holds_key and file.exists and is_world_readable(file.path):
        issues.warn(f"{file.path} holds the key and is readable by other users", fixes=[f"chmod 600 {file.path}"])


def client_check(check_id: str, title: str, resolve: Callable[[DoctorContext], Found | Result]):
    """Register `body(ctx, found)` as a check. `resolve` reads the client's files once; when it returns a
    Result instead (client not installed, file does not parse), the check returns that without running body."""

    def register(body: Callable[[DoctorContext, Found], Result]) -> Callable[[DoctorContext], Result]:
        @functools.wraps(body)
        def run(ctx: DoctorContext) -> Result:
            found = resolve(ctx)
            return found if isinstance(found, Result) else body(ctx, found)

        return check(check_id, SECTION, title)(run)

    return register


def unless(resolve: Callable[[DoctorContext], Found | Result], broken: Callable[[Found], bool],
           skip: str) -> Callable[[DoctorContext], Found | Result]:
    """A resolver for client_check: what `resolve` finds, or skipped with `skip` where `broken(found)`."""

    def run(ctx: DoctorContext) -> Found | Result:
        found = resolve(ctx)
        return Result.skipped(skip) if not isinstance(found, Result) and broken(found) else found

    return run


SAME_ROOT_FIX = "taotoken init   (writes the same root everywhere)"


@dataclass(frozen=True)
class UrlForm:
    """How a client needs its base URL written: the API root plus `suffix`, because of the paths it appends."""

    client: str
    suffix: str  # "" (a bare root) or "/v1"
    name: str  # the form, as an ok result names it
    same_root_fix: str = SAME_ROOT_FIX  # the fix when the URL names another root than taotoken's
    trims: bool = False  # whitespace around the value does not count against the form


CLAUDE_FORM = UrlForm("Claude Code", "", "bare root", trims=True)  # appends /v1/messages itself
CODEX_FORM = UrlForm("Codex", "/v1", "root + /v1")  # calls <base_url>/responses
CLINE_FORM = UrlForm("Cline", "/v1", "root + /v1", same_root_fix="taotoken init")  # calls <baseUrl>/chat/completions


def client_base_url_result(ctx: DoctorContext, label: str, value: str, form: UrlForm, *,
                           why: Callable[[str, list[str]], str], set_fix: Callable[[str], str],
                           repair: Callable[[str], Repair] | None = None, unusable_fix: str | None = None,
                           differs: str | None = None) -> Result:
    """A base URL found in a client's file, checked in turn: a usable URL? in the client's form? the root
    taotoken uses? Fails (with the fix, and the repair where the value is in a file), warns, or is ok.

    `label` names the setting and its value in messages; `why(wanted, changes)` says why the value is not in
    the client's form; `set_fix(url)` is the instruction, `repair(url)` the `doctor --fix` edit, that write a
    URL there. Where a client words it differently: `unusable_fix` (default: set taotoken's URL) and
    `differs` (default: "<label> differs from taotoken's base URL …").
    """
    root, changes = clean_root(value)
    if root is None:
        return Result.fail(f"{label} is not a usable URL: {changes[0]}",
                           fixes=[unusable_fix or set_fix(f"{ctx.base_url}{form.suffix}")])
    wanted = root + form.suffix
    if (value.strip() if form.trims else value) != wanted:
        return Result.fail(f"{label} {why(wanted, changes)}", fixes=[set_fix(wanted)],
                           repairs=[repair(wanted)] if repair else [])
    if ctx.base_url and root != ctx.base_url:
        return Result.warn(differs or f"{label} differs from taotoken's base URL {ctx.base_url}{form.suffix}",
                           fixes=[form.same_root_fix])
    return Result.ok(f"{wanted} ({form.name}, as {form.client} needs)")


# -- Claude Code -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Claude:
    """What Claude Code reads: its client module, its parsed files, and the env block of settings.json."""

    module: ModuleType
    state: ClientState
    settings: ConfigFile  # the user settings.json
    block: dict  # its env block ({} when the file does not parse)

    def value(self, ctx: DoctorContext, name: str) -> tuple[str | None, str]:
        """A variable as Claude Code sees it: the settings env block overrides the shell."""
        if isinstance(self.block.get(name), str) and self.block[name] != "":
            return self.block[name], "settings.json"
        if ctx.env.get(name):
            return ctx.env[name], "shell"
        return None, ""


def claude_found(ctx: DoctorContext) -> Claude | Result:
    found = installed(ctx, "claude_code", "Claude Code", "settings", "no ~/.claude, no `claude` on PATH")
    if isinstance(found, Result):
        return found
    module, state, settings = found
    block = module.env_block(settings.data) if settings.error is None else {}
    return Claude(module, state, settings, block)


# claude.settings reports a settings.json that does not parse; the checks that read it skip.
claude_parsed = unless(claude_found, lambda claude: bool(claude.settings.error),
                       "settings.json does not parse (see claude.settings)")


@client_check("claude.settings", "Claude Code settings.json", claude_found)
def claude_settings(ctx: DoctorContext, claude: Claude) -> Result:
    module, state, settings, block = claude.module, claude.state, claude.settings, claude.block
    if settings.error:
        return parse_failure(settings)
    issues = Issues()
    for role in ("project_local", "project_settings"):
        file = state.files.get(role)
        if file is not None and file.error:
            issues.fail(file.error.message, fixes=[file.error.fix])
        elif file is not None and file.exists:
            overridden = sorted(set(module.env_block(file.data)) & {module.BASE_URL, module.AUTH_TOKEN,
                                                                    module.API_KEY, module.MODEL})
            if overridden:
                issues.details.append(f"{file.path} overrides {', '.join(overridden)} inside this repository")
    if not settings.exists:
        if ctx.env.get(module.BASE_URL):
            return Result.ok(f"no {settings.path}; ANTHROPIC_BASE_URL comes from the shell")
        return Result.warn(f"no {settings.path}: Claude Code uses its own Anthropic login, not the gateway",
                           fixes=["taotoken init"])
    if isinstance(settings.data, dict) and "env" in settings.data and not isinstance(settings.data["env"], dict):
        issues.fail(f'{settings.path}: "env" is not a JSON object', fixes=['make it an object of strings: "env": {}'])
    non_strings = sorted(k for k, v in block.items() if not isinstance(v, str))
    if non_strings:
        issues.warn(f"env values must be JSON strings: {', '.join(non_strings)} (numbers crashed Claude Code "
                    "before 2.1.101)", fixes=[f"quote them in {settings.path}, e.g. \"1\""])
    _permissions(issues, settings, holds_key=bool(block.get(module.AUTH_TOKEN) or block.get(module.API_KEY)))
    if module.BASE_URL not in block and not ctx.env.get(module.BASE_URL):
        issues.warn(f"{settings.path} sets no ANTHROPIC_BASE_URL: Claude Code talks to Anthropic, not the gateway",
                    fixes=["taotoken init"])
    keys = ", ".join(sorted(k for k in block if k.startswith(("ANTHROPIC_", "CLAUDE_")))) or "nothing"
    return issues.result(f"{settings.path} parses; env sets {keys}")


@client_check("claude.base_url", "Claude Code base URL", claude_parsed)
def claude_base_url(ctx: DoctorContext, claude: Claude) -> Result:
    value, where = claude.value(ctx, claude.module.BASE_URL)
    if value is None:
        return Result.skipped("ANTHROPIC_BASE_URL is not set (see claude.settings)")
    path = claude.settings.path

    def why(wanted: str, changes: list[str]) -> str:
        if value.strip().rstrip("/").endswith("/v1"):
            return ("ends in /v1: Claude Code appends /v1/messages itself and would call "
                    f"{value.strip().rstrip('/')}/v1/messages (404)")
        return "is not the bare API root: " + "; ".join(changes)

    def set_in_settings(url: str) -> str:
        return f'set "ANTHROPIC_BASE_URL": "{url}" in {path}'

    def repair(url: str) -> Repair:
        def edit(data: dict) -> None:
            data.setdefault("env", {})[claude.module.BASE_URL] = url

        return json_repair(path, f"set env.ANTHROPIC_BASE_URL to {url}", edit, secret=True)

    in_shell = where == "shell"
    return client_base_url_result(
        ctx, f"ANTHROPIC_BASE_URL = {value!r} ({'shell' if in_shell else path})", value, CLAUDE_FORM, why=why,
        set_fix=(lambda url: f"export ANTHROPIC_BASE_URL={url}") if in_shell else set_in_settings,
        repair=None if in_shell else repair,
        unusable_fix=set_in_settings(f"{ctx.base_url}"))  # settings.json wins over the shell


@client_check("claude.key", "Claude Code credential variable", claude_parsed)
def claude_key(ctx: DoctorContext, claude: Claude) -> Result:
    module, settings = claude.module, claude.settings
    token, token_where = claude.value(ctx, module.AUTH_TOKEN)
    api_key, api_where = claude.value(ctx, module.API_KEY)
    base, _ = claude.value(ctx, module.BASE_URL)
    issues = Issues()
    if token is None and api_key is None:
        if base is None:
            return Result.skipped("no gateway configured for Claude Code")
        if isinstance(settings.data, dict) and settings.data.get("apiKeyHelper"):
            return Result.ok("the key comes from apiKeyHelper")
        return Result.fail("ANTHROPIC_BASE_URL is set but no ANTHROPIC_AUTH_TOKEN: Claude Code falls back to its "
                           "own login ('OAuth token has expired · Please run /login')",
                           fixes=["taotoken init   (writes ANTHROPIC_AUTH_TOKEN into ~/.claude/settings.json)"])
    if api_key is not None and token is None:
        fixes = [f'rename "ANTHROPIC_API_KEY" to "ANTHROPIC_AUTH_TOKEN" in {settings.path}']
        repairs = []
        if api_where == "settings.json":
            def rename(data: dict) -> None:
                env = data["env"]
                env[module.AUTH_TOKEN] = env.pop(module.API_KEY)

            repairs.append(json_repair(settings.path, "rename env.ANTHROPIC_API_KEY to env.ANTHROPIC_AUTH_TOKEN",
                                       rename, secret=True))
        else:
            fixes = ['export ANTHROPIC_AUTH_TOKEN="$ANTHROPIC_API_KEY"; unset ANTHROPIC_API_KEY']
        issues.warn(f"ANTHROPIC_API_KEY ({api_where}) instead of ANTHROPIC_AUTH_TOKEN: Claude Code sends it as "
                    "X-Api-Key and asks once to approve it; a declined key is ignored without a prompt",
                    fixes=fixes, repairs=repairs)
    if api_key is not None and token is not None:
        repairs = []
        if api_where == "settings.json":
            def drop(data: dict) -> None:
                data["env"].pop(module.API_KEY, None)

            repairs.append(json_repair(settings.path, "remove env.ANTHROPIC_API_KEY (ANTHROPIC_AUTH_TOKEN stays)",
                                       drop, secret=True))
            fixes = [f'remove "ANTHROPIC_API_KEY" from the env block of {settings.path}']
        else:
            fixes = ["unset ANTHROPIC_API_KEY   (and remove it from your shell start-up files)"]
        add = issues.fail if _strip_key(api_key) != _strip_key(token) else issues.warn
        add(f"both ANTHROPIC_AUTH_TOKEN ({token_where}) and ANTHROPIC_API_KEY ({api_where}) are set: requests may "
            "carry two credentials", fixes=fixes, repairs=repairs)
    value, where, name = (token, token_where, module.AUTH_TOKEN) if token is not None else \
        (api_key, api_where, module.API_KEY)
    assert value is not None
    if value != value.strip().strip("'\""):
        clean = value.strip().strip("'\"")
        repairs = []
        if where == "settings.json":
            def strip(data: dict) -> None:
                data["env"][name] = clean

            repairs.append(json_repair(settings.path, f"strip whitespace/quotes from env.{name}", strip, secret=True))
        issues.fail(f"{name} ({where}) has whitespace, a newline or quotes around the key: Claude Code says "
                    "'Invalid API key · Fix external API key'",
                    fixes=["taotoken doctor --fix" if repairs else f"export {name}=sk-…   (no quotes, no newline)"],
                    repairs=repairs)
    elif ctx.api_key and value != ctx.api_key:
        issues.warn(f"{name} ({where}) = {mask_key(value)} differs from taotoken's key {mask_key(ctx.api_key)}",
                    fixes=["taotoken init   (writes the same key everywhere)"])
    return issues.result(f"{name} = {mask_key(value)} ({where})")


@client_check("claude.login", "Claude Code stored login vs gateway key", claude_found)
def claude_login(ctx: DoctorContext, claude: Claude) -> Result:
    module, settings = claude.module, claude.settings
    where = module.paths(ctx.env, cwd=ctx.cwd)
    credentials = where.config_dir / ".credentials.json"
    global_file = claude.state.files["global"]
    primary = isinstance(global_file.data, dict) and bool(global_file.data.get("primaryApiKey"))
    custom = any(claude.value(ctx, n)[0] for n in (module.AUTH_TOKEN, module.API_KEY)) or (
        isinstance(settings.data, dict) and bool(settings.data.get("apiKeyHelper")))
    logins = []
    if credentials.exists():
        logins.append(f"claude.ai OAuth credentials in {credentials}")
    if primary:
        logins.append(f"a Console key (primaryApiKey) in {global_file.path}")
    if not logins:
        return Result.ok("no stored Anthropic login" + (" beside the gateway key" if custom else ""))
    if not custom:
        return Result.ok(f"uses {logins[0]} (no gateway key configured for Claude Code)")
    fixes = ["in Claude Code run /logout (removes the stored login), then restart it"]
    if credentials.exists():
        fixes.append(f"or: rm {credentials}")
    return Result.warn(f"{' and '.join(logins)} beside the gateway key",
                       details=["Claude Code warns 'auth may not work as expected'; whenever the gateway variable does "
                                "not reach it (IDE launch, project-only settings) it uses the stored login and fails "
                                "with 'OAuth token has expired · Please run /login'"],
                       fixes=fixes)


@client_check("claude.onboarding", "Claude Code onboarding flag", claude_found)
def claude_onboarding(ctx: DoctorContext, claude: Claude) -> Result:
    module = claude.module
    global_file = claude.state.files["global"]
    if global_file.error:
        return parse_failure(global_file)
    if claude.value(ctx, module.BASE_URL)[0] is None:
        return Result.skipped("no gateway configured for Claude Code")
    data = global_file.data if isinstance(global_file.data, dict) else {}
    if data.get(module.ONBOARDING) is True:
        return Result.ok(f"{module.ONBOARDING} is true in {global_file.path}")

    def edit(doc: dict) -> None:
        doc[module.ONBOARDING] = True

    return Result.warn(f"{module.ONBOARDING} is not true in {global_file.path}: the first-run wizard asks for an "
                       "Anthropic login and ignores the gateway",
                       fixes=[f'set "{module.ONBOARDING}": true in {global_file.path}'],
                       repairs=[json_repair(global_file.path, f"set {module.ONBOARDING} = true", edit)])


@client_check("claude.models", "Claude Code model variables", claude_parsed)
def claude_models(ctx: DoctorContext, claude: Claude) -> Result:
    module, settings, block = claude.module, claude.settings, claude.block
    issues = Issues()
    model, where = claude.value(ctx, module.MODEL)
    if model and ctx.model and model != ctx.model:
        issues.details.append(f"ANTHROPIC_MODEL = {model} ({where}); taotoken's model is {ctx.model}")
    if module.SMALL_FAST_MODEL in block:
        old = block[module.SMALL_FAST_MODEL]

        def edit(data: dict) -> None:
            env = data["env"]
            value = env.pop(module.SMALL_FAST_MODEL)
            env.setdefault(module.HAIKU_MODEL, value)

        issues.warn(f"{module.SMALL_FAST_MODEL} is deprecated; Claude Code reads {module.HAIKU_MODEL}",
                    fixes=[f'rename "{module.SMALL_FAST_MODEL}" to "{module.HAIKU_MODEL}" in {settings.path}'],
                    repairs=[json_repair(settings.path, f"replace env.{module.SMALL_FAST_MODEL} by "
                                         f"env.{module.HAIKU_MODEL} = {old!r}", edit, secret=True)])
    elif ctx.env.get(module.SMALL_FAST_MODEL):
        issues.warn(f"{module.SMALL_FAST_MODEL} (shell) is deprecated",
                    fixes=[f'export {module.HAIKU_MODEL}="${module.SMALL_FAST_MODEL}"; '
                           f"unset {module.SMALL_FAST_MODEL}"])
    haiku = claude.value(ctx, module.HAIKU_MODEL)[0]
    return issues.result(f"model {model or '(Claude Code default)'}" + (f", haiku slot {haiku}" if haiku else ""))


# -- Codex -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Codex:
    """What Codex reads: its client module, its parsed files, and the provider config.toml selects."""

    module: ModuleType
    state: ClientState
    config: ConfigFile  # ~/.codex/config.toml
    data: dict  # its content ({} when it does not parse)
    provider_id: Any  # model_provider, as written
    provider: dict | None  # the [model_providers.<id>] table it selects, if there is one


def codex_found(ctx: DoctorContext) -> Codex | Result:
    found = installed(ctx, "codex", "Codex", "config", "no ~/.codex, no `codex` on PATH")
    if isinstance(found, Result):
        return found
    module, state, config = found
    data = config.data if isinstance(config.data, dict) else {}
    provider_id = data.get("model_provider")
    providers = data.get("model_providers") if isinstance(data.get("model_providers"), dict) else {}
    provider = providers.get(provider_id) if isinstance(provider_id, str) else None
    return Codex(module, state, config, data, provider_id, provider if isinstance(provider, dict) else None)


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
    _permissions(issues, config, holds_key="experimental_bearer_token" in str(data))
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

    def why(wanted: str, changes: list[str]) -> str:
        return "; ".join(c for c in changes if "trailing /v1" not in c) or \
            "lacks /v1: Codex calls <base_url>/responses and never adds /v1"

    def repair(url: str) -> Repair:
        def edit(doc) -> None:
            doc["model_providers"][codex.provider_id]["base_url"] = url

        return toml_repair(path, f"set {table} base_url to {url}", edit)

    return client_base_url_result(
        ctx, f"{table} base_url = {value!r}", value, CODEX_FORM, why=why,
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
    module, config, data = codex.module, codex.config, codex.data
    profiles = data.get("profiles") if isinstance(data.get("profiles"), dict) else {}
    selector = data.get("profile")
    if not profiles and selector is None:
        return Result.ok("no legacy [profiles.*] or profile = in config.toml")
    home = module.paths(ctx.env).home
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
    import tomlkit

    from taotoken_cli.clients.base import parse_toml_doc

    def new_file(name: str) -> Callable[[str], str]:
        def transform(_text: str) -> str:
            doc = parse_toml_doc(config_path.read_text(encoding="utf-8"), config_path)
            table = doc["profiles"][name]
            out = tomlkit.document()
            out.add(tomlkit.comment(f"moved from [profiles.{name}] of {config_path} by taotoken doctor --fix"))
            for key, value in table.items():
                out[key] = value
            return tomlkit.dumps(out)
        return transform

    def strip(doc) -> None:
        doc.pop("profiles", None)
        doc.pop("profile", None)

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
    _permissions(issues, auth, holds_key=bool(content.get("OPENAI_API_KEY")))
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
    if client_module("codex") is None:
        return _missing_module("Codex")
    from taotoken_cli.clients.base import read_toml

    candidates = [d / ".codex" / "config.toml" for d in (ctx.cwd, *ctx.cwd.parents)]
    home_config = client_module("codex").paths(ctx.env).config
    found = next((c for c in candidates if c.exists() and c != home_config), None)
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


# -- Cline -----------------------------------------------------------------------------------------------

_VSCODE_DIRS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")


def vscode_settings_files(ctx: DoctorContext) -> list[Path]:
    config_home = Path(ctx.env.get("XDG_CONFIG_HOME") or ctx.home / ".config")
    mac = ctx.home / "Library" / "Application Support"
    roots = [config_home, mac] + ([Path(ctx.env["APPDATA"])] if ctx.env.get("APPDATA") else [])
    return [root / name / "User" / "settings.json" for root in roots for name in _VSCODE_DIRS
            if (root / name / "User" / "settings.json").exists()]


_CLINE_KEY_RE = re.compile(r'^\s*"(cline\.[A-Za-z0-9_.]+)"\s*:', re.MULTILINE)
# A whole one-line entry with a scalar value, which can be removed without touching anything else.
_ONE_LINE_ENTRY = r'^[ \t]*"{key}"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null)\s*,?[ \t]*\r?\n'


def _remove_cline_keys(keys: list[str]) -> Callable[[str], str]:
    def transform(text: str) -> str:
        for key in keys:
            match = re.search(_ONE_LINE_ENTRY.format(key=re.escape(key)), text, flags=re.MULTILINE)
            if match is None:
                continue
            head, tail = text[:match.start()], text[match.end():]
            if tail.lstrip().startswith("}") and head.rstrip().endswith(","):
                # It was the last entry: drop the comma before it too, so the file stays strict JSON.
                stripped = head.rstrip()
                head = stripped[:-1] + head[len(stripped):]
            text = head + tail
        return text
    return transform


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
    found = installed(ctx, "cline", "Cline", "providers", "no ~/.cline, no extension, no `cline` on PATH")
    if isinstance(found, Result):
        return found
    module, state, providers = found
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
    _permissions(issues, providers, holds_key=True)
    last = data.get("lastUsedProvider")
    if last and last not in table:
        issues.fail(f'lastUsedProvider "{last}" has no entry under "providers"', fixes=schema_fix)
    entry = table.get(last) if last in table else table.get(module.PROVIDER_ID)
    settings = entry.get("settings") if isinstance(entry, dict) else None
    if not isinstance(settings, dict) or not isinstance(settings.get("provider"), str):
        if entry is not None:
            issues.fail(f"the {last or module.PROVIDER_ID} entry has no settings.provider: fails Cline's schema",
                        fixes=schema_fix)
        return issues.result(f"{providers.path}: provider {last or '(none)'}")
    provider_key = last if last in table else module.PROVIDER_ID
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
    files = vscode_settings_files(ctx)
    if not files:
        return Result.skipped("no VS Code user settings.json")
    issues = Issues()
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        keys = _CLINE_KEY_RE.findall(text)
        if not keys:
            continue
        lines = [text.count("\n", 0, m.start()) + 1 for m in _CLINE_KEY_RE.finditer(text)]
        where = ", ".join(f"{k} (line {n})" for k, n in zip(keys, lines, strict=True))
        transform = _remove_cline_keys(keys)
        removable = [k for k in keys if k not in _CLINE_KEY_RE.findall(transform(text))]
        repairs = [Repair(path, f"remove {', '.join(removable)} (never read by Cline)", transform)] if removable \
            else []
        issues.warn(f"{path}: {where} — Cline has no settings here and never reads them",
                    fixes=[f"remove the cline.* lines from {path}; configure Cline in "
                           "~/.cline/data/settings/providers.json (taotoken init does it)"],
                    repairs=repairs)
    return issues.result(f"no cline.* keys in {', '.join(str(p) for p in files)}")


# -- CC Switch -------------------------------------------------------------------------------------------

@check("ccswitch.managed", SECTION, "CC Switch manages the same files")
def ccswitch_managed(ctx: DoctorContext) -> Result:
    module = client_module("ccswitch")
    if module is None:
        return _missing_module("CC Switch")
    where = module.paths(ctx.env)
    kind = module.store_kind(where)
    if kind == "none":
        return Result.skipped("CC Switch not found (no ~/.cc-switch)")
    state = client_state(ctx, "ccswitch")
    settings = state.files["settings"]
    if settings.error:
        return parse_failure(settings)
    data = settings.data if isinstance(settings.data, dict) else {}
    current = {app: data.get(f"currentProvider{app.capitalize()}") for app in ("claude", "codex")}
    managed = []
    claude_settings = client_module("claude_code").paths(ctx.env, cwd=ctx.cwd).settings \
        if client_module("claude_code") else None
    codex_config = client_module("codex").paths(ctx.env).config if client_module("codex") else None
    if claude_settings is not None and claude_settings.exists():
        managed.append(str(claude_settings))
    if codex_config is not None and codex_config.exists():
        managed.append(str(codex_config))
    details = [f"store: {kind} in {where.home}"] + [f"current {app} provider: {pid}" for app, pid in current.items()
                                                     if pid]
    if not managed:
        return Result.ok("CC Switch is installed; it manages no client file here yet", details=details)
    if all(pid and "taotoken" in str(pid).lower() for app, pid in current.items() if app in ("claude", "codex")):
        return Result.ok("TaoToken is CC Switch's current provider for Claude Code and Codex", details=details)
    return Result.warn(f"CC Switch manages {', '.join(managed)}: its next provider switch overwrites edits made "
                       "there (and absorbs them into the current provider)",
                       details=details,
                       fixes=["add TaoToken as a CC Switch provider and switch to it there (taotoken init writes the "
                              "ccswitch://v1/import links), instead of editing those files by hand"])
