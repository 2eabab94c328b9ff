"""Claude Code's checks: settings.json's env block as Claude Code reads it (it overrides the shell), the
credential variable, a stored login, the onboarding flag and the model variables."""

from __future__ import annotations

from dataclasses import dataclass

from taotoken_cli.clients import claude_code
from taotoken_cli.clients.base import ClientState, ConfigFile
from taotoken_cli.doctor.checks.clients.common import (
    CLAUDE_FORM,
    client_base_url_result,
    client_check,
    installed,
    json_repair,
    parse_failure,
    permissions,
    strip_key,
    unless,
)
from taotoken_cli.doctor.context import DoctorContext
from taotoken_cli.doctor.model import Issues, Repair, Result
from taotoken_cli.masking import mask_key


@dataclass(frozen=True)
class Claude:
    """What Claude Code reads: its parsed files, and the env block of settings.json."""

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
    found = installed(ctx, claude_code.NAME, "settings", "no ~/.claude, no `claude` on PATH")
    if isinstance(found, Result):
        return found
    state, settings = found
    block = claude_code.env_block(settings.data) if settings.error is None else {}
    return Claude(state, settings, block)


# claude.settings reports a settings.json that does not parse; the checks that read it skip.
claude_parsed = unless(claude_found, lambda claude: bool(claude.settings.error),
                       "settings.json does not parse (see claude.settings)")


@client_check("claude.settings", "Claude Code settings.json", claude_found)
def claude_settings(ctx: DoctorContext, claude: Claude) -> Result:
    state, settings, block = claude.state, claude.settings, claude.block
    if settings.error:
        return parse_failure(settings)
    issues = Issues()
    for role in ("project_local", "project_settings"):
        file = state.files.get(role)
        if file is not None and file.error:
            issues.fail(file.error.message, fixes=[file.error.fix])
        elif file is not None and file.exists:
            overridden = sorted(set(claude_code.env_block(file.data)) & {claude_code.BASE_URL, claude_code.AUTH_TOKEN,
                                                                    claude_code.API_KEY, claude_code.MODEL})
            if overridden:
                issues.details.append(f"{file.path} overrides {', '.join(overridden)} inside this repository")
    if not settings.exists:
        if ctx.env.get(claude_code.BASE_URL):
            return Result.ok(f"no {settings.path}; ANTHROPIC_BASE_URL comes from the shell")
        return Result.warn(f"no {settings.path}: Claude Code uses its own Anthropic login, not the gateway",
                           fixes=["taotoken init"])
    if isinstance(settings.data, dict) and "env" in settings.data and not isinstance(settings.data["env"], dict):
        issues.fail(f'{settings.path}: "env" is not a JSON object', fixes=['make it an object of strings: "env": {}'])
    non_strings = sorted(k for k, v in block.items() if not isinstance(v, str))
    if non_strings:
        issues.warn(f"env values must be JSON strings: {', '.join(non_strings)} (numbers crashed Claude Code "
                    "before 2.1.101)", fixes=[f"quote them in {settings.path}, e.g. \"1\""])
    permissions(issues, settings, holds_key=bool(block.get(claude_code.AUTH_TOKEN) or block.get(claude_code.API_KEY)))
    if claude_code.BASE_URL not in block and not ctx.env.get(claude_code.BASE_URL):
        issues.warn(f"{settings.path} sets no ANTHROPIC_BASE_URL: Claude Code talks to Anthropic, not the gateway",
                    fixes=["taotoken init"])
    keys = ", ".join(sorted(k for k in block if k.startswith(("ANTHROPIC_", "CLAUDE_")))) or "nothing"
    return issues.result(f"{settings.path} parses; env sets {keys}")


@client_check("claude.base_url", "Claude Code base URL", claude_parsed)
def claude_base_url(ctx: DoctorContext, claude: Claude) -> Result:
    value, where = claude.value(ctx, claude_code.BASE_URL)
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
            data.setdefault("env", {})[claude_code.BASE_URL] = url

        return json_repair(path, f"set env.ANTHROPIC_BASE_URL to {url}", edit, secret=True)

    in_shell = where == "shell"
    return client_base_url_result(
        ctx, f"ANTHROPIC_BASE_URL = {value!r} ({'shell' if in_shell else path})", value, CLAUDE_FORM, why=why,
        set_fix=(lambda url: f"export ANTHROPIC_BASE_URL={url}") if in_shell else set_in_settings,
        repair=None if in_shell else repair,
        unusable_fix=set_in_settings(f"{ctx.base_url}"))  # settings.json wins over the shell


