"""The one config loader every command uses.

Sources, highest first: command-line flags, environment (TAOTOKEN_*), the user config file
(`config.toml` in platformdirs' user config dir, or $TAOTOKEN_CONFIG), defaults. Every resolved
value records where it came from. Values from the environment and the file go through the same
hygiene as `init`, and the notes say what was cleaned.

File layout:

    default_profile = "default"

    [profiles.default]
    base_url = "https://taotoken.net/api"
    api_key = "sk-..."
    model = "gpt-4o-mini"

    [profiles.default.routes]      # used by `taotoken route`
    cuda = "gpu-a100-qwen25-72b-fp16"
    cpu = "cpu-llama3-8b-int8"
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taotoken_cli import APP_NAME, DEFAULT_BASE_URL
from taotoken_cli.core.base.errors import ConfigFileError, InputError, TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import remember_secret
from taotoken_cli.core.formats.tomlerrors import toml_message
from taotoken_cli.core.platform import system

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ENV_BASE_URL = "TAOTOKEN_BASE_URL"
ENV_API_KEY = "TAOTOKEN_API_KEY"
ENV_MODEL = "TAOTOKEN_MODEL"
ENV_PROFILE = "TAOTOKEN_PROFILE"
ENV_CONFIG = "TAOTOKEN_CONFIG"
DEFAULT_PROFILE = "default"
FIELDS = ("base_url", "api_key", "model")
_ENV_FOR = {"base_url": ENV_BASE_URL, "api_key": ENV_API_KEY, "model": ENV_MODEL}
# Each field's name in messages (translated where shown: `_(LABELS[name])`).
LABELS = {"base_url": N_("base URL"), "api_key": N_("API key"), "model": N_("model")}
# How an origin's kind reads in messages (`Origin.kind` itself is a stable JSON value).
_KIND_WORDS = {"flag": N_("flag"), "env": N_("env"), "file": N_("file"), "default": N_("default"),
               "unset": N_("unset")}


@dataclass(frozen=True)
class Origin:
    kind: str  # "flag" | "env" | "file" | "default" | "unset"
    detail: str = ""  # e.g. "TAOTOKEN_API_KEY" or "/home/u/.config/taotoken/config.toml [default]"

    def __str__(self) -> str:
        kind = _(_KIND_WORDS[self.kind]) if self.kind in _KIND_WORDS else self.kind
        return f"{kind} {self.detail}".strip()


@dataclass
class Value:
    """One resolved setting: the cleaned value, what was given, and where it came from."""

    value: str | None
    origin: Origin
    raw: str | None = None
    notes: list[str] = field(default_factory=list)  # hygiene changes and warnings
    warnings: list[str] = field(default_factory=list)  # the notes that say something still looks wrong
    error: str | None = None  # set when the given value cannot be used at all
    fix: str | None = None

    @property
    def is_set(self) -> bool:
        return self.value is not None and self.error is None

    def labelled_notes(self, label: str) -> list[str]:
        """Each note as `note: LABEL: …` (something was cleaned) or `warning: LABEL: …` (it still looks wrong);
        `label` is one of LABELS (translated here)."""
        label = _(label)
        return [(_("warning: {label}: {note}") if note in self.warnings else _("note: {label}: {note}"))
                .format(label=label, note=note) for note in self.notes]


@dataclass(frozen=True)
class Overrides:
    """Values given on the command line (highest precedence)."""

    profile: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None


@dataclass
class Settings:
    profile: str
    profile_origin: Origin
    base_url: Value
    api_key: Value
    model: Value
    routes: dict[str, str]
    config_path: Path
    config_exists: bool
    profiles: list[str]

    def value(self, name: str) -> Value:
        return getattr(self, name)

    def require(self, *names: str) -> None:
        """Raise a TaotokenError (exit 3) naming the first missing or unusable value and its fix."""
        for name in names:
            item = self.value(name)
            if item.error:
                raise TaotokenError(_("{name} ({origin}): {error}").format(name=name, origin=item.origin,
                                                                           error=item.error), item.fix, Exit.CONFIG,
                                    code="config.invalid")
            if item.value is None and self.profile not in self.profiles and self.profile_origin.kind in ("flag",
                                                                                                    "env"):
                # `--profile nosuch`: the profile is the mistake, not a missing key (and no proxy stripped one)
                known = listed(self.profiles) or _("none yet")
                raise TaotokenError(
                    _("profile {profile} ({origin}) does not exist in {path} (profiles: {known})").format(
                        profile=repr(self.profile), origin=self.profile_origin, path=self.config_path, known=known),
                    Fix.of(_("pick an existing one ({list}), or create it: {command}"),
                           list=Command("taotoken config profiles"),
                           command=Command(f"taotoken init --profile {self.profile}")),
                    Exit.CONFIG, code="config.missing")
            if item.value is None:
                setter = Command("taotoken config set api_key -" if name == "api_key"
                                 else f"taotoken config set {name} …")
                missing = {"base_url": _("no base URL configured (profile {profile})"),
                           "api_key": _("no API key configured (profile {profile})"),
                           "model": _("no model configured (profile {profile})")}[name]
                raise TaotokenError(
                    missing.format(profile=repr(self.profile)),
                    Fix.of(_("{init}   (or: {command})"), init=Command("taotoken init"), command=setter),
                    Exit.CONFIG,
                    code="auth.missing_key" if name == "api_key" else "config.missing",
                )



def config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    override = env.get(ENV_CONFIG)
    if override:
        return Path(os.path.expanduser(override))
    return Path(user_config_dir(env)) / "config.toml"


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """taotoken's config dir: $XDG_CONFIG_HOME/taotoken when that is set, on every OS (as gh does: the one way
    to move it, and what the demo's sandbox and the tests rely on), else the OS's per-user settings folder read
    from `env` (~/.config/taotoken, ~/Library/Application Support/taotoken, %LOCALAPPDATA%\\taotoken: what
    platformdirs computes, but from the environment this command was given, so a sandboxed HOME or LOCALAPPDATA
    is honoured on every OS), else platformdirs'."""
    env = os.environ if env is None else env
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]) / APP_NAME
    root = system.user_config_root(env)  # no platformdirs import: it costs `check` start-up time
    if root is not None:
        return root / APP_NAME
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where taotoken keeps its own files (env file, backups): next to config.toml."""
    return config_path(env).parent


def read_config_file(path: Path) -> dict[str, Any]:
    """Parse the config file; a missing file is empty. Parse errors name line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except NotADirectoryError:  # HOME (or a directory above the file) is a regular file
        raise ConfigFileError(str(path), None, None, _("cannot be read: a directory above it is a file"),
                              _("check HOME and {variable}: they must name directories").format(
                                  variable=ENV_CONFIG)) from None
    except IsADirectoryError:
        raise ConfigFileError(str(path), None, None, _("is a directory, not a file"),
                              _("remove it or point {variable} at a file").format(variable=ENV_CONFIG)) from None
    except UnicodeDecodeError as exc:
        raise ConfigFileError(str(path), None, None, _("is not UTF-8 text ({reason})").format(reason=exc.reason),
                              _("save the file as UTF-8")) from None
    except PermissionError:
        from taotoken_cli.core.platform.permissions import private_fix

        raise ConfigFileError(str(path), None, None, _("cannot be read (permission denied)"),
                              Fix.of(_("fix its permissions: {command}"), command=Command(private_fix(path)))) from None
    try:
        data = tomllib.loads(text.removeprefix("\ufeff"))  # a byte-order mark (Notepad) is kept, not parsed
    except tomllib.TOMLDecodeError as exc:
        line, col = toml_error_position(exc)
        raise ConfigFileError(str(path), line, col, _("invalid TOML: {detail}").format(detail=toml_message(str(exc))),
                              Fix.of(_("fix the file at that position, or move it away and run {command}"),
                                     command=Command("taotoken init"))) from None
    return data


