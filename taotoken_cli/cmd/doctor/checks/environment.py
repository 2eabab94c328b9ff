"""Environment: variables that override, contradict or break the triple, and proxy settings."""

from __future__ import annotations

import difflib
import importlib.util
from urllib.parse import urlsplit

from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Result, folded
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.errors import InputError, TaotokenError
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import mask_key, unquoted_key
from taotoken_cli.core.clients.base import ENV_SYSTEM_ROOT
from taotoken_cli.core.clients.envvars import VARIABLES
from taotoken_cli.core.files.fsutil import read_user_text
from taotoken_cli.core.net import hygiene
from taotoken_cli.core.net.gateway import Endpoints
from taotoken_cli.core.platform import system
from taotoken_cli.core.platform.installer import add_package
from taotoken_cli.core.settings import ENV_CONFIG, ENV_PROFILE, FIELDS, profile_table, read_config_file
from taotoken_cli.core.settings.origins import fix_at_source
from taotoken_cli.core.term.layout import ENV_HOME_AS_TILDE

SECTION = "Environment"
_KNOWN_TAOTOKEN = {"TAOTOKEN_BASE_URL", "TAOTOKEN_API_KEY", "TAOTOKEN_MODEL", "TAOTOKEN_PROFILE",
                   "TAOTOKEN_CONFIG", "TAOTOKEN_DEBUG", "TAOTOKEN_ALLOW_HTTP", "TAOTOKEN_LANG", ENV_SYSTEM_ROOT,
                   "TAOTOKEN_LIBCUDA",  # the device probe's driver library (taotoken_cli.core.devices.probe)
                   system.ENV_DOCUMENTS, system.ENV_DESKTOP,  # sandboxes: Windows' Documents, the desktop's env
                   ENV_HOME_AS_TILDE}  # `taotoken demo` sets it for its steps (core.term.layout)
NO_PROXY_VARS = ("no_proxy", "NO_PROXY")  # the lower-case one wins (urllib's getproxies)


def root_of(url: str) -> str | None:
    """The API root a URL stands for (hygiene-cleaned), or None when it is unusable."""
    try:
        return hygiene.clean_base_url(url).value
    except InputError:
        return None


def host_of(url: str | None) -> str:
    return (urlsplit(url).hostname or "").lower() if url else ""


def _setting(ctx: DoctorContext) -> tuple[str | None, str | None, str | None]:
    return ctx.base_url, ctx.api_key, ctx.model


def problems_result(fails: list[str], warns: list[str], details: list[str], fixes: list[Fix | str]) -> Result:
    """One result for the problems a check found: the first is the message, the others follow the details."""
    problems = fails + warns
    make = Result.fail if fails else Result.warn
    return make(folded(problems), details=details + problems[1:], fixes=fixes)