@client_check("claude.key", "Claude Code credential variable", claude_parsed)
def claude_key(ctx: DoctorContext, claude: Claude) -> Result:
    settings = claude.settings
    token, token_where = claude.value(ctx, claude_code.AUTH_TOKEN)
    api_key, api_where = claude.value(ctx, claude_code.API_KEY)
    base, _ = claude.value(ctx, claude_code.BASE_URL)
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
                env[claude_code.AUTH_TOKEN] = env.pop(claude_code.API_KEY)

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
                data["env"].pop(claude_code.API_KEY, None)

            repairs.append(json_repair(settings.path, "remove env.ANTHROPIC_API_KEY (ANTHROPIC_AUTH_TOKEN stays)",
                                       drop, secret=True))
            fixes = [f'remove "ANTHROPIC_API_KEY" from the env block of {settings.path}']
        else:
            fixes = ["unset ANTHROPIC_API_KEY   (and remove it from your shell start-up files)"]
        add = issues.fail if strip_key(api_key) != strip_key(token) else issues.warn
        add(f"both ANTHROPIC_AUTH_TOKEN ({token_where}) and ANTHROPIC_API_KEY ({api_where}) are set: requests may "
            "carry two credentials", fixes=fixes, repairs=repairs)
    value, where, name = (token, token_where, claude_code.AUTH_TOKEN) if token is not None else \
        (api_key, api_where, claude_code.API_KEY)
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
    settings = claude.settings
    where = claude_code.paths(ctx.machine)
    credentials = where.config_dir / ".credentials.json"
    global_file = claude.state.files["global"]
    primary = isinstance(global_file.data, dict) and bool(global_file.data.get("primaryApiKey"))
    custom = any(claude.value(ctx, n)[0] for n in (claude_code.AUTH_TOKEN, claude_code.API_KEY)) or (
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
    global_file = claude.state.files["global"]
    if global_file.error:
        return parse_failure(global_file)
    if claude.value(ctx, claude_code.BASE_URL)[0] is None:
        return Result.skipped("no gateway configured for Claude Code")
    data = global_file.data if isinstance(global_file.data, dict) else {}
    if data.get(claude_code.ONBOARDING) is True:
        return Result.ok(f"{claude_code.ONBOARDING} is true in {global_file.path}")

    def edit(doc: dict) -> None:
        doc[claude_code.ONBOARDING] = True

    return Result.warn(f"{claude_code.ONBOARDING} is not true in {global_file.path}: the first-run wizard asks for an "
                       "Anthropic login and ignores the gateway",
                       fixes=[f'set "{claude_code.ONBOARDING}": true in {global_file.path}'],
                       repairs=[json_repair(global_file.path, f"set {claude_code.ONBOARDING} = true", edit)])


@client_check("claude.models", "Claude Code model variables", claude_parsed)
def claude_models(ctx: DoctorContext, claude: Claude) -> Result:
    settings, block = claude.settings, claude.block
    issues = Issues()
    model, where = claude.value(ctx, claude_code.MODEL)
    if model and ctx.model and model != ctx.model:
        issues.details.append(f"ANTHROPIC_MODEL = {model} ({where}); taotoken's model is {ctx.model}")
    if claude_code.SMALL_FAST_MODEL in block:
        old = block[claude_code.SMALL_FAST_MODEL]

        def edit(data: dict) -> None:
            env = data["env"]
            value = env.pop(claude_code.SMALL_FAST_MODEL)
            env.setdefault(claude_code.HAIKU_MODEL, value)

        issues.warn(f"{claude_code.SMALL_FAST_MODEL} is deprecated; Claude Code reads {claude_code.HAIKU_MODEL}",
                    fixes=[f'rename "{claude_code.SMALL_FAST_MODEL}" to "{claude_code.HAIKU_MODEL}" '
                           f"in {settings.path}"],
                    repairs=[json_repair(settings.path, f"replace env.{claude_code.SMALL_FAST_MODEL} by "
                                         f"env.{claude_code.HAIKU_MODEL} = {old!r}", edit, secret=True)])
    elif ctx.env.get(claude_code.SMALL_FAST_MODEL):
        issues.warn(f"{claude_code.SMALL_FAST_MODEL} (shell) is deprecated",
                    fixes=[f'export {claude_code.HAIKU_MODEL}="${claude_code.SMALL_FAST_MODEL}"; '
                           f"unset {claude_code.SMALL_FAST_MODEL}"])
    haiku = claude.value(ctx, claude_code.HAIKU_MODEL)[0]
    return issues.result(f"model {model or '(Claude Code default)'}" + (f", haiku slot {haiku}" if haiku else ""))
