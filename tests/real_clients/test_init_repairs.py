"""init's repairs for Claude Code, proved with the real Claude Code against the mock gateway (issue 23, item 3): each
trap stops (or misroutes) the real client before `taotoken init`, and the same client reaches the gateway after it.

- a proxy in settings.json's env block and a gateway on loopback: Claude Code does not exempt loopback, so every
  request goes to the proxy (a dead one hangs it until its own timeout); init adds NO_PROXY to the same block;
- CLAUDE_CODE_USE_BEDROCK=1 in the env block: Claude Code talks to Amazon Bedrock and never asks the gateway; init
  removes the switch;
- ANTHROPIC_API_KEY exported in ~/.bashrc (the user's own Anthropic key): Claude Code sends it as X-Api-Key beside
  the Bearer token, to the gateway; init sets it to "" in the env block, which Claude Code treats as unset;
- a proxy exported in ~/.bashrc and a gateway on loopback: Codex, Cline, OpenCode and Qwen Code started from bash go
  to the proxy until env.sh adds the host to NO_PROXY; Claude Code until init adds NO_PROXY to its env block (which
  outranks the shell's).

The "before" settings are what init itself writes plus the trap, as a user's hand edit would leave them. Asserted
from the mock's side (what arrived, with which credentials) and from the recording proxy's.
"""

from __future__ import annotations

import json

import pytest

from taotoken_cli.core.base.masking import mask_key
from tests.conftest import SENTINEL_KEY, write
from tests.real_clients.conftest import MOCK_HOST, base_env, init, require, run_in_netns

pytestmark = pytest.mark.real_clients

PROXY_PORT = 18767
USER_ANTHROPIC_KEY = "sk-ant-api03-USERSownANTHROPICkey0123456789xyz"


def generation(result: dict) -> list[dict]:
    return [r for r in result["records"] if r["endpoint"] == "messages"]


def with_trap(home, **env: str) -> None:
    """settings.json as init wrote it, plus the user's hand edit."""
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["env"].update(env)
    write(settings, json.dumps(data, indent=2) + "\n")


def claude(tmp_path, home, **extra) -> dict:
    return run_in_netns(tmp_path, "claude-code", base_env(home), cwd=home, timeout_s=45, **extra)


def test_a_proxy_in_the_env_block_carries_the_loopback_gateway_until_init_adds_no_proxy(cli, home, tmp_path):
    require("claude")
    init(cli, "claude-code")
    with_trap(home, HTTPS_PROXY=f"http://127.0.0.1:{PROXY_PORT}")
    before = claude(tmp_path, home, proxy_port=PROXY_PORT, stop_on_request=True)
    assert any(MOCK_HOST in hit for hit in before["proxy_hits"]) and not generation(before), before["proxy_hits"]

    repaired = init(cli, "claude-code")
    assert "set env.NO_PROXY = '127.0.0.1'" in " ".join(repaired.output.split())
    env = json.loads((home / ".claude" / "settings.json").read_text())["env"]
    assert env["NO_PROXY"] == "127.0.0.1" and env["HTTPS_PROXY"] == f"http://127.0.0.1:{PROXY_PORT}"  # kept
    after = claude(tmp_path, home, proxy_port=PROXY_PORT)
    assert after["ok"] and after["outcome"] == "answered", after
    assert not [hit for hit in after["proxy_hits"] if MOCK_HOST in hit], after["proxy_hits"]
    assert [r["key_masked"] for r in generation(after)] == [mask_key(SENTINEL_KEY)]


def test_bedrock_switch_in_the_env_block_keeps_claude_code_off_the_gateway_until_init_removes_it(cli, home,
                                                                                             tmp_path):
    require("claude")
    init(cli, "claude-code")
    with_trap(home, CLAUDE_CODE_USE_BEDROCK="1")
    before = claude(tmp_path, home)
    assert not before["ok"] and not generation(before), before["records"]
    assert "AWS" in (before["error"] or "") + before["stdout"] + before["stderr"]  # it went looking for Bedrock

    repaired = init(cli, "claude-code")
    assert "removed env.CLAUDE_CODE_USE_BEDROCK" in " ".join(repaired.output.split())
    assert "CLAUDE_CODE_USE_BEDROCK" not in json.loads((home / ".claude" / "settings.json").read_text())["env"]
    after = claude(tmp_path, home)
    assert after["ok"] and [r["key_masked"] for r in generation(after)] == [mask_key(SENTINEL_KEY)], after


