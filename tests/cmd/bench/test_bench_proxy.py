"""`taotoken bench` through HTTP proxies: a real proxy on 127.0.0.1 (tests/proxyserver.py) in front of
the mock gateway — absolute-form forwarding for an http gateway, a CONNECT tunnel and TLS (a
throw-away certificate, trusted through SSL_CERT_FILE) for an https one — and the proxy's own
failures, which must read as proxy problems, not the gateway's."""

from __future__ import annotations

import json
import socket

import pytest

from taotoken_cli.cmd.mock import MockOptions, ModelTiming
from tests.conftest import REPO, SENTINEL_KEY
from tests.proxyserver import GATEWAY_NAME, ProxyServer, ServerThread, TLSFront, make_certificate


@pytest.fixture(scope="module")
def gateway(module_mock_gateway):
    return module_mock_gateway(MockOptions(key=SENTINEL_KEY, latency_ms=5,
                                           model_timing={"stream": ModelTiming(20, 200, 4)}), process=True)


@pytest.fixture(scope="module")
def servers():
    thread = ServerThread()
    yield thread
    thread.close()


@pytest.fixture(scope="module")
def tls(gateway, servers, tmp_path_factory):
    """An https gateway: TLS in front of the mock; (base URL, CA file)."""
    cert, key = make_certificate(tmp_path_factory.mktemp("tls"))
    front = servers.start(TLSFront(gateway.port, cert, key))
    return f"https://127.0.0.1:{front.port}/api", str(cert)


