"""Claude Code (reference §1): the `env` block of settings.json, plus the onboarding flag.

Claude Code appends /v1/messages itself, so ANTHROPIC_BASE_URL is the bare root. The key goes in
ANTHROPIC_AUTH_TOKEN (sent as Bearer); ANTHROPIC_API_KEY in the same block is a conflict.

Claude Code reads several settings files (managed, project local, project shared, user — highest first); for
each variable the highest `env` block that sets it wins, and any `env` block wins over the shell.
`effective_env` resolves that order once, for doctor and init alike.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.errors import ConfigFileError, InputError
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.base.masking import mask_key, unquoted_key
from taotoken_cli.core.clients.base import (
    ClientState,
    ConfigFile,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    detect_by,
    home_dir,
    json_change,
    read_json,
)
from taotoken_cli.core.files import gitrepo
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.net.urlform import BARE_ROOT
from taotoken_cli.core.platform import shells, system

NAME = "claude-code"
LABEL = "Claude Code"
URL_FORM = BARE_ROOT  # Claude Code appends /v1/messages itself
BASE_URL = "ANTHROPIC_BASE_URL"
AUTH_TOKEN = "ANTHROPIC_AUTH_TOKEN"
API_KEY = "ANTHROPIC_API_KEY"
MODEL = "ANTHROPIC_MODEL"
HAIKU_MODEL = "ANTHROPIC_DEFAULT_HAIKU_MODEL"
SMALL_FAST_MODEL = "ANTHROPIC_SMALL_FAST_MODEL"  # deprecated alias of the haiku slot
ONBOARDING = "hasCompletedOnboarding"
NO_PROXY = "NO_PROXY"
# Switches that send Claude Code to a cloud provider instead of ANTHROPIC_BASE_URL (2.1.332 reads each as on when it
# is 1, true, yes or on, in any case): with one on, the gateway is never asked.
PROVIDER_SWITCHES = {"CLAUDE_CODE_USE_BEDROCK": "Amazon Bedrock", "CLAUDE_CODE_USE_VERTEX": "Google Vertex AI",
                     "CLAUDE_CODE_USE_FOUNDRY": "Microsoft Foundry",
                     "CLAUDE_CODE_USE_ANTHROPIC_AWS": "Anthropic on AWS",
                     "CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD": "Anthropic on Google Cloud",
                     "CLAUDE_CODE_USE_MANTLE": "Mantle"}


# The settings files by role, highest precedence first (reference §1.2; `--settings` on Claude Code's command
# line ranks between managed and local, but is no file one can look at).
SETTINGS_ROLES = ("managed", "project_local", "project_settings", "settings")
PROJECT_ROLES = ("project_local", "project_settings")  # their env applies only after the workspace trust prompt
SHELL = "shell"


@dataclass(frozen=True)
class ClaudePaths:
    config_dir: Path  # ~/.claude or $CLAUDE_CONFIG_DIR
    settings: Path  # user settings.json
    global_config: Path  # ~/.claude.json, or $CLAUDE_CONFIG_DIR/.claude.json
    repo: Path | None  # git repository of the working directory, if any
    project_settings: Path | None  # <repo>/.claude/settings.json (shared, checked in)
    project_local: Path | None  # <repo>/.claude/settings.local.json (personal)
    managed: Path  # set by an administrator; outranks every other file


def _config_dir(env: Mapping[str, str]) -> Path:
    override = env.get("CLAUDE_CONFIG_DIR")
    return Path(override).expanduser() if override else home_dir(env) / ".claude"


def paths(machine: Machine) -> ClaudePaths:
    env = machine.env
    config_dir = _config_dir(env)
    global_config = config_dir / ".claude.json" if env.get("CLAUDE_CONFIG_DIR") else machine.home / ".claude.json"
    repo = machine.git_root
    return ClaudePaths(
        config_dir, config_dir / "settings.json", global_config, repo,
        repo / ".claude" / "settings.json" if repo else None,
        repo / ".claude" / "settings.local.json" if repo else None,
        machine.system_root / system.current().managed_claude,
    )


def detect(machine: Machine) -> Detection:
    return detect_by([_config_dir(machine.env)], ["claude"], machine.env)


def read(machine: Machine) -> ClientState:
    """Parsed settings files (managed, user, project, local) and ~/.claude.json; parse errors are kept, not
    raised."""
    where = paths(machine)
    files = {"settings": read_json(where.settings), "global": read_json(where.global_config),
             "managed": read_json(where.managed)}
    if where.project_settings:
        files["project_settings"] = read_json(where.project_settings)
    if where.project_local:
        files["project_local"] = read_json(where.project_local)
    return ClientState(NAME, detect(machine), files)


def env_block(data: dict | None) -> dict:
    """The `env` object of a parsed settings file ({} when absent)."""
    block = (data or {}).get("env")
    return block if isinstance(block, dict) else {}


@dataclass(frozen=True)
class EnvValue:
    """One variable as Claude Code sees it: the value, where it comes from (a settings file's role and path, or
    the shell), and the values it hides — what the lower layers set it to, highest first."""

    name: str
    value: str
    role: str  # one of SETTINGS_ROLES, or SHELL
    path: Path | None  # None: the shell
    hidden: tuple[EnvValue, ...] = ()

    @property
    def where(self) -> str:
        return _("the shell") if self.path is None else str(self.path)

    @property
    def after_trust(self) -> bool:
        """Applied only once the user accepted the workspace trust prompt (project files)."""
        return self.role in PROJECT_ROLES

    @property
    def outranks_user(self) -> bool:
        """Set by a file that wins over the user settings (managed, or a project file)."""
        return self.role in ("managed", *PROJECT_ROLES)

    @property
    def editable(self) -> bool:
        """A file the user may edit (managed settings belong to an administrator)."""
        return self.path is not None and self.role != "managed"


def effective_env(machine: Machine, state: ClientState | None = None) -> dict[str, EnvValue]:
    """Every variable Claude Code starts with, resolved in its own order: the shell, then the user, project,
    local and managed `env` blocks, each overriding the ones before (files that do not parse are skipped: Claude
    Code ignores them too). `state` is a `read(machine)` already at hand."""
    files = (state or read(machine)).files
    layers: list[tuple[str, Path | None, Mapping]] = [(SHELL, None, machine.env)]
    for role in reversed(SETTINGS_ROLES):
        file = files.get(role)
        if file is not None and file.error is None and file.exists:
            layers.append((role, file.path, env_block(file.data)))
    effective: dict[str, EnvValue] = {}
    for role, path, block in layers:
        for name, value in block.items():
            if isinstance(value, str):  # non-strings are a settings error (doctor's claude.settings says so)
                below = effective.get(name)
                effective[name] = EnvValue(name, value, role, path, (below, *below.hidden) if below else ())
    return effective


def environment(effective: Mapping[str, EnvValue]) -> dict[str, str]:
    """The plain environment Claude Code's process gets (what its proxy and other settings are read from)."""
    return {name: item.value for name, item in effective.items()}


