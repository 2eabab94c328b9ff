"""Loopback never through a proxy on another machine (issue 22, item 2): with HTTP_PROXY set and a plain-http gateway
on this machine, the key went to the proxy in clear (a LAN proxy carries it across the network, and connects to its
own loopback, not the user's). taotoken sends a request to a loopback target directly, whatever proxy is set (one on
this machine too, as browsers do).

Real parts: the mock gateway on 127.0.0.1, a real forwarding proxy (tests/proxyserver.py) that counts what it
carried, the real CLI in-process. The LAN proxy is a TEST-NET address (192.0.2.1, RFC 5737: nothing answers there):
had anything tried it, check would have failed.
"""

from __future__ import annotations

import json

import pytest

from taotoken_cli.core.net.proxies import is_loopback, proxy_for
from tests.conftest import SENTINEL_KEY
from tests.proxyserver import ProxyServer, ServerThread

PROXY = "http://10.0.0.2:3128"
LAN_PROXY = "http://192.0.2.1:3128"


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/api", "http://127.9.9.9/api", "http://localhost:3000/api",
                                 "http://LOCALHOST./api", "http://gw.localhost:8080/api", "https://[::1]:8443/api",
                                 "http://[::ffff:127.0.0.1]:8080/api"])
def test_a_loopback_target_goes_direct_whatever_the_variables_say(url: str) -> None:
    env = {"HTTP_PROXY": PROXY, "HTTPS_PROXY": PROXY, "ALL_PROXY": PROXY, "NO_PROXY": ""}
    assert proxy_for(url, env) is None


def test_a_proxy_on_this_machine_is_not_used_for_loopback_either() -> None:
    for proxy in ("http://127.0.0.1:7890", "http://localhost:7890", "127.0.0.1:7890"):
        assert proxy_for("http://127.0.0.1:8080/api", {"HTTP_PROXY": proxy}) is None


@pytest.mark.parametrize("url", ["http://10.0.0.5:3000/api", "https://taotoken.net/api", "http://localhost.example/api",
                                 "http://128.0.0.1/api"])
def test_other_targets_keep_httpx_rules(url: str) -> None:
    assert not is_loopback(url.split("//")[1].split("/")[0].rsplit(":", 1)[0])
    assert proxy_for(url, {"HTTP_PROXY": PROXY, "HTTPS_PROXY": PROXY}) == PROXY


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_check_models_and_doctor_never_hand_the_key_to_a_lan_proxy(run, home, monkeypatch, mock_gateway,
                                                                  variable) -> None:
    mock = mock_gateway()
    monkeypatch.setenv("TAOTOKEN_BASE_URL", mock.url)
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("TAOTOKEN_MODEL", "gpt-4o-mini")
    monkeypatch.setenv(variable, LAN_PROXY)
    check = run("check", "--json", "--timeout", "5").assert_clean()
    assert check.returncode == 0 and not json.loads(check.stdout)["proxy"], check.output
    assert run("models", "--timeout", "5").assert_clean().returncode == 0
    gateway = {c["id"]: c for c in json.loads(run("doctor", "--json", "--check", "gateway.key").stdout)["checks"]}
    assert gateway["gateway.key"]["status"] == "ok", gateway
    assert [r.endpoint for r in mock.requests].count("models") >= 3  # every request reached the gateway direct


def test_a_proxy_on_this_machine_is_passed_by_for_loopback_and_carries_a_named_gateway(run, home, monkeypatch,
                                                                                        mock_gateway) -> None:
    """As browsers do: the gateway on 127.0.0.1 goes direct even with a proxy on this machine (it adds a hop that can
    be down, and hands the key in clear to another program); the same mock named gateway.test (a name the test
    suite maps to it) goes through the proxy, as any remote gateway does."""
    from tests.proxyserver import GATEWAY_NAME

    thread = ServerThread()
    proxy = thread.start(ProxyServer())
    try:
        mock = mock_gateway()
        monkeypatch.setenv("TAOTOKEN_BASE_URL", mock.url)
        monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
        monkeypatch.setenv("TAOTOKEN_MODEL", "gpt-4o-mini")
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        assert run("check").assert_clean().returncode == 0
        assert proxy.forwarded == 0 and proxy.connects == 0
        monkeypatch.setenv("TAOTOKEN_BASE_URL", mock.url.replace("127.0.0.1", GATEWAY_NAME))
        monkeypatch.setenv("TAOTOKEN_ALLOW_HTTP", "1")  # plain http to a name that is not loopback
        assert run("check").assert_clean().returncode == 0
        assert proxy.forwarded == 1
    finally:
        thread.close()
