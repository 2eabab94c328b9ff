"""The TOML parsers' messages in the user's language: tomllib's (taotoken's own config.toml) and tomlkit's (the
files taotoken edits). Each message is matched by its shape, its variable part (a key, a character) kept as the
parser gave it; the English msgids are the parsers' own words, so English output is unchanged, and a message
neither parser version here says passes through as it came.
"""

from __future__ import annotations

import re

from taotoken_cli.core.base.i18n import N_, _

# (the parser's words as a pattern, the msgid: the same words with the variable parts as fields)
_MESSAGES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(pattern + r"\Z"), msgid) for pattern, msgid in (
    # tomllib
    (r"Cannot overwrite a value", N_("Cannot overwrite a value")),
    (r"Expected '=' after a key in a key/value pair", N_("Expected '=' after a key in a key/value pair")),
    (r"Expected '\]' at the end of a table declaration", N_("Expected ']' at the end of a table declaration")),
    (r"Expected '\]\]' at the end of an array declaration", N_("Expected ']]' at the end of an array declaration")),
    (r"Expected newline or end of document after a statement",
     N_("Expected newline or end of document after a statement")),
    (r"Invalid date or datetime", N_("Invalid date or datetime")),
    (r"Invalid hex value", N_("Invalid hex value")),
    (r"Invalid initial character for a key part", N_("Invalid initial character for a key part")),
    (r"Invalid statement", N_("Invalid statement")),
    (r"Invalid value", N_("Invalid value")),
    (r"Unclosed array", N_("Unclosed array")),
    (r"Unclosed inline table", N_("Unclosed inline table")),
    (r"Unescaped '\\' in a string", N_("Unescaped '\\' in a string")),
    (r"Unterminated string", N_("Unterminated string")),
    (r"Escaped character is not a Unicode scalar value", N_("Escaped character is not a Unicode scalar value")),
    (r"Cannot declare (?P<key>.+) twice", N_("Cannot declare {key} twice")),
    (r"Cannot mutate immutable namespace (?P<key>.+)", N_("Cannot mutate immutable namespace {key}")),
    (r"Cannot redefine namespace (?P<key>.+)", N_("Cannot redefine namespace {key}")),
    (r"Duplicate inline table key (?P<key>.+)", N_("Duplicate inline table key {key}")),
    (r"Found invalid character (?P<char>.+)", N_("Found invalid character {char}")),
    (r"Illegal character (?P<char>.+)", N_("Illegal character {char}")),
    # tomlkit
    (r"TOML parse error", N_("TOML parse error")),
    (r"Mixed types found in array", N_("Mixed types found in array")),
    (r"Invalid number", N_("Invalid number")),
    (r"Invalid datetime", N_("Invalid datetime")),
    (r"Invalid date", N_("Invalid date")),
    (r"Invalid time", N_("Invalid time")),
    (r"Invalid number or date format", N_("Invalid number or date format")),
    (r"Invalid unicode value", N_("Invalid unicode value")),
    (r"Unexpected character: (?P<char>.+)", N_("Unexpected character: {char}")),
    (r"Empty key", N_("Empty key")),
    (r"Empty table name", N_("Empty table name")),
    (r"Invalid character (?P<char>.+) in string", N_("Invalid character {char} in string")),
    (r"Unexpected end of file", N_("Unexpected end of file")),
    (r"Failed to parse array", N_("Failed to parse array")),
    (r'Key "(?P<key>.+)" already exists\.', N_('Key "{key}" already exists.')),
))
_POSITION = re.compile(r"\s*\(at line \d+, column \d+\)|\s+at line \d+ col \d+")


def toml_message(text: str) -> str:
    """A TOML parser's message without its position (the caller shows file:line:column), in the user's language."""
    text = _POSITION.sub("", str(text)).strip()
    for pattern, msgid in _MESSAGES:
        match = pattern.match(text)
        if match:
            return _(msgid).format(**match.groupdict())
    return text
