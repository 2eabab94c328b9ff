"""What every client module shares: the `Client` protocol, the triple, the `Machine` whose files are
read, reading a config file into a state `doctor` can inspect, and turning an edited document into a
FileChange.

Each client module (claude_code, codex, cline, ccswitch, shell, mcp, project_env) implements `Client`: its
`NAME` (the init target) and `LABEL`, and `paths(machine)`, `detect(machine)`, `read(machine)` (parsed files,
parse errors kept, never raised) and `plan(triple, machine, options)` (raises ConfigFileError when a file it
must edit is broken). `taotoken_cli.core.clients.CLIENTS` lists them.
"""

from __future__ import annotations

import copy
import functools
import os
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from taotoken_cli.core.base.errors import ConfigFileError
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.files import gitrepo
from taotoken_cli.core.files.fileplan import FileChange, Plan
from taotoken_cli.core.files.fsutil import resolve_target, text_encoding
from taotoken_cli.core.formats.jsonedit import dumps_like, edit_json, parse_json
from taotoken_cli.core.formats.tomlerrors import toml_message
from taotoken_cli.core.net.urlform import BARE_ROOT, OPENAI_V1, Form
from taotoken_cli.core.platform import permissions, system


@dataclass(frozen=True)
class Triple:
    """The cleaned values init writes. `base_url` is the API root (no /v1)."""

    base_url: str
    api_key: str
    model: str

    def url_for(self, form: Form) -> str:
        """The base URL a client needs (its `URL_FORM`): the root, or root + /v1 (core.net.urlform)."""
        return form.url(self.base_url)

    @property
    def anthropic_base(self) -> str:  # Anthropic-style clients append /v1/messages themselves
        return self.url_for(BARE_ROOT)

    @property
    def openai_base(self) -> str:  # OpenAI-style clients append /chat/completions or /responses
        return self.url_for(OPENAI_V1)


# A directory that stands for the file system root when system-wide files are read (Claude Code's managed
# settings under /etc or /Library): tests and containers point it at a directory of their own.
ENV_SYSTEM_ROOT = "TAOTOKEN_SYSTEM_ROOT"


@dataclass(frozen=True)
class Machine:
    """Where the clients' files are: the environment (HOME, CODEX_HOME, CLINE_DIR, …), the working directory
    (project files, the git repository), taotoken's own config directory (env.sh, the CC Switch links) and the
    root that system-wide files are found under (`/`, or $TAOTOKEN_SYSTEM_ROOT)."""

    env: Mapping[str, str]
    cwd: Path
    config_dir: Path

    @classmethod
    def of(cls, env: Mapping[str, str] | None = None, cwd: Path | None = None,
           config_dir: Path | None = None) -> Machine:
        from taotoken_cli.core.settings import config_dir as own_config_dir

        env = dict(os.environ if env is None else env)
        return cls(env, Path.cwd() if cwd is None else cwd, own_config_dir(env) if config_dir is None else config_dir)

    @property
    def home(self) -> Path:
        return home_dir(self.env)

    @property
    def system_root(self) -> Path:
        if self.env.get(ENV_SYSTEM_ROOT):
            return Path(self.env[ENV_SYSTEM_ROOT])
        return system.system_root(self.env)

    @functools.cached_property
    def git_root(self) -> Path | None:
        """The git repository `cwd` is in (asked once: several clients' paths need it)."""
        return gitrepo.root(self.cwd)


@dataclass(frozen=True)
class PlanOptions:
    """How init writes the clients that offer a choice."""

    scope: str = "user"  # Claude Code: user (~/.claude/settings.json) or project (.claude/settings.local.json)
    codex_auth: str = "env"  # Codex: env | auth-json | inline (see clients.codex)
    # Recorded by init (copies.json), so a later sync from any directory reaches the same copies:
    taotoken_hosts: tuple[str, ...] = ()  # mcp: host:port TaoToken had; a server still on one is a copy
    project_dirs: tuple[str, ...] = ()  # project-env: the projects whose .env.taotoken holds the triple
    written_keys: tuple[str, ...] = ()  # envvars.key_mark of the keys taotoken wrote: such a value is TaoToken's
    # The root at which the gateway last answered the Gemini API (diagnosis.gemini_api.gate): Gemini CLI and CC
    # Switch's Gemini provider are written for that root only; another root is asked first
    gemini_root: str = ""


