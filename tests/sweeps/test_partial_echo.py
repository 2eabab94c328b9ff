"""Masking prefix-less and partial echoes (issue 22, item 3): a gateway that quotes the key without its `sk-`
prefix, or cut short, in an error body. Any run of PARTIAL_RUN characters of the key's secret part is masked in
check (text and --json), models, doctor and bench's --json, --raw, --csv and --html files.

Real parts: a real HTTP server on 127.0.0.1 (pytest-httpserver) that echoes what it received, the real CLI
in-process, the files bench writes read back from disk.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from werkzeug import Request, Response

from taotoken_cli.core.base.masking import PARTIAL_RUN, Redactor, secret_part
from tests.conftest import SENTINEL_KEY

PART = secret_part(SENTINEL_KEY)
ECHOES = {
    "no-prefix": lambda key: key.removeprefix("sk-"),
    "cut-short": lambda key: key[:3 + PARTIAL_RUN + 2],
    "tail-only": lambda key: key[-(PARTIAL_RUN + 1):],
    "in-a-word": lambda key: "tok_" + key.removeprefix("sk-") + "_x",
}


def leaks(text: str) -> list[str]:
    """Every PARTIAL_RUN-long piece of the key's secret part found in `text`."""
    return [PART[i:i + PARTIAL_RUN] for i in range(len(PART) - PARTIAL_RUN + 1) if PART[i:i + PARTIAL_RUN] in text]


def test_the_redactor_masks_pieces_but_not_other_words() -> None:
    redact = Redactor(SENTINEL_KEY)
    for name, echo in ECHOES.items():
        assert not leaks(redact(f"Received API Key = {echo(SENTINEL_KEY)}, retry")), name
    kept = "model gpt-4o-mini-2024-07-18 request chatcmpl-9a8b7c6d5e4f3a2b1c0d trace 9f8e7d6c5b4a3"
    assert redact(kept) == kept
    other = Redactor("sk-ant-api03-USERSownANTHROPICkey0123456789xyz")
    assert "USERSownANTHR" not in other("echo: USERSownANTHROPICkey01")  # the long vendor prefix is skipped


def test_another_whole_key_sharing_a_run_is_shown_as_itself_whatever_else_is_known() -> None:
    """The masking of an output depends on that output, not on which keys this process happened to remember: a
    whole `sk-` key that merely shares PARTIAL_RUN characters with a known key is masked as itself, while a piece
    of the known key (cut short, with its prefix) is still shown as the known key."""
    other = "sk-oldKEY" + PART[4:4 + PARTIAL_RUN] + "tail99"
    assert Redactor(SENTINEL_KEY)(f"KEY={other}") == "KEY=sk-ol…il99"
    assert Redactor()(f"KEY={other}") == f"KEY={other}"  # nothing known: left to mask_unknown_keys, which agrees
    assert Redactor(SENTINEL_KEY)(SENTINEL_KEY[:3 + PARTIAL_RUN + 2]) == "sk-SE…WXYZ"


@pytest.fixture(params=sorted(ECHOES))
def echo_server(request, httpserver, monkeypatch):
    echo = ECHOES[request.param]

    def handler(req: Request) -> Response:
        received = req.headers.get("Authorization", "").removeprefix("Bearer ")
        body = {"error": {"message": f"Invalid token: {echo(received)} (key hash d0c8)", "type": "auth_error",
                          "code": "401"}}
        return Response(json.dumps(body), status=401, content_type="application/json")

    httpserver.expect_request(re.compile(".*")).respond_with_handler(handler)
    monkeypatch.setenv("TAOTOKEN_BASE_URL", httpserver.url_for("/api"))
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("TAOTOKEN_MODEL", "gpt-4o-mini")
    return httpserver


def test_no_piece_of_the_key_in_any_output_or_file(run, home: Path, echo_server) -> None:
    outputs = []
    for args in (["check"], ["check", "--json"], ["check", "-v"], ["models"], ["models", "--json"],
                 ["doctor", "--json", "--check", "gateway"], ["explain", f"Invalid token: {PART}"]):
        result = run(*args).assert_clean()
        outputs.append((args, result.output))
    files = {name: home / f"bench.{name}" for name in ("raw", "csv", "html")}
    bench = run("bench", "-n", "2", "--workers", "1", "--timeout", "5", "--json", "--raw", str(files["raw"]),
                "--csv", str(files["csv"]), "--html", str(files["html"])).assert_clean()
    outputs.append((["bench"], bench.output))
    assert any("sk-SE…WXYZ" in text for _, text in outputs), outputs  # the echo was read and shown, masked
    for args, text in outputs:
        assert not leaks(text), (args, text)
    written = [path for path in home.rglob("*") if path.is_file()]
    assert files["raw"] in written and files["html"] in written, written
    for path in written:
        assert not leaks(path.read_text(encoding="utf-8", errors="replace")), path