def toml_error_position(exc: Exception) -> tuple[int | None, int | None]:
    lineno = getattr(exc, "lineno", None)
    colno = getattr(exc, "colno", None)
    if lineno is None:
        match = re.search(r"line (\d+), column (\d+)", str(exc))
        if match:
            lineno, colno = int(match.group(1)), int(match.group(2))
    return lineno, colno


def profile_table(data: Mapping[str, Any], profile: str) -> dict[str, Any]:
    profiles = data.get("profiles")
    if not isinstance(profiles, Mapping):
        return {}
    table = profiles.get(profile)
    return dict(table) if isinstance(table, Mapping) else {}


def _valid_profile(name: str, origin: str) -> str:
    """A profile name given on input (flag, environment) is checked at once, the same way for every command: one
    that could not be stored (`a b`, `../../etc`, 300 characters) stops the run before anything reads or writes."""
    from taotoken_cli.core.settings.edit import validate_profile_name

    try:
        return validate_profile_name(name)
    except InputError as exc:
        raise InputError(_("{problem} (from {origin})").format(problem=exc.message, origin=origin), exc.fix) from None


def _stored_profile(name: str, path: Path) -> str:
    """The config file's default_profile, when it is a name a profile can have; one written by hand that is not
    (`../../etc`, `a b`) stops the run with where it is and the command that replaces it (which does not read it)."""
    from taotoken_cli.core.settings.edit import validate_profile_name

    try:
        return validate_profile_name(name)
    except InputError as exc:
        raise TaotokenError(_("{problem} (default_profile in {path})").format(problem=exc.message, path=path),
                            Fix.of(_("name one of your profiles: {command}; or edit the file ({rule})"),
                                   command=Command(f"taotoken config set default_profile {DEFAULT_PROFILE}"),
                                   rule=exc.fix), Exit.CONFIG, code="config.unparsable") from None


