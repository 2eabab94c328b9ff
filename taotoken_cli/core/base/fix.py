"""A fix, typed: prose in the user's language, the commands in it as commands, and where the value lives.

A fix used to be one string, and the renderer guessed which words in it were a command. Here the producer says
so: `Fix.of(_("check the base URL: {command}"), command=Command("taotoken config show --origin"))` keeps the
translated prose and the command apart, so the renderer never splits the command and never needs to read the
translated text to find it. `str(fix)` is the whole line, as `--json`'s `fixes` strings have always been;
`to_dict()` adds the structured form (the commands, where the value lives).

    Fix.run("taotoken init")                    a command and nothing else
    Fix.prose(_("ask the gateway's support"))   prose only (a literal `{}` in it stays as it is)
    Fix.of(template, name=value, ...)           a translated template: a `Command` value becomes a command
                                                part, a `Fix` value is spliced in whole, anything else is prose
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

_FORMATTER = string.Formatter()


@dataclass(frozen=True)
class Command:
    """A shell line kept whole: never wrapped, never translated. `sets` names the setting it sets (`base_url`,
    `api_key`, `model`) when it is `taotoken config set NAME VALUE`, so a diagnosis can put the instruction that
    sets NAME where its value really comes from in its place (`value` is the value it sets)."""

    line: str
    sets: str | None = None
    value: str | None = None
    # a package the command adds to taotoken's environment (`httpx[socks]`): a diagnosis writes it for the installer
    # taotoken runs under (core.platform.installer), `line` is the pip form
    installs: str | None = None

    def __str__(self) -> str:
        return self.line

    def argv(self) -> list[str] | None:
        """The line as arguments when it is one simple command (no `;`, `|`, `&&`, `$(…)`), else None."""
        import shlex

        if any(mark in self.line for mark in (";", "|", "&", "$(", "`", ">", "<")):
            return None
        try:
            return shlex.split(self.line)
        except ValueError:
            return None


def config_set(name: str, value: str, profile: str | None = None) -> Command:
    """`taotoken config set NAME VALUE` (the key from stdin: `-`), marked as setting NAME."""
    line = f"taotoken config set {name} {'-' if name == 'api_key' else value}"
    return Command(line + (f" --profile {profile}" if profile and profile != "default" else ""), name, value)


@dataclass(frozen=True)
class Place:
    """A file and a 1-based line, as users type it (`~/.bashrc`)."""

    path: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True)
class Where:
    """Where the value a fix changes lives: `kind` "env" (`name` is the variable; `places`, the start-up files
    that export it), "flag" (`name` is the option), "file" (`name` is the key; `places`, the file)."""

    kind: str
    name: str
    places: tuple[Place, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name,
                "places": [{"path": p.path, "line": p.line} for p in self.places]}


@dataclass(frozen=True)
class Part:
    text: str
    command: Command | None = None  # set: this part is that command, kept whole

    @property
    def is_command(self) -> bool:
        return self.command is not None


@dataclass(frozen=True)
class Fix:
    parts: tuple[Part, ...]
    where: Where | None = field(default=None, compare=False)

    # -- making one -----------------------------------------------------------------------------------

    @classmethod
    def run(cls, command: str | Command, where: Where | None = None) -> Fix:
        command = command if isinstance(command, Command) else Command(command)
        return cls((Part(command.line, command),), where)

    @classmethod
    def prose(cls, text: str, where: Where | None = None) -> Fix:
        return cls((Part(text),) if text else (), where)

    @classmethod
    def of(cls, template: str, /, **values: Any) -> Fix:
        """`template` (already translated) with its `{name}` fields filled from `values`. A field with no value
        raises KeyError, as str.format does. (Where the value lives: `.with_where(…)`.)"""
        return cls.fill(template, values.__getitem__)

    @classmethod
    def fill(cls, template: str, lookup: Callable[[str], Any], where: Where | None = None) -> Fix:
        """Like `of`, with each field's value from `lookup(name)`. A template that does not parse (a translation
        with an unbalanced brace) is kept as prose, as it is."""
        parts: list[Part] = []
        try:
            fields = list(_FORMATTER.parse(template))
        except ValueError:
            return cls.prose(template, where)
        for literal, name, spec, conversion in fields:
            if literal:
                parts.append(Part(literal))
            if name is None:
                continue
            value = lookup(name)
            if isinstance(value, Command):
                parts.append(Part(value.line, value))
            elif isinstance(value, Fix):
                parts.extend(value.parts)
                where = where or value.where
            else:
                if conversion == "r":
                    value = repr(value)
                elif conversion == "s":
                    value = str(value)
                parts.append(Part(format(value, spec or "")))
        return cls(_merged(parts), where)

    @classmethod
    def coerce(cls, fix: Fix | str) -> Fix:
        """A Fix as it is; a str is prose (a producer that has a command in it says so with `Fix.of`)."""
        return fix if isinstance(fix, Fix) else cls.prose(fix)

    # -- reading one ----------------------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The whole line in the user's language, commands in place."""
        return "".join(part.text for part in self.parts)

    def __str__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return bool(self.text)

    def __contains__(self, text: str) -> bool:
        """Whether the line mentions `text` (a value, a path): `"~/.bashrc" in fix`."""
        return text in self.text

    @property
    def commands(self) -> tuple[Command, ...]:
        return tuple(part.command for part in self.parts if part.command is not None)

    def replace_commands(self, by: Callable[[Command], Fix | None]) -> Fix:
        """Each command part `by` returns a Fix for replaced by that Fix's parts (a `taotoken config set` by the
        instruction that sets the value where it comes from)."""
        parts: list[Part] = []
        where = self.where
        for part in self.parts:
            instead = by(part.command) if part.command is not None else None
            if instead is None:
                parts.append(part)
            else:
                parts.extend(instead.parts)
                where = where or instead.where
        return Fix(_merged(parts), where)

    def mapped(self, change: Callable[[str], str]) -> Fix:
        """Every part's text through `change` (an ASCII-only terminal's replacements), commands still commands."""
        return Fix(tuple(Part(change(p.text), p.command) for p in self.parts), self.where)

    def with_where(self, where: Where | None) -> Fix:
        return replace(self, where=where)

    def to_dict(self) -> dict[str, Any]:
        """The structured form for --json: the text (the same string `fixes` lists), the commands in it, and where
        the value lives."""
        out: dict[str, Any] = {"text": self.text,
                               "commands": [{"line": c.line, "argv": c.argv()} for c in self.commands]}
        out["where"] = self.where.to_dict() if self.where else None
        return out


def _merged(parts: Iterable[Part]) -> tuple[Part, ...]:
    """Neighbouring prose parts joined; empty ones dropped."""
    out: list[Part] = []
    for part in parts:
        if not part.text:
            continue
        if out and part.command is None and out[-1].command is None:
            out[-1] = Part(out[-1].text + part.text)
        else:
            out.append(part)
    return tuple(out)


def texts(fixes: Iterable[Fix | str]) -> list[str]:
    """The fixes as the strings --json has always listed."""
    return [str(fix) for fix in fixes]


def unique(fixes: Iterable[Fix | str]) -> list[Fix]:
    """The fixes as Fix, the same line once (the first kept)."""
    seen: dict[str, Fix] = {}
    for fix in fixes:
        typed = Fix.coerce(fix)
        if typed and typed.text not in seen:
            seen[typed.text] = typed
    return list(seen.values())


def as_mapping(values: Mapping[str, Any]) -> Callable[[str], Any]:
    """A lookup for `Fix.fill` that shows a field with no value as `<name>` rather than failing."""
    return lambda name: values.get(name, f"<{name}>")