@dataclass(frozen=True)
class Claim:
    """Whether a client's own file holds a copy of the triple, by the one rule for key variables (clients.envvars):
    `ours` True when it points at TaoToken or holds a key taotoken wrote, False when it holds another service's
    values (`why`: what is left alone, and why), None when it holds neither (no file, nothing set)."""

    ours: bool | None
    why: tuple[str, ...] = ()


@dataclass
class ConfigFile:
    """One client file as found on disk. `data` is the parsed content (None when absent or broken)."""

    path: Path
    kind: str  # "json" | "jsonc" (comments and trailing commas allowed: VS Code's settings) | "toml" | "text"
    raw: bytes | None = None
    data: Any = None
    error: ConfigFileError | None = None
    is_symlink: bool = False
    mode: int | None = None

    @property
    def exists(self) -> bool:
        return self.raw is not None

    @property
    def encoding(self) -> str:
        """UTF-8, or UTF-16 for a text file that starts with its BOM (a PowerShell 5.1 profile): an edit is written
        back in it (text_change)."""
        return text_encoding(self.raw) if self.raw is not None and self.kind == "text" else "utf-8"

    @property
    def text(self) -> str | None:
        return None if self.raw is None else self.raw.decode(self.encoding)

    def check(self) -> None:
        """Raise the parse error (with line and column) if the file could not be read."""
        if self.error is not None:
            raise self.error


@dataclass
class Detection:
    found: bool
    reasons: list[str] = field(default_factory=list)  # "config dir ~/.codex exists", "codex on PATH"


@dataclass
class ClientState:
    """What `read()` returns: everything doctor needs to check a client's configuration."""

    client: str
    detection: Detection
    files: dict[str, ConfigFile]  # role ("settings", "global", "config", "auth", …) -> file

    @property
    def errors(self) -> list[ConfigFileError]:
        return [f.error for f in self.files.values() if f.error is not None]


class Client(Protocol):
    """What each client module provides (a module satisfies it with module-level names)."""

    NAME: str  # the init target, e.g. "claude-code"
    LABEL: str  # e.g. "Claude Code" (a generic one is marked N_(): show it as _(LABEL))

    def paths(self, machine: Machine) -> Any: ...

    def detect(self, machine: Machine) -> Detection: ...

    def read(self, machine: Machine) -> ClientState: ...

    def plan(self, triple: Triple, machine: Machine, options: PlanOptions) -> Plan: ...


class LayeredClient(Client, Protocol):
    """A client whose files other clients write too (clients.mcp): copies.plan_copies plans it last, handing it
    what the others planned (resolved path -> new content) so each file gets one change holding both edits."""

    def plan_over(self, triple: Triple, machine: Machine, options: PlanOptions,
                  planned: Mapping[Path, bytes]) -> Plan: ...


def deep_merge(base: dict, over: dict) -> dict:
    """`over` merged into a copy of `base` key by key, objects recursively, anything else replaced: how OpenCode and
    Qwen Code merge their config layers."""
    out = dict(base)
    for key, value in over.items():
        out[key] = deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) \
            else copy.deepcopy(value)
    return out


