"""jsonedit: parse errors with positions; rewrites keep indentation, order, newline and escapes."""

from __future__ import annotations

import json

import pytest

from taotoken_cli.errors import ConfigFileError
from taotoken_cli.jsonedit import detect_style, dumps_like, parse_json

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
