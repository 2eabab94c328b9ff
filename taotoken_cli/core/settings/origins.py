"""Where a setting really comes from — a flag, an `export` in a shell start-up file, taotoken's config file —
and the one instruction that changes it there. A fix that names the wrong place loops: the user follows it,
and the value that really wins stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.fix import Command, Fix, Place, Where, config_set
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.files.fsutil import tilde
from taotoken_cli.core.platform.shells import in_shell_fix, syntax
from taotoken_cli.core.settings.loader import FIELDS, Settings, Value, config_dir

# Files a login or interactive shell reads, relative to HOME (fish: its config and every conf.d snippet).
START_UP_FILES = (".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshenv", ".zprofile", ".zshrc",
                  ".config/fish/config.fish")


@dataclass(frozen=True)
class Export:
    path: Path
    line: int  # 1-based

    def shown(self, home: Path) -> str:
        return f"{tilde(self.path, home)}:{self.line}"


def _candidates(env: Mapping[str, str]) -> list[Path]:
    home = Path(env.get("HOME") or Path.home())
    files = [home / name for name in START_UP_FILES]
    files += sorted((home / ".config/fish/conf.d").glob("*.fish"))
    own = config_dir(env)
    return files + [own / "env.sh", own / "env.fish"]


def find_exports(variable: str, env: Mapping[str, str]) -> list[Export]:
    """Every line that sets `variable` for the shell: `export VAR=…`, `VAR=…; export VAR`, fish `set -x VAR …`."""
    sh, fish = export_pattern(variable, fish=False), export_pattern(variable, fish=True)
    found = []
    for path in _candidates(env):
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        pattern = fish if path.suffix == ".fish" else sh
        found += [Export(path, number) for number, line in enumerate(lines, 1) if pattern.match(line)]
    return found


def export_pattern(variable: str, *, fish: bool) -> re.Pattern[str]:
    """A line that sets `variable`: `export VAR=…` / `VAR=…` (sh), `set [-gx] VAR …` (fish)."""
    if fish:
        return re.compile(rf"^\s*set\s+(?:-\w+\s+)*{re.escape(variable)}\b")
    return re.compile(rf"^\s*(?:export\s+)?{re.escape(variable)}=")


def exported_value(export: Export) -> str | None:
    """The value the line of `export` gives its variable (`export VAR='x'` -> x; fish `set -gx VAR x`), or None
    when it cannot be read without running the shell (a `$OTHER` reference, a command substitution)."""
    try:
        line = export.path.read_text(encoding="utf-8", errors="replace").splitlines()[export.line - 1]
    except (OSError, IndexError):
        return None
    return line_value(line, fish=export.path.suffix == ".fish")


def line_value(line: str, *, fish: bool) -> str | None:
    """The value one start-up line assigns (see exported_value), or None when only the shell can tell."""
    import shlex

    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return None
    if fish:
        values = [w for w in words[1:] if not w.startswith("-")][1:]
        value = " ".join(values)
    else:
        assignment = next((w for w in words if "=" in w and not w.startswith("-")), "")
        value = assignment.partition("=")[2]
    return None if "$" in value or "`" in value else value


def describe(item: Value, env: Mapping[str, str]) -> str:
    """Where a resolved value comes from, in words: "$TAOTOKEN_MODEL (exported in ~/.bashrc:12)"."""
    kind, detail = item.origin.kind, item.origin.detail
    if kind == "env":
        exports = find_exports(detail, env)
        home = Path(env.get("HOME") or Path.home())
        if exports:
            return _("${variable} (exported in {places})").format(variable=detail,
                                                                  places=listed(e.shown(home) for e in exports))
        return _("${variable} (set in this shell)").format(variable=detail)
    if kind == "file":
        return detail
    if kind == "flag":
        return detail
    return _("the built-in default") if kind == "default" else _("not set")


@dataclass(frozen=True)
class Source:
    """Where the value of setting `name` comes from, as much as a fix must know to change it there: a variable
    (and the start-up files that export it), a flag, or taotoken's config file (of `profile`)."""

    name: str
    where: Where
    profile: str = "default"


def source_of(settings: Settings, name: str, env: Mapping[str, str]) -> Source:
    item = settings.value(name)
    kind, detail = item.origin.kind, item.origin.detail
    if kind == "env":
        home = Path(env.get("HOME") or Path.home())
        places = tuple(Place(tilde(e.path, home), e.line) for e in find_exports(detail, env))
        return Source(name, Where("env", detail, places), settings.profile)
    if kind == "flag":
        return Source(name, Where("flag", detail), settings.profile)
    return Source(name, Where("file", name, (Place(str(settings.config_path)),)), settings.profile)


def set_at(source: Source, value: str | None) -> Fix:
    """The one instruction that sets the setting to `value` where its value comes from (`value` None: "the right
    value"; the key is never shown: `sk-…`)."""
    name, where = source.name, source.where
    shown = value if value is not None and name != "api_key" else ("sk-…" if name == "api_key" else "…")
    if where.kind == "env":
        if where.places:
            return Fix.prose(_("{variable} is exported in {places} and wins over taotoken's config: delete that "
                               "line (the config then applies) or set it there to {value}, then open a new shell"
                               ).format(variable=where.name, places=listed(str(p) for p in where.places),
                                        value=shown), where)
        return Fix.of(_("{command}   (it is set in this shell, in no start-up file taotoken found)"),
                      command=Command(f"export {where.name}={shown}")).with_where(where)
    if where.kind == "flag":
        return Fix.of(_("pass {option}"), option=Command(f"{where.name} {shown}")).with_where(where)
    return Fix.run(config_set(name, shown, source.profile), where)


def fix_at_source(settings: Settings, name: str, value: str | None, env: Mapping[str, str]) -> Fix:
    """The one instruction that sets `name` to `value` where the value taotoken uses comes from, in the shell `env`
    tells (a variable: `$env:X = '…'` in PowerShell; core.platform.shells)."""
    fix = set_at(source_of(settings, name, env), value)
    return Fix.coerce(in_shell_fix(fix, syntax(env)))


def outside_config(settings: Settings, env: Mapping[str, str]) -> dict[str, Source]:
    """Where each of base URL, key and model comes from, for those that do not come from the config file: a
    diagnosis puts the instruction that sets the value there in place of the catalogue's `taotoken config set
    NAME VALUE` (core.diagnosis.context)."""
    return {name: source_of(settings, name, env) for name in FIELDS
            if settings.value(name).origin.kind in ("env", "flag")}