def environ(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    env = environ(env)
    return Path(env.get("HOME") or os.path.expanduser("~"))


def expand(path: str, env: Mapping[str, str] | None = None) -> Path:
    if path == "~" or path.startswith("~/"):
        return home_dir(env) / path[2:]
    return Path(path)


def on_path(binary: str, env: Mapping[str, str] | None = None) -> str | None:
    return shutil.which(binary, path=environ(env).get("PATH"))


def detect_by(dirs: list[Path], binaries: list[str], env: Mapping[str, str] | None = None) -> Detection:
    reasons = [_("{directory} exists").format(directory=d) for d in dirs if d.is_dir()]
    reasons += [_("{program} on PATH ({path})").format(program=b, path=where) for b in binaries
                if (where := on_path(b, env))]
    return Detection(bool(reasons), reasons)


def _load_raw(path: Path, kind: str) -> ConfigFile:
    result = ConfigFile(path, kind, is_symlink=path.is_symlink())
    real = resolve_target(path)
    try:
        result.raw = real.read_bytes()
        result.mode = stat.S_IMODE(real.stat().st_mode)
    except FileNotFoundError:
        return result
    except IsADirectoryError:
        result.error = ConfigFileError(str(path), None, None, _("is a directory, not a file"), _("move it away"))
    except PermissionError:
        result.error = ConfigFileError(str(path), None, None, _("cannot be read (permission denied)"),
                                       Fix.of(_("fix its permissions, e.g. {command}"),
                                              command=Command(permissions.access_fix(path))))
    if result.raw is not None:
        try:
            result.raw.decode(result.encoding)
        except UnicodeDecodeError as exc:
            result.error = ConfigFileError(str(path), None, None,
                                           _("is not UTF-8 text ({reason})").format(reason=exc.reason),
                                           _("save the file as UTF-8"))
    return result


def read_json(path: Path, *, want_object: bool = True, allow_comments: bool = False) -> ConfigFile:
    """Parse a JSON file (JSONC with `allow_comments`: only where the program that reads it accepts comments)."""
    return parse_config(_load_raw(path, "jsonc" if allow_comments else "json"), want_object=want_object)


def read_toml(path: Path) -> ConfigFile:
    """Parse with tomlkit (the editor we write with); `data` is the plain dict, `doc` via parse_toml_doc."""
    return parse_config(_load_raw(path, "toml"))


def parse_config(file: ConfigFile, *, want_object: bool = True) -> ConfigFile:
    """`file` with `data` parsed from its bytes by its kind (json, jsonc, toml), or with the parse error."""
    if file.error is not None or file.raw is None:
        return file
    text = file.text or ""
    try:
        if file.kind == "toml":
            file.data = parse_toml_doc(text, file.path).unwrap()
            return file
        if not text.strip():
            file.data = {}  # an empty file is treated as an empty object
            return file
        file.data = parse_json(text, file.path, allow_comments=file.kind == "jsonc")
    except ConfigFileError as exc:
        file.error = exc
        return file
    if want_object and not isinstance(file.data, dict):
        file.error = ConfigFileError(str(file.path), 1, 1, _("expected a JSON object ({…}) at the top level"),
                                     _("make the file one JSON object, or move it away"))
        file.data = None
    return file


def parse_toml_doc(text: str, path: Path):
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text.removeprefix("\ufeff"))  # a byte-order mark (Notepad) is not TOML's business
    except ParseError as exc:
        raise ConfigFileError(str(path), exc.line, exc.col, _("invalid TOML: {detail}").format(
                              detail=toml_message(str(exc))),
                              _("fix the TOML at line {line}, column {column}, or move the file away").format(
                                  line=exc.line, column=exc.col)) from None


def read_text(path: Path) -> ConfigFile:
    return _load_raw(path, "text")


def set_fields(target: dict, wanted: Mapping[str, Any], *, name: str, plan: Plan, summary: list[str],
               key_field: str = "apiKey") -> None:
    """Sets each of `wanted`'s fields in `target` (an object inside a client's file, at `name` in it): a field that
    changes adds `set name.field = value` to `summary` (the key masked), and the key it replaces joins
    `plan.secrets` (masked wherever the plan is shown)."""
    for key, value in wanted.items():
        old = target.get(key)
        if old != value:
            if key == key_field and isinstance(old, str):
                plan.secrets.append(old)
            shown = mask_key(value) if key == key_field else repr(value)
            summary.append(_("set {name} = {value}").format(name=f"{name}.{key}", value=shown))
            target[key] = value


def json_change(file: ConfigFile, new_data: Any, *, target: str, summary: list[str], secret: bool = False,
                new_mode: int | None = None) -> FileChange:
    """A FileChange that rewrites only the values where `new_data` differs from the file (see jsonedit): every
    other byte stays; a new or empty file is written as 2-space JSON."""
    file.check()
    text = file.text or ""
    if not text.strip():
        after = dumps_like(new_data, None).encode("utf-8")
    else:
        after = edit_json(text, new_data, allow_comments=file.kind == "jsonc").encode("utf-8")
    return FileChange(file.path, file.raw, after, secret=secret, summary=summary if after != file.raw else [],
                      target=target, new_mode=new_mode)


def text_change(file: ConfigFile, new_text: str, *, target: str, summary: list[str], secret: bool = False,
                new_mode: int | None = None) -> FileChange:
    file.check()
    after = new_text.encode(file.encoding)
    return FileChange(file.path, file.raw, after, secret=secret, summary=summary if after != file.raw else [],
                      target=target, new_mode=new_mode)
