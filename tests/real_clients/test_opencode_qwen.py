"""The real OpenCode (opencode-ai) and Qwen Code (@qwen-code/qwen-code), pinned in package.json, run headless by the
runner `taotoken doctor --live` uses, against the mock gateway on loopback in a network namespace with only `lo`.
Three homes each: fresh after `init`; the client's own hand-written config, then `init`; after `config set` moved
the copy. Asserted from the mock's side: the path each client called, the key it sent (masked) and the model.
"""

from __future__ import annotations

import pytest

from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.formats.jsonedit import parse_json
from tests.conftest import SENTINEL_KEY, write
from tests.real_clients.conftest import MOCK_HOST, MODEL, base_env, init, require, run_in_netns

pytestmark = pytest.mark.real_clients

OLD_KEY = "sk-OLDhandWRITTENkey0123456789abcd"
OTHER_MODEL = "claude-sonnet-4-5"  # served by the mock (its default list), over chat completions like any other


def generation(result: dict) -> list[dict]:
    return [r for r in result["records"] if r["endpoint"] in ("messages", "responses", "chat")]


def assert_sent(result: dict, path: str, model: str = MODEL) -> None:
    sent = generation(result)
    assert sent, (result["error"], result["stderr"][-2000:], result["records"])
    assert {(r["method"], r["path"], r["auth_kind"], r["key_masked"], r["model"]) for r in sent} == {
        ("POST", path, "bearer", mask_key(SENTINEL_KEY), model)}, sent
    assert all(r["stream"] and r["status"] == 200 for r in sent)
    assert SENTINEL_KEY not in result["stdout"] + result["stderr"] + (result["error"] or "")


# -- OpenCode ------------------------------------------------------------------------------------------------------

def test_opencode_after_init_answers_through_the_gateway(cli, home, tmp_path):
    require("opencode")
    init(cli, "opencode")
    result = run_in_netns(tmp_path, "opencode", base_env(home), cwd=home)
    assert result["ok"] and result["outcome"] == "answered", result
    assert_sent(result, "/api/v1/chat/completions")
    # what the mock must take: a session title and the answer (either may arrive first), usage asked for, tools
    bodies = [r["body"] for r in generation(result)]
    assert all(b["stream_options"] == {"include_usage": True} for b in bodies) and any(b.get("tools") for b in bodies)


OPENCODE_HAND_WRITTEN = """{
  "$schema": "https://opencode.ai/config.json",
  // my local models, by hand
  "theme": "tokyonight",
  "provider": {
    "ollama": {
      "npm": "@ai-sdk/openai-compatible",
      "options": { "baseURL": "http://127.0.0.1:11434/v1" },
      "models": { "llama3": {} },
    },
  },
  "model": "ollama/llama3",
}
"""


def test_opencode_hand_written_config_keeps_its_own_and_sends_to_the_gateway(cli, home, tmp_path):
    """A hand-written ~/.config/opencode/opencode.json (JSONC: comments, trailing commas) selecting a local ollama:
    init adds the provider and selects it there, every other byte stays."""
    require("opencode")
    config = write(home / ".config/opencode/opencode.json", OPENCODE_HAND_WRITTEN, 0o644)
    init(cli, "opencode")
    text = config.read_text()
    before, after = (parse_json(t, config, allow_comments=True) for t in (OPENCODE_HAND_WRITTEN, text))
    assert after["model"] == "taotoken/gpt-4o-mini" and after["provider"]["ollama"] == before["provider"]["ollama"]
    assert "// my local models, by hand" in text and after["theme"] == "tokyonight"
    assert not (home / ".config/opencode/opencode.jsonc").exists()  # OpenCode writes the file that exists
    result = run_in_netns(tmp_path, "opencode", base_env(home), cwd=home, stop_on_request=True)
    assert_sent(result, "/api/v1/chat/completions")


def test_opencode_follows_config_set(cli, run, home, tmp_path):
    """`config set` moves every copy: OpenCode (run by `taotoken check --client opencode`, the runner's other
    door) calls the new root with the new model."""
    require("opencode")
    init(cli, "opencode")
    for name, value in (("base_url", f"http://{MOCK_HOST}/moved"), ("model", OTHER_MODEL)):
        assert run("config", "set", name, value, "--yes").returncode == 0
    result = run_in_netns(tmp_path, "opencode", base_env(home), cwd=home, taotoken=["check", "--client", "opencode"])
    assert result["returncode"] == 0, result["stdout"] + result["stderr"]
    assert "OpenCode reached the gateway and answered" in result["stdout"]
    assert_sent(result | {"error": None}, "/moved/v1/chat/completions", OTHER_MODEL)


# -- Qwen Code -----------------------------------------------------------------------------------------------------

def test_qwen_code_after_init_answers_and_leaves_its_settings_alone(cli, home, tmp_path):
    require("qwen")
    init(cli, "qwen-code")
    settings = home / ".qwen/settings.json"
    written = settings.read_bytes()
    result = run_in_netns(tmp_path, "qwen-code", base_env(home), cwd=home)
    assert result["ok"] and result["outcome"] == "answered", result
    assert_sent(result, "/api/v1/chat/completions")
    assert all(r["body"]["stream_options"] == {"include_usage": True} and r["body"]["tools"]
               for r in generation(result))
    assert settings.read_bytes() == written  # "$version": 4 is there: Qwen Code has nothing to migrate


QWEN_HAND_WRITTEN = """{
  // Qwen Code settings, by hand (blog advice: a key in security.auth)
  "$version": 4,
  "ui": { "theme": "GitHub" },
  "security": { "auth": { "selectedType": "openai", "apiKey": "OLD_KEY", "baseUrl": "http://127.0.0.1:9/v1" } },
  "modelProviders": {
    "openai": [
      { "id": "qwen3-coder-plus", "baseUrl": "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "envKey": "DASHSCOPE_API_KEY" }
    ]
  },
  "model": { "name": "qwen3-coder-plus" }
}
""".replace("OLD_KEY", OLD_KEY)


def test_qwen_code_hand_written_settings_and_stale_exports_still_reach_the_gateway(cli, home, tmp_path):
    """Hand-written settings (a key in security.auth, a DashScope model) and, in the shell, an old OPENAI_API_KEY and
    OPENAI_BASE_URL: after init the TaoToken entry wins over both, and the user's entries stay."""
    require("qwen")
    settings = write(home / ".qwen/settings.json", QWEN_HAND_WRITTEN)
    init(cli, "qwen-code")
    text = settings.read_text()
    assert "// Qwen Code settings, by hand" in text and '"envKey": "DASHSCOPE_API_KEY"' in text
    env = base_env(home, OPENAI_API_KEY=OLD_KEY, OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_MODEL="gpt-old")
    result = run_in_netns(tmp_path, "qwen-code", env, cwd=home, stop_on_request=True)
    assert_sent(result, "/api/v1/chat/completions")
    assert OLD_KEY not in result["stdout"] + result["stderr"]


def test_qwen_code_follows_config_set(cli, run, home, tmp_path):
    require("qwen")
    init(cli, "qwen-code")
    for name, value in (("base_url", f"http://{MOCK_HOST}/moved"), ("model", OTHER_MODEL)):
        assert run("config", "set", name, value, "--yes").returncode == 0
    result = run_in_netns(tmp_path, "qwen-code", base_env(home), cwd=home, stop_on_request=True)
    assert_sent(result, "/moved/v1/chat/completions", OTHER_MODEL)
