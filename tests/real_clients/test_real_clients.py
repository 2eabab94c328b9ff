"""The real Claude Code, Codex and Cline, configured by the real `taotoken init`, run headless by the runner that
`taotoken doctor --live` uses, against the mock gateway on loopback (no other network). Asserted from the mock's
side: the path each client called, the key header it sent (masked) and the model that arrived.
"""

from __future__ import annotations

import pytest

from taotoken_cli.core.base.masking import mask_key
from tests.conftest import SENTINEL_KEY, write
from tests.real_clients.conftest import MODEL, NODE_BIN, base_env, init, require, run_in_netns

pytestmark = pytest.mark.real_clients

OLD_KEY = "sk-OLDkeyFROMbashrc0123456789abcdEF"


def generation(result: dict) -> list[dict]:
    return [r for r in result["records"] if r["endpoint"] in ("messages", "responses", "chat")]


def test_claude_code_sends_messages_with_the_token_and_model(cli, home, tmp_path):
    require("claude")
    init(cli, "claude-code")
    result = run_in_netns(tmp_path, "claude-code", base_env(home), cwd=home)
    assert result["ok"], result
    sent = generation(result)
    assert [(r["method"], r["path"]) for r in sent] == [("POST", "/api/v1/messages")]
    assert sent[0]["auth_kind"] == "bearer" and sent[0]["key_masked"] == mask_key(SENTINEL_KEY)
    assert sent[0]["model"] == MODEL and sent[0]["stream"] is True
    assert result["outcome"] == "answered"
    assert SENTINEL_KEY not in result["stdout"] + result["stderr"]


def test_codex_started_from_bash_sends_responses_with_the_exported_key(cli, home, tmp_path):
    """init's shell target writes env.sh and sources it from ~/.bashrc; Codex started through bash -i gets the
    key from there, as in a new terminal."""
    require("codex")
    init(cli, "codex", "shell")
    assert "env.sh" in (home / ".bashrc").read_text()
    result = run_in_netns(tmp_path, "codex", base_env(home, SHELL="/bin/bash"), cwd=home, use_shell=True)
    assert result["ok"], result
    assert result["shell"] == "/bin/bash"
    sent = generation(result)
    assert [(r["method"], r["path"]) for r in sent] == [("POST", "/api/v1/responses")]
    assert sent[0]["auth_kind"] == "bearer" and sent[0]["key_masked"] == mask_key(SENTINEL_KEY)
    assert sent[0]["model"] == MODEL and sent[0]["stream"] is True


def test_codex_sends_the_stale_key_a_later_bashrc_line_exports(cli, home, tmp_path):
    """The issue's case: an old OPENAI_API_KEY exported in ~/.bashrc after init's line wins in every terminal;
    Codex sends it and the gateway answers 401. The runner reports it as reached, HTTP 401."""
    require("codex")
    init(cli, "codex", "shell")
    rc = home / ".bashrc"
    write(rc, rc.read_text() + f"export OPENAI_API_KEY={OLD_KEY}\n", 0o644)
    result = run_in_netns(tmp_path, "codex", base_env(home, SHELL="/bin/bash"), cwd=home, use_shell=True)
    sent = generation(result)
    assert sent and {r["key_masked"] for r in sent} == {mask_key(OLD_KEY)}
    assert all(r["status"] == 401 and "wrong-key" in r["flags"] for r in sent)
    assert (result["outcome"], result["status"]) == ("reached", 401), result
    assert OLD_KEY not in result["stdout"] + result["stderr"] + (result["error"] or "")

    # init again: it names ~/.bashrc and that line, and comments it out; the same Codex then sends TaoToken's key
    number = len(rc.read_text().splitlines())
    repaired = init(cli, "codex", "shell")
    assert f"commented out ~/.bashrc:{number} (OPENAI_API_KEY={mask_key(OLD_KEY)})" in " ".join(
        repaired.output.split()), repaired.output
    after = run_in_netns(tmp_path, "codex", base_env(home, SHELL="/bin/bash"), cwd=home, use_shell=True)
    assert after["ok"] and after["outcome"] == "answered", after
    assert {r["key_masked"] for r in generation(after)} == {mask_key(SENTINEL_KEY)}


def test_cline_sends_chat_completions_with_the_key_and_model(cli, home, tmp_path):
    require("cline")
    init(cli, "cline")
    result = run_in_netns(tmp_path, "cline", base_env(home), cwd=home)
    assert result["ok"], result
    sent = generation(result)
    assert {(r["method"], r["path"]) for r in sent} == {("POST", "/api/v1/chat/completions")}
    assert {(r["auth_kind"], r["key_masked"], r["model"]) for r in sent} == {
        ("bearer", mask_key(SENTINEL_KEY), MODEL)}


def test_doctor_live_ties_codexs_401_to_the_bashrc_line_that_exports_the_old_key(cli, home, tmp_path):
    """doctor --live, typed in a terminal (bash -i: ~/.bashrc ran): Codex reached the gateway and got 401, with the
    key it sent (masked) and env.openai's failure naming ~/.bashrc and its line as the cause."""
    require("codex")
    init(cli, "codex", "shell")
    rc = home / ".bashrc"
    lines = rc.read_text().splitlines()
    write(rc, "\n".join([*lines, f"export OPENAI_API_KEY={OLD_KEY}"]) + "\n", 0o644)
    line = len(lines) + 1
    only_codex = tmp_path / "bin"  # the other clients are not installed on this PATH: doctor skips them
    only_codex.mkdir()
    (only_codex / "codex").symlink_to(NODE_BIN / "codex")
    result = run_in_netns(tmp_path, "codex", base_env(home, SHELL="/bin/bash", COLUMNS="1000", NO_COLOR="1"),
                          cwd=home, use_shell=True, taotoken=["doctor", "--live", "-v"], timeout_s=120,
                          extra_path=str(only_codex))
    out = result["stdout"] + result["stderr"]
    assert "each sends one small request to the configured gateway" in out
    assert "Codex reached the gateway, which answered HTTP 401" in out
    assert f"key it used: {mask_key(OLD_KEY)} ($OPENAI_API_KEY)" in out
    assert f"exported in ~/.bashrc:{line}" in out and "explained by env.openai" in out
    assert f"delete the line ~/.bashrc:{line}" in out
    assert OLD_KEY not in out and SENTINEL_KEY not in out
    assert result["returncode"] == 1
    # doctor's own gateway probes send the configured key; Codex's requests (its user agent) the old one
    sent = [r for r in generation(result) if "codex" in r["headers"].get("user-agent", "").lower()]
    assert sent and {r["key_masked"] for r in sent} == {mask_key(OLD_KEY)}