def load_settings(overrides: Overrides | None = None, env: Mapping[str, str] | None = None, *,
                  text: str | None = None) -> Settings:
    """Resolve the settings; `text` stands in for the config file's content (a change about to be written)."""
    overrides = overrides or Overrides()
    env = os.environ if env is None else env
    path = config_path(env)
    data = read_config_file(path) if text is None else tomllib.loads(text.removeprefix("\ufeff"))
    file_label = str(path)

    if overrides.profile:
        profile, profile_origin = _valid_profile(overrides.profile, "--profile"), Origin("flag", "--profile")
    elif env.get(ENV_PROFILE):
        profile, profile_origin = _valid_profile(env[ENV_PROFILE], ENV_PROFILE), Origin("env", ENV_PROFILE)
    elif isinstance(data.get("default_profile"), str):
        profile, profile_origin = _stored_profile(data["default_profile"], path), Origin("file",
                                                                                        f"{file_label} default_profile")
    else:
        profile, profile_origin = DEFAULT_PROFILE, Origin("default")
    table = profile_table(data, profile)
    profiles = sorted(data.get("profiles", {})) if isinstance(data.get("profiles"), Mapping) else []

    values: dict[str, Value] = {}
    for name in FIELDS:
        given: str | None = getattr(overrides, name)
        if given is not None:
            origin = Origin("flag", "--" + name.replace("_", "-"))
        elif env.get(_ENV_FOR[name]):
            given, origin = env[_ENV_FOR[name]], Origin("env", _ENV_FOR[name])
        elif isinstance(table.get(name), str) and table.get(name):
            given, origin = table[name], Origin("file", f"{file_label} [{profile}]")
        elif name == "base_url":
            given, origin = DEFAULT_BASE_URL, Origin("default")
        else:
            values[name] = Value(None, Origin("unset"))
            continue
        values[name] = clean_value(name, given, origin)

    routes_raw = table.get("routes", {})
    routes = {str(k): str(v) for k, v in routes_raw.items() if isinstance(v, str)} if isinstance(
        routes_raw, Mapping) else {}
    return Settings(profile, profile_origin, values["base_url"], values["api_key"], values["model"], routes,
                    path, path.exists(), profiles)


def clean_value(name: str, given: str, origin: Origin) -> Value:
    from taotoken_cli.core.net import hygiene

    if name == "api_key":
        remember_secret(given)
    cleaner = {"base_url": hygiene.clean_base_url, "api_key": hygiene.clean_key,
               "model": hygiene.clean_model}[name]
    try:
        cleaned = cleaner(given)
    except InputError as exc:
        return Value(None, origin, raw=given, error=exc.message, fix=exc.fix)
    return Value(cleaned.value, origin, raw=given, notes=cleaned.notes, warnings=cleaned.warnings)


def configured_language(env: Mapping[str, str] | None = None) -> str | None:
    """`lang` at the top of the config file, read before anything else (a broken file is reported later)."""
    try:
        data = tomllib.loads(config_path(env).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    value = data.get("lang")
    return value if isinstance(value, str) else None
