"""A fix that names a taotoken command says so (`Fix.of(_("… {command} …"), command=Command("taotoken …"))`), so
the renderer keeps the command whole and `--json`'s `fix_steps`/`fix_step` list it without reading the prose.

The walk below reads every module of the package and finds the translated strings (`_()`, `N_()`, `ngettext()`)
that are given as a fix: `fixes=[…]`, `fix=…`, the fix argument of a `TaotokenError` (and its subclasses), a
`.fixes.append/extend/insert(…)`, a line printed after a `fix: ` or `next: ` label. Such a string may not hold a
taotoken command as text (backticked or bare): it would be prose to everything that reads the Fix.

A second rule is wider: no translated string anywhere holds a backticked `taotoken …` command, except the few
below that describe rather than instruct (a help text, a warning about a file, a skip reason)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import taotoken_cli
from tests.app_commands import ROOT

PACKAGE = Path(taotoken_cli.__file__).parent
SUBCOMMANDS = sorted(getattr(ROOT, "commands", {}))
# `taotoken init`, `taotoken doctor --fix`: the program and one of its commands, with or without backticks
COMMAND_IN_TEXT = re.compile(r"\btaotoken (?:" + "|".join(map(re.escape, SUBCOMMANDS)) + r")\b")
BACKTICKED = re.compile(r"`taotoken [^`]*`")
TRANSLATE = {"_", "N_", "ngettext"}
ERROR_FIX_ARG = {"ConfigFileError": 4}  # the others (TaotokenError, InputError, …Error): the second argument

# Translated strings that name a backticked taotoken command and are no instruction to act on (file: msgid start).
DESCRIPTIONS = {
    ("cmd/doctor/cli.py", "Offer the safe repairs found"),  # --fix's help text
    ("cmd/check/cli.py", "Check this model instead of the configured one"),  # --model's help text
    ("core/clients/codex.py", "{path} holds a ChatGPT login"),  # a warning before init writes: how to undo it
    ("cmd/config/run.py", "warning: a key given as an argument"),  # a warning: which form to prefer
    ("cmd/doctor/checks/configuration.py", "{path} no longer exists: not recreated"),  # a detail line
    ("cmd/doctor/checks/configuration.py", "--offline cannot confirm"),  # why a sync is not offered
    ("cmd/doctor/checks/startup.py", "no {path}: `taotoken init --target shell` was not run"),  # a skip reason
    ("core/clients/codex.py", "Codex will refuse to start"),  # what is broken; doctor's fix is typed
    ("core/clients/shell.py", "commented out {where}"),  # a change summary: how to undo it
    ("core/clients/shell.py", "{path} no longer has the line that sources"),  # a change held back, and why
    ("core/clients/winshell.py", "{path} no longer has the line that loads"),  # the same, PowerShell's profile
}


def _translated(node: ast.AST) -> Iterator[tuple[int, str]]:
    """The msgids of the translation calls inside `node`."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in TRANSLATE:
            for arg in sub.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    yield sub.lineno, arg.value


def _name(func: ast.AST) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _labelled(call: ast.Call) -> bool:
    """`out.wrapped(text, "  " + _("fix: "))`: a line printed after a fix: or next: label."""
    return any(text in ("fix: ", "next: ") for arg in call.args[1:] for _line, text in _translated(arg))


def _given_as_fix(tree: ast.AST) -> Iterator[ast.AST]:
    """The expressions `tree` gives as a fix."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        for keyword in node.keywords:
            if keyword.arg in ("fixes", "fix", "first_fix"):
                yield keyword.value
        if name.endswith("Error") and name[:1].isupper():
            index = ERROR_FIX_ARG.get(name, 1)
            if len(node.args) > index:
                yield node.args[index]
        if name in ("append", "extend", "insert") and isinstance(node.func, ast.Attribute) \
                and "fix" in ast.unparse(node.func.value).lower():
            yield from node.args
        if name in ("wrapped", "error_wrapped", "wrap") and _labelled(node):
            yield node.args[0]


def _modules() -> Iterator[tuple[str, ast.AST]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def test_the_walk_knows_taotokens_commands_and_finds_fixes() -> None:
    """The rules below would pass on nothing: they see the commands and a known fix."""
    assert {"init", "doctor", "config", "check", "route", "explain"} <= set(SUBCOMMANDS)
    sample = ast.parse('raise InputError(_("m"), _("run `taotoken init`"))\n'
                       'issues.fixes.append(_("taotoken doctor --fix"))\n'
                       'out.wrapped(_("see: taotoken models"), "  " + _("fix: "))')
    found = [text for expr in _given_as_fix(sample) for _line, text in _translated(expr)]
    assert found == ["run `taotoken init`", "taotoken doctor --fix", "see: taotoken models"]
    assert all(COMMAND_IN_TEXT.search(text) for text in found)


def test_no_fix_holds_a_taotoken_command_as_text() -> None:
    found = []
    for name, tree in _modules():
        for expr in _given_as_fix(tree):
            found += [f"{name}:{line}: {text!r}" for line, text in _translated(expr) if COMMAND_IN_TEXT.search(text)]
    assert not found, ("fixes that hold a taotoken command as text; write Fix.of(_(\"… {command} …\"), "
                       "command=Command(\"taotoken …\")):\n" + "\n".join(found))


def test_no_translated_string_backticks_a_taotoken_command_unless_it_describes() -> None:
    found = []
    for name, tree in _modules():
        for line, text in _translated(tree):
            if BACKTICKED.search(text) and not any(name == file and text.startswith(start)
                                                   for file, start in DESCRIPTIONS):
                found.append(f"{name}:{line}: {text!r}")
    assert not found, ("a backticked taotoken command in a translated string; if it is an instruction, make it a "
                       "Fix with a Command part, else add it to DESCRIPTIONS saying why:\n" + "\n".join(found))
