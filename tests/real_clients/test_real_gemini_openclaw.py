"""The real Gemini CLI and OpenClaw (pinned in package.json) against the mock gateway on loopback, in a network
namespace with only `lo`, run by the runner `taotoken doctor --live` uses. Asserted from the mock's side: the path,
the key header and the model that arrived.

Gemini CLI: a fresh home after `init` (init itself runs inside the namespace: it probes the mock for the Gemini API
before it writes Gemini CLI), a hand-written ~/.gemini, and after `config set` moved the copy. OpenClaw takes about
30 s a run on a busy two-core machine (Node start-up, its session database, a 6k-token system prompt), so it gets
the one case that proves the file init writes: a fresh home after init.
"""

from __future__ import annotations

import json

import pytest

from taotoken_cli.core.base.masking import mask_key
from tests.conftest import SENTINEL_KEY, write
from tests.real_clients.conftest import MOCK_ROOT, MODEL, base_env, require, run_in_netns

pytestmark = pytest.mark.real_clients

OTHER_MODEL = "claude-sonnet-4-5"


def generation(result: dict, endpoint: str) -> list[dict]:
    return [r for r in result["records"] if r["endpoint"] == endpoint]


def init_in_netns(tmp_path, home, target: str, *, mock: dict | None = None) -> dict:
    """`taotoken init --target TARGET` inside a namespace whose mock answers init's own requests (the Gemini API
    probe); the key comes from TAOTOKEN_API_KEY, as from a user's environment."""
    env = base_env(home, TAOTOKEN_API_KEY=SENTINEL_KEY, COLUMNS="200", NO_COLOR="1")
    return run_in_netns(tmp_path, f"init-{target}", env, cwd=home, mock=mock,
                        taotoken=["init", "--yes", "--base-url", MOCK_ROOT, "--model", MODEL, "--target", target])


def test_gemini_cli_after_init_sends_generate_content_with_the_goog_key(tmp_path, home):
    require("gemini")
    (home / ".gemini").mkdir()
    done = init_in_netns(tmp_path, home, "gemini-cli")
    assert done["returncode"] == 0, done["stdout"] + done["stderr"]
    assert [r["path"] for r in done["records"] if r["endpoint"] == "gemini"] == [
        f"/api/v1beta/models/{MODEL}:generateContent"]  # init's probe
    result = run_in_netns(tmp_path, "gemini-cli", base_env(home), cwd=home)
    assert result["ok"], result
    sent = generation(result, "gemini")
    assert [(r["method"], r["path"], r["query"]) for r in sent] == [
        ("POST", f"/api/v1beta/models/{MODEL}:streamGenerateContent", "alt=sse")]
    assert sent[0]["auth_kind"] == "x-goog-api-key" and sent[0]["key_masked"] == mask_key(SENTINEL_KEY)
    assert sent[0]["model"] == MODEL and sent[0]["stream"] is True
    assert result["outcome"] == "answered"
    assert SENTINEL_KEY not in result["stdout"] + result["stderr"]


def test_init_leaves_gemini_cli_out_when_the_gateway_does_not_serve_the_gemini_api(tmp_path, home):
    require("gemini")
    (home / ".gemini").mkdir()
    done = init_in_netns(tmp_path, home, "gemini-cli", mock={"gemini_api": False})
    assert done["returncode"] == 5, done["stdout"] + done["stderr"]
    assert "[url.no_gemini_api]" in done["stderr"] and "nothing was written" in done["stderr"]
    assert not (home / ".gemini" / ".env").exists() and not (home / ".gemini" / "settings.json").exists()


def test_gemini_cli_with_its_own_hand_written_files(tmp_path, home):
    """What Gemini CLI's docs tell a user to write: the variables in ~/.gemini/.env (a comment, quotes) and the
    auth type in settings.json (JSON with comments)."""
    require("gemini")
    write(home / ".gemini" / ".env", f'# my gateway\nGEMINI_API_KEY="{SENTINEL_KEY}"\n'
                                     f"GOOGLE_GEMINI_BASE_URL={MOCK_ROOT}\n", 0o600)
    write(home / ".gemini" / "settings.json", '{\n  // API key from .env\n  "security": {"auth": {"selectedType": '
                                              f'"gemini-api-key"}}}},\n  "model": {{"name": "{OTHER_MODEL}"}}\n}}\n')
    result = run_in_netns(tmp_path, "gemini-cli", base_env(home), cwd=home)
    assert result["ok"], result
    sent = generation(result, "gemini")
    assert [r["path"] for r in sent] == [f"/api/v1beta/models/{OTHER_MODEL}:streamGenerateContent"]
    assert {(r["auth_kind"], r["key_masked"]) for r in sent} == {("x-goog-api-key", mask_key(SENTINEL_KEY))}


def test_gemini_cli_follows_config_set(tmp_path, home, cli):
    """init wrote Gemini CLI; `config set model` moves the copy (settings.json model.name) and the next run asks
    for the new model."""
    require("gemini")
    (home / ".gemini").mkdir()
    assert init_in_netns(tmp_path, home, "gemini-cli")["returncode"] == 0
    moved = cli("config", "set", "model", OTHER_MODEL, "--yes")
    assert moved.returncode == 0, moved.output
    assert json.loads((home / ".gemini" / "settings.json").read_text())["model"]["name"] == OTHER_MODEL
    result = run_in_netns(tmp_path, "gemini-cli", base_env(home), cwd=home)
    assert result["ok"], result
    sent = generation(result, "gemini")
    assert [r["path"] for r in sent] == [f"/api/v1beta/models/{OTHER_MODEL}:streamGenerateContent"]
    assert sent[0]["key_masked"] == mask_key(SENTINEL_KEY)


def test_openclaw_after_init_sends_chat_completions_with_the_key_and_model(tmp_path, home, cli):
    require("openclaw")
    result = cli("init", "--yes", "--base-url", MOCK_ROOT, "--model", MODEL, "--key-stdin", "--target", "openclaw",
                 input=SENTINEL_KEY)
    assert result.returncode == 0, result.output
    result = run_in_netns(tmp_path, "openclaw", base_env(home), cwd=home, timeout_s=120)
    assert result["ok"], {k: result[k] for k in ("error", "stdout", "stderr")}
    sent = generation(result, "chat")
    assert {(r["method"], r["path"]) for r in sent} == {("POST", "/api/v1/chat/completions")}
    assert {(r["auth_kind"], r["key_masked"], r["model"]) for r in sent} == {
        ("bearer", mask_key(SENTINEL_KEY), MODEL)}
    assert SENTINEL_KEY not in result["stdout"] + result["stderr"]
