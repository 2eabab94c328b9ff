"""Terminal safety (issue 22, item 5): server text with ESC sequences reached the terminal raw (window title set,
screen cleared). Every control character (C0 but tab and newline, DEL, C1, ESC) in text from the network or from
files is shown escaped; taotoken's own colours still work.

Real parts: a real HTTP server on 127.0.0.1 (pytest-httpserver) answering with a hostile error body, the real CLI
in-process; a real file with the same bytes for explain and doctor.
"""

from __future__ import annotations

import json
import re

from taotoken_cli.core.term.output import Output, escape_controls
from tests.conftest import SENTINEL_KEY

HOSTILE = "bad key\x1b]0;pwned\x07\x1b[2J\x1b[H\x9b2J\x08\x08\x7f\rOK 200 done"
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def test_escaping_keeps_tab_newline_and_only_our_colours() -> None:
    assert escape_controls("a\tb\nc") == "a\tb\nc"
    assert escape_controls(HOSTILE) == ("bad key\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H\\u009b2J\\x08\\x08\\u007f\\x0dOK "
                                        "200 done")
    assert escape_controls("\x1b[32mOK\x1b[0m\x1b[2J", keep_colour=True) == "\x1b[32mOK\x1b[0m\\x1b[2J"


def test_a_stream_without_colour_escapes_every_esc(capsys) -> None:
    out = Output(env={"NO_COLOR": "1"})
    out.line("\x1b[31mserver red\x1b[0m")
    assert capsys.readouterr().out == "\\x1b[31mserver red\\x1b[0m\n"


def test_check_models_and_json_show_a_hostile_body_escaped(run, home, monkeypatch, httpserver) -> None:
    body = {"error": {"message": HOSTILE, "type": "invalid_request_error\x1b[2J", "code": "invalid_api_key"}}
    httpserver.expect_request(re.compile(".*")).respond_with_data(json.dumps(body, ensure_ascii=False), status=401,
                                                                  content_type="application/json")
    monkeypatch.setenv("TAOTOKEN_BASE_URL", httpserver.url_for("/api"))
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("TAOTOKEN_MODEL", "gpt-4o-mini")
    for args in (["check"], ["check", "--chat"], ["check", "--json"], ["models"], ["models", "--json"],
                 ["doctor", "--check", "gateway"], ["explain", HOSTILE]):
        result = run(*args).assert_clean()
        assert not RAW.search(result.output), (args, result.output)
        if "--json" in args:
            json.loads(result.stdout)  # still valid JSON
    shown = run("check").output + run("check", "--json").output
    assert "pwned" in shown and "\\x1b]0;" in shown or "\\u001b]0;" in shown, shown
