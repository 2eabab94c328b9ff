"""What doctor sends and whose answer it reads: at most one completion per API (counted in the mock gateway's own
records), none after a 429, and a proxy's own error answer blamed on the proxy, not on the key (a real proxy on
127.0.0.1: tests/rawserver.py's squid-like `proxy_403`, and its forwarding `forward` for the gateway's own 403).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taotoken_cli.cmd.doctor.model import Status
from taotoken_cli.core.settings import Overrides
from tests.conftest import SENTINEL_KEY, in_users_shell, write
from tests.rawserver import RawServer

MODEL = "gpt-4o-mini"
GATEWAY_CHECKS = ("gateway.layout", "gateway.key", "gateway.model", "gateway.chat", "gateway.stream",
                  "gateway.messages", "gateway.responses")


def configured_home(home: Path, base: str, *, claude: bool = True, codex: bool = True) -> None:
    """taotoken's config, and (as `taotoken init` writes them) Claude Code's and Codex's files."""
    write(home / ".config/taotoken/config.toml",
          f'[profiles.default]\nbase_url = "{base}"\napi_key = "{SENTINEL_KEY}"\nmodel = "{MODEL}"\n')
    if claude:
        write(home / ".claude/settings.json", json.dumps({"env": {"ANTHROPIC_BASE_URL": base,
                                                                  "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY}}))
    if codex:
        write(home / ".codex/config.toml", f'model = "{MODEL}"\nmodel_provider = "taotoken"\n\n'
              f'[model_providers.taotoken]\nname = "TaoToken"\nbase_url = "{base}/v1"\n'
              'env_key = "TAOTOKEN_API_KEY"\nwire_api = "responses"\n')


def findings(result) -> dict[str, dict]:
    return {c["id"]: c for c in json.loads(result.stdout)["checks"]}


def completions(mock) -> list[str]:
    return [r.endpoint for r in mock.requests if r.endpoint in ("chat", "messages", "responses")]


# -- at most one completion per API -------------------------------------------------------------------------

def test_one_completion_per_api_and_chat_and_stream_share_one(cli, home, mock_gateway):
    mock = mock_gateway()
    configured_home(home, mock.url)
    result = cli("doctor", "--json", "--check", "gateway", env={"TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean()
    checks = findings(result)
    assert all(checks[c]["status"] == "ok" for c in GATEWAY_CHECKS), checks
    sent = completions(mock)
    assert sorted(sent) == ["chat", "messages", "responses"] and sent[0] == "chat"  # chat first, then the others
    chat = next(r for r in mock.requests if r.endpoint == "chat")
    assert chat.stream and chat.body["max_tokens"] == 8
    assert "token chunk(s)" in checks["gateway.chat"]["message"]
    assert "ended with [DONE]" in checks["gateway.stream"]["message"]
    assert [r.endpoint for r in mock.requests].count("models") == 1


def test_messages_and_responses_only_for_configured_clients(cli, home, mock_gateway):
    mock = mock_gateway()
    configured_home(home, mock.url, claude=False, codex=False)
    checks = findings(cli("doctor", "--json", "--check", "gateway").assert_clean())
    assert checks["gateway.messages"]["status"] == checks["gateway.responses"]["status"] == "skipped"
    assert completions(mock) == ["chat"]


def test_a_429_stops_the_remaining_completions(cli, home, mock_gateway):
    """A model-level rate limit: the chat completion gets 429; messages and responses are not sent, and are
    skipped naming the chat check (one finding, not three failures)."""
    mock = mock_gateway(model_fail={MODEL: 429})
    configured_home(home, mock.url)
    result = cli("doctor", "--json", "--check", "gateway", env={"TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean()
    checks = findings(result)
    assert checks["gateway.chat"]["status"] == "fail" and checks["gateway.chat"]["code"] == "rate.limited"
    for check_id in ("gateway.stream", "gateway.messages", "gateway.responses"):
        assert checks[check_id]["status"] == "skipped", checks[check_id]
    assert "not sent: POST /api/v1/chat/completions was answered rate.limited (see gateway.chat)" in \
        checks["gateway.messages"]["message"]
    assert completions(mock) == ["chat"]
    assert result.returncode == 1
    # the text view names the one finding; the withheld checks fold into one line
    text = cli("doctor", "--check", "gateway", env={"TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean().stdout
    assert text.count("[✗]") == 1, text


def test_a_rate_limited_model_list_sends_no_completion(cli, home, mock_gateway):
    mock = mock_gateway(fail=429)
    configured_home(home, mock.url)
    result = cli("doctor", "--json", "--check", "gateway", env={"TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean()
    checks = findings(result)
    assert checks["gateway.key"]["status"] == "warn" and checks["gateway.key"]["code"] == "rate.limited"
    for check_id in ("gateway.chat", "gateway.stream", "gateway.messages", "gateway.responses"):
        assert checks[check_id]["status"] == "skipped", checks[check_id]
        assert "(see gateway.key)" in checks[check_id]["message"]
    assert completions(mock) == []
    # run alone, the check that explains the skip is not there: the skip turns into a failure, not a pass
    alone = findings(cli("doctor", "--json", "--check", "gateway.messages").assert_clean())
    assert alone["gateway.messages"]["status"] == "fail"
    assert completions(mock) == []


# -- a proxy answering itself -------------------------------------------------------------------------------

def named(url: str) -> str:
    """The mock by a name (tests/netguard maps it to loopback): a loopback gateway never goes through a proxy."""
    return url.replace("127.0.0.1", "gateway.test")


ALLOW_HTTP = {"TAOTOKEN_ALLOW_HTTP": "1"}  # plain http to a name that is not loopback


def test_a_proxy_answering_403_itself_is_a_proxy_problem(cli, home, mock_gateway):
    mock = mock_gateway()
    configured_home(home, named(mock.url), claude=False, codex=False)
    with RawServer("proxy_403") as proxy:
        env = {"HTTP_PROXY": proxy.url, **ALLOW_HTTP}
        result = cli("doctor", "--json", "--check", "net", "--check", "gateway", env=env).assert_clean()
    checks = findings(result)
    via = checks["net.via_proxy"]
    assert via["status"] == "fail" and via["code"] == "proxy.refused", via
    assert via["message"] == (f"the proxy {proxy.url} answered HTTP 403 itself: gateway.test never saw the request; "
                              "direct access works")
    assert via["fixes"][0] == in_users_shell("export NO_PROXY=gateway.test") + "   (bypass the proxy for the gateway)"
    assert any("X-Squid-Error: ERR_ACCESS_DENIED 0" in d for d in via["details"]), via["details"]
    layout = checks["gateway.layout"]
    assert layout["status"] == "fail" and layout["code"] == "proxy.refused", layout
    assert "the proxy said: ERROR: The requested URL could not be retrieved" in layout["message"]
    assert checks["gateway.key"]["status"] == "skipped"  # not "the gateway rejects the key"
    assert checks["gateway.key"]["message"] == "the proxy answered instead of the gateway (see gateway.layout)"
    assert [r.endpoint for r in mock.requests] == ["models"]  # only net.via_proxy's direct probe reached it
    assert result.returncode == 1


def test_the_gateways_own_403_through_a_forwarding_proxy_stays_the_gateways(cli, home, mock_gateway):
    """A forwarding proxy adds Via to what it relays: the gateway's JSON 401 is still the key's problem."""
    mock = mock_gateway()
    configured_home(home, named(mock.url), claude=False, codex=False)
    with RawServer("forward") as proxy:
        env = {"HTTP_PROXY": proxy.url, "TAOTOKEN_API_KEY": "sk-wrongWRONGwrong0123456789", **ALLOW_HTTP}
        result = cli("doctor", "--json", "--check", "net.via_proxy", "--check", "gateway", env=env).assert_clean()
    checks = findings(result)
    assert checks["net.via_proxy"]["status"] == "ok", checks["net.via_proxy"]
    assert checks["gateway.key"]["status"] == "fail" and checks["gateway.key"]["code"] == "auth.invalid_key"
    assert any(r.endpoint == "models" for r in mock.requests)  # it really went through to the gateway


def test_via_proxy_called_directly_with_its_context(home, mock_gateway):
    from taotoken_cli.cmd.doctor.checks.network import via_proxy
    from taotoken_cli.cmd.doctor.context import DoctorContext

    mock = mock_gateway()
    with RawServer("proxy_403") as proxy:
        env = {"HOME": str(home), "HTTP_PROXY": proxy.url, "PATH": "/usr/bin:/bin", **ALLOW_HTTP}
        ctx = DoctorContext(env=env, cwd=home, overrides=Overrides(base_url=named(mock.url), api_key=SENTINEL_KEY))
        result = via_proxy(ctx)
    assert result.status is Status.FAIL and result.code == "proxy.refused"
    assert "Server: squid/5.7" in " ".join(result.details)


def test_a_proxy_refusing_the_tunnel_to_an_https_gateway(cli, home):
    """https through an HTTP proxy starts with CONNECT: the proxy's 403 to it is its own answer too. The host is
    a .invalid name: nothing can leave this machine (the direct probe fails in DNS)."""
    with RawServer("proxy_403") as proxy:
        env = {"HTTPS_PROXY": proxy.url, "TAOTOKEN_BASE_URL": "https://gw.invalid/api",
               "TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_MODEL": MODEL}
        result = cli("doctor", "--json", "--check", "net.via_proxy", "--check", "gateway.layout",
                     env=env).assert_clean()
        assert proxy.requests and proxy.requests[0].startswith(b"CONNECT gw.invalid:443 ")
    checks = findings(result)
    via = checks["net.via_proxy"]
    assert via["code"] == "proxy.refused" and via["message"].startswith(f"the proxy {proxy.url} answered the "
                                                                        "tunnel request itself"), via
    assert any("answered the tunnel request (CONNECT) with 403 Forbidden" in d for d in via["details"]), via
    assert checks["gateway.layout"]["code"] == "proxy.refused"


# -- one streamed completion read by two checks ---------------------------------------------------------------

@pytest.mark.parametrize("fault,chat,stream", [
    ("truncated-stream", ("ok", None), ("fail", "stream.truncated")),  # content proves the choices
    ("empty-stream", ("fail", "stream.empty"), ("skipped", "stream.empty")),
    ("stream-error", ("ok", None), ("fail", "stream.error_event")),  # an error event after some content
])
def test_chat_and_stream_read_the_same_streamed_completion(cli, home, mock_gateway, fault, chat, stream):
    mock = mock_gateway(fault=fault)
    configured_home(home, mock.url, claude=False, codex=False)
    checks = findings(cli("doctor", "--json", "--check", "gateway.chat", "--check", "gateway.stream").assert_clean())
    assert (checks["gateway.chat"]["status"], checks["gateway.chat"]["code"]) == chat, checks["gateway.chat"]
    assert (checks["gateway.stream"]["status"], checks["gateway.stream"]["code"]) == stream, checks["gateway.stream"]
    assert completions(mock) == ["chat"]


def test_a_gateway_answering_json_to_a_stream_request(cli, home, httpserver):
    """The chat works (choices came back), the stream does not: two findings from one request."""
    httpserver.expect_request("/api/v1/models").respond_with_json({"object": "list", "data": [{"id": MODEL}]})
    httpserver.expect_request("/api/v1/chat/completions").respond_with_json(
        {"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}}]})
    configured_home(home, f"http://127.0.0.1:{httpserver.port}/api", claude=False, codex=False)
    checks = findings(cli("doctor", "--json", "--check", "gateway.chat", "--check", "gateway.stream").assert_clean())
    assert checks["gateway.chat"]["status"] == "ok" and "not as a stream" in checks["gateway.chat"]["message"]
    assert checks["gateway.stream"]["status"] == "fail" and checks["gateway.stream"]["code"] == "stream.not_sse"
    assert [req.path for req, _ in httpserver.log].count("/api/v1/chat/completions") == 1
