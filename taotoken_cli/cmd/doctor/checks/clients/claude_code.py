"""Claude Code's checks: every variable is read as Claude Code resolves it (managed settings, then the project's
settings.local.json and settings.json, then the user's settings.json, each `env` block over the shell) and named
with the file it comes from; a project or managed file overriding the gateway's values is a finding of its own.
Also: the credential variable, a stored login, the onboarding flag, the model variables and the proxy Claude
Code's own settings give it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from taotoken_cli.cmd.doctor.checks.clients.common import (
    CLAUDE_FORM,
    and_join,
    claude_url_why,
    client_base_url_result,
    client_check,
    client_state,
    json_repair,
    noted,
    parse_failure,
    permissions,
    strip_key,
    unless,
)
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Repair, Result, Status
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import claude_code
from taotoken_cli.core.clients.base import ClientState, ConfigFile
from taotoken_cli.core.clients.claude_code import EnvValue

_ROLE_NAMES = {"managed": N_("managed"), "project_local": N_("project local"), "project_settings": N_("project"),
               "settings": N_("user")}
_TRUST = N_("Claude Code applies a project file's env only after you accept the workspace trust prompt")


@dataclass(frozen=True)
class Claude:
    """What Claude Code reads: its parsed files and every variable as it resolves them."""

    state: ClientState
    settings: ConfigFile  # the user settings.json
    env: dict[str, EnvValue]  # the shell and every env block, resolved (claude_code.effective_env)

    def get(self, name: str) -> EnvValue | None:
        """The variable as Claude Code sees it; None when unset or "" (which Claude Code treats as unset)."""
        item = self.env.get(name)
        return item if item is not None and item.value != "" else None

    def setting(self, key: str) -> Any:
        """A top-level setting (e.g. apiKeyHelper): the highest file that sets it wins."""
        for role in claude_code.SETTINGS_ROLES:
            file = self.state.files.get(role)
            if file is not None and isinstance(file.data, dict) and key in file.data:
                return file.data[key]
        return None

    @property
    def layers(self) -> list[tuple[str, ConfigFile]]:
        """(role, file) for each settings file present, highest precedence first."""
        return [(role, file) for role in claude_code.SETTINGS_ROLES
                if (file := self.state.files.get(role)) is not None and (file.exists or file.error)]


def claude_env(ctx: DoctorContext) -> dict[str, EnvValue]:
    """Every variable Claude Code starts with here (also read by the gateway and proxy checks)."""
    state = client_state(ctx, claude_code.NAME)
    return ctx.memo("claude:env", lambda: claude_code.effective_env(ctx.machine, state))


def claude_found(ctx: DoctorContext) -> Claude | Result:
    state = client_state(ctx, claude_code.NAME)
    if not state.detection.found and not any(
            (file := state.files.get(role)) is not None and file.exists for role in claude_code.SETTINGS_ROLES):
        return Result.skipped(_("Claude Code not found (no ~/.claude, no `claude` on PATH, no settings file)"))
    return Claude(state, state.files["settings"], claude_env(ctx))


# claude.settings reports a settings.json that does not parse; the checks that read it skip.
claude_parsed = unless(claude_found, lambda claude: bool(claude.settings.error),
                       N_("settings.json does not parse (see claude.settings)"))


def _set_in(item: EnvValue, name: str, value: str) -> Fix | str:
    """The instruction that puts `value` where `item` comes from."""
    if item.path is None:
        return Fix.run(f"export {name}={value}")
    if item.role == "managed":
        return _('ask the administrator who manages {path} to set "{name}": "{value}" there').format(
            path=item.path, name=name, value=value)
    return _('set "{name}": "{value}" in {path}').format(name=name, value=value, path=item.path)


def _env_repair(item: EnvValue, description: str, edit) -> list[Repair]:
    """A `doctor --fix` edit of the env block of the file `item` comes from (none for the shell or managed)."""
    if not item.editable:
        return []
    assert item.path is not None

    def on_block(data: dict) -> None:
        edit(data.setdefault("env", {}))

    return [json_repair(item.path, description, on_block, secret=True)]


def _override(issues: Issues, item: EnvValue | None, ours: str | None, *, severity: Status,
              secret: bool = False) -> bool:
    """A managed or project file setting a gateway variable: a failure/warning (`severity`) that names the file when
    its value differs from taotoken's (or, without one, from the value it hides); a note when it is the same.
    Returns whether a difference was reported."""
    if item is None or not item.outranks_user:
        return False
    show = mask_key if secret else repr
    name = item.name
    below = next((h for h in item.hidden if h.value != ""), None)
    reference, reference_where = (ours, _("taotoken's config")) if ours else \
        (below.value, below.where) if below else (None, None)
    if reference is None or claude_code.same_value(name, item.value, reference):
        detail = _("{name} comes from {where}").format(name=name, where=item.where) if reference is None else \
            _("{name} comes from {where}, the same value as {other}").format(name=name, where=item.where,
                                                                              other=reference_where)
        issues.details.append(noted(detail, _(_TRUST)) if item.after_trust else detail)
        return False
    scope = _("every Claude Code session on this machine") if item.role == "managed" else \
        _("Claude Code inside this repository (once trusted)") if item.after_trust else \
        _("Claude Code inside this repository")
    hidden = None
    if below is not None and below.where != reference_where:
        if claude_code.same_value(name, below.value, reference):
            reference_where = and_join([reference_where, below.where])
        else:
            hidden = below
    values = {"where": item.where, "name": name, "scope": scope, "reference": show(reference),
              "value": show(item.value) if item.value else _("an empty value"), "reference_where": reference_where}
    if hidden is None:
        message = _("{where} overrides {name}: {scope} uses {value}, not {reference} ({reference_where})").format(
            **values)
    else:
        message = _("{where} overrides {name}: {scope} uses {value}, not {reference} ({reference_where}); it hides "
                    "{hidden} from {hidden_where}").format(**values, hidden=show(hidden.value),
                                                           hidden_where=hidden.where)
    if item.role == "managed":
        fixes = [_("ask the administrator who manages {path}: managed settings win over every other file").format(
            path=item.path)]
    else:
        fixes = [_('remove "{name}" from the env block of {path}').format(name=name, path=item.path) if below is None
                 else _('remove "{name}" from the env block of {path} (Claude Code then uses the value from '
                        '{where})').format(name=name, path=item.path, where=below.where)]
        if not secret:
            fixes.append(_('or set "{name}": "{value}" there').format(name=name, value=reference))
    issues.add(severity, message, fixes)
    return True


@client_check("claude.settings", N_("Claude Code settings.json"), claude_found)
def claude_settings(ctx: DoctorContext, claude: Claude) -> Result:
    settings = claude.settings
    if settings.error:
        return parse_failure(settings)
    issues = Issues()
    for role, file in claude.layers:
        if file.error:
            issues.fail(file.error.message, fixes=[file.error.fix])
            continue
        if isinstance(file.data, dict) and "env" in file.data and not isinstance(file.data["env"], dict):
            issues.fail(_('{path}: "env" is not a JSON object').format(path=file.path),
                        fixes=[_('make it an object of strings: "env": {}')])
        block = claude_code.env_block(file.data)
        non_strings = sorted(k for k, v in block.items() if not isinstance(v, str))
        if non_strings:
            issues.warn(_("{path}: env values must be JSON strings: {names} (numbers crashed Claude Code before "
                          "2.1.101)").format(path=file.path, names=listed(non_strings)),
                        fixes=[_('quote them in {path}, e.g. "1"').format(path=file.path)])
        if role != "managed":
            holds_key = bool(block.get(claude_code.AUTH_TOKEN) or block.get(claude_code.API_KEY))
            permissions(issues, file, holds_key=holds_key)
    if claude.layers:
        issues.details.append(_("settings files, highest precedence first: {files}").format(
            files=_("; ").join(f"{_(_ROLE_NAMES[role])} {file.path}" for role, file in claude.layers)))
    base = claude.get(claude_code.BASE_URL)
    if base is None:
        issues.warn(_("no settings file and not the shell set ANTHROPIC_BASE_URL: Claude Code talks to Anthropic, "
                      "not the gateway"), fixes=[Fix.run("taotoken init")])
    if not settings.exists:
        return issues.result(_("no {path}; ANTHROPIC_BASE_URL comes from {where}").format(
            path=settings.path, where=base.where if base else "-"))
    block = claude_code.env_block(settings.data)
    keys = listed(sorted(k for k in block if k.startswith(("ANTHROPIC_", "CLAUDE_"))))
    if not keys:
        return issues.result(_("{path} parses; env sets nothing").format(path=settings.path))
    return issues.result(_("{path} parses; env sets {names}").format(path=settings.path, names=keys))


@client_check("claude.base_url", N_("Claude Code base URL"), claude_parsed)
def claude_base_url(ctx: DoctorContext, claude: Claude) -> Result:
    issues = Issues()
    overridden = _override(issues, claude.env.get(claude_code.BASE_URL), ctx.base_url, severity=Status.FAIL)
    item = claude.get(claude_code.BASE_URL)
    if item is None:
        return issues.result("") if issues.items else Result.skipped(_("ANTHROPIC_BASE_URL is not set (see "
                                                                       "claude.settings)"))
    value = item.value
    if item.path is not None and item.role == "settings" and item.hidden:
        issues.details.append(_("{path} overrides ANTHROPIC_BASE_URL from the shell").format(path=item.path))

    def set_fix(url: str) -> str:
        return _set_in(item, claude_code.BASE_URL, url)

    def repair(url: str) -> Repair:
        return _env_repair(item, _("set env.ANTHROPIC_BASE_URL to {url}").format(url=url),
                           lambda env: env.__setitem__(claude_code.BASE_URL, url))[0]

    user = claude.settings.path
    form = client_base_url_result(
        ctx, f"ANTHROPIC_BASE_URL = {value!r} ({item.where})", value, CLAUDE_FORM, why=claude_url_why(value),
        set_fix=set_fix, repair=repair if item.editable else None,
        # a value from the shell is best replaced in the user settings, which win over the shell
        unusable_fix=_('set "{name}": "{value}" in {path}').format(name=claude_code.BASE_URL, value=ctx.base_url,
                                                                    path=user) if item.path is None else None)
    if not (overridden and form.status is Status.WARN):  # the override already says that it differs
        issues.add_result(form)
    return issues.result(form.message)


@client_check("claude.key", N_("Claude Code credential variable"), claude_parsed)
def claude_key(ctx: DoctorContext, claude: Claude) -> Result:
    issues = Issues()
    overridden = _override(issues, claude.env.get(claude_code.AUTH_TOKEN), ctx.api_key, severity=Status.FAIL,
                           secret=True)
    overridden |= _override(issues, claude.env.get(claude_code.API_KEY), None, severity=Status.FAIL, secret=True)
    token, api_key = claude.get(claude_code.AUTH_TOKEN), claude.get(claude_code.API_KEY)
    if token is None and api_key is None:
        if claude.get(claude_code.BASE_URL) is None:
            return issues.result("") if issues.items else Result.skipped(_("no gateway configured for Claude Code"))
        if claude.setting("apiKeyHelper"):
            return Result.ok(_("the key comes from {source}").format(source="apiKeyHelper"))
        issues.fail(_("ANTHROPIC_BASE_URL is set but no ANTHROPIC_AUTH_TOKEN: Claude Code falls back to its own login "
                      "('OAuth token has expired · Please run /login')"),
                    fixes=[Fix.of(_("{command}   (writes ANTHROPIC_AUTH_TOKEN into ~/.claude/settings.json)"),
                                  command=Command("taotoken init"))])
        return issues.result("")
    if api_key is not None and token is None:
        fixes = [_('rename "{old}" to "{new}" in {path}').format(old=claude_code.API_KEY, new=claude_code.AUTH_TOKEN,
                                                                   path=api_key.path)] if api_key.editable else \
            [Fix.run('export ANTHROPIC_AUTH_TOKEN="$ANTHROPIC_API_KEY"; unset ANTHROPIC_API_KEY')]

        def rename(env: dict) -> None:
            env[claude_code.AUTH_TOKEN] = env.pop(claude_code.API_KEY)

        issues.warn(_("ANTHROPIC_API_KEY ({where}) instead of ANTHROPIC_AUTH_TOKEN: Claude Code sends it as "
                      "X-Api-Key and asks once to approve it; a declined key is ignored without a prompt").format(
                        where=api_key.where),
                    fixes=fixes, repairs=_env_repair(api_key, _("rename env.ANTHROPIC_API_KEY to "
                                                                "env.ANTHROPIC_AUTH_TOKEN"), rename))
    shell_key, places = claude_code.shell_value(claude_code.API_KEY, ctx.machine)
    if api_key is None and token is not None and shell_key and claude_code.API_KEY not in claude.env:
        api_key = EnvValue(claude_code.API_KEY, shell_key, claude_code.SHELL, None)  # what a new terminal exports
    if api_key is not None and token is not None:
        if api_key.editable:
            fixes: list[Fix | str] = [_('remove "{name}" from the env block of {path}').format(
                name=claude_code.API_KEY, path=api_key.path)]
            repairs = _env_repair(api_key, _("remove env.ANTHROPIC_API_KEY (ANTHROPIC_AUTH_TOKEN stays)"),
                                  lambda env: env.pop(claude_code.API_KEY, None))
        else:  # the shell's: "" in the user settings hides it from Claude Code alone (as init does)
            fixes = [_('set "{name}": "" in the env block of {path} (Claude Code treats it as unset; your shell keeps '
                       'the variable)').format(name=claude_code.API_KEY, path=claude.settings.path)]
            if places:
                fixes.append(_("or delete the line {places} (export {name}=…)").format(places=", ".join(places),
                                                                                      name=claude_code.API_KEY))
            repairs = [] if api_key.role == "managed" else [json_repair(
                claude.settings.path, _('set env.ANTHROPIC_API_KEY = "" (hides the shell\'s key from Claude Code)'),
                lambda data: data.setdefault("env", {}).__setitem__(claude_code.API_KEY, ""), secret=True)]
        key_where = ", ".join(places) if api_key.path is None and places else api_key.where
        add = issues.fail if strip_key(api_key.value) != strip_key(token.value) else issues.warn
        add(_("both ANTHROPIC_AUTH_TOKEN ({token_where}) and ANTHROPIC_API_KEY ({key_where}) are set: requests may "
              "carry two credentials").format(token_where=token.where, key_where=key_where), fixes=fixes,
            repairs=repairs)
    item = token if token is not None else api_key
    assert item is not None
    value, name = item.value, item.name
    if item.after_trust and not any(h.value and not h.after_trust for h in item.hidden):
        issues.warn(_("{name} is set only in {path}: {trust}, so first-run onboarding and Claude Code outside this "
                      "repository use its own login ('OAuth token has expired · Please run /login')").format(
                        name=name, path=item.path, trust=_(_TRUST)),
                    fixes=[Fix.of(_("{command}   (writes it into ~/.claude/settings.json, which applies at start-up)"),
                                  command=Command("taotoken init"))])
    clean = strip_key(value)
    if value != clean:
        repairs = _env_repair(item, _("strip whitespace/quotes from env.{name}").format(name=name),
                              lambda env: env.__setitem__(name, clean))
        issues.fail(_("{name} ({where}) has whitespace, a newline or quotes around the key: Claude Code says "
                      "'Invalid API key · Fix external API key'").format(name=name, where=item.where),
                    fixes=["taotoken doctor --fix" if repairs else
                           Fix.of(_("{command}   (no quotes, no newline)"), command=Command(f"export {name}=sk-…"))],
                    repairs=repairs)
    elif ctx.api_key and value != ctx.api_key and not overridden:
        issues.warn(_("{name} ({where}) = {value} differs from taotoken's key {ours}").format(
            name=name, where=item.where, value=mask_key(value), ours=mask_key(ctx.api_key)),
                    fixes=[Fix.of(_("{command}   (writes the same key everywhere)"), command=Command("taotoken init"))])
    return issues.result(f"{name} = {mask_key(value)} ({item.where})")


@client_check("claude.login", N_("Claude Code stored login vs gateway key"), claude_found)
def claude_login(ctx: DoctorContext, claude: Claude) -> Result:
    where = claude_code.paths(ctx.machine)
    credentials = where.config_dir / ".credentials.json"
    global_file = claude.state.files["global"]
    primary = isinstance(global_file.data, dict) and bool(global_file.data.get("primaryApiKey"))
    custom = any(claude.get(n) for n in (claude_code.AUTH_TOKEN, claude_code.API_KEY)) or \
        bool(claude.setting("apiKeyHelper"))
    logins = []
    if credentials.exists():
        logins.append(_("claude.ai OAuth credentials in {path}").format(path=credentials))
    if primary:
        logins.append(_("a Console key (primaryApiKey) in {path}").format(path=global_file.path))
    if not logins:
        return Result.ok(_("no stored Anthropic login beside the gateway key") if custom else
                         _("no stored Anthropic login"))
    if not custom:
        return Result.ok(_("uses {login} (no gateway key configured for Claude Code)").format(login=logins[0]))
    fixes: list[Fix | str] = [_("in Claude Code run /logout (removes the stored login), then restart it")]
    if credentials.exists():
        fixes.append(Fix.of(_("or: {fix}"), fix=Command(f"rm {credentials}")))
    return Result.warn(_("{logins} beside the gateway key").format(logins=and_join(logins)),
                       details=[_("Claude Code warns 'auth may not work as expected'; whenever the gateway variable "
                                  "does not reach it (IDE launch, project-only settings) it uses the stored login and "
                                  "fails with 'OAuth token has expired · Please run /login'")],
                       fixes=fixes)


@client_check("claude.onboarding", N_("Claude Code onboarding flag"), claude_found)
def claude_onboarding(ctx: DoctorContext, claude: Claude) -> Result:
    global_file = claude.state.files["global"]
    if global_file.error:
        return parse_failure(global_file)
    if claude.get(claude_code.BASE_URL) is None:
        return Result.skipped(_("no gateway configured for Claude Code"))
    data = global_file.data if isinstance(global_file.data, dict) else {}
    if data.get(claude_code.ONBOARDING) is True:
        return Result.ok(_("{name} is true in {path}").format(name=claude_code.ONBOARDING, path=global_file.path))

    def edit(doc: dict) -> None:
        doc[claude_code.ONBOARDING] = True

    return Result.warn(_("{name} is not true in {path}: the first-run wizard asks for an Anthropic login and "
                         "ignores the gateway").format(name=claude_code.ONBOARDING, path=global_file.path),
                       fixes=[_('set "{name}": true in {path}').format(name=claude_code.ONBOARDING,
                                                                      path=global_file.path)],
                       repairs=[json_repair(global_file.path, _("set {name} = true").format(
                           name=claude_code.ONBOARDING), edit)])


@client_check("claude.models", N_("Claude Code model variables"), claude_parsed)
def claude_models(ctx: DoctorContext, claude: Claude) -> Result:
    issues = Issues()
    for name in (claude_code.MODEL, claude_code.HAIKU_MODEL):
        _override(issues, claude.env.get(name), ctx.model, severity=Status.WARN)
    model = claude.get(claude_code.MODEL)
    if model and ctx.model and model.value != ctx.model and not model.outranks_user:
        issues.details.append(_("ANTHROPIC_MODEL = {value} ({where}); taotoken's model is {model}").format(
            value=model.value, where=model.where, model=ctx.model))
    old = claude.get(claude_code.SMALL_FAST_MODEL)
    if old is not None:
        old_name, new_name = claude_code.SMALL_FAST_MODEL, claude_code.HAIKU_MODEL

        def rename(env: dict) -> None:
            env.setdefault(new_name, env.pop(old_name))

        fix: Fix | str
        if old.editable:
            fix = _('rename "{old}" to "{new}" in {path}').format(old=old_name, new=new_name, path=old.path)
        elif old.path is None:
            fix = Fix.run(f'export {new_name}="${old_name}"; unset {old_name}')
        else:
            fix = _("ask the administrator who manages {path} to rename {old} to {new}").format(
                path=old.path, old=old_name, new=new_name)
        issues.warn(_("{old} ({where}) is deprecated; Claude Code reads {new}").format(old=old_name, where=old.where,
                                                                                       new=new_name), fixes=[fix],
                    repairs=_env_repair(old, _("replace env.{old} by env.{new} = {value}").format(
                        old=old_name, new=new_name, value=repr(old.value)), rename))
    haiku = claude.get(claude_code.HAIKU_MODEL)
    if model is None:
        return issues.result(_("model (Claude Code default) (none set), haiku slot {haiku}").format(haiku=haiku.value)
                             if haiku else _("model (Claude Code default) (none set)"))
    if haiku:
        return issues.result(_("model {model} ({where}), haiku slot {haiku}").format(
            model=model.value, where=model.where, haiku=haiku.value))
    return issues.result(_("model {model} ({where})").format(model=model.value, where=model.where))


# Which variables Claude Code reads, and that a loopback gateway is not exempt, is its proxy rule
# (core/clients/proxy_rules.py, checked against the real client; its docs leave ALL_PROXY out, 2.1.332 reads it).
# No SOCKS proxy (code.claude.com/docs/en/network-config). Its NO_PROXY may separate entries by spaces as well.
_CLAUDE_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
_NO_PROXY_VARS = ("NO_PROXY", "no_proxy")


def _proxy_environment(ctx: DoctorContext, claude: Claude) -> dict[str, str]:
    """The proxy-related environment Claude Code's own requests see (what its settings and a new terminal give
    it)."""
    env = {name: value for name, value in claude_code.terminal_environment(claude.env, ctx.machine).items()
           if name in _CLAUDE_PROXY_VARS + _NO_PROXY_VARS}
    for name in _NO_PROXY_VARS:
        if name in env:
            env[name] = ",".join(env[name].replace(",", " ").split())
    return env


@client_check("claude.proxy", N_("Claude Code proxy variables"), claude_found, network=True)
def claude_proxy(ctx: DoctorContext, claude: Claude) -> Result:
    from urllib.parse import urlsplit

    from taotoken_cli.cmd.doctor.checks.clients.common import clean_root
    from taotoken_cli.cmd.doctor.checks.network import probe_proxies
    from taotoken_cli.core.clients.proxy_rules import RULES
    from taotoken_cli.core.net.proxies import is_loopback, proxy_for

    own = [item for name, item in claude.env.items()
           if item.path is not None and name.upper() in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY")]
    if not own:
        return _shell_proxy(ctx, claude)
    issues = Issues()
    issues.details.extend(f"{item.name}={item.value} ({item.where})" for item in own)
    base = claude.get(claude_code.BASE_URL)
    url = (clean_root(base.value)[0] if base else None) or ctx.base_url
    host = urlsplit(url).hostname if url else None
    env = _proxy_environment(ctx, claude)
    used = RULES[claude_code.NAME].proxy_for(url, env) if url else None
    in_shell = proxy_for(url, ctx.env) if url else None
    if url:
        issues.details.insert(0, _routes(host, used, in_shell))
    file_of = {item.name: item for item in own}
    variables = [(name, env[name]) for name in _CLAUDE_PROXY_VARS if name in file_of and env.get(name)]
    for endpoint in probe_proxies(ctx, variables, used):
        files = sorted({str(file_of[name].path) for name in endpoint.names})
        if endpoint.probe.ok:
            issues.details.append(_("{proxy}: accepts connections").format(proxy=endpoint.label))
            continue
        values = {"proxy": endpoint.label, "files": listed(files), "problem": endpoint.probe.detail}
        if not endpoint.used:
            message = _("{proxy} from {files}: {problem} (not used for {host})").format(**values, host=host)
        elif in_shell == used:
            message = _('{proxy} from {files}: {problem} — inside Claude Code the classic "local proxy failed"').format(
                **values)
        else:
            message = _('{proxy} from {files}: {problem} — inside Claude Code the classic "local proxy failed" (the '
                        "shell does not use it)").format(**values)
        names = listed(f'"{n}"' for n in endpoint.names)
        fixes = [_("start the proxy on {address}, or remove {names} from the env block of {files}").format(
            address=f"{endpoint.host}:{endpoint.port}", names=names, files=and_join(files))]
        if host:
            fixes.append(_('or exempt the gateway: add "NO_PROXY": "{host}" to the env block of {path}').format(
                host=host, path=files[0]))
        (issues.fail if endpoint.used else issues.warn)(message, fixes=fixes)
    if used and host and is_loopback(host):
        _exempt_repair(issues, claude, host, env)
    if used and used.lower().startswith("socks"):
        issues.fail(_("Claude Code would use the SOCKS proxy {proxy}, which it does not support").format(proxy=used),
                    fixes=[_("use the proxy's HTTP port in HTTPS_PROXY (Clash and mihomo offer both)")])
    if used:
        return issues.result(_("Claude Code's requests to {host} go through {proxy}").format(host=host, proxy=used))
    if host:
        return issues.result(_("Claude Code's requests to {host} go direct").format(host=host))
    return issues.result(_("Claude Code's requests to the gateway go direct"))


def _shell_proxy(ctx: DoctorContext, claude: Claude) -> Result:
    """No proxy variable in Claude Code's settings: it takes the shell's, and for a gateway on this machine that is a
    detour Claude Code's rule does not skip (the proxy connects to its own loopback, or hangs when it is down)."""
    from urllib.parse import urlsplit

    from taotoken_cli.cmd.doctor.checks.clients.common import clean_root
    from taotoken_cli.core.net.proxies import is_loopback

    base = claude.get(claude_code.BASE_URL)
    url = (clean_root(base.value)[0] if base else None) or ctx.base_url
    host = (urlsplit(url).hostname or "") if url else ""
    env = _proxy_environment(ctx, claude)
    variable = claude_code.proxy_for_gateway(url, env) if url else None
    if variable is None or not is_loopback(host):
        return Result.ok(_("Claude Code's settings set no proxy variable: it uses the shell's (see net.proxy)"))
    issues = Issues()
    issues.warn(_("Claude Code sends its requests to {host} through {proxy} ({variable} from the shell): it does not "
                  "exempt a gateway on this machine").format(host=host, proxy=env[variable], variable=variable),
                fixes=[_('add "NO_PROXY": "{host}" to the env block of {path}').format(host=host,
                                                                                   path=claude.settings.path)])
    _exempt_repair(issues, claude, host, env)
    return issues.result("")