def switched_on(value: str | None) -> bool:
    """Claude Code's reading of a switch variable: on for 1, true, yes or on (any case, spaces around)."""
    return value is not None and value.strip().lower() in ("1", "true", "yes", "on")


def provider_switches(effective: Mapping[str, EnvValue]) -> list[EnvValue]:
    """The cloud-provider switches that are on where Claude Code reads them (each with its file or the shell)."""
    return [effective[name] for name in PROVIDER_SWITCHES if name in effective and switched_on(effective[name].value)]


def startup_exports(name: str, machine: Machine) -> list[tuple[str, str | None]]:
    """(`~/.bashrc:4`, the value it exports or None when only the shell can tell) for each line of a shell start-up
    file that exports `name`: what every new terminal, and Claude Code started from it, gets."""
    from taotoken_cli.core.settings.origins import exported_value, find_exports

    return [(export.shown(machine.home), exported_value(export)) for export in find_exports(name, machine.env)
            if export.path.parent != machine.config_dir]  # taotoken's own env.sh exports only OPENAI_*


def shell_value(name: str, machine: Machine) -> tuple[str | None, list[str]]:
    """What a new terminal gives `name`: the value (the last start-up line that exports one, else this shell's),
    and where it is exported (`~/.bashrc:4`)."""
    exports = startup_exports(name, machine)
    readable = [value for _place, value in exports if value is not None]
    value = readable[-1] if readable else machine.env.get(name)
    return value, [place for place, _value in exports]


