"""doctor's proxy claims follow each client's real rule (core/clients/proxy_rules.py, checked against the real
clients in tests/real_clients): an HTTPS_PROXY that taotoken's own requests to an http:// gateway ignore is still
the proxy Claude Code sends them through."""

from __future__ import annotations

import json
import socket

from tests.conftest import flat, own_config, write


def dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_dead_https_proxy_fails_for_claude_code_on_a_loopback_gateway(cli, home, mock_gateway):
    mock = mock_gateway()
    own_config(home, mock.url)
    (home / ".claude").mkdir()
    proxy = f"http://127.0.0.1:{dead_port()}"
    result = cli("doctor", "--check", "env.proxy", "--check", "net.proxy", "-v", "--json",
                 env={"HTTPS_PROXY": proxy}).assert_clean()
    found = {f["id"]: f for f in json.loads(result.stdout)["checks"]}
    assert found["env.proxy"]["status"] == "warn"
    assert f"Claude Code sends requests to 127.0.0.1 through {proxy}" in found["env.proxy"]["message"]
    assert found["net.proxy"]["status"] == "fail"
    assert "Claude Code use it for 127.0.0.1" in found["net.proxy"]["message"]
    assert any("NO_PROXY=127.0.0.1" in fix for fix in found["net.proxy"]["fixes"])


def test_codex_takes_http_proxy_for_an_http_gateway_not_https_proxy(cli, home, mock_gateway):
    mock = mock_gateway()
    own_config(home, mock.url)
    (home / ".codex").mkdir()
    result = cli("doctor", "--check", "env.proxy", "-v", env={"HTTPS_PROXY": "http://127.0.0.1:7890"}).assert_clean()
    assert "Codex sends" not in flat(result.stdout)


def test_claude_settings_proxy_used_for_a_loopback_gateway_is_a_failure(cli, home, mock_gateway):
    """The issue's case: settings.json's env holds HTTPS_PROXY to a proxy that is not running."""
    mock = mock_gateway()
    own_config(home, mock.url)
    port = dead_port()
    write(home / ".claude" / "settings.json", json.dumps({"env": {
        "ANTHROPIC_BASE_URL": mock.url, "HTTPS_PROXY": f"http://127.0.0.1:{port}"}}))
    result = cli("doctor", "--check", "claude.proxy", "--json").assert_clean()
    finding = json.loads(result.stdout)["checks"][0]
    assert finding["status"] == "fail", finding
    assert f"127.0.0.1:{port}" in finding["message"] and "local proxy failed" in finding["message"]
    assert any('"NO_PROXY": "127.0.0.1"' in fix for fix in finding["fixes"])
