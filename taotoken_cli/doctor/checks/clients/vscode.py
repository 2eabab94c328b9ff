"""Claude Code's VS Code side: `claudeCode.environmentVariables` in VS Code's settings.json (JSONC), checked like
the env block of ~/.claude/settings.json — the URL form, the credential variable, the key (masked)."""

from __future__ import annotations

from pathlib import Path

from taotoken_cli.clients import claude_code, vscode
from taotoken_cli.clients.base import ConfigFile
from taotoken_cli.doctor.checks.clients.common import (
    CLAUDE_FORM,
    SECTION,
    claude_url_why,
    client_base_url_result,
    client_state,
    json_repair,
    permissions,
    strip_key,
)
from taotoken_cli.doctor.context import DoctorContext
from taotoken_cli.doctor.model import Issues, Repair, Result
from taotoken_cli.doctor.registry import check
from taotoken_cli.masking import mask_key

SETTING = vscode.CLAUDE_ENV
_ARRAY_FORM = (f'"{SETTING}": [{{"name": "ANTHROPIC_BASE_URL", "value": "<root>"}}, '
               '{"name": "ANTHROPIC_AUTH_TOKEN", "value": "sk-…"}]')


@check("claude.vscode", SECTION, "Claude Code VS Code extension settings")
def claude_vscode(ctx: DoctorContext) -> Result:
    files = vscode.settings_files(ctx.machine)
    workspace = vscode.workspace_settings(ctx.machine)
    paths = ([workspace] if workspace else []) + files  # the workspace file wins inside its workspace
    installed = vscode.extension_versions(ctx.machine, vscode.CLAUDE_EXTENSION)
    if not paths:
        return Result.skipped("no VS Code settings.json" + (" (the Claude Code extension is installed)"
                                                             if installed else ""))
    issues = Issues()
    checked = []
    for path in paths:
        file = vscode.read_settings(path)
        if file.error is not None:
            issues.warn(f"{file.error.message} (VS Code's settings.json: comments and trailing commas are fine)",
                        fixes=[file.error.fix] if file.error.fix else [])
            continue
        env = vscode.claude_env(file.data)
        if env is not None:
            checked.append(str(path))
            _check_env(ctx, issues, file, env)
    if not checked:
        where = ", ".join(str(p) for p in paths)
        if installed:
            issues.details.append(
                f"the Claude Code extension starts `claude`, which reads the env block of "
                f"{claude_code.paths(ctx.machine).settings}; if the extension still asks for an Anthropic login, "
                f"set \"claudeCode.disableLoginPrompt\": true, or pass the variables in {SETTING}")
        return issues.result(f"no {SETTING} in {where}")
    return issues.result(f"{SETTING} in {', '.join(checked)}")


def _check_env(ctx: DoctorContext, issues: Issues, file: ConfigFile, env: vscode.ClaudeEnv) -> None:
    path = file.path
    label = f"{SETTING} in {path}"
    if not env.shape_ok:
        issues.fail(f"{label} {env.problems[0]}", fixes=[f"write it as an array: {_ARRAY_FORM}"])
        return
    for problem in env.problems:
        issues.warn(f"{label}: {problem}", fixes=["each entry is {\"name\": \"VARIABLE\", \"value\": \"text\"}"])
    duplicates = sorted({n for n in env.names() if env.names().count(n) > 1})
    if duplicates:
        issues.details.append(f"{label}: {', '.join(duplicates)} appear more than once (the last one counts)")
    holds_key = any(env.get(n) for n in (claude_code.AUTH_TOKEN, claude_code.API_KEY))
    permissions(issues, file, holds_key=holds_key)
    if holds_key:
        issues.details.append("VS Code Settings Sync uploads settings.json with the key in it, if sync is on")
    _check_url(ctx, issues, file, env)
    _check_key(ctx, issues, file, env, holds_key)
    model = env.get(claude_code.MODEL)
    if model and isinstance(model.value, str) and ctx.model and model.value != ctx.model:
        issues.details.append(f"{label}: ANTHROPIC_MODEL = {model.value} (taotoken's model is {ctx.model})")


def _set_value(path: Path, index: int, value: str, description: str, secret: bool) -> Repair:
    def edit(data: dict) -> None:
        data[SETTING][index]["value"] = value

    return json_repair(path, description, edit, secret=secret, allow_comments=True)