def terminal_environment(effective: Mapping[str, EnvValue], machine: Machine) -> dict[str, str]:
    """environment(effective) as Claude Code started from a new terminal gets it: the proxy variables a start-up file
    exports (~/.bashrc) in place of this shell's, where no settings file sets them (an env block outranks the shell:
    checked with the real Claude Code, a ~/.bashrc HTTPS_PROXY with env.NO_PROXY = 127.0.0.1 goes direct)."""
    from taotoken_cli.core.clients.proxy_rules import RULES

    env = environment(effective)
    rule = RULES[NAME]
    for name in dict.fromkeys((*rule.http, *rule.https, *rule.no_proxy)):
        item = effective.get(name)
        if item is not None and item.role != SHELL:
            continue
        value, places = shell_value(name, machine)
        if places and value is not None:
            env[name] = value
    return env


def proxy_for_gateway(url: str, env: Mapping[str, str]) -> str | None:
    """The variable whose proxy Claude Code sends its requests to `url` through, under `env` (its real rule:
    core.clients.proxy_rules), or None: direct."""
    from taotoken_cli.core.clients.proxy_rules import RULES

    return RULES[NAME].variable_for(url, env)


def no_proxy_with(env: Mapping[str, str], host: str) -> str:
    """A NO_PROXY value that exempts `host` and keeps every entry Claude Code reads now (NO_PROXY, else no_proxy)."""
    current = next((env[name] for name in (NO_PROXY, NO_PROXY.lower()) if env.get(name, "").strip()), "")
    entries = [entry for entry in current.replace(" ", ",").split(",") if entry.strip()]
    return ",".join(dict.fromkeys([*entries, host]))


def same_value(name: str, a: str, b: str) -> bool:
    """Do two settings of `name` mean the same thing (one base URL root, one key, one model)?"""
    from taotoken_cli.core.net.hygiene import clean_base_url

    if name == BASE_URL:
        try:
            return clean_base_url(a).value == clean_base_url(b).value
        except InputError:
            return a.strip().rstrip("/") == b.strip().rstrip("/")
    if name in (AUTH_TOKEN, API_KEY):
        return unquoted_key(a) == unquoted_key(b)
    return a.strip() == b.strip()


def overridden(effective: Mapping[str, EnvValue], names: Iterable[str], above: str = "settings") -> list[EnvValue]:
    """The variables among `names` that a file ranking above the `above` role sets (so a value written into
    that role's file does not reach Claude Code), in the order of `names`."""
    higher = SETTINGS_ROLES[:SETTINGS_ROLES.index(above)]
    return [effective[name] for name in names if name in effective and effective[name].role in higher]


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    scope = options.scope
    where = paths(machine)
    result = Plan()
    if scope == "project":
        if where.project_local is None:
            raise InputError(_("--scope project writes .claude/settings.local.json of the current git repository, "
                               "but this directory is not inside one"),
                             _("run it from inside your project, or use --scope user"))
        settings_path = where.project_local
        result.warnings.append(_(
            "Claude Code applies a project file's env only after you accept the workspace trust prompt; "
            "first-run onboarding still needs the user settings (use --scope user for that)"))
        if gitrepo.ignored(settings_path) is False:
            result.warnings.append(_("{path} is not git-ignored: add `.claude/settings.local.json` to {gitignore} so "
                                     "the key is never committed").format(path=settings_path,
                                                                          gitignore=f"{where.repo}/.gitignore"))
    else:
        settings_path = where.settings
    settings = read_json(settings_path)
    settings.check()
    data = copy.deepcopy(settings.data) if settings.data is not None else {}
    if "env" in data and not isinstance(data["env"], dict):
        raise ConfigFileError(str(settings_path), None, None, _('"env" is not a JSON object'),
                              _('make it an object of strings, e.g. {example}, then run again').format(
                                  example='"env": {}'))
    block = data.setdefault("env", {})
    summary: list[str] = []
    wanted = {BASE_URL: triple.url_for(URL_FORM), AUTH_TOKEN: triple.api_key, MODEL: triple.model,
              HAIKU_MODEL: triple.model}
    for name, value in wanted.items():
        old = block.get(name)
        if old == value:
            continue
        if name == AUTH_TOKEN:
            if isinstance(old, str):
                result.secrets.append(old)
            summary.append(_("set {name} = {value}").format(name=f"env.{name}", value=mask_key(value)))
        elif old is not None:
            summary.append(_("set {name} = {value} (was {old})").format(name=f"env.{name}", value=repr(value),
                                                                        old=repr(old)))
        else:
            summary.append(_("set {name} = {value}").format(name=f"env.{name}", value=repr(value)))
        block[name] = value
    if block.get(API_KEY, "") != "":
        old_key = block.pop(API_KEY)
        if isinstance(old_key, str):
            result.secrets.append(old_key)
        _repaired(summary, result, _("removed {name} ({value}): with {other} also set, requests may carry two "
                                     "different credentials (X-Api-Key and Bearer)").format(
            name=f"env.{API_KEY}", value=mask_key(str(old_key)), other=AUTH_TOKEN))
    written = "project_local" if scope == "project" else "settings"
    _hide_shell_key(block, machine, summary, result)
    _switch_off_providers(block, machine, written, summary, result)
    _exempt_loopback_gateway(block, triple, machine, written, summary, result)
    if SMALL_FAST_MODEL in block:
        result.warnings.append(_("{path}: {old} is deprecated; {new} (now set) replaces it — remove the old one "
                                 "when convenient").format(path=settings_path, old=f"env.{SMALL_FAST_MODEL}",
                                                           new=HAIKU_MODEL))
    result.warnings.extend(_overrides(machine, "project_local" if scope == "project" else "settings", wanted))
    result.add(json_change(settings, data, target=NAME, summary=summary, secret=True))

    onboarding = read_json(where.global_config)
    onboarding.check()
    state = copy.deepcopy(onboarding.data) if onboarding.data is not None else {}
    onboarding_summary = []
    if state.get(ONBOARDING) is not True:
        state[ONBOARDING] = True
        onboarding_summary.append(_("set {name} = true (otherwise the first-run wizard asks for an Anthropic login "
                                    "and ignores the gateway)").format(name=ONBOARDING))
    result.add(json_change(onboarding, state, target=NAME, summary=onboarding_summary, new_mode=0o600))
    return result


