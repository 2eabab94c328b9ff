"""Claude Code's VS Code side: `claudeCode.environmentVariables` in VS Code's settings.json (JSONC), checked like
the env block of ~/.claude/settings.json — the URL form, the credential variable, the key (masked)."""

from __future__ import annotations

from pathlib import Path

from taotoken_cli.cmd.doctor.checks.clients.common import (
    CLAUDE_FORM,
    SECTION,
    claude_url_why,
    client_base_url_result,
    client_state,
    json_repair,
    permissions,
    strip_key,
)
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Repair, Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.fix import Fix
from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import claude_code, vscode
from taotoken_cli.core.clients.base import ConfigFile

SETTING = vscode.CLAUDE_ENV
_ARRAY_FORM = (f'"{SETTING}": [{{"name": "ANTHROPIC_BASE_URL", "value": "<root>"}}, '
               '{"name": "ANTHROPIC_AUTH_TOKEN", "value": "sk-…"}]')


@check("claude.vscode", SECTION, N_("Claude Code VS Code extension settings"))
def claude_vscode(ctx: DoctorContext) -> Result:
    files = vscode.settings_files(ctx.machine)
    workspace = vscode.workspace_settings(ctx.machine)
    paths = ([workspace] if workspace else []) + files  # the workspace file wins inside its workspace
    installed = vscode.extension_versions(ctx.machine, vscode.CLAUDE_EXTENSION)
    if not paths:
        return Result.skipped(_("no VS Code settings.json (the Claude Code extension is installed)") if installed
                              else _("no VS Code settings.json"))
    issues = Issues()
    checked = []
    for path in paths:
        file = vscode.read_settings(path)
        if file.error is not None:
            issues.warn(_("{error} (VS Code's settings.json: comments and trailing commas are fine)").format(
                error=file.error.message),
                        fixes=[file.error.fix] if file.error.fix else [])
            continue
        env = vscode.claude_env(file.data)
        if env is not None:
            checked.append(str(path))
            _check_env(ctx, issues, file, env)
    if not checked:
        where = listed(str(p) for p in paths)
        if installed:
            issues.details.append(_(
                'the Claude Code extension starts `claude`, which reads the env block of {path}; if the extension '
                'still asks for an Anthropic login, set "claudeCode.disableLoginPrompt": true, or pass the variables '
                "in {setting}").format(path=claude_code.paths(ctx.machine).settings, setting=SETTING))
        return issues.result(_("no {setting} in {path}").format(setting=SETTING, path=where))
    return issues.result(_in(listed(checked)))


def _in(path: object) -> str:
    """`claudeCode.environmentVariables in <path>`: the setting, named with its file."""
    return _("{setting} in {path}").format(setting=SETTING, path=path)


def _check_env(ctx: DoctorContext, issues: Issues, file: ConfigFile, env: vscode.ClaudeEnv) -> None:
    path = file.path
    label = _in(path)
    if not env.shape_ok:
        # the problem is a predicate ("is an object, not an array"): one message joins it to its subject
        issues.fail(_("{label} {problem}").format(label=label, problem=env.problems[0]),
                    fixes=[_("write it as an array: {form}").format(form=_ARRAY_FORM)])
        return
    for problem in env.problems:
        issues.warn(_("{label}: {text}").format(label=label, text=problem), fixes=[_("each entry is {form}").format(
            form='{"name": "VARIABLE", "value": "text"}')])
    duplicates = sorted({n for n in env.names() if env.names().count(n) > 1})
    if duplicates:
        issues.details.append(_("{label}: {names} appear more than once (the last one counts)").format(
            label=label, names=listed(duplicates)))
    holds_key = any(env.get(n) for n in (claude_code.AUTH_TOKEN, claude_code.API_KEY))
    permissions(issues, file, holds_key=holds_key)
    if holds_key:
        issues.details.append(_("VS Code Settings Sync uploads settings.json with the key in it, if sync is on"))
    _check_url(ctx, issues, file, env)
    _check_key(ctx, issues, file, env, holds_key)
    model = env.get(claude_code.MODEL)
    if model and isinstance(model.value, str) and ctx.model and model.value != ctx.model:
        issues.details.append(_("{label}: ANTHROPIC_MODEL = {value} (taotoken's model is {model})").format(
            label=label, value=model.value, model=ctx.model))


def _set_value(path: Path, index: int, value: str, description: str, secret: bool) -> Repair:
    def edit(data: dict) -> None:
        data[SETTING][index]["value"] = value

    return json_repair(path, description, edit, secret=secret, allow_comments=True)


