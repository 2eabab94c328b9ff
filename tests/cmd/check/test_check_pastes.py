"""Values as they really get pasted (issue 23): a console page's URL, a full-width colon from a Chinese input
method, a trailing U+3000, a profile that does not exist, a key with a '-' after sk- — each gets its own words,
against a real loopback server where a request is involved (pytest-httpserver)."""

from __future__ import annotations

import pytest

from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.net.hygiene import clean_base_url, clean_key
from tests.cmd.check.test_check import MODELS_OK, MODELS_PATH
from tests.conftest import SENTINEL_KEY

DASHED = "sk-SENTINELkey0123456789-abcdefWXYZ"


def test_a_console_page_is_not_a_base_url(run, home):
    with pytest.raises(InputError) as refused:
        clean_base_url("https://taotoken.net/console/token")
    assert "is the console page /console/token, not the API root" in refused.value.message
    result = run("config", "set", "base_url", "https://taotoken.net/console/token")
    assert result.returncode == 2 and "taotoken config set base_url https://taotoken.net/api" in result.stderr
    assert not (home / ".config/taotoken/config.toml").exists()
    assert run("config", "set", "base_url", "https://taotoken.net/api").returncode == 0  # the fix as printed


def test_a_full_width_colon_is_read_as_the_ascii_one(run, chinese):
    cleaned = clean_base_url("https：／／taotoken.net/api")
    assert cleaned.value == "https://taotoken.net/api"
    result = run("config", "set", "base_url", "https：//taotoken.net/api")
    assert result.returncode == 0, result.output
    assert "全角字符 ： 替换为" in result.stderr and "NFKC" not in result.output


def test_a_trailing_ideographic_space_is_not_called_a_newline():
    cleaned = clean_key(SENTINEL_KEY + "\u3000")
    assert cleaned.value == SENTINEL_KEY
    assert cleaned.changes == ["removed a full-width or non-breaking space (U+3000) around the key"]
    assert clean_key(SENTINEL_KEY + "\n").changes == ["removed a trailing newline from the key"]


def test_a_profile_that_does_not_exist_is_named(run, home, httpserver, monkeypatch):
    monkeypatch.setenv("TAOTOKEN_BASE_URL", httpserver.url_for("/api"))
    assert run("config", "set", "model", "gpt-4o-mini", "--allow-unlisted", "--no-sync").returncode == 0
    result = run("check", "--profile", "nosuch")
    assert result.returncode == 3
    assert "config.missing" in result.stderr and "profile 'nosuch' (flag --profile) does not exist" in result.stderr
    assert "proxy" not in result.stderr and "no API key configured" not in result.stderr


def test_a_dashed_key_is_warned_about_only_when_the_gateway_refuses_it(run, httpserver, monkeypatch):
    monkeypatch.setenv("TAOTOKEN_BASE_URL", httpserver.url_for("/api"))
    monkeypatch.setenv("TAOTOKEN_API_KEY", DASHED)
    httpserver.expect_ordered_request(MODELS_PATH).respond_with_json(MODELS_OK)
    ok = run("check")
    assert ok.returncode == 0 and "after the sk- prefix" not in ok.output, ok.output
    httpserver.expect_ordered_request(MODELS_PATH).respond_with_json(
        {"error": {"message": "普通用户不支持指定渠道 (request id: 1)", "type": "new_api_error"}}, status=403)
    refused = run("check")
    assert refused.returncode == 4 and "auth.key_suffix" in refused.stderr
    assert "after the sk- prefix" in " ".join(refused.stderr.split())
    assert DASHED not in refused.output