def _repaired(summary: list[str], result: Plan, line: str) -> None:
    """A line of the change's summary that undoes something the user had set: init's compact output says it too."""
    summary.append(line)
    result.repairs.append(line)


def _hide_shell_key(block: dict, machine: Machine, summary: list[str], result: Plan) -> None:
    """ANTHROPIC_API_KEY from the shell (this one, or a start-up file's export): Claude Code would send it as
    X-Api-Key beside the Bearer token, and a gateway that reads X-Api-Key first rejects the request (and the user's
    own Anthropic key goes to the gateway). An empty value in the env block hides it from Claude Code alone: Claude
    Code treats "" as unset (checked with the real client: only the Bearer token is sent)."""
    value, places = shell_value(API_KEY, machine)
    if not value or block.get(API_KEY) == "":
        return
    result.secrets.append(value)
    where = ", ".join(places) if places else _("this shell")
    block[API_KEY] = ""
    _repaired(summary, result, _('set {name} = "" ({variable} is exported in {where}: Claude Code would send it as '
                                 'X-Api-Key beside the Bearer token; an empty value here hides it from Claude Code '
                                 'only)').format(name=f"env.{API_KEY}", variable=API_KEY, where=where))


def _switch_off_providers(block: dict, machine: Machine, written: str, summary: list[str], result: Plan) -> None:
    """A cloud-provider switch (CLAUDE_CODE_USE_BEDROCK=1, …) makes Claude Code ignore the gateway: removed from the
    env block init writes; set elsewhere (the shell, a start-up file, a file that outranks this one) it is named,
    with the line, and the run says that Claude Code does not work yet."""
    for name, provider in PROVIDER_SWITCHES.items():
        if switched_on(block.get(name)):
            old = block.pop(name)
            _repaired(summary, result, _("removed {name} ({value}): with it Claude Code talks to {provider} and "
                                         "ignores ANTHROPIC_BASE_URL").format(
                name=f"env.{name}", value=repr(old), provider=provider))
    effective = _effective_with(machine, written, block)  # as Claude Code will see it once this block is written
    for item in provider_switches(effective):
        provider = PROVIDER_SWITCHES[item.name]
        if item.path is None:
            _value, places = shell_value(item.name, machine)
            where = ", ".join(places) if places else _("this shell")
            if places:
                fix = _("delete the line {places} (export {name}=…), then open a new terminal").format(
                    places=where, name=item.name)
            else:
                unset = shells.unset_var(item.name, shells.syntax(machine.env))  # in the user's shell
                fix = _("{command} in the shell that starts Claude Code").format(command=f"`{unset}`")
        else:
            where = str(item.path)
            fix = _('ask the administrator who manages {path} to remove "{name}"').format(path=item.path,
                                                                                        name=item.name) \
                if item.role == "managed" else _('remove "{name}" from the env block of {path}').format(
                    name=item.name, path=item.path)
        result.broken.append(_("Claude Code talks to {provider}, not the gateway: {name}={value} is set in {where}; "
                               "fix: {fix}").format(provider=provider, name=item.name, value=item.value, where=where,
                                                    fix=fix))
    for name in PROVIDER_SWITCHES:  # a start-up file the current shell did not read (a new terminal will)
        if name in effective:
            continue
        value, places = shell_value(name, machine)
        if places and switched_on(value):
            result.broken.append(_("Claude Code started from a new terminal talks to {provider}, not the gateway: "
                                   "{name}={value} is exported in {places}; fix: delete that line").format(
                provider=PROVIDER_SWITCHES[name], name=name, value=value, places=", ".join(places)))


