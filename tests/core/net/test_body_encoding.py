"""A GBK error body (issue 22, item 10): a gateway in China answering in GBK was shown as mojibake. The charset the
Content-Type names is used, else UTF-8, else GB18030 (GBK's superset) when the bytes are valid in it.

Real parts: a real HTTP server on 127.0.0.1 (pytest-httpserver), the real CLI in-process.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import SENTINEL_KEY

MESSAGE = "无效的令牌"


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=gbk", "text/plain"])
def test_a_gbk_error_body_is_shown_as_written(run, home, monkeypatch, httpserver, content_type: str) -> None:
    body = json.dumps({"error": {"message": MESSAGE, "type": "invalid_request_error"}}, ensure_ascii=False)
    httpserver.expect_request("/api/v1/models").respond_with_data(body.encode("gbk"), status=401,
                                                                  content_type=content_type)
    monkeypatch.setenv("TAOTOKEN_BASE_URL", httpserver.url_for("/api"))
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("TAOTOKEN_MODEL", "gpt-4o-mini")
    result = run("check", "--json").assert_clean()
    assert result.returncode == 4, result.output
    assert MESSAGE in json.dumps(json.loads(result.stdout), ensure_ascii=False), result.stdout
    assert "\ufffd" not in result.stdout