def _exempt_repair(issues: Issues, claude: Claude, host: str, env: dict[str, str]) -> None:
    """A gateway on this machine never needs a proxy: `--fix` puts NO_PROXY (with the entries it had) into the user
    settings' env block, as init does, and the proxy stays for everything else."""
    value = claude_code.no_proxy_with(env, host)
    path = claude.settings.path
    issues.repairs.append(json_repair(path, _("set env.NO_PROXY = {value} (the gateway on this machine goes direct)")
                                      .format(value=repr(value)),
                                      lambda data: data.setdefault("env", {}).__setitem__(claude_code.NO_PROXY, value),
                                      secret=True))


def _routes(host: str | None, used: str | None, in_shell: str | None) -> str:
    """How Claude Code's requests to `host` go, and how the shell's go (a proxy URL, or None: direct)."""
    if used and in_shell:
        return _("Claude Code's requests to {host} go through {proxy}; the shell's go through {shell_proxy}").format(
            host=host, proxy=used, shell_proxy=in_shell)
    if used:
        return _("Claude Code's requests to {host} go through {proxy}; the shell's go direct").format(host=host,
                                                                                                       proxy=used)
    if in_shell:
        return _("Claude Code's requests to {host} go direct; the shell's go through {shell_proxy}").format(
            host=host, shell_proxy=in_shell)
    return _("Claude Code's requests to {host} go direct; the shell's go direct").format(host=host)
