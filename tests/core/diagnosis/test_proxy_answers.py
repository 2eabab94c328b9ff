"""Who answered: the local proxy's own error page is a proxy problem (`proxy.refused`), never the key's;
an answer the proxy only passed on is the gateway's. Real proxies on 127.0.0.1 (tests/rawserver.py):
a squid-like one that refuses with its own 403 page (plain http and CONNECT), and a tiny forwarding
proxy in front of a real HTTP server.
"""

from __future__ import annotations

import json

import pytest

from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import texts
from taotoken_cli.core.diagnosis.classify import classify
from taotoken_cli.core.net.gateway import Observation
from tests.conftest import SENTINEL_KEY, in_users_shell
from tests.rawserver import SQUID_DENIED_PAGE, RawServer

PROXY = "http://127.0.0.1:7890"
URL = "http://gw.test/api/v1/models"
SQUID = {"server": "squid/5.7", "x-squid-error": "ERR_ACCESS_DENIED 0", "via": "1.1 proxy.test (squid/5.7)",
         "content-type": "text/html;charset=utf-8"}


def answer(status: int, headers: dict[str, str], body: bytes = SQUID_DENIED_PAGE, proxy: str | None = PROXY):
    return classify(Observation("GET", URL, status=status, headers=headers, body=body, proxy=proxy),
                    expect="models")


@pytest.mark.parametrize("status,headers,body,expected", [
    (403, SQUID, SQUID_DENIED_PAGE, "proxy.refused"),
    (503, SQUID, SQUID_DENIED_PAGE, "proxy.refused"),  # squid could not reach the gateway
    (502, {"server": "mihomo"}, b"", "proxy.refused"),  # Clash Meta: empty 502 of its own
    (403, {"proxy-agent": "corp-filter/2"}, b"blocked", "proxy.refused"),
    (403, {"via": "1.1 corp"}, b"", "proxy.refused"),  # only the proxy signed it
    # passed on, not written by the proxy: the gateway's (or its web server's) answer
    (403, {"via": "1.1 corp", "server": "nginx", "content-type": "text/html"}, b"<html>403</html>", "auth.forbidden"),
    (403, {**SQUID, "content-type": "application/json"},
     json.dumps({"error": {"message": "permission denied", "type": "permission_error"}}).encode(), "auth.forbidden"),
    (502, {**SQUID, "cf-ray": "8f00-SJC"}, b"<html><title>502 Bad Gateway</title></html>", "server.error"),
    (403, {**SQUID, "x-oneapi-request-id": "2025"}, b"", "auth.forbidden"),
])
def test_proxy_own_answer_or_passed_on(status, headers, body, expected):
    diagnosis = answer(status, headers, body)
    assert diagnosis.code == expected, diagnosis.to_dict()


def test_no_proxy_in_use_means_the_answer_is_not_the_proxys():
    diagnosis = answer(403, SQUID, proxy=None)
    assert diagnosis.code == "auth.forbidden"
    assert not any("proxy" in fix for fix in texts(diagnosis.fixes()))


def test_proxy_refused_names_the_proxy_and_its_marks():
    diagnosis = answer(403, SQUID)
    assert any(f"from the proxy {PROXY}, not from the gateway" in d and "X-Squid-Error: ERR_ACCESS_DENIED 0" in d
               for d in diagnosis.details)
    assert diagnosis.server_message == "ERROR: The requested URL could not be retrieved"
    assert diagnosis.entry.exit == Exit.NETWORK
    assert in_users_shell("export NO_PROXY=gw.test") in texts(diagnosis.fixes())[0]
    assert PROXY in texts(diagnosis.fixes())[0]
    assert diagnosis.model is None


@pytest.fixture
def env(home, monkeypatch):
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("TAOTOKEN_MODEL", "gpt-4o-mini")
    return monkeypatch


def test_check_through_a_proxy_that_refuses_plain_http(env, run):
    with RawServer("proxy_403") as proxy:
        env.setenv("TAOTOKEN_BASE_URL", "http://gateway.test/api")
        env.setenv("TAOTOKEN_ALLOW_HTTP", "1")  # plain http to a non-loopback name: opt in
        env.setenv("HTTP_PROXY", proxy.url)
        result = run("check").assert_clean()
        data = json.loads(run("check", "--json").assert_clean().stdout)
        assert proxy.requests and proxy.requests[0].startswith(b"GET http://gateway.test/api/v1/models")
    assert result.returncode == Exit.NETWORK == data["exit_code"] and data["code"] == "proxy.refused"
    assert "proxy.refused: The proxy answered the request itself" in result.stderr
    assert "lacks a permission" not in result.stderr and "auth.forbidden" not in result.stderr
    assert "bypass it: " + in_users_shell("export NO_PROXY=gateway.test") in result.stderr


def test_check_through_a_proxy_that_refuses_connect(env, run):
    with RawServer("proxy_403") as proxy:
        env.setenv("TAOTOKEN_BASE_URL", "https://gateway.test/api")
        env.setenv("HTTPS_PROXY", proxy.url)
        result = run("check").assert_clean()
        assert proxy.requests and proxy.requests[0].startswith(b"CONNECT gateway.test:443")
    assert result.returncode == Exit.NETWORK and "proxy.refused:" in result.stderr


def test_a_gateway_403_passed_on_by_a_proxy_stays_the_gateways(env, run, httpserver):
    body = {"error": {"message": "permission denied for this endpoint", "type": "permission_error"}}
    httpserver.expect_request("/api/v1/models").respond_with_json(body, status=403)
    with RawServer("forwarding_proxy") as proxy:
        # the gateway by name: a loopback one never goes through a proxy (tests/netguard maps the name to it)
        env.setenv("TAOTOKEN_BASE_URL", httpserver.url_for("/api").replace("localhost", "gateway.test"))
        env.setenv("TAOTOKEN_ALLOW_HTTP", "1")
        env.setenv("HTTP_PROXY", proxy.url)
        result = run("check").assert_clean()
        assert proxy.requests  # it really went through the proxy
    assert result.returncode == Exit.AUTH and "auth.forbidden:" in result.stderr
    assert f"fix: try without the proxy {proxy.url}: taotoken check --no-proxy" in result.stderr
    direct = run("check", "--no-proxy").assert_clean()
    assert "auth.forbidden:" in direct.stderr and "--no-proxy" not in direct.stderr


def test_explain_proxy_refused(run):
    result = run("explain", "proxy.refused").assert_clean()
    assert result.returncode == 0
    assert result.stdout.startswith("proxy.refused — The proxy answered the request itself; the gateway never saw it")
    assert "exit status: 7 (network)" in result.stdout
    data = json.loads(run("explain", "proxy.refused", "--json").stdout)
    assert (data["kind"], data["exit_code"]) == ("code", 0)  # explain's own status; the code's is in the entry
    entry, = data["codes"]
    assert entry["code"] == "proxy.refused" and entry["exit_code"] == 7 and "request_id" not in entry
    assert "proxy.refused" in run("explain", "--list").stdout