def test_an_anthropic_key_exported_in_bashrc_reaches_the_gateway_until_init_hides_it(cli, home, tmp_path):
    require("claude")
    init(cli, "claude-code")
    bashrc = write(home / ".bashrc", f"export ANTHROPIC_API_KEY={USER_ANTHROPIC_KEY}\n", 0o644)
    terminal = {"SHELL": "/bin/bash"}

    def claude_from_bash() -> dict:
        return run_in_netns(tmp_path, "claude-code", base_env(home, **terminal), cwd=home, use_shell=True,
                            timeout_s=45)

    before = claude_from_bash()
    sent = generation(before)
    assert sent and {r["headers"].get("x-api-key") for r in sent} == {mask_key(USER_ANTHROPIC_KEY)}, sent

    repaired = init(cli, "claude-code")
    assert "ANTHROPIC_API_KEY is exported in ~/.bashrc:1" in " ".join(repaired.output.split())
    assert bashrc.read_text() == f"export ANTHROPIC_API_KEY={USER_ANTHROPIC_KEY}\n"  # the user's file untouched
    after = claude_from_bash()
    sent = generation(after)
    assert after["ok"] and sent and all("x-api-key" not in r["headers"] for r in sent), sent
    assert {(r["auth_kind"], r["key_masked"]) for r in sent} == {("bearer", mask_key(SENTINEL_KEY))}
    assert USER_ANTHROPIC_KEY not in after["stdout"] + after["stderr"] + repaired.output


# ------------------------- the clients started from a shell (Codex, Cline, OpenCode, Qwen Code): a shell proxy and a
# gateway on this machine (Gemini CLI and OpenClaw take the shell's proxy by the same rules; their runs are slow:
# test_real_gemini_openclaw.py)

def _without_exemption(env_sh) -> None:
    """env.sh as init wrote it before it exempted a loopback gateway: the two OPENAI_* exports only."""
    text = env_sh.read_text()
    write(env_sh, text[:text.index("# The gateway is on this machine")], 0o600)


COMMANDS = {"codex": "codex", "cline": "cline", "opencode": "opencode", "qwen-code": "qwen"}


@pytest.mark.parametrize("client", list(COMMANDS))
def test_a_shell_proxy_carries_the_loopback_gateway_unless_env_sh_exempts_it(cli, home, tmp_path, client):
    """HTTP_PROXY exported in ~/.bashrc (a local proxy, as Clash users have): each client started from bash sends its
    requests for the gateway on 127.0.0.1 to it (its real rule: loopback is not exempt). init says so, and env.sh
    adds the host to NO_PROXY; the same client then goes direct. The control run, with env.sh's exemption cut out,
    goes to the proxy."""
    from taotoken_cli.core.clients import CLIENTS

    require(COMMANDS[client])
    write(home / ".bashrc", f"export HTTP_PROXY=http://127.0.0.1:{PROXY_PORT}\nexport NO_PROXY=corp.example\n", 0o644)
    result = init(cli, client, "shell")
    label = CLIENTS[client].LABEL
    assert (f"{label}: HTTP_PROXY=http://127.0.0.1:{PROXY_PORT} (~/.bashrc:1) would carry its requests to the "
            "gateway on this machine") in " ".join(result.output.split()), result.output
    env_sh = home / ".config" / "taotoken" / "env.sh"

    def from_bash(**extra) -> dict:
        return run_in_netns(tmp_path, client, base_env(home, SHELL="/bin/bash"), cwd=home, use_shell=True,
                            proxy_port=PROXY_PORT, timeout_s=45, **extra)

    after = from_bash()
    assert after["ok"] and after["outcome"] == "answered", after
    assert not [hit for hit in after["proxy_hits"] if MOCK_HOST in hit], after["proxy_hits"]
    assert after["env"].get("NO_PROXY") == "corp.example,127.0.0.1", after["env"]  # the user's entry kept

    _without_exemption(env_sh)
    before = from_bash(stop_on_request=True)
    assert any(MOCK_HOST in hit for hit in before["proxy_hits"]), before["proxy_hits"]


def test_a_shell_proxy_for_claude_code_is_exempted_in_its_env_block(cli, home, tmp_path):
    """HTTPS_PROXY exported in ~/.bashrc only (the shell init runs in does not have it): Claude Code started from a new
    bash takes it, and its rule does not exempt loopback. init puts NO_PROXY (the terminal's entries kept) in the env
    block, which outranks the shell: the real Claude Code then goes direct. The control run, without that entry,
    goes to the proxy."""
    require("claude")
    write(home / ".bashrc", f"export HTTPS_PROXY=http://127.0.0.1:{PROXY_PORT}\nexport NO_PROXY=corp.example\n",
          0o644)
    result = init(cli, "claude-code")
    assert "set env.NO_PROXY = 'corp.example,127.0.0.1'" in " ".join(result.output.split()), result.output

    def from_bash(**extra) -> dict:
        return run_in_netns(tmp_path, "claude-code", base_env(home, SHELL="/bin/bash"), cwd=home, use_shell=True,
                            proxy_port=PROXY_PORT, timeout_s=45, **extra)

    after = from_bash()
    assert after["ok"] and after["outcome"] == "answered", after
    assert not [hit for hit in after["proxy_hits"] if MOCK_HOST in hit], after["proxy_hits"]
    assert [r["key_masked"] for r in generation(after)] == [mask_key(SENTINEL_KEY)]

    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    del data["env"]["NO_PROXY"]
    write(settings, json.dumps(data, indent=2) + "\n")
    before = from_bash(stop_on_request=True)
    assert any(MOCK_HOST in hit for hit in before["proxy_hits"]) and not generation(before), before["proxy_hits"]