@check("env.taotoken", SECTION, N_("TAOTOKEN_* variables"))
def taotoken_vars(ctx: DoctorContext) -> Result:
    present = sorted(name for name in ctx.env if name.startswith("TAOTOKEN_"))
    if not present:
        return Result.ok(_("none set (values come from the config file)"))
    problems: list[str] = []
    fixes: list[Fix | str] = []
    for name in present:
        if name not in _KNOWN_TAOTOKEN:
            close = difflib.get_close_matches(name, sorted(_KNOWN_TAOTOKEN), n=1, cutoff=0.6)
            problems.append(_("{name} is not read by taotoken (did you mean {other}?)").format(
                name=name, other=close[0]) if close else _("{name} is not read by taotoken").format(name=name))
            fixes.append(Fix.run(f"unset {name}" + (f"; export {close[0]}=…" if close else "")))
    # A variable silently overriding a different value in the file is the classic "stale copy".
    if ctx.settings_error is None and ctx.settings.config_exists:
        try:
            table = profile_table(read_config_file(ctx.settings.config_path), ctx.settings.profile)
        except TaotokenError:
            table = {}
        for field in FIELDS:
            item = ctx.settings.value(field)
            in_file = table.get(field)
            if item.origin.kind == "env" and isinstance(in_file, str) and in_file.strip() and item.value:
                try:
                    file_value = {"base_url": hygiene.clean_base_url, "api_key": hygiene.clean_key,
                                  "model": hygiene.clean_model}[field](in_file).value
                except InputError:
                    file_value = in_file
                if file_value != item.value:
                    show = mask_key if field == "api_key" else str
                    problems.append(_("{var}={value} overrides {field}={file_value} in {path}").format(
                        var=item.origin.detail, value=show(item.value), field=field, file_value=show(file_value),
                        path=ctx.settings.config_path))
                    fixes.append(fix_at_source(ctx.settings, field, None if field == "api_key" else file_value,
                                               ctx.env))
    profile = ctx.env.get(ENV_PROFILE)
    if profile and ctx.settings.profiles and profile not in ctx.settings.profiles:
        problems.append(_("{var}={profile} names a profile that is not in the config file").format(
            var=ENV_PROFILE, profile=profile))
        fixes.append(Fix.of(_("{command}   (profiles: {profiles})"), command=Command(f"unset {ENV_PROFILE}"),
                                                                      profiles=listed(ctx.settings.profiles)))
    details = [_("set: {names}").format(names=listed(present))]
    if ENV_CONFIG in ctx.env:
        details.append(_("{var} points the config file at {path}").format(var=ENV_CONFIG, path=ctx.env[ENV_CONFIG]))
    if problems:
        return problems_result([], problems, details, fixes)
    return Result.ok(listed(present), details=details)


def stale_key_exports(ctx: DoctorContext, variable: str) -> list[str]:
    """`~/.bashrc:4` for each start-up file line that exports `variable` with a value other than taotoken's key
    (taotoken's own env.sh exports the right one and is left out)."""
    from taotoken_cli.core.settings import config_dir
    from taotoken_cli.core.settings.origins import find_exports

    own = config_dir(ctx.env)
    places = []
    for export in find_exports(variable, ctx.env):
        if export.path.parent == own:
            continue
        try:
            line = read_user_text(export.path).splitlines()[export.line - 1]
        except (OSError, IndexError):
            continue
        if ctx.api_key is None or ctx.api_key not in line:
            places.append(export.shown(ctx.home))
    return places


def codex_reads_env_key(ctx: DoctorContext, variable: str) -> bool:
    """Does Codex's chosen provider take its key from `variable`?"""
    from taotoken_cli.core.clients import codex

    data = codex.read(ctx.machine).files["config"].data
    if not isinstance(data, dict):
        return False
    providers = data.get("model_providers") if isinstance(data.get("model_providers"), dict) else {}
    provider = providers.get(data.get("model_provider") or "")
    return isinstance(provider, dict) and provider.get("env_key") == variable


