"""The real Gemini CLI and OpenClaw (pinned in package.json) against the mock gateway on loopback, in a network
namespace with only `lo`, run by the runner `taotoken doctor --live` uses. Asserted from the mock's side: the path,
the key header and the model that arrived.

Gemini CLI: a fresh home after `init` (init itself runs inside the namespace: it asks the mock for the Gemini API
before it writes Gemini CLI), then after `config set` moved the copy, and a hand-written ~/.gemini. OpenClaw takes
about 30 s a run on a busy two-core machine (Node start-up, its session database, a 6k-token system prompt), so it
gets the one case that proves the file init writes: a fresh home after init.

The same runs check each client's proxy rule (core/clients/proxy_rules.py) against the real program, at no extra
run: each has a real forwarding proxy beside the mock (tests/proxyserver.py) and proxy variables chosen so that the
rule's answer differs from the other clients' (Gemini CLI sends an http:// gateway through HTTPS_PROXY, ignores
ALL_PROXY and honours NO_PROXY; OpenClaw does not exempt a loopback gateway); the proxy's count says which way the
request went.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients.proxy_rules import RULES
from tests.conftest import SENTINEL_KEY, write
from tests.real_clients.conftest import MOCK_ROOT, MODEL, base_env, init_in_netns, require, run_in_netns

pytestmark = pytest.mark.real_clients

OTHER_MODEL = "claude-sonnet-4-5"


def generation(result: dict, endpoint: str) -> list[dict]:
    return [r for r in result["records"] if r["endpoint"] == endpoint]


FORWARD_PORT = 18767  # the forwarding proxy inside the namespace
PROXY = f"http://127.0.0.1:{FORWARD_PORT}"


def run_client(tmp_path, client: str, home, proxies: dict[str, str], **more) -> dict:
    """One run of `client` with these proxy variables; asserts it went through the proxy exactly when the client's
    rule says so."""
    env = base_env(home, **proxies)
    result = run_in_netns(tmp_path, client, env, cwd=home, forward_proxy_port=FORWARD_PORT, **more)
    assert result["ok"], {k: result[k] for k in ("error", "stdout", "stderr")}
    expected = RULES[client].variable_for(MOCK_ROOT, env)
    assert (result["proxied"] > 0) is (expected is not None), (client, proxies, expected, result["proxied"])
    return result


def test_gemini_cli_after_init_and_after_config_set(tmp_path, home, cli):
    """init (asking the gateway for the Gemini API first) → Gemini CLI sends streamGenerateContent with the key in
    x-goog-api-key, through HTTPS_PROXY although the gateway is http://; `config set model` moves the copy and the
    next run asks for the new model, direct now that NO_PROXY names the gateway."""
    require("gemini")
    (home / ".gemini").mkdir()
    done = init_in_netns(tmp_path, home, "gemini-cli")
    assert done["returncode"] == 0, done["stdout"] + done["stderr"]
    assert [(r["method"], r["path"]) for r in done["records"] if "/v1beta/" in r["path"]] == [
        ("GET", "/api/v1beta/models")]  # init's question: the Gemini API's model list, which generates nothing
    result = run_client(tmp_path, "gemini-cli", home, {"HTTPS_PROXY": PROXY})
    sent = generation(result, "gemini")
    assert [(r["method"], r["path"], r["query"]) for r in sent] == [
        ("POST", f"/api/v1beta/models/{MODEL}:streamGenerateContent", "alt=sse")]
    assert sent[0]["auth_kind"] == "x-goog-api-key" and sent[0]["key_masked"] == mask_key(SENTINEL_KEY)
    assert sent[0]["model"] == MODEL and sent[0]["stream"] is True
    assert result["outcome"] == "answered"
    assert SENTINEL_KEY not in result["stdout"] + result["stderr"]

    moved = cli("config", "set", "model", OTHER_MODEL, "--yes", "--allow-unlisted")
    assert moved.returncode == 0, moved.output
    assert json.loads((home / ".gemini" / "settings.json").read_text())["model"]["name"] == OTHER_MODEL
    result = run_client(tmp_path, "gemini-cli", home, {"HTTPS_PROXY": PROXY, "HTTP_PROXY": PROXY,
                                                        "NO_PROXY": "127.0.0.1"})
    sent = generation(result, "gemini")
    assert [r["path"] for r in sent] == [f"/api/v1beta/models/{OTHER_MODEL}:streamGenerateContent"]
    assert sent[0]["key_masked"] == mask_key(SENTINEL_KEY)


def test_init_leaves_gemini_cli_out_when_the_gateway_does_not_serve_the_gemini_api(tmp_path, home):
    require("gemini")
    (home / ".gemini").mkdir()
    done = init_in_netns(tmp_path, home, "gemini-cli", mock={"gemini_api": False})
    assert done["returncode"] == 5, done["stdout"] + done["stderr"]
    assert "[url.no_gemini_api]" in done["stderr"] and "nothing was written" in done["stderr"]
    assert not (home / ".gemini" / ".env").exists() and not (home / ".gemini" / "settings.json").exists()


def test_gemini_cli_with_its_own_hand_written_files(tmp_path, home):
    """What Gemini CLI's docs tell a user to write: the variables in ~/.gemini/.env (a comment, quotes) and the
    auth type in settings.json (JSON with comments). ALL_PROXY, which Gemini CLI does not read, changes nothing."""
    require("gemini")
    write(home / ".gemini" / ".env", f'# my gateway\nGEMINI_API_KEY="{SENTINEL_KEY}"\n'
                                     f"GOOGLE_GEMINI_BASE_URL={MOCK_ROOT}\n", 0o600)
    write(home / ".gemini" / "settings.json", '{\n  // API key from .env\n  "security": {"auth": {"selectedType": '
                                              f'"gemini-api-key"}}}},\n  "model": {{"name": "{OTHER_MODEL}"}}\n}}\n')
    result = run_client(tmp_path, "gemini-cli", home, {"ALL_PROXY": PROXY})
    sent = generation(result, "gemini")
    assert [r["path"] for r in sent] == [f"/api/v1beta/models/{OTHER_MODEL}:streamGenerateContent"]
    assert {(r["auth_kind"], r["key_masked"]) for r in sent} == {("x-goog-api-key", mask_key(SENTINEL_KEY))}


def test_openclaw_after_init_sends_chat_completions_with_the_key_and_model(tmp_path, home, cli):
    """init → OpenClaw (`agent exec`, one embedded turn) sends chat completions with the key and model, through
    HTTP_PROXY although the gateway is on loopback (no exemption for it)."""
    require("openclaw")
    result = cli("init", "--yes", "--base-url", MOCK_ROOT, "--model", MODEL, "--key-stdin", "--target", "openclaw",
                 input=SENTINEL_KEY)
    assert result.returncode == 0, result.output
    result = run_client(tmp_path, "openclaw", home, {"HTTP_PROXY": PROXY}, timeout_s=120)
    sent = generation(result, "chat")
    assert {(r["method"], r["path"]) for r in sent} == {("POST", "/api/v1/chat/completions")}
    assert {(r["auth_kind"], r["key_masked"], r["model"]) for r in sent} == {
        ("bearer", mask_key(SENTINEL_KEY), MODEL)}
    assert SENTINEL_KEY not in result["stdout"] + result["stderr"]


def test_the_clients_find_this_machines_node_and_openclaw_runs_on_the_pinned_node_24():
    """The pinned Node 24 (package.json, for OpenClaw) links a `node` into node_modules/.bin; the clients' PATH
    holds their commands only, so Codex's and Gemini CLI's launchers run on the node users have, and OpenClaw
    alone is started on Node 24."""
    import os
    import shutil
    import subprocess

    from tests.real_clients.conftest import NODE24, REPO, client_bin

    require("openclaw")
    path = os.pathsep.join([str(client_bin()), os.environ.get("PATH", "")])
    node = shutil.which("node", path=path)
    assert node is None or REPO / "node_modules" not in Path(node).resolve().parents
    assert str(NODE24) in (client_bin() / "openclaw").read_text()
    version = subprocess.run([str(NODE24), "--version"], capture_output=True, text=True, timeout=30).stdout
    assert tuple(int(part) for part in version.strip().lstrip("v").split(".")[:2]) >= (24, 16)
