"""The list of checks. Each check module registers its checks with `@check(...)` at import."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable

from taotoken_cli.cmd.doctor.model import SECTIONS, Check, Result
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, listed

_REGISTRY: list[Check] = []
_CHECK_MODULES = ("configuration", "environment", "project_env", "startup", "clients", "mcp", "network", "gateway",
                  "devices")


def check(id: str, section: str, title: str, *, network: bool = False):
    """Register a function `(ctx) -> Result` as a check with a stable id."""
    if section not in SECTIONS:
        raise ValueError(f"unknown section {section!r}")

    def decorate(fn: Callable[..., Result]) -> Callable[..., Result]:
        if any(c.id == id for c in _REGISTRY):
            raise ValueError(f"duplicate check id {id!r}")
        _REGISTRY.append(Check(id, section, title, fn, network))
        return fn

    return decorate


def all_checks() -> list[Check]:
    import importlib

    for name in _CHECK_MODULES:
        importlib.import_module(f"taotoken_cli.cmd.doctor.checks.{name}")
    order = {name: i for i, name in enumerate(SECTIONS)}
    # Stable sort: section order first, then the order checks were declared in.
    return sorted(_REGISTRY, key=lambda c: order[c.section])


def select(wanted: Iterable[str]) -> list[Check]:
    """Checks named by id, by id prefix (`gateway`, `claude`) or by section name (`Network`: the English one in
    every language, as ids are).

    An unknown name is an InputError that suggests the nearest ids.
    """
    from taotoken_cli.core.base.errors import InputError

    checks = all_checks()
    wanted = [w.strip() for w in wanted if w.strip()]
    chosen: set[str] = set()
    for name in wanted:
        low = name.lower().rstrip(".")
        hits = [c.id for c in checks
                if c.id == low or c.id.startswith(low + ".") or c.section.lower() == low]
        if not hits:
            close = difflib.get_close_matches(low, [c.id for c in checks], n=3, cutoff=0.5)
            every = Command("taotoken doctor --list")
            fix = (Fix.of(_("did you mean {ids}? list them with {command}"), ids=listed(close), command=every)
                   if close else Fix.of(_("list them with {command}"), command=every))
            raise InputError(_("no doctor check is called {name}").format(name=repr(name)), fix)
        chosen.update(hits)
    return [c for c in checks if c.id in chosen]
