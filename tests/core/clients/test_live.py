"""The live runner without the real clients: what it says of a client that is not installed, how it reads a
client's own output, the proxy rules' matching; and `check --client` / `doctor --live` refusing bad input. The
real clients themselves run in tests/real_clients (pytest -m real_clients)."""

from __future__ import annotations

import json

from taotoken_cli.core.clients import live
from taotoken_cli.core.clients.proxy_rules import RULES, exempts
from tests.conftest import SENTINEL_KEY, own_config


def test_a_client_not_installed_is_skipped_with_how_to_install_it(home, tmp_path):
    run = live.run_client(live.BY_NAME["codex"], {"HOME": str(home), "PATH": str(tmp_path)}, home)
    assert not run.installed and live.outcome(run) == (live.NOT_INSTALLED, None)
    verdict = live.describe(run, home)
    assert verdict.message == "Codex is not installed: npm install -g @openai/codex" and verdict.exit == 3


def test_check_client_says_so_and_exits_with_the_config_class(cli, home, tmp_path):
    own_config(home, "http://127.0.0.1:9/api")
    result = cli("check", "--client", "cline", env={"PATH": str(tmp_path)}).assert_clean()
    assert result.returncode == 3
    assert "Cline is not installed: npm install -g cline" in result.output


def test_check_client_json_is_the_same_in_every_language(cli, home, tmp_path):
    own_config(home, "http://127.0.0.1:9/api")
    outputs = [json.loads(cli("check", "--client", "codex", "--json",
                              env={"PATH": str(tmp_path), "TAOTOKEN_LANG": lang}).stdout) for lang in ("en", "zh")]
    assert outputs[0]["outcome"] == outputs[1]["outcome"] == "not-installed"
    assert outputs[0]["ok"] is False and outputs[0]["client"] == "codex"


def test_an_unknown_client_names_the_ones_there_are(cli, home):
    result = cli("check", "--client", "cursor").assert_clean()
    assert result.returncode == 2
    assert "claude-code, codex, cline" in result.output


def test_doctor_live_refuses_offline(cli, home):
    result = cli("doctor", "--live", "--offline").assert_clean()
    assert result.returncode == 2 and "--offline" in result.output


def test_doctor_live_skips_clients_that_are_not_installed(cli, home, tmp_path):
    own_config(home, "http://127.0.0.1:9/api", key=SENTINEL_KEY)
    result = cli("doctor", "--live", "--check", "config", "-v", env={"PATH": str(tmp_path)}).assert_clean()
    for label, package in (("Claude Code", "@anthropic-ai/claude-code"), ("Codex", "@openai/codex"),
                           ("Cline", "cline"), ("OpenCode", "opencode-ai"), ("Qwen Code", "@qwen-code/qwen-code")):
        assert f"{label} is not installed: npm install -g {package}" in result.stdout
    assert "sends one small request" not in result.output  # nothing runs, so nothing is announced


def test_the_clients_own_error_text_is_read_from_their_output():
    codex = live.LiveRun(live.BY_NAME["codex"], "/bin/codex", exit_code=1, stdout=json.dumps(
        {"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized: Incorrect API key"}}))
    assert codex.error == "unexpected status 401 Unauthorized: Incorrect API key"
    assert live.outcome(codex) == (live.REACHED, 401)
    claude = live.LiveRun(live.BY_NAME["claude-code"], "/bin/claude", exit_code=1, stdout=json.dumps(
        {"type": "result", "is_error": True, "result": "API Error: Connection error."}))
    assert live.outcome(claude) == (live.UNREACHED, None) and claude.error == "API Error: Connection error."
    profile = live.LiveRun(live.BY_NAME["codex"], "/bin/codex", exit_code=1,
                           stderr="Error loading config.toml: legacy profile `work` is no longer supported")
    assert live.outcome(profile) == (live.REFUSED_TO_START, None)


# What OpenCode 1.18.33 and Qwen Code 0.24.4 printed for a gateway that refused the key (their real output, from a
# run against the mock, trimmed to the lines that matter).
OPENCODE_401 = json.dumps({"type": "error", "sessionID": "ses_1", "error": {"name": "APIError", "data": {
    "message": "Invalid token (request id: 2026120420532700000001mock)", "statusCode": 401, "isRetryable": False}}})
QWEN_401 = json.dumps([{"type": "system", "subtype": "init"}, {
    "type": "result", "subtype": "error_during_execution", "is_error": True,
    "error": {"message": "[API Error: 401 Invalid token (request id: 2026120420534600000001mock)]"}}])
OPENCODE_OK = "\n".join(json.dumps(item) for item in (
    {"type": "step_start", "part": {"type": "step-start"}}, {"type": "text", "part": {"type": "text", "text": "OK"}},
    {"type": "step_finish", "part": {"type": "step-finish", "reason": "stop"}}))
QWEN_OK = json.dumps([{"type": "system", "subtype": "init"}, {"type": "result", "subtype": "success",
                                                              "is_error": False, "result": "OK"}])


def test_opencode_and_qwen_code_answers_and_errors_are_read_from_their_json():
    for name, ok, refused in (("opencode", OPENCODE_OK, OPENCODE_401), ("qwen-code", QWEN_OK, QWEN_401)):
        answered = live.LiveRun(live.BY_NAME[name], "/bin/x", exit_code=0, stdout=ok)
        assert answered.ok and answered.reply == "OK" and live.outcome(answered) == (live.ANSWERED, 200)
        failed = live.LiveRun(live.BY_NAME[name], "/bin/x", exit_code=1, stdout=refused)
        assert live.outcome(failed) == (live.REACHED, 401), failed.error
        assert "Invalid token" in (failed.error or "")


def test_proxy_rules_follow_no_proxy_and_the_scheme():
    env = {"HTTPS_PROXY": "http://127.0.0.1:7890"}
    assert RULES["claude-code"].proxy_for("http://127.0.0.1:3000/api", env) == "http://127.0.0.1:7890"
    assert RULES["codex"].proxy_for("http://127.0.0.1:3000/api", env) is None  # http:// reads HTTP_PROXY
    assert RULES["codex"].proxy_for("https://gw.example/api", env) == "http://127.0.0.1:7890"
    exempt = {**env, "NO_PROXY": "localhost 127.0.0.1"}
    assert RULES["claude-code"].proxy_for("http://127.0.0.1:3000/api", exempt) is None
    assert exempts(".example.com", "api.example.com", None) and not exempts(".example.com", "example.org", None)
    assert exempts("gw:8443", "gw", 8443) and not exempts("gw:8443", "gw", 443)