@check("env.openai", SECTION, N_("OPENAI_* variables"))
def openai_vars(ctx: DoctorContext) -> Result:
    base, key, _model = _setting(ctx)
    names = [n for n in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY") if ctx.env.get(n)]
    if not names:
        return Result.ok(_("none set"))
    problems: list[str] = []
    fails: list[str] = []
    fixes: list[Fix | str] = []
    details: list[str] = []
    expected = VARIABLES["OPENAI_BASE_URL"].form.url(base) if base else None
    points_elsewhere = False
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        value = ctx.env.get(name)
        if not value:
            continue
        root = root_of(value)
        if root is None:
            problems.append(_("{var}={value} is not a usable URL").format(var=name, value=repr(value)))
            fixes.append(Fix.run(f"export {name}={expected}" if expected else f"unset {name}"))
        elif base and host_of(root) != host_of(base):
            points_elsewhere = True
            details.append(_("{var} points at {host}, not {gateway}: scripts using the OpenAI SDK go there "
                             "(fine if intended)").format(var=name, host=host_of(root), gateway=host_of(base)))
        elif expected and value.strip().rstrip("/") != expected:
            problems.append(_("{var}={value} should be {expected} (OpenAI SDKs append /chat/completions to it)")
                            .format(var=name, value=value.strip(), expected=expected))
            fixes.append(Fix.run(f"export {name}={expected}"))
    if ctx.env.get("OPENAI_BASE_URL") and (ctx.home / ".codex").exists():
        details.append(_("Codex: OPENAI_BASE_URL is deprecated and only affects its built-in openai provider; "
                         "the taotoken provider's base_url lives in ~/.codex/config.toml"))
    env_key = ctx.env.get("OPENAI_API_KEY")
    if env_key and key:
        cleaned = unquoted_key(env_key)
        if cleaned != env_key:
            problems.append(_("OPENAI_API_KEY has whitespace or quotes around it"))
            fixes.append(Fix.of(_("{command}   (no quotes, no newline)"),
                                command=Command("export OPENAI_API_KEY=sk-…")))
        elif cleaned != key and not points_elsewhere:
            stale = stale_key_exports(ctx, "OPENAI_API_KEY")
            if stale and codex_reads_env_key(ctx, "OPENAI_API_KEY"):  # Codex sends it: a failure, named by line
                fails.append(_("{var}={key}, exported in {places}, differs from the taotoken key {taotoken_key}: "
                               "Codex sends it (its provider reads ${var}) and the gateway rejects it").format(
                    var="OPENAI_API_KEY", key=mask_key(cleaned), taotoken_key=mask_key(key),
                    places=listed(stale)))
                fixes.extend(_("delete the line {place} (export {var}=…): taotoken's env.sh exports the right key")
                             .format(place=place, var="OPENAI_API_KEY") for place in stale)
            else:
                problems.append((_("{var}={key} (exported in {places}) differs from the taotoken key {taotoken_key}")
                                 if stale else _("{var}={key} differs from the taotoken key {taotoken_key}")).format(
                    var="OPENAI_API_KEY", key=mask_key(cleaned), taotoken_key=mask_key(key),
                    places=listed(stale)))
                fixes.append(_key_from_taotoken("OPENAI_API_KEY"))
        elif cleaned == key and points_elsewhere:
            problems.append(_("OPENAI_API_KEY holds the TaoToken key but the OpenAI base URL points elsewhere"))
            fixes.append(Fix.run(f"export OPENAI_BASE_URL={expected}"))
    details.insert(0, _("set: {names}").format(names=listed(names)))
    if problems or fails:
        return problems_result(fails, problems, details, fixes)
    if points_elsewhere:
        return Result.ok(listed(names), details=details)
    return Result.ok(_("{names} agree with the triple").format(names=listed(names)), details=details)


@check("env.anthropic", SECTION, N_("ANTHROPIC_* variables"))
def anthropic_vars(ctx: DoctorContext) -> Result:
    base, key, model = _setting(ctx)
    names = sorted(n for n in ctx.env if n.startswith("ANTHROPIC_") and ctx.env[n])
    if not names:
        return Result.ok(_("none set"))
    fails: list[str] = []
    warns: list[str] = []
    fixes: list[Fix | str] = []
    details = [_("set: {names}").format(names=listed(names))]
    value = ctx.env.get("ANTHROPIC_BASE_URL", "").strip()
    elsewhere = False
    if value:
        root = root_of(value)
        if root is None:
            fails.append(_("{var}={value} is not a usable URL").format(var="ANTHROPIC_BASE_URL", value=repr(value)))
            fixes.append(Fix.run(f"export ANTHROPIC_BASE_URL={base}"))
        elif base and host_of(root) != host_of(base):
            elsewhere = True
            details.append(_("{var} points at {host}, not {gateway} (fine if intended)").format(
                var="ANTHROPIC_BASE_URL", host=host_of(root), gateway=host_of(base)))
        elif value.rstrip("/") != VARIABLES["ANTHROPIC_BASE_URL"].form.url(root):
            fails.append(_("ANTHROPIC_BASE_URL={value} is not the bare root: Claude Code and the Anthropic SDK "
                           "append /v1/messages and would call {url}").format(
                value=value, url=Endpoints(value.rstrip("/")).messages))
            fixes.append(Fix.run(f"export ANTHROPIC_BASE_URL={root}"))
    for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"):
        given = ctx.env.get(name)
        if given and key and unquoted_key(given) != key and not elsewhere:
            warns.append(_("{var}={key} differs from the taotoken key {taotoken_key}").format(
                var=name, key=mask_key(given.strip()), taotoken_key=mask_key(key)))
            fixes.append(_key_from_taotoken(name))
        elif given and given != given.strip():
            warns.append(_("{var} has whitespace or a newline around it (the header becomes invalid)").format(var=name))
            fixes.append(Fix.of(_("{command}   (no quotes, no newline)"), command=Command(f"export {name}=sk-…")))
    if ctx.env.get("ANTHROPIC_SMALL_FAST_MODEL"):
        warns.append(_("ANTHROPIC_SMALL_FAST_MODEL is deprecated in Claude Code"))
        fixes.append(Fix.run(f"export ANTHROPIC_DEFAULT_HAIKU_MODEL={ctx.env['ANTHROPIC_SMALL_FAST_MODEL']}; "
                             "unset ANTHROPIC_SMALL_FAST_MODEL"))
    if ctx.env.get("ANTHROPIC_MODEL") and model and ctx.env["ANTHROPIC_MODEL"] != model:
        details.append(_("ANTHROPIC_MODEL={value} (taotoken's model is {model})").format(
            value=ctx.env["ANTHROPIC_MODEL"], model=model))
    if fails or warns:
        return problems_result(fails, warns, details, fixes)
    return Result.ok(listed(names), details=details)


def _key_from_taotoken(variable: str) -> Fix:
    """Give `variable` the key taotoken uses (TAOTOKEN_API_KEY), or drop it."""
    return Fix.of(_("{command}   (or {unset})"), command=Command(f'export {variable}="$TAOTOKEN_API_KEY"'),
                  unset=Command(f"unset {variable}"))


@check("env.anthropic_conflict", SECTION, N_("ANTHROPIC_API_KEY vs ANTHROPIC_AUTH_TOKEN"))
def anthropic_conflict(ctx: DoctorContext) -> Result:
    api_key = ctx.env.get("ANTHROPIC_API_KEY", "")
    token = ctx.env.get("ANTHROPIC_AUTH_TOKEN", "")
    if not (api_key and token):
        which = "ANTHROPIC_AUTH_TOKEN" if token else "ANTHROPIC_API_KEY" if api_key else None
        if which == "ANTHROPIC_API_KEY":
            return Result.warn(_("ANTHROPIC_API_KEY is set: Claude Code sends it as X-Api-Key and asks once to "
                                 "approve it; a declined key is then ignored silently"),
                               fixes=[Fix.run('export ANTHROPIC_AUTH_TOKEN="$ANTHROPIC_API_KEY"; '
                                              'unset ANTHROPIC_API_KEY')])
        return Result.ok(_("only {var} is set").format(var=which) if which else _("neither is set in the shell"))
    fixes = [Fix.of(_("{command}   (keep ANTHROPIC_AUTH_TOKEN: Claude Code sends it as Bearer)"),
                    command=Command("unset ANTHROPIC_API_KEY"))]
    if api_key.strip() != token.strip():
        return Result.fail(_("ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN are both set, to different keys"),
                           details=[_("Claude Code uses AUTH_TOKEN (Bearer) first; SDKs send both headers and the "
                                      "gateway may read the wrong one")], fixes=fixes)
    return Result.warn(_("ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN are both set"),
                       details=[_("requests may carry one header or both; Claude Code warns about an auth conflict")],
                       fixes=fixes)


def client_routes(ctx: DoctorContext, url: str) -> list[tuple[str, str | None, str | None]]:
    """(label, variable, proxy) for each client found here, by its own proxy rule under the shell's environment
    (core/clients/proxy_rules.py); proxy None: it goes direct."""
    from taotoken_cli.core.clients import CLIENTS
    from taotoken_cli.core.clients.proxy_rules import RULES

    routes = []
    for name, rule in RULES.items():
        client = CLIENTS[name]
        if client.detect(ctx.machine).found:
            variable = rule.variable_for(url, ctx.env)
            routes.append((client.LABEL, variable, ctx.env[variable].strip() if variable else None))
    return routes


@check("env.proxy", SECTION, N_("Proxy variables"))
def proxy_vars(ctx: DoctorContext) -> Result:
    from taotoken_cli.core.base.fix import Command, Fix
    from taotoken_cli.core.net.proxies import proxy_for, proxy_variables

    proxies = proxy_variables(ctx.env)
    no_proxy = next((ctx.env[n] for n in NO_PROXY_VARS if ctx.env.get(n)), "")
    if not proxies:
        return Result.ok(_("no proxy variables set: direct connections"))
    base = ctx.base_url
    used = proxy_for(base, ctx.env) if base else None
    details = [f"{name}={value}" for name, value in proxies]
    if no_proxy:
        details.append(f"NO_PROXY={no_proxy}")
    fails: list[str] = []
    warns: list[str] = []
    fixes: list[Fix | str] = []
    for upper in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
        a, b = ctx.env.get(upper, "").strip(), ctx.env.get(upper.lower(), "").strip()
        if a and b and a != b:
            warns.append(_("{var}={value} but {lower}={lower_value}: taotoken, the Python SDKs (httpx) and curl use "
                           "{lower}; tools that read only {var} use the other").format(
                var=upper, value=a, lower=upper.lower(), lower_value=b))
            fixes.append(Fix.of(_("{command}   (make both the same, or unset one)"),
                                command=Command(f"export {upper}={b}")))
    for name, value in proxies:
        scheme = value.split("://", 1)[0].lower() if "://" in value else ""
        if not scheme:
            details.append(_("{var} has no scheme: httpx (taotoken, the Python SDKs) and curl use {url}").format(
                var=name, url=f"http://{value}"))
        elif scheme.startswith("socks") and value == used and importlib.util.find_spec("socksio") is None:
            # i18n: the quoted error is httpx's own words: keep it in English
            fails.append(_("{var}={value} is a SOCKS proxy but the 'socksio' package is missing: httpx-based "
                           "clients (taotoken, the OpenAI SDK) fail with 'Using SOCKS proxy, but the socksio "
                           "package is not installed'").format(var=name, value=value))
            fixes.append(Fix.of(_("{command}   (in the Python environment that runs the client)"),
                                command=add_package("httpx[socks]")))
            fixes.append(Fix.of(_("or use the proxy's HTTP port: {command}"),
                                command=Command(f"export {name}=http://{urlsplit(value).netloc}")))
    if base:
        host = host_of(base)
        if used:
            route = _("requests to {host} go through {proxy}").format(host=host, proxy=used)
        elif no_proxy:
            route = _("requests to {host} go direct (NO_PROXY)").format(host=host)
        else:
            route = _("requests to {host} go direct").format(host=host)
        details.insert(0, route)
        for label, name, proxy in client_routes(ctx, base):  # each client's own rule, checked against it
            if proxy and proxy != used:
                warns.append(_("{client} sends requests to {host} through {proxy} (it reads {var}; taotoken's own "
                               "requests go {route})").format(client=label, host=host, proxy=proxy, var=name,
                                                             route=_("through {proxy}").format(proxy=used) if used
                                                             else _("direct")))
                exempt = Fix.of(_("{command}   (every client exempts the gateway then)"),
                                command=Command(f"export NO_PROXY={host}"))
                if exempt not in fixes:  # one fix serves every client
                    fixes.append(exempt)
    if fails or warns:
        return problems_result(fails, warns, details, fixes)
    if used:
        return Result.ok(_("gateway traffic goes through {proxy}").format(proxy=used), details=details)
    if host_of(base):
        return Result.ok(_("proxy set, but {host} is reached directly").format(host=host_of(base)), details=details)
    return Result.ok(_("proxy set, but the gateway is reached directly"), details=details)
