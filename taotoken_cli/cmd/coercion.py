"""Parameters that need no coercion skip Typer's.

Typer 0.2x coerces every parameter's value through a pydantic TypeAdapter, built on first use: importing pydantic
and building the adapters took ~80 ms of every command run (a third of `taotoken config show`), though most values
need nothing: a parameter left out (None, or its default, already of the declared type), text for a `str`
option, a number typed plainly (`-n 100`), the texts of a repeatable option. Those are handed back as Typer would
hand them (the number read as Python and pydantic both read it); any other value (`--timeout 1e3`, a path, a choice
typed on the command line) goes to Typer's own coercion, built then as before, so every error message stays Typer's.

Where Typer's internals differ from what this expects (another version), nothing is changed.
tests/app/test_coercion.py checks, for every parameter of every command, that both give the same value.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, get_args, get_origin

PLAIN = (str, int, float)
# Numbers typed in the plainest form, which Python and pydantic read alike (`-n 100`, `--timeout 2.5`); any other
# spelling (`1e3`, `inf`, ` 5`, `1_000`) goes to Typer's coercion and its own words for what is wrong.
PLAIN_NUMBER = {int: re.compile(r"-?[0-9]{1,18}"), float: re.compile(r"-?[0-9]{1,15}(\.[0-9]{1,15})?")}


def _by_type_alone(descriptor: Any) -> bool:
    """Is Typer's coercion of this parameter its type's alone: no parser of its own, no file to open?"""
    return getattr(descriptor, "file_annotation", None) is None \
        and getattr(getattr(descriptor, "parameter_info", None), "parser", True) is None


def as_is(descriptor: Any, value: Any) -> bool:
    """Would Typer's coercion hand `value` back unchanged? (Only cases where that is plain to see.)"""
    annotation = getattr(descriptor, "annotation", None)
    if not _by_type_alone(descriptor) or getattr(descriptor, "is_ranged", True):
        return False
    if not (annotation in PLAIN or (isinstance(annotation, type) and issubclass(annotation, Enum))):
        return False
    return type(value) is annotation


def text_list(descriptor: Any, value: Any) -> list[str] | None:
    """`value`, the texts given to a repeatable `list[str]` option (none: an empty tuple), as the list Typer makes."""
    annotation = getattr(descriptor, "annotation", None)
    if get_origin(annotation) is not list or get_args(annotation) != (str,) or not _by_type_alone(descriptor) \
            or not isinstance(value, (list, tuple)):
        return None
    return list(value) if all(type(item) is str for item in value) else None


def plain_number(descriptor: Any, value: Any) -> int | float | None:
    """`value`, text typed for an int or float parameter in the plainest form, as that number; else None."""
    pattern = PLAIN_NUMBER.get(descriptor.annotation)
    if pattern is None or not isinstance(value, str) or not pattern.fullmatch(value) \
            or not as_is(descriptor, descriptor.annotation(0)):
        return None
    return descriptor.annotation(value)


class Uncoerced:
    """Stands in for Typer's RuntimeParam until a value needs the real one."""

    __slots__ = ("descriptor", "build", "real")

    def __init__(self, descriptor: Any, build: Any) -> None:
        self.descriptor, self.build, self.real = descriptor, build, None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        multiple = param.multiple or param.nargs == -1
        if value is None:  # as Typer's RuntimeParam.coerce: nothing given
            return () if multiple else None
        if multiple:
            texts = text_list(self.descriptor, value)
            if texts is not None:
                return texts
        elif as_is(self.descriptor, value):
            return value
        else:
            number = plain_number(self.descriptor, value)
            if number is not None:
                return number
        if self.real is None:
            self.real = self.build(self.descriptor)
        return self.real.coerce(value, param=param, ctx=ctx)


def skip_needless(params: list[Any]) -> None:
    """Give each of Typer's parameters the stand-in, once; a Typer without these internals is left alone."""
    try:
        from typer._coercion import build_runtime_param
    except ImportError:  # pragma: no cover - another Typer
        return
    for param in params:
        if getattr(param, "_runtime_param", False) is None and hasattr(param, "type_descriptor"):
            param._runtime_param = Uncoerced(param.type_descriptor, build_runtime_param)
