"""Where a setting really comes from — a flag, an `export` in a shell start-up file, taotoken's config file —
and the one instruction that changes it there. A fix that names the wrong place loops: the user follows it,
and the value that really wins stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.i18n import _
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


def tilde(path: Path, home: Path) -> str:
    """`~/.bashrc` rather than /home/someone/.bashrc: the form users type."""
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


def _candidates(env: Mapping[str, str]) -> list[Path]:
    home = Path(env.get("HOME") or Path.home())
    files = [home / name for name in START_UP_FILES]
    files += sorted((home / ".config/fish/conf.d").glob("*.fish"))
    own = config_dir(env)
    return files + [own / "env.sh", own / "env.fish"]


def find_exports(variable: str, env: Mapping[str, str]) -> list[Export]:
    """Every line that sets `variable` for the shell: `export VAR=…`, `VAR=…; export VAR`, fish `set -x VAR …`."""
    sh = re.compile(rf"^\s*(?:export\s+)?{re.escape(variable)}=")
    fish = re.compile(rf"^\s*set\s+(?:-\w+\s+)*{re.escape(variable)}\b")
    found = []
    for path in _candidates(env):
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        pattern = fish if path.suffix == ".fish" else sh
        found += [Export(path, number) for number, line in enumerate(lines, 1) if pattern.match(line)]
    return found


def describe(item: Value, env: Mapping[str, str]) -> str:
    """Where a resolved value comes from, in words: "$TAOTOKEN_MODEL (exported in ~/.bashrc:12)"."""
    kind, detail = item.origin.kind, item.origin.detail
    if kind == "env":
        exports = find_exports(detail, env)
        home = Path(env.get("HOME") or Path.home())
        if exports:
            return _("${variable} (exported in {places})").format(variable=detail,
                                                                  places=", ".join(e.shown(home) for e in exports))
        return _("${variable} (set in this shell)").format(variable=detail)
    if kind == "file":
        return detail
    if kind == "flag":
        return detail
    return _("the built-in default") if kind == "default" else _("not set")


def fix_at_source(settings: Settings, name: str, value: str | None, env: Mapping[str, str]) -> str:
    """The one instruction that sets `name` to `value` where the value taotoken uses comes from.

    `value` None means "the right value" (the key is never shown: `sk-…`)."""
    item = settings.value(name)
    shown = value if value is not None and name != "api_key" else ("sk-…" if name == "api_key" else "…")
    if item.origin.kind == "env":
        variable = item.origin.detail
        exports = find_exports(variable, env)
        home = Path(env.get("HOME") or Path.home())
        if exports:
            places = ", ".join(e.shown(home) for e in exports)
            return _("{variable} is exported in {places} and wins over taotoken's config: delete that line (the "
                     "config then applies) or set it there to {value}, then open a new shell").format(
                variable=variable, places=places, value=shown)
        return _("{command}   (it is set in this shell, in no start-up file taotoken found)").format(
            command=f"export {variable}={shown}")
    if item.origin.kind == "flag":
        return _("pass {option}").format(option=f"{item.origin.detail} {shown}")
    command = "taotoken config set api_key -" if name == "api_key" else f"taotoken config set {name} {shown}"
    return command + (f" --profile {settings.profile}" if settings.profile != "default" else "")


def setters(settings: Settings, env: Mapping[str, str]) -> dict[str, str]:
    """`set:NAME` -> the instruction that sets NAME where its value comes from, for each of base URL, key and
    model that does not come from the config file (`{value}` stands for the new value). Diagnoses put these in
    place of the catalogue's `taotoken config set NAME VALUE` (diagnosis.classify.at_source)."""
    return {f"set:{name}": fix_at_source(settings, name, None if name == "api_key" else "{value}", env)
            for name in FIELDS if settings.value(name).origin.kind in ("env", "flag")}