def _check_url(ctx: DoctorContext, issues: Issues, file: ConfigFile, env: vscode.ClaudeEnv) -> None:
    entry = env.get(claude_code.BASE_URL)
    if entry is None or not isinstance(entry.value, str):
        if env.get(claude_code.AUTH_TOKEN) or env.get(claude_code.API_KEY):
            issues.warn(_("{label} passes a key but no ANTHROPIC_BASE_URL: the extension talks to Anthropic unless "
                          "~/.claude/settings.json sets the gateway").format(label=_in(file.path)),
                        fixes=[_("add {entry} to {label}").format(
                            entry=f'{{"name": "ANTHROPIC_BASE_URL", "value": "{ctx.base_url or "<root>"}"}}',
                            label=_in(file.path))])
        return
    value = entry.value
    cli_value = claude_code.env_block(_claude_settings(ctx)).get(claude_code.BASE_URL)
    if isinstance(cli_value, str) and cli_value.strip() and cli_value.strip() != value.strip():
        issues.details.append(_("~/.claude/settings.json sets ANTHROPIC_BASE_URL = {value}: inside Claude Code that "
                                "value wins; the one here reaches the extension's own start-up check").format(
                                    value=cli_value))

    def set_fix(url: str) -> str:
        return _('set the value of ANTHROPIC_BASE_URL in {setting} of {path} to "{url}"').format(
            setting=SETTING, path=file.path, url=url)

    holds_key = any(env.get(n) for n in (claude_code.AUTH_TOKEN, claude_code.API_KEY))
    issues.add_result(client_base_url_result(
        ctx, f"ANTHROPIC_BASE_URL = {value!r} ({_in(file.path)})", value, CLAUDE_FORM,
        why=claude_url_why(value), set_fix=set_fix, unusable_fix=set_fix(f"{ctx.base_url}"),
        repair=lambda url: _set_value(file.path, entry.index, url, _("set ANTHROPIC_BASE_URL in {setting} to {url}")
                                      .format(setting=SETTING, url=url), holds_key)))


def _claude_settings(ctx: DoctorContext) -> dict | None:
    settings = client_state(ctx, claude_code.NAME).files["settings"]
    return settings.data if isinstance(settings.data, dict) else None


def _check_key(ctx: DoctorContext, issues: Issues, file: ConfigFile, env: vscode.ClaudeEnv, holds_key: bool) -> None:
    token, api_key = env.get(claude_code.AUTH_TOKEN), env.get(claude_code.API_KEY)
    if token is None and api_key is None:
        return
    label = _in(file.path)
    if api_key is not None and token is None:
        issues.warn(_("{label} passes ANTHROPIC_API_KEY, not ANTHROPIC_AUTH_TOKEN: Claude Code sends it as X-Api-Key "
                      "and asks once to approve it; a declined key is ignored without a prompt").format(label=label),
                    fixes=[_('rename "{old}" to "{new}" in {path}').format(old=claude_code.API_KEY,
                                                                           new=claude_code.AUTH_TOKEN, path=label)])
    if api_key is not None and token is not None:
        add = issues.fail if strip_key(api_key.value) != strip_key(token.value) else issues.warn
        add(_("{label} passes both ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY: requests may carry two "
              "credentials").format(label=label),
            fixes=[_("remove the ANTHROPIC_API_KEY entry from {label}").format(label=label)])
    entry = token if token is not None else api_key
    assert entry is not None
    value = entry.value
    if not isinstance(value, str):
        return
    clean = strip_key(value)
    if value != clean:
        issues.fail(_("{name} in {label} has whitespace, a newline or quotes around the key: Claude Code says "
                      "'Invalid API key · Fix external API key'").format(name=entry.name, label=label),
                    fixes=[Fix.run("taotoken doctor --fix")],
                    repairs=[_set_value(file.path, entry.index, clean,
                                        _("strip whitespace/quotes from {name} in {setting}").format(
                                            name=entry.name, setting=SETTING), holds_key)])
    elif ctx.api_key and value != ctx.api_key:
        issues.warn(_("{name} in {label} = {value} differs from taotoken's key {ours}").format(
            name=entry.name, label=label, value=mask_key(value), ours=mask_key(ctx.api_key)),
                    fixes=[_("set it to taotoken's key in {label} (or remove it: the CLI reads "
                             "~/.claude/settings.json)").format(label=label)])
    else:
        issues.details.append(f"{entry.name} = {mask_key(value)} ({label})")