def _check_url(ctx: DoctorContext, issues: Issues, file: ConfigFile, env: vscode.ClaudeEnv) -> None:
    entry = env.get(claude_code.BASE_URL)
    if entry is None or not isinstance(entry.value, str):
        if env.get(claude_code.AUTH_TOKEN) or env.get(claude_code.API_KEY):
            issues.warn(f"{SETTING} in {file.path} passes a key but no ANTHROPIC_BASE_URL: the extension talks to "
                        "Anthropic unless ~/.claude/settings.json sets the gateway",
                        fixes=[f'add {{"name": "ANTHROPIC_BASE_URL", "value": "{ctx.base_url or "<root>"}"}} to '
                               f"{SETTING} in {file.path}"])
        return
    value = entry.value
    cli_value = claude_code.env_block(_claude_settings(ctx)).get(claude_code.BASE_URL)
    if isinstance(cli_value, str) and cli_value.strip() and cli_value.strip() != value.strip():
        issues.details.append(f"~/.claude/settings.json sets ANTHROPIC_BASE_URL = {cli_value}: inside Claude Code "
                              f"that value wins; the one here reaches the extension's own start-up check")

    def set_fix(url: str) -> str:
        return f'set the value of ANTHROPIC_BASE_URL in {SETTING} of {file.path} to "{url}"'

    holds_key = any(env.get(n) for n in (claude_code.AUTH_TOKEN, claude_code.API_KEY))
    issues.add_result(client_base_url_result(
        ctx, f"ANTHROPIC_BASE_URL = {value!r} ({SETTING} in {file.path})", value, CLAUDE_FORM,
        why=claude_url_why(value), set_fix=set_fix, unusable_fix=set_fix(f"{ctx.base_url}"),
        repair=lambda url: _set_value(file.path, entry.index, url, f"set ANTHROPIC_BASE_URL in {SETTING} to {url}",
                                      holds_key)))


def _claude_settings(ctx: DoctorContext) -> dict | None:
    settings = client_state(ctx, claude_code.NAME).files["settings"]
    return settings.data if isinstance(settings.data, dict) else None


def _check_key(ctx: DoctorContext, issues: Issues, file: ConfigFile, env: vscode.ClaudeEnv, holds_key: bool) -> None:
    token, api_key = env.get(claude_code.AUTH_TOKEN), env.get(claude_code.API_KEY)
    if token is None and api_key is None:
        return
    label = f"{SETTING} in {file.path}"
    if api_key is not None and token is None:
        issues.warn(f"{label} passes ANTHROPIC_API_KEY, not ANTHROPIC_AUTH_TOKEN: Claude Code sends it as X-Api-Key "
                    "and asks once to approve it; a declined key is ignored without a prompt",
                    fixes=[f'rename "ANTHROPIC_API_KEY" to "ANTHROPIC_AUTH_TOKEN" in {label}'])
    if api_key is not None and token is not None:
        add = issues.fail if strip_key(api_key.value) != strip_key(token.value) else issues.warn
        add(f"{label} passes both ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY: requests may carry two credentials",
            fixes=[f'remove the ANTHROPIC_API_KEY entry from {label}'])
    entry = token if token is not None else api_key
    assert entry is not None
    value = entry.value
    if not isinstance(value, str):
        return
    clean = value.strip().strip("'\"")
    if value != clean:
        issues.fail(f"{entry.name} in {label} has whitespace, a newline or quotes around the key: Claude Code says "
                    "'Invalid API key · Fix external API key'", fixes=["taotoken doctor --fix"],
                    repairs=[_set_value(file.path, entry.index, clean,
                                        f"strip whitespace/quotes from {entry.name} in {SETTING}", holds_key)])
    elif ctx.api_key and value != ctx.api_key:
        issues.warn(f"{entry.name} in {label} = {mask_key(value)} differs from taotoken's key {mask_key(ctx.api_key)}",
                    fixes=[f"set it to taotoken's key in {label} (or remove it: the CLI reads "
                           "~/.claude/settings.json)"])
    else:
        issues.details.append(f"{entry.name} = {mask_key(value)} ({label})")
