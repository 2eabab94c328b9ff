"""Gemini CLI (@google/gemini-cli, checked against 0.61.0; docs/clients.md "Gemini CLI"): it speaks the Gemini API,
not OpenAI's or Anthropic's, so it is written only where the gateway serves that API (init probes it first:
core.diagnosis.gemini_api).

What it reads, from its own source (packages/core/src/core/contentGenerator.ts, packages/cli/src/config/):
- the base URL only from the variable GOOGLE_GEMINI_BASE_URL (no settings field); @google/genai appends
  `/v1beta/models/{model}:streamGenerateContent?alt=sse` to it, so it is the bare root (BARE_ROOT);
- the key from GEMINI_API_KEY, sent as `x-goog-api-key`;
- both from the process environment first, else from ONE env file: walking up from the working directory, the
  first `.gemini/.env` or `.env`, then `~/.gemini/.env`, then `~/.env` (a project's `.env` shadows the user's
  file whole). In a folder the user has not trusted only GEMINI_API_KEY (sanitised) is taken from a `.env`, and
  `.gemini/.env` files are skipped; headless runs refuse such a folder unless `--skip-trust`;
- `security.auth.selectedType` from settings.json: without it, a key in a file is never used (the variables
  decide the auth type only when they are in the process environment); "gemini-api-key" is the one for a key;
- the model: `--model` > $GEMINI_MODEL > settings `model.name` (system > project > user).
Settings files: the user's `~/.gemini/settings.json` (JSON with comments), the project's `.gemini/settings.json`,
and the system's (core.platform: /etc/gemini-cli, /Library/Application Support/GeminiCli, C:\\ProgramData), which
overrides both. $GEMINI_CLI_HOME stands for the home directory.

init writes `~/.gemini/.env` (GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY, mode 0600; other lines kept) and
`security.auth.selectedType` and `model.name` in `~/.gemini/settings.json` (every other byte kept).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.errors import ConfigFileError
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import envvars
from taotoken_cli.core.clients.base import (
    Claim,
    ClientState,
    ConfigFile,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    detect_by,
    json_change,
    read_json,
    read_text,
    text_change,
)
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.formats import dotenv
from taotoken_cli.core.net.urlform import BARE_ROOT
from taotoken_cli.core.platform import shells, system

NAME = "gemini-cli"
LABEL = "Gemini CLI"
URL_FORM = BARE_ROOT  # @google/genai appends /v1beta/models/{model}:generateContent itself
BASE_URL = "GOOGLE_GEMINI_BASE_URL"
API_KEY = "GEMINI_API_KEY"
MODEL = "GEMINI_MODEL"
AUTH_TYPE = "gemini-api-key"  # security.auth.selectedType for an API key
# Variables that make Gemini CLI use Google's own endpoints instead of a key and a base URL.
OTHER_AUTH = ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA")
SETTINGS_ROLES = ("system", "project", "settings")  # highest precedence first


@dataclass(frozen=True)
class GeminiPaths:
    home: Path  # $GEMINI_CLI_HOME or HOME
    gemini_dir: Path  # ~/.gemini
    settings: Path  # ~/.gemini/settings.json
    env_file: Path  # ~/.gemini/.env (what init writes)
    project: Path  # <cwd>/.gemini/settings.json
    system: Path  # the system settings (core.platform), or $GEMINI_CLI_SYSTEM_SETTINGS_PATH


def paths(machine: Machine) -> GeminiPaths:
    env = machine.env
    home = Path(env["GEMINI_CLI_HOME"]).expanduser() if env.get("GEMINI_CLI_HOME") else machine.home
    gemini_dir = home / ".gemini"
    if env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH"):
        system_settings = Path(env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"]).expanduser()
    else:
        system_settings = machine.system_root / system.current().gemini_system
    return GeminiPaths(home, gemini_dir, gemini_dir / "settings.json", gemini_dir / ".env",
                       machine.cwd / ".gemini" / "settings.json", system_settings)


def detect(machine: Machine) -> Detection:
    return detect_by([paths(machine).gemini_dir], ["gemini"], machine.env)


def env_file_read(machine: Machine, *, written: bool = False) -> Path | None:
    """The one env file Gemini CLI loads in a trusted folder (cli/src/config/settings.ts findEnvFile); `written`:
    as if ~/.gemini/.env existed (after init)."""
    where = paths(machine)
    directory = machine.cwd
    while True:
        for candidate in (directory / ".gemini" / ".env", directory / ".env"):
            if candidate.is_file() or (written and candidate == where.env_file):
                return candidate
        if directory.parent == directory:
            break
        directory = directory.parent
    for candidate in (where.env_file, where.home / ".env"):
        if candidate.is_file() or (written and candidate == where.env_file):
            return candidate
    return None


def read(machine: Machine) -> ClientState:
    where = paths(machine)
    files = {"settings": read_json(where.settings, allow_comments=True), "env": read_text(where.env_file),
             "project": read_json(where.project, allow_comments=True),
             "system": read_json(where.system, allow_comments=True)}
    used = env_file_read(machine)
    if used is not None and used != where.env_file:
        files["env_used"] = read_text(used)
    return ClientState(NAME, detect(machine), files)


@dataclass(frozen=True)
class Value:
    value: str
    where: str  # "$GEMINI_API_KEY" or a file path


@dataclass(frozen=True)
class Effective:
    """What Gemini CLI started in `machine` uses: each value and where it comes from (None: not set)."""

    base_url: Value | None
    api_key: Value | None
    model: Value | None
    auth_type: Value | None
    env_file: Path | None  # the env file it loads


def _setting(data: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def effective(machine: Machine, state: ClientState | None = None) -> Effective:
    state = state or read(machine)
    env_path = env_file_read(machine)
    from_file: dict[str, str] = {}
    if env_path is not None:
        file = state.files.get("env_used") if env_path != paths(machine).env_file else state.files["env"]
        from_file = dotenv.values((file.text if file is not None else None) or "")

    def variable(name: str) -> Value | None:
        if machine.env.get(name):
            return Value(machine.env[name], "$" + name)
        if from_file.get(name):
            return Value(from_file[name], str(env_path))
        return None

    def setting(*keys: str) -> Value | None:
        for role in SETTINGS_ROLES:
            file = state.files[role]
            value = _setting(file.data, *keys)
            if isinstance(value, str) and value:
                return Value(value, str(file.path))
        return None

    return Effective(variable(BASE_URL), variable(API_KEY), variable(MODEL) or setting("model", "name"),
                     setting("security", "auth", "selectedType"), env_path)


def claim(machine: Machine, hosts: frozenset[str], written: frozenset[str] | tuple[str, ...]) -> Claim:
    """Whether ~/.gemini/.env is a copy of the triple (envvars' rule: GEMINI_API_KEY is TaoToken's only while
    GOOGLE_GEMINI_BASE_URL beside it points at TaoToken, or when it is a key taotoken wrote)."""
    file = read_text(paths(machine).env_file)
    pair = {name: value for name, value in dotenv.values((file.text or "") if file.error is None else "").items()
            if name in (BASE_URL, API_KEY)}
    found = envvars.read_env(pair, hosts, written)
    if found is None or not found.values:
        return Claim(None)
    if BASE_URL in found.owned or API_KEY in found.owned:
        return Claim(True)
    why = envvars.left_alone(found) or [_("{name} = {value} does not point at TaoToken").format(
        name=BASE_URL, value=repr(found.values.get(BASE_URL, "")))]
    return Claim(False, tuple(f"{file.path}: {line}" for line in why))


def _object_at(file: ConfigFile, data: dict, key: str) -> dict:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise ConfigFileError(str(file.path), None, None, _('"{name}" is not a JSON object').format(name=key),
                              _("make it an object, e.g. {example}, then run again").format(example=f'"{key}": {{}}'))
    return value


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    where = paths(machine)
    result = Plan()
    settings = read_json(where.settings, allow_comments=True)
    settings.check()
    data = copy.deepcopy(settings.data) if settings.data is not None else {}
    auth = _object_at(settings, _object_at(settings, data, "security"), "auth")
    model = _object_at(settings, data, "model")
    summary: list[str] = []
    for name, block, key, value in (("security.auth.selectedType", auth, "selectedType", AUTH_TYPE),
                                    ("model.name", model, "name", triple.model)):
        old = block.get(key)
        if old != value:
            summary.append(_("set {name} = {value} (was {old})").format(name=name, value=repr(value), old=repr(old))
                           if old is not None else _("set {name} = {value}").format(name=name, value=repr(value)))
            block[key] = value
    result.add(json_change(settings, data, target=NAME, summary=summary))

    env_file = read_text(where.env_file)
    env_file.check()
    before = dotenv.values(env_file.text or "")
    wanted = {BASE_URL: triple.url_for(URL_FORM), API_KEY: triple.api_key}
    env_summary = [_("set {name} = {value}").format(name=name, value=mask_key(value) if name == API_KEY
                                                    else repr(value))
                   for name, value in wanted.items() if before.get(name) != value]
    if before.get(API_KEY):
        result.secrets.append(before[API_KEY])
    result.add(text_change(env_file, dotenv.set_values(env_file.text or "", wanted, export=False), target=NAME,
                           summary=env_summary, secret=True))
    result.warnings.extend(_shadows(machine, triple))
    if summary or env_summary:
        result.details.append(_("Gemini CLI reads {path} only in folders you trust; headless runs (gemini -p) in an "
                              "untrusted folder need {option}").format(path=where.env_file, option="--skip-trust"))
    return result


def _shadows(machine: Machine, triple: Triple) -> list[str]:
    """What keeps Gemini CLI from using what init writes: the environment, a project env file, higher settings."""
    warnings = []

    def unset(name: str) -> str:  # in the user's shell (PowerShell: Remove-Item Env:NAME)
        return shells.unset_var(name, shells.syntax(machine.env))

    for name in OTHER_AUTH:
        if machine.env.get(name, "").lower() == "true":
            warnings.append(_("{variable}=true is set in your shell: Gemini CLI then uses Google's endpoints, not "
                              "the gateway — {command}").format(variable=name, command=f"`{unset(name)}`"))
    wanted = {BASE_URL: triple.url_for(URL_FORM), API_KEY: triple.api_key}
    for name, value in wanted.items():
        if machine.env.get(name) and machine.env[name] != value:
            shown = mask_key(machine.env[name]) if name == API_KEY else repr(machine.env[name])
            warnings.append(_("{variable} = {value} is exported in your shell and wins over {path} — {command} and "
                              "remove it from your shell start-up files").format(
                variable=name, value=shown, path=paths(machine).env_file, command=f"`{unset(name)}`"))
    used = env_file_read(machine, written=True)
    if used is not None and used != paths(machine).env_file:
        warnings.append(_("Gemini CLI started here loads {used} instead of {path} (the first env file it finds "
                          "walking up from the working directory wins whole): add {variables} there too").format(
            used=used, path=paths(machine).env_file, variables=f"{BASE_URL}, {API_KEY}"))
    return warnings
