"""No write crashes on any code page: ASCII lookalikes, then replacement; UTF-8 for a language the code page lacks."""

from __future__ import annotations

import io
import subprocess
import sys

from taotoken_cli.core.base.masking import Redactor
from taotoken_cli.core.term.encoding import encodable, prepare_std_streams
from taotoken_cli.core.term.output import RedactingStream

BAR = "  12.0 - 15.0   3  ■■■■  ✓ ok → next … — done"


def test_text_the_code_page_has_is_left_alone() -> None:
    assert encodable(BAR, "utf-8") == BAR
    assert encodable("plain ascii", "ascii") == "plain ascii"
    assert encodable("中文：失败", "gbk") == "中文：失败"


def test_symbols_become_ascii_lookalikes_and_the_rest_question_marks() -> None:
    assert encodable(BAR, "cp1252") == "  12.0 - 15.0   3  ####  OK ok -> next ... - done"
    assert encodable(BAR, "ascii") == "  12.0 - 15.0   3  ####  OK ok -> next ... - done"
    assert encodable("失败", "cp1252") == "??"


def test_a_redacting_stream_on_cp1252_writes_lookalikes_instead_of_raising() -> None:
    raw = io.BytesIO()
    text = io.TextIOWrapper(raw, encoding="cp1252", newline="")
    RedactingStream(text, Redactor()).write("──── ✓ ■■\n")
    text.flush()
    assert raw.getvalue() == b"---- OK ##\n"


def test_chinese_on_a_pipe_without_it_gets_utf8_and_english_keeps_the_code_page() -> None:
    zh = io.TextIOWrapper(io.BytesIO(), encoding="cp1252")
    en = io.TextIOWrapper(io.BytesIO(), encoding="cp1252")
    prepare_std_streams([zh], "zh", {})
    prepare_std_streams([en], "en", {})
    assert (zh.encoding, en.encoding) == ("utf-8", "cp1252")
    en.write("失败")  # replaced, not raised
    en.flush()
    assert en.buffer.getvalue() == b"??"  # type: ignore[attr-defined]


def test_an_explicit_pythonioencoding_is_kept() -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="cp1252")
    prepare_std_streams([stream], "zh", {"PYTHONIOENCODING": "cp1252"})
    assert stream.encoding == "cp1252" and stream.errors == "replace"


def test_the_cli_on_an_ascii_pipe_writes_chinese_as_utf8(home) -> None:
    env = {"PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0", "LC_ALL": "C", "TAOTOKEN_LANG": "zh", "HOME": str(home),
           "XDG_CONFIG_HOME": str(home / ".config"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-m", "taotoken_cli", "explain", "auth.missing_key"], env=env,
                          capture_output=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "密钥".encode() in proc.stdout and b"Traceback" not in proc.stderr
