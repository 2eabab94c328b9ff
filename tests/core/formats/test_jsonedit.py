"""jsonedit: parse errors with positions; rewrites keep indentation, order, newline and escapes."""

from __future__ import annotations

import json

import pytest

from taotoken_cli.core.base.errors import ConfigFileError
from taotoken_cli.core.formats.jsonedit import detect_style, dumps_like, parse_json

CLAUDE_STYLE = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm run test:*)",
      "Read(~/.zshrc)"
    ],
    "deny": []
  },
  "feedbackSurveyState": {
    "lastShownTime": 1754089004345
  },
  "ratio": 0.25,
  "nothing": null,
  "emptyObject": {},
  "note": "ünïcödé — literal"
}
"""


@pytest.mark.parametrize("indent", ["  ", "    ", "\t"])
def test_round_trip_is_byte_identical_for_each_indent_style(indent: str) -> None:
    text = CLAUDE_STYLE.replace("  ", "\0").replace("\0", indent)
    data = json.loads(text)
    assert detect_style(text).indent == indent
    assert dumps_like(data, text) == text


def test_a_new_key_changes_only_its_own_lines() -> None:
    data = json.loads(CLAUDE_STYLE)
    data["hasCompletedOnboarding"] = True
    after = dumps_like(data, CLAUDE_STYLE)
    assert after == CLAUDE_STYLE[: -len("\n}\n")] + ',\n  "hasCompletedOnboarding": true\n}\n'


def test_missing_trailing_newline_and_ascii_escapes_are_kept() -> None:
    text = '{\n    "name": "caf\\u00e9",\n    "n": 1\n}'
    assert detect_style(text).ensure_ascii
    assert dumps_like(json.loads(text), text) == text


def test_one_line_files_stay_on_one_line() -> None:
    compact = '{"a":1,"b":[1,2]}'
    spaced = '{"a": 1, "b": [1, 2]}\n'
    assert dumps_like(json.loads(compact), compact) == compact
    assert dumps_like(json.loads(spaced), spaced) == spaced


def test_parse_error_names_line_and_column() -> None:
    text = '{\n  "env": {\n    "A": "b",\n  }\n}\n'
    with pytest.raises(ConfigFileError) as info:
        parse_json(text, "/x/settings.json")
    err = info.value
    assert (err.line, err.column) == (4, 3)
    assert err.message.startswith("/x/settings.json:4:3: invalid JSON")
    assert err.fix and "line 4, column 3" in err.fix


# -- the splicing editor: only the values that change are rewritten (issue 17) ------------------------------

from taotoken_cli.core.formats.jsonedit import edit_json  # noqa: E402


def test_number_spellings_and_escapes_outside_the_change_stay() -> None:
    text = '{"ratio": 1e5, "big": 123456789012345678901, "neg": -0.0, "name": "caf\\u00e9"}'
    data = json.loads(text)
    data["model"] = "opus"
    # The old editor wrote 100000.0, -0.0 kept, "café": every other value changed its spelling.
    assert edit_json(text, data) == text[:-1] + ', "model": "opus"}'


def test_crlf_and_a_missing_final_newline_stay() -> None:
    text = '{\r\n    "env": {\r\n        "A": "1"\r\n    }\r\n}'
    data = json.loads(text)
    data["env"]["B"] = "2"
    assert edit_json(text, data) == '{\r\n    "env": {\r\n        "A": "1",\r\n        "B": "2"\r\n    }\r\n}'


def test_a_removed_member_takes_its_comma_and_line_but_not_a_comment() -> None:
    text = '{\n  "a": 1,\n  "b": 2, // why b\n  "c": 3\n}\n'
    data = json.loads('{"a": 1, "b": 2, "c": 3}')
    del data["c"]
    assert edit_json(text, data, allow_comments=True) == '{\n  "a": 1,\n  "b": 2 // why b\n}\n'
    del data["b"]
    assert edit_json(text, data, allow_comments=True) == '{\n  "a": 1\n  // why b\n}\n'  # the comment stays


def test_jsonc_trailing_commas_and_comments_are_kept_when_adding() -> None:
    text = '{\n\t// settings\n\t"editor.fontSize": 14, /* px */\n\t"x": [1, 2,],\n}'
    from taotoken_cli.core.formats.jsonedit import parse_json

    data = parse_json(text, "settings.json", allow_comments=True)
    data["claudeCode.environmentVariables"] = [{"name": "A", "value": "b"}]
    data["x"].append(3)
    after = edit_json(text, data, allow_comments=True)
    assert after == ('{\n\t// settings\n\t"editor.fontSize": 14, /* px */\n\t"x": [1, 2, 3,],\n'
                     '\t"claudeCode.environmentVariables": [\n\t\t{\n\t\t\t"name": "A",\n\t\t\t"value": "b"\n'
                     '\t\t}\n\t],\n}')


def test_a_key_written_twice_is_edited_where_it_counts() -> None:
    text = '{"a": 1, "a": 2}'
    assert edit_json(text, {"a": 3}) == '{"a": 1, "a": 3}'
    assert edit_json(text, {}) == "{}"  # both copies go, or the first would come back


def test_true_is_not_one() -> None:
    assert edit_json('{"flag": 1}', {"flag": True}) == '{"flag": true}'
    assert edit_json('{"flag": 1.0}', {"flag": 1.0}) == '{"flag": 1.0}'


def test_bom_and_empty_object_files() -> None:
    assert edit_json("\ufeff{}\n", {"a": 1}) == '\ufeff{\n  "a": 1\n}\n'
    assert edit_json("\ufeff{\"b\": 0}", {"b": 0, "a": 1}) == '\ufeff{"b": 0, "a": 1}'


def test_strict_json_rejects_comments_and_says_so() -> None:
    with pytest.raises(ConfigFileError) as info:
        parse_json('{\n  // mine\n  "a": 1\n}\n', "/x/settings.json")
    assert (info.value.line, info.value.column) == (2, 3)
    assert info.value.fix and "must be plain JSON" in info.value.fix


def test_nan_is_not_json() -> None:
    with pytest.raises(ConfigFileError) as info:
        parse_json('{"a": NaN}', "/x/auth.json")
    assert "NaN" in info.value.message


def test_jsonc_errors_name_line_and_column() -> None:
    with pytest.raises(ConfigFileError) as info:
        parse_json('{\n  "a": 1\n  "b": 2\n}', "/x/settings.json", allow_comments=True)
    assert (info.value.line, info.value.column) == (3, 3)
