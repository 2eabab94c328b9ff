"""Each client's proxy rule in core/clients/proxy_rules.py, checked against the real client: the client runs with a
proxy variable in its environment that points at a listener recording who connects (and ending the run there,
so no retry loop is waited out), and the gateway on loopback. Where the rule says "through the proxy", the
listener must see the connection and the gateway nothing; where it says "direct", the other way round.
Gemini CLI's and OpenClaw's rules are checked by the runs of tests/real_clients/test_real_gemini_openclaw.py (each
through a forwarding proxy), which take long enough on their own.
"""

from __future__ import annotations

import pytest

from taotoken_cli.core.clients.proxy_rules import RULES
from tests.real_clients.conftest import MOCK_HOST, MOCK_ROOT, base_env, init, require, run_in_netns

pytestmark = pytest.mark.real_clients

PROXY_PORT = 18766
PROXY = f"http://127.0.0.1:{PROXY_PORT}"
COMMANDS = {"claude-code": "claude", "codex": "codex", "cline": "cline", "opencode": "opencode", "qwen-code": "qwen"}
CASES = {
    "HTTPS_PROXY": {"HTTPS_PROXY": PROXY},
    "HTTP_PROXY": {"HTTP_PROXY": PROXY},
    "ALL_PROXY": {"ALL_PROXY": PROXY},
    "both+NO_PROXY": {"HTTPS_PROXY": PROXY, "HTTP_PROXY": PROXY, "NO_PROXY": "127.0.0.1"},
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("client", list(COMMANDS))
def test_the_client_follows_its_proxy_rule(client, case, cli, home, tmp_path):
    require(COMMANDS[client])
    init(cli, client, extra=("--codex-auth", "auth-json") if client == "codex" else ())
    env = base_env(home, **CASES[case])
    result = run_in_netns(tmp_path, client, env, cwd=home, proxy_port=PROXY_PORT, stop_on_request=True,
                          timeout_s=40)
    expected = RULES[client].variable_for(MOCK_ROOT, env)
    through = [hit for hit in result["proxy_hits"] if MOCK_HOST in hit and not hit.startswith("HEAD")]
    direct = [r for r in result["records"] if r["endpoint"] in ("messages", "responses", "chat")]
    went = "proxy" if through else "direct" if direct else "nowhere"
    assert went == ("proxy" if expected else "direct"), (client, case, expected, result["proxy_hits"],
                                                          result["records"][:2], result["error"])
