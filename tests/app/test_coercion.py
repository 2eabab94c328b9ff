"""taotoken_cli/cmd/coercion.py hands back the values that need no coercion and leaves every other to Typer's: the
two give the same value for every parameter of every command, and a command run that needs no coercion does not
import pydantic (~80 ms of each run)."""

from __future__ import annotations

import enum
import math
import subprocess
import sys

import pytest
from typer._coercion import build_runtime_param

from taotoken_cli.cmd.coercion import Uncoerced, as_is
from tests.app_commands import command_paths
from tests.conftest import REPO


def samples(param) -> list:
    """The default, values of the declared type, and numbers as typed (plain ones and every other spelling)."""
    annotation = param.type_descriptor.annotation
    if param.multiple or param.nargs == -1:  # repeatable: the values as Click collects them
        return [None, (), [], ("a",), ("x", "中文", ""), ["b"], "text"]
    values = [param.default]
    if annotation is str:
        values += ["x", "", " spaced ", "中文"]
    elif annotation is int:
        values += [0, 3, -1, "3", "-1", "007", "2.5", "1e3", " 4", "1_000", "x", ""]
    elif annotation is float:
        values += [0.0, 2.5, -1.0, math.inf, "3", "2.5", "-0.5", "007.50", "1e3", "inf", "nan", " 4", ".5", "x"]
    elif isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values += list(annotation)
    return values


def typer_params():
    for path, command in command_paths().items():
        ctx = command.make_context(f"taotoken {path}".strip(), ["--help"], resilient_parsing=True)
        for param in command.get_params(ctx):
            if hasattr(param, "type_descriptor"):
                yield f"{path or 'taotoken'} {param.name}", ctx, param


PARAMS = list(typer_params())


def test_every_command_has_parameters_to_check() -> None:
    assert len(PARAMS) > 100, len(PARAMS)
    assert any(as_is(param.type_descriptor, "x") for _name, _ctx, param in PARAMS)  # str options: handed back


@pytest.mark.parametrize(("name", "ctx", "param"), PARAMS, ids=[name for name, _c, _p in PARAMS])
def test_the_stand_in_gives_what_typer_gives(name: str, ctx, param) -> None:
    real = build_runtime_param(param.type_descriptor)
    stand_in = Uncoerced(param.type_descriptor, build_runtime_param)
    for value in samples(param):
        try:
            expected = real.coerce(value, param=param, ctx=ctx)
        except Exception as exc:  # noqa: BLE001 - Typer refused it: the stand-in must refuse it alike
            with pytest.raises(type(exc)) as raised:
                stand_in.coerce(value, param=param, ctx=ctx)
            assert str(raised.value) == str(exc)
            continue
        got = stand_in.coerce(value, param=param, ctx=ctx)
        same = got == expected or (got != got and expected != expected)  # nan
        assert same and type(got) is type(expected), (name, value, got, expected)


def test_a_value_that_needs_coercion_still_gets_typers() -> None:
    """A number spelt otherwise than plainly: the stand-in builds Typer's coercion and hands the value to it."""
    _name, ctx, param = next(p for p in PARAMS if p[2].type_descriptor.annotation is float)
    stand_in = Uncoerced(param.type_descriptor, build_runtime_param)
    assert stand_in.coerce("2.5", param=param, ctx=ctx) == 2.5
    assert stand_in.real is None
    assert stand_in.coerce("25e-1", param=param, ctx=ctx) == 2.5
    assert stand_in.real is not None


@pytest.mark.parametrize("argv", [["config", "show"], ["doctor", "--json", "--offline"], ["route", "list"],
                                  ["check", "--timeout", "3"], ["init", "--help"]])
def test_a_run_that_needs_no_coercion_does_not_import_pydantic(argv: list[str], home) -> None:
    code = ("import sys\nfrom taotoken_cli.app import run\ntry:\n    run(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write('PYDANTIC=%s' % ('pydantic' in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=home,
                          env={"HOME": str(home), "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert "PYDANTIC=False" in proc.stderr, proc.stderr[-2000:]