def bench_json(cli, base_url: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    result = cli("bench", "--base-url", base_url, "-m", "stream", "--json", *args,
                 env={"TAOTOKEN_API_KEY": SENTINEL_KEY, **(env or {})}, timeout=60)
    result.assert_clean()
    return result.returncode, json.loads(result.stdout)


def named(url: str) -> str:
    """The mock under a name only the test proxy resolves: a loopback gateway never goes through a proxy."""
    return url.replace("127.0.0.1", GATEWAY_NAME)


ALLOW_HTTP = {"TAOTOKEN_ALLOW_HTTP": "1"}  # plain http to a name that is not loopback


def test_http_gateway_through_the_environments_proxy(cli, gateway, servers):
    proxy = servers.start(ProxyServer())
    code, data = bench_json(cli, named(gateway.url), "-n", "12", "-c", "3", "--stream",
                            env={"HTTP_PROXY": proxy.url, **ALLOW_HTTP})
    s = data["series"][0]
    assert code == 0 and s["ok"] == 12, s["errors"]
    assert proxy.forwarded == 12  # every request went through the proxy, in absolute form
    assert data["load"]["proxy"] == proxy.url and data["load"]["proxy_source"] == "environment"
    assert s["ttft_ms"]["p50"] >= 19.5  # the mock's fixed delay is still measured through the proxy
    assert s["proxy_connect_ms"] is None  # no CONNECT for an http gateway


def test_https_gateway_through_a_connect_tunnel(cli, tls, servers):
    base_url, ca = tls
    proxy = servers.start(ProxyServer(auth="alice:s3cret"))
    proxy_url = f"http://alice:s3cret@127.0.0.1:{proxy.port}"
    result = cli("bench", "--base-url", base_url, "-m", "stream", "-n", "10", "-c", "2", "--stream",
                 "--proxy", proxy_url, env={"TAOTOKEN_API_KEY": SENTINEL_KEY, "SSL_CERT_FILE": ca})
    result.assert_clean()
    assert result.returncode == 0, result.output
    assert f"proxy: http://alice:***@127.0.0.1:{proxy.port} (from --proxy" in result.stdout
    assert "s3cret" not in result.output  # the proxy's password is never shown
    assert "of which the proxy's CONNECT" in result.stdout
    assert proxy.connects == 2  # one tunnel per connection, kept alive for every request on it
    code, data = bench_json(cli, base_url, "-n", "6", "-c", "2", "--stream", "--proxy", proxy_url,
                            env={"SSL_CERT_FILE": ca})
    s = data["series"][0]
    assert s["ok"] == 6 and s["proxy_connect_ms"]["count"] == 2 and s["connect_ms"]["count"] == 2
    assert s["connect_ms"]["min"] >= s["proxy_connect_ms"]["min"]  # TCP + CONNECT + TLS >= CONNECT


def test_the_proxys_own_failures_are_proxy_problems(cli, gateway, tls, servers):
    base_url, ca = tls
    env = {"SSL_CERT_FILE": ca}
    # no credentials for a proxy that wants them: 407 to the CONNECT
    needs_auth = servers.start(ProxyServer(auth="alice:s3cret"))
    code, data = bench_json(cli, base_url, "-n", "2", "--proxy", needs_auth.url, env=env)
    assert code == 7 and data["series"][0]["errors"][0]["code"] == "proxy.auth_required"
    # the proxy refuses the CONNECT, or cannot reach the gateway (502 of its own)
    for status in (403, 502):
        refusing = servers.start(ProxyServer(connect_status=status))
        code, data = bench_json(cli, base_url, "-n", "2", "--proxy", refusing.url, env=env)
        error = data["series"][0]["errors"][0]
        assert code == 7 and error["code"] == "proxy.refused", error
    # plain http: the forwarding proxy answers 502 itself (its own page, signed by its Server header)
    failing = servers.start(ProxyServer(forward_status=502))
    code, data = bench_json(cli, gateway.url, "-n", "2", "--proxy", failing.url)
    assert code == 7 and data["series"][0]["errors"][0]["code"] == "proxy.refused"
    assert data["series"][0]["status_codes"] == {"502": 2}
    # nothing listens where the proxy should be
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, data = bench_json(cli, named(gateway.url), "-n", "2", env={"HTTP_PROXY": f"http://127.0.0.1:{port}",
                                                                     **ALLOW_HTTP})
    error = data["series"][0]["errors"][0]
    assert code == 7 and error["code"] == "proxy.unreachable"
    assert any(f"127.0.0.1:{port}" in fix for fix in error["fixes"])


def test_no_proxy_and_unusable_proxies(cli, gateway):
    env = {"TAOTOKEN_API_KEY": SENTINEL_KEY, "HTTP_PROXY": "http://127.0.0.1:9"}
    result = cli("bench", "--base-url", gateway.url, "-m", "x", "-n", "2", "--no-proxy", "--json", env=env)
    assert result.returncode == 0 and json.loads(result.stdout)["load"]["proxy"] is None
    for proxy, message in (("socks5://127.0.0.1:7890", "SOCKS proxy"), ("https://127.0.0.1:7890", "http://host:port"),
                           ("http://127.0.0.1:notaport", "is not a URL")):
        result = cli("bench", "--base-url", gateway.url, "-m", "x", "--proxy", proxy, env=env)
        result.assert_clean()
        assert result.returncode == 2 and message in result.stderr and "fix:" in result.stderr, result.output
    result = cli("bench", "--base-url", named(gateway.url), "-m", "x",
                 env={**env, "HTTP_PROXY": "socks5://127.0.0.1:7890", **ALLOW_HTTP})
    assert result.returncode == 2 and "the proxy set in the environment is a SOCKS proxy" in result.stderr
    result = cli("bench", "--base-url", gateway.url, "-m", "x", "--proxy", "http://a:1", "--no-proxy", env=env)
    assert result.returncode == 2 and "--proxy and --no-proxy both given" in result.stderr


def test_proxy_server_forwards_keep_alive_requests_in_origin_form():
    head = (b"POST http://127.0.0.1:8/api/v1/x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:8\r\n"
            b"Proxy-Authorization: Basic eA==\r\n\r\n")
    assert ProxyServer._origin_form(head) == b"POST /api/v1/x?y=1 HTTP/1.1\r\nHost: 127.0.0.1:8\r\n\r\n"
    assert (REPO / "tests" / "proxyserver.py").exists()
