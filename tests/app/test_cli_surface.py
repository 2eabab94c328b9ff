"""The command surface as a whole: help without Python type names, one meaning per short flag across all
commands, no help text naming an option its command does not have, ranges checked, and check's fast path
in step with the Typer command."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
import typer.main

from taotoken_cli.app import app

ROOT = typer.main.get_command(app)
RAW_TYPE = re.compile(r"<(?:bool|str|int|float|path|file|dir|text|list\[[^\]]*\]|tuple\[[^\]]*\]|[a-z]+ range)>"
                      r"|\[x[<>]=?|[<>]=?x\]", re.IGNORECASE)


def commands(command=ROOT, path: tuple[str, ...] = ()):
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from commands(sub, (*path, name))


PATHS = [path for path, _ in commands()]


def visible_options(command):
    return [p for p in command.params if p.param_type_name == "option" and not p.hidden]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "taotoken")
def test_help_shows_metavars_not_python_types(run, path: tuple[str, ...]) -> None:
    result = run(*path, "--help")
    assert result.returncode == 0, result.output
    found = RAW_TYPE.findall(result.stdout)
    assert not found, f"raw type names {found} in:\n{result.stdout}"


def test_every_option_taking_a_value_names_it() -> None:
    missing = [(" ".join(path), p.opts) for path, command in commands() for p in visible_options(command)
               if not p.is_flag and not p.metavar]
    assert not missing, f"give these options a metavar (SECONDS, URL, FILE, N …): {missing}"


def test_a_short_flag_means_one_long_option_across_all_commands() -> None:
    meanings: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path, command in commands():
        for param in visible_options(command):
            names = param.opts + param.secondary_opts
            long = next((n for n in names if n.startswith("--")), "?")
            for short in (n for n in names if not n.startswith("--")):
                meanings[short][long].append(" ".join(path) or "taotoken")
    clashes = {short: dict(longs) for short, longs in meanings.items() if len(longs) > 1}
    assert not clashes, f"short flags with more than one meaning: {clashes}"


@pytest.mark.parametrize("args, long", [(["init", "-t", "codex"], "--target codex"),
                                        (["route", "-t", "code"], "--task code"),
                                        (["route", "-n", "5", "--verify"], "--samples 5"),
                                        (["doctor", "-c", "gateway"], "--check gateway")])
def test_a_retired_short_flag_is_a_usage_error_naming_the_long_option(run, args: list[str], long: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert f"write: {long}" in " ".join(result.stderr.replace("│", " ").split()), result.stderr


def test_no_help_text_names_an_option_its_command_lacks() -> None:
    """`route devices --help` once offered `--verify`, an option of `route` only. References to another
    command (`taotoken init --undo`) are fine."""
    leaks = []
    for path, command in commands():
        names = {n for p in command.params for n in getattr(p, "opts", []) + getattr(p, "secondary_opts", [])}
        texts = [p.help or "" for p in command.params if not getattr(p, "hidden", False)] + [command.help or ""]
        for text in texts:
            own = re.sub(r"taotoken [a-z]+(?: [a-z]+)?(?: -[-\w]+(?: [^\s`)]+)?)*", "", text)
            leaks += [(" ".join(path), m) for m in re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", own)
                      if m not in names and m not in ("-h", "--help")]
    assert not leaks, f"help texts naming options their command does not have: {leaks}"


@pytest.mark.parametrize("args, words", [(["check", "--timeout", "0"], "at least 0.1"),
                                         (["doctor", "--timeout", "601"], "at most 600"),
                                         (["route", "--samples", "0"], "at least 1"),
                                         (["route", "devices", "--timeout", "0.1"], "at least 0.5")])
def test_ranges_are_checked_and_said_in_words(run, args: list[str], words: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert words in " ".join(result.stderr.replace("│", " ").split()), result.stderr


def test_checks_fast_path_knows_exactly_the_options_of_the_check_command() -> None:
    from taotoken_cli.cmd.check.fastpath import _FLAGS, _VALUED

    check = ROOT.commands["check"]
    flags = {n for p in visible_options(check) if p.is_flag for n in p.opts} - {"-h", "--help"}
    valued = {n for p in visible_options(check) if not p.is_flag for n in p.opts}
    assert set(_FLAGS) == flags
    assert set(_VALUED) == valued
