"""The typed fix (core.base.fix): prose and commands apart, the whole line as before, a structured JSON form."""

from __future__ import annotations

import pytest

from taotoken_cli.core.base.fix import Command, Fix, Place, Where, config_set, unique


def test_a_template_keeps_its_commands_as_commands_and_its_values_as_prose() -> None:
    fix = Fix.of("copy the key from {where}, then: {command}", where="the console",
                 command=Command("taotoken config set api_key -"))
    assert str(fix) == "copy the key from the console, then: taotoken config set api_key -"
    assert [p.is_command for p in fix.parts] == [False, True]
    assert fix.parts[0].text == "copy the key from the console, then: "
    assert [c.line for c in fix.commands] == ["taotoken config set api_key -"]


def test_a_fix_spliced_into_a_template_keeps_its_commands() -> None:
    inner = Fix.of("{command}   (or your gateway's API root)", command=Command("taotoken config set base_url x"))
    outer = Fix.of("{line} — fix: {fix}", line="HTTP 401", fix=inner)
    assert str(outer) == "HTTP 401 — fix: taotoken config set base_url x   (or your gateway's API root)"
    assert [c.line for c in outer.commands] == ["taotoken config set base_url x"]


def test_prose_is_never_parsed_and_a_broken_translation_stays_as_it_is() -> None:
    assert str(Fix.prose('make it an object of strings: "env": {}')) == 'make it an object of strings: "env": {}'
    assert str(Fix.fill("unbalanced { brace", lambda name: "x")) == "unbalanced { brace"
    with pytest.raises(KeyError):
        Fix.of("{missing}")


def test_commands_give_their_argv_only_when_they_are_one_simple_command() -> None:
    assert Command("taotoken config set model gpt-4o").argv() == ["taotoken", "config", "set", "model", "gpt-4o"]
    assert Command('export A="$B"; unset B').argv() is None
    assert config_set("api_key", "sk-secret").line == "taotoken config set api_key -"
    assert config_set("model", "m", profile="work").line == "taotoken config set model m --profile work"
    assert config_set("model", "m").sets == "model"


def test_replacing_a_config_set_by_the_instruction_at_the_source() -> None:
    fix = Fix.of("运行：{command}（示例）", command=config_set("model", "x"))
    at_source = fix.replace_commands(lambda c: Fix.run(f"export TAOTOKEN_MODEL={c.value}") if c.sets else None)
    assert str(at_source) == "运行：export TAOTOKEN_MODEL=x（示例）"
    assert [c.line for c in at_source.commands] == ["export TAOTOKEN_MODEL=x"]


def test_the_json_form_has_the_same_text_the_commands_and_where_the_value_lives() -> None:
    where = Where("env", "TAOTOKEN_MODEL", (Place("~/.bashrc", 12),))
    fix = Fix.of("set it there: {command}", command=Command("export TAOTOKEN_MODEL=m")).with_where(where)
    assert fix.to_dict() == {
        "text": "set it there: export TAOTOKEN_MODEL=m",
        "commands": [{"line": "export TAOTOKEN_MODEL=m", "argv": ["export", "TAOTOKEN_MODEL=m"]}],
        "where": {"kind": "env", "name": "TAOTOKEN_MODEL", "places": [{"path": "~/.bashrc", "line": 12}]}}
    assert Fix.prose("ask support").to_dict() == {"text": "ask support", "commands": [], "where": None}


def test_unique_keeps_the_first_of_equal_lines_and_drops_empty_ones() -> None:
    fixes = unique([Fix.run("taotoken init"), "taotoken init", "", Fix.prose("other")])
    assert [str(f) for f in fixes] == ["taotoken init", "other"]
    assert fixes[0].commands