def _exempt_loopback_gateway(block: dict, triple: Triple, machine: Machine, written: str, summary: list[str],
                             result: Plan) -> None:
    """A gateway on this machine reached through a proxy: Claude Code's rule does not exempt loopback, so a proxy in
    its env block or a new terminal's (a dead one hangs every request until Claude Code's own timeout) carries the
    requests.
    NO_PROXY in the env block init writes exempts the gateway's host (keeping the entries NO_PROXY had)."""
    from urllib.parse import urlsplit

    from taotoken_cli.core.net.proxies import is_loopback

    url = triple.url_for(URL_FORM)
    host = (urlsplit(url).hostname or "").lower()
    if not is_loopback(host):
        return  # a remote gateway through a proxy is the user's choice
    env = terminal_environment(_effective_with(machine, written, block), machine)
    variable = proxy_for_gateway(url, env)
    if variable is None:
        return
    block[NO_PROXY] = no_proxy_with(env, host)
    _repaired(summary, result, _("set {name} = {value} ({variable}={proxy} would carry Claude Code's requests to the "
                                 "gateway on this machine: Claude Code does not exempt loopback)").format(
        name=f"env.{NO_PROXY}", value=repr(block[NO_PROXY]), variable=variable, proxy=env[variable]))
    still = proxy_for_gateway(url, terminal_environment(_effective_with(machine, written, block), machine))
    if still is not None:  # a file that outranks the one written sets NO_PROXY without the host
        result.broken.append(_("Claude Code's requests to {host} still go through {proxy}: a settings file that "
                               "outranks {written} sets {name}; add {host} to it there").format(
            host=host, proxy=env[still], written=written, name=NO_PROXY))


def _effective_with(machine: Machine, role: str, block: Mapping[str, object]) -> dict[str, EnvValue]:
    """effective_env with the env block of the `role` file replaced by `block` (what init is about to write)."""
    state = read(machine)
    files = dict(state.files)
    current = files.get(role)
    path = current.path if current is not None else paths(machine).settings
    data = copy.deepcopy(current.data) if current is not None and isinstance(current.data, dict) else {}
    data["env"] = dict(block)
    files[role] = ConfigFile(path, "json", raw=b"{}", data=data)  # as if written: only its env block is read
    return effective_env(machine, ClientState(NAME, state.detection, files))


def _overrides(machine: Machine, written: str, wanted: Mapping[str, str]) -> list[str]:
    """Files that outrank the one init writes (role `written`) and set one of its variables to another value
    (or set ANTHROPIC_API_KEY, which init removes): there, init's values do not reach Claude Code."""
    by_file: dict[tuple[str, Path | None], list[str]] = {}
    for item in overridden(effective_env(machine), (BASE_URL, AUTH_TOKEN, API_KEY, MODEL, HAIKU_MODEL), written):
        if item.name in wanted and same_value(item.name, item.value, wanted[item.name]):
            continue
        by_file.setdefault((item.role, item.path), []).append(item.name)
    warnings = []
    for (role, path), names in by_file.items():
        if role == "managed":
            warnings.append(_("{path} (managed settings, set by an administrator) sets {names}, which override "
                              "every other settings file: ask the administrator to change them there").format(
                path=path, names=listed(names)))
        else:
            warnings.append(_("{path} sets {names}, which override the user settings inside that repository; remove "
                              "them there or run init with --scope project").format(path=path, names=listed(names)))
    return warnings
