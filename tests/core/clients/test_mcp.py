"""MCP server definitions that carry the triple: read from every client file that holds them, checked by doctor,
kept in step by `init --target mcp` and the one-truth sync — only servers pointing at TaoToken, others untouched.

Real parts: real files in a temporary HOME (Claude Code's ~/.claude.json and a repository's .mcp.json, Codex's
config.toml, Cline's 4.x file and the editors' pre-4.0 files), a real `git` repository, the real CLI (in-process
`run`, or a subprocess `cli`), and the mock gateway on 127.0.0.1 for the model list.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from taotoken_cli.core.clients import mcp
from taotoken_cli.core.clients.base import Machine
from taotoken_cli.core.clients.envvars import ELSEWHERE, MIXED, NO_URL, TAOTOKEN, taotoken_hosts
from tests.conftest import SENTINEL_KEY, flat

ROOT = "https://taotoken.net/api"
MODEL = "gpt-4o-mini"
OLD_KEY = "sk-OLDoldOLDold0123456789abcdefQRST"
OTHER_KEY = "sk-OTHERotherOTHER0123456789abcdUVW"  # another service's key, in a server pointing elsewhere
SECRETS = (SENTINEL_KEY, OLD_KEY, OTHER_KEY)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def claude_json(root: str) -> dict:
    return {
        "numStartups": 7,
        "hasCompletedOnboarding": True,
        "mcpServers": {
            "tt-openai": {"type": "stdio", "command": "npx", "args": ["-y", "tt-mcp"],
                          "env": {"OPENAI_BASE_URL": root, "OPENAI_API_KEY": OLD_KEY, "OPENAI_MODEL": MODEL}},
            "github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_notagatewayvariable"}},
            "openai-direct": {"command": "direct-mcp",
                              "env": {"OPENAI_BASE_URL": "https://api.openai.com/v1", "OPENAI_API_KEY": OTHER_KEY}},
            "from-env": {"command": "ref-mcp", "env": {"OPENAI_BASE_URL": root + "/v1",
                                                       "OPENAI_API_KEY": "${TAOTOKEN_API_KEY}"}},
        },
        "projects": {"/work/app": {"allowedTools": [], "mcpServers": {
            "tt-project": {"command": "p", "env": {"TAOTOKEN_API_KEY": OLD_KEY, "TAOTOKEN_MODEL": "old-model"}}}}},
    }


def codex_toml(root: str, ollama_port: int = 11434) -> str:
    return f"""# Codex config, written by hand
model = "o3"

[mcp_servers.docs]  # the docs search server
command = "docs-mcp"
args = ["--port", "0"]
env = {{ ANTHROPIC_BASE_URL = "{root}/v1", ANTHROPIC_AUTH_TOKEN = "{OLD_KEY}" }}

[mcp_servers.local]
command = "local-mcp"

[mcp_servers.local.env]
OPENAI_BASE_URL = "http://127.0.0.1:{ollama_port}/v1"  # ollama on this machine
OPENAI_API_KEY = "ollama"
"""


def cline_json(env: dict) -> str:
    return json.dumps({"mcpServers": {"summarizer": {"command": "node", "args": ["summarize.js"], "env": env,
                                                     "disabled": False, "autoApprove": []}}}, indent=2) + "\n"


def seed(home: Path, root: str = ROOT) -> dict[str, Path]:
    """Every kind of MCP file, as the clients write them (2-space JSON, hand-written TOML)."""
    files = {
        "claude": home / ".claude.json",
        "codex": home / ".codex" / "config.toml",
        "cline": home / ".cline" / "data" / "settings" / "cline_mcp_settings.json",
        "vscode": home / ".config" / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev" / "settings"
        / "cline_mcp_settings.json",
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    files["claude"].write_text(json.dumps(claude_json(root), indent=2) + "\n")
    files["codex"].write_text(codex_toml(root))
    files["cline"].write_text(cline_json({"TAOTOKEN_BASE_URL": root + "/v1", "TAOTOKEN_API_KEY": OLD_KEY,
                                          "TAOTOKEN_MODEL": "old-model"}))
    files["vscode"].write_text(cline_json({"OPENAI_BASE_URL": "https://openrouter.ai/api/v1",
                                           "OPENAI_API_KEY": OTHER_KEY}))
    return files


def triple_env(monkeypatch: pytest.MonkeyPatch, root: str = ROOT, model: str = MODEL) -> None:
    monkeypatch.setenv("TAOTOKEN_BASE_URL", root)
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("TAOTOKEN_MODEL", model)


def doctor(run, *checks: str, offline: bool = True) -> dict[str, dict]:
    result = run("doctor", "--json", *(["--offline"] if offline else []), *(a for c in checks for a in ("--check", c)))
    for secret in SECRETS:
        result.assert_clean(secret)
    return {item["id"]: item for item in json.loads(result.stdout)["checks"]}


def clean(result, *secrets: str):
    for secret in secrets or SECRETS:
        result.assert_clean(secret)
    return result


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


# -- reading ------------------------------------------------------------------------------------------

def test_every_client_file_is_read_and_each_server_classified(home: Path) -> None:
    files = seed(home)
    mac = home / "Library" / "Application Support" / "Cursor" / "User" / "globalStorage" / "saoudrizwan.claude-dev" \
        / "settings" / "cline_mcp_settings.json"
    windows = home / "AppData" / "Roaming" / "Windsurf" / "User" / "globalStorage" / "saoudrizwan.claude-dev" \
        / "settings" / "cline_mcp_settings.json"
    moved = home / "elsewhere" / "mcp.json"
    for path, name in ((mac, "cursor-mac"), (windows, "windsurf-win"), (moved, "moved")):
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"mcpServers": {name: {"env": {"TAOTOKEN_API_KEY": OLD_KEY}}}}))
    env = {**os.environ, "APPDATA": str(home / "AppData" / "Roaming"), "CLINE_MCP_SETTINGS_PATH": str(moved)}
    found = mcp.scan(Machine.of(env, home), taotoken_hosts(ROOT))

    points = {server.short: server.copy.points for server in found.servers}
    assert points == {"tt-openai": TAOTOKEN, "openai-direct": ELSEWHERE, "from-env": TAOTOKEN,
                      "tt-project (project /work/app)": TAOTOKEN, "docs": TAOTOKEN, "local": ELSEWHERE,
                      "summarizer": ELSEWHERE, "cursor-mac": TAOTOKEN,
                      "windsurf-win": TAOTOKEN, "moved": TAOTOKEN}, points
    # CLINE_MCP_SETTINGS_PATH replaces the 4.x file; the editors' pre-4.0 files are read on every OS layout
    read = {mcp_file.path for mcp_file, _ in found.files}
    assert files["cline"] not in read and {moved, mac, windows, files["vscode"], files["claude"]} <= read
    by_name = {server.short: server for server in found.servers}
    assert by_name["from-env"].copy.references == {"OPENAI_API_KEY": "${TAOTOKEN_API_KEY}"}
    assert "github" not in by_name  # no gateway variable: not listed


def test_same_host_means_same_host_and_port_and_a_taotoken_variable_counts() -> None:
    from taotoken_cli.core.clients.envvars import read_env

    hosts = taotoken_hosts("http://127.0.0.1:8080/api")
    assert read_env({"OPENAI_BASE_URL": "http://127.0.0.1:8080/api/v1"}, hosts).points == TAOTOKEN
    assert read_env({"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}, hosts).points == ELSEWHERE
    assert read_env({"TAOTOKEN_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}, hosts).points == MIXED
    assert read_env({"TAOTOKEN_MODEL": "m"}, hosts).points == TAOTOKEN
    assert read_env({"OPENAI_API_KEY": "k"}, hosts).points == NO_URL
    assert read_env({"PATH": "/bin"}, hosts) is None
    assert taotoken_hosts("https://taotoken.net/api") == {"taotoken.net:443"}


# -- doctor ---------------------------------------------------------------------------------------------

def test_doctor_lists_the_servers_and_reports_url_forms_and_keys(run, home, monkeypatch) -> None:
    seed(home)
    triple_env(monkeypatch)
    checks = doctor(run, "mcp")
    servers = checks["mcp.servers"]
    assert servers["status"] == "ok", servers
    assert "8 servers carry gateway variables: 5 at TaoToken, 3 elsewhere" in servers["message"], servers
    assert any("openai-direct" in d and "points at api.openai.com; left alone" in d for d in servers["details"])
    assert any("from-env" in d and "takes OPENAI_API_KEY from the environment" in d for d in servers["details"])

    urls = checks["mcp.base_url"]
    assert urls["status"] == "fail"
    problems = [urls["message"], *urls["details"]]
    assert any("tt-openai" in p and f"OPENAI_BASE_URL = '{ROOT}' should be {ROOT}/v1: the OpenAI SDKs append "
               "/chat/completions" in p for p in problems), problems
    assert any("docs" in p and f"should be {ROOT}: the Anthropic SDK appends /v1/messages" in p for p in problems)
    assert not any("openrouter" in p for p in problems)  # points elsewhere: not judged
    assert f"set OPENAI_BASE_URL = {ROOT}/v1 in the env of MCP server tt-openai ({home}/.claude.json)" in urls["fixes"]

    keys = checks["mcp.key"]
    assert keys["status"] == "warn"
    assert any("tt-openai" in p and "OPENAI_API_KEY = sk-OL…QRST differs from taotoken's key sk-SE…WXYZ" in p
               for p in [keys["message"], *keys["details"]]), keys
    assert keys["fixes"][0].startswith("taotoken init --target mcp")  # not recorded yet
    assert checks["mcp.model"]["status"] == "skipped" and "--offline" in checks["mcp.model"]["message"]


def test_a_key_with_a_newline_fails_and_the_taotoken_key_sent_elsewhere_warns(run, home, monkeypatch) -> None:
    path = home / ".claude.json"
    path.write_text(json.dumps({"mcpServers": {
        "tt": {"env": {"ANTHROPIC_BASE_URL": ROOT, "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY + "\n"}},
        "leaky": {"env": {"OPENAI_API_KEY": SENTINEL_KEY}}}}))
    triple_env(monkeypatch)
    keys = doctor(run, "mcp.key")["mcp.key"]
    assert keys["status"] == "fail"
    assert "ANTHROPIC_AUTH_TOKEN has whitespace, a newline or quotes around the key" in keys["message"]
    assert any("leaky" in d and "sends taotoken's key sk-SE…WXYZ to its SDK's default host" in d
               for d in keys["details"]), keys


@needs_git
def test_a_key_in_a_tracked_mcp_json_is_a_leak(run, home, monkeypatch) -> None:
    repo = home / "app"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"tt": {"env": {"OPENAI_BASE_URL": ROOT + "/v1",
                                                                               "OPENAI_API_KEY": SENTINEL_KEY}}}}))
    git(repo, "add", ".mcp.json")
    monkeypatch.chdir(repo)
    triple_env(monkeypatch)
    keys = doctor(run, "mcp.key")["mcp.key"]
    assert keys["status"] == "fail" and "in a file git tracks: a committed key is a leak" in keys["message"], keys
    assert 'replace each value by a reference: "OPENAI_API_KEY": "${OPENAI_API_KEY}" (Claude Code expands it from ' \
           "the environment)" in keys["fixes"]
    assert any("rotate the key" in fix for fix in keys["fixes"])


def test_models_are_checked_against_the_gateway_list(run, home, monkeypatch, mock_gateway) -> None:
    mock = mock_gateway(models=(MODEL, "gpt-4.1"))
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {
        "typo": {"env": {"OPENAI_BASE_URL": mock.url + "/v1", "OPENAI_API_KEY": SENTINEL_KEY,
                         "OPENAI_MODEL": "gpt-4o-mni"}},
        "fine": {"env": {"TAOTOKEN_MODEL": "gpt-4.1"}}}}))
    triple_env(monkeypatch, mock.url)
    model = doctor(run, "mcp.model", offline=False)["mcp.model"]
    assert model["status"] == "fail", model
    assert "typo" in model["message"] and "OPENAI_MODEL = 'gpt-4o-mni' is not among the 2 models your key can use; " \
           "did you mean 'gpt-4o-mini'?" in model["message"]
    assert "available: gpt-4o-mini, gpt-4.1" in model["details"]


def test_a_file_that_does_not_parse_is_named_and_the_rest_still_read(run, home, monkeypatch) -> None:
    files = seed(home)
    files["vscode"].write_text('{"mcpServers": {"x": }')
    triple_env(monkeypatch)
    servers = doctor(run, "mcp.servers")["mcp.servers"]
    assert servers["status"] == "warn" and f"{files['vscode']}:1:" in servers["message"], servers
    assert "its MCP servers are not checked" in servers["message"]


def test_one_server_all_at_taotoken(run, home, monkeypatch) -> None:
    (home / ".mcp.json").write_text(json.dumps({"mcpServers": {"gw": {"command": "x", "env": {
        "OPENAI_BASE_URL": ROOT + "/v1", "OPENAI_MODEL": MODEL}}}}))
    triple_env(monkeypatch)
    monkeypatch.chdir(home)
    servers = doctor(run, "mcp.servers")["mcp.servers"]
    assert servers["status"] == "ok", servers
    assert servers["message"] == "1 server carries gateway variables, pointing at TaoToken"


# -- sync -----------------------------------------------------------------------------------------------

def init_mcp(run, *extra: str, root: str = ROOT):
    return clean(run("init", "--allow-unlisted",
                     "--target", "mcp", "--yes", "--base-url", root, "--model", MODEL, "--key-stdin", *extra,
                     input=SENTINEL_KEY))


def test_init_updates_only_the_servers_pointing_at_taotoken_and_undo_restores(run, home) -> None:
    files = seed(home)
    before = {name: path.read_bytes() for name, path in files.items()}
    dry = init_mcp(run, "--dry-run")  # masked diffs: the new key, the old one and the other service's key
    assert "sk-OL…QRST" in dry.stdout and "dry run: nothing was written" in dry.stdout, dry.stdout
    assert {name: path.read_bytes() for name, path in files.items()} == before
    result = init_mcp(run)
    assert result.returncode == 0, result.output
    assert "MCP server openai-direct (Claude Code:" in result.stdout and "points at api.openai.com: left alone" in \
        flat(result.stdout)

    claude = json.loads(files["claude"].read_text())
    assert claude["mcpServers"]["tt-openai"]["env"] == {"OPENAI_BASE_URL": ROOT + "/v1", "OPENAI_API_KEY": SENTINEL_KEY,
                                                        "OPENAI_MODEL": MODEL}
    assert claude["projects"]["/work/app"]["mcpServers"]["tt-project"]["env"] == {
        "TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_MODEL": MODEL}
    original = claude_json(ROOT)
    for name in ("openai-direct", "github", "from-env"):  # elsewhere, no gateway variable, a ${reference}
        assert claude["mcpServers"][name] == original["mcpServers"][name]
    assert {k: v for k, v in claude.items() if k not in ("mcpServers", "projects")} == \
        {"numStartups": 7, "hasCompletedOnboarding": True}

    codex = files["codex"].read_text()
    assert codex == codex_toml(ROOT).replace(f'"{ROOT}/v1"', f'"{ROOT}"').replace(OLD_KEY, SENTINEL_KEY)
    assert json.loads(files["cline"].read_text())["mcpServers"]["summarizer"]["env"] == {
        "TAOTOKEN_BASE_URL": ROOT, "TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_MODEL": MODEL}
    assert files["vscode"].read_bytes() == before["vscode"]  # only a server pointing elsewhere: byte for byte
    for name in ("claude", "codex", "cline"):
        assert files[name].stat().st_mode & 0o077 == 0, name  # they hold the key now

    assert clean(run("init", "--undo")).returncode == 0
    assert {name: path.read_bytes() for name, path in files.items()} == before


def test_a_key_change_reaches_the_servers_and_a_base_url_change_moves_them(run, home, monkeypatch) -> None:
    files = seed(home)
    assert init_mcp(run).returncode == 0
    new_key = "sk-ROTATEDrotated0123456789abcdEFGH"
    result = clean(run("config", "set", "api_key", "-", "--yes", input=new_key), new_key, SENTINEL_KEY)
    assert result.returncode == 0, result.output
    assert json.loads(files["cline"].read_text())["mcpServers"]["summarizer"]["env"]["TAOTOKEN_API_KEY"] == new_key

    moved = "https://relay.example.com/api"
    monkeypatch.chdir(home.parent)  # from anywhere
    result = clean(run("config", "set", "base_url", moved, "--yes"), new_key)
    assert result.returncode == 0, result.output
    claude = json.loads(files["claude"].read_text())["mcpServers"]
    assert claude["tt-openai"]["env"]["OPENAI_BASE_URL"] == moved + "/v1"  # was on the recorded TaoToken host
    assert claude["openai-direct"]["env"]["OPENAI_BASE_URL"] == "https://api.openai.com/v1"
    assert f'ANTHROPIC_BASE_URL = "{moved}"' in files["codex"].read_text()
    assert "http://127.0.0.1:11434/v1" in files["codex"].read_text()
    checks = doctor(run, "mcp", "config.copies")
    assert checks["config.copies"]["status"] == "ok" and checks["mcp.base_url"]["status"] == "ok", checks
    assert checks["mcp.key"]["status"] == "ok", checks["mcp.key"]


def test_a_server_on_another_port_of_the_same_machine_is_left_alone(run, home, mock_gateway) -> None:
    mock = mock_gateway()
    local = home / ".codex" / "config.toml"
    local.parent.mkdir()
    port = urlsplit(mock.url).port
    text = codex_toml(mock.url, ollama_port=port + 1)
    local.write_text(text)
    assert init_mcp(run, root=mock.url).returncode == 0
    after = local.read_text()
    assert f'ANTHROPIC_BASE_URL = "{mock.url}"' in after
    assert f'OPENAI_BASE_URL = "http://127.0.0.1:{port + 1}/v1"  # ollama on this machine' in after


def test_the_onboarding_flag_and_the_servers_of_claude_json_are_one_change(run, home) -> None:
    files = seed(home)
    data = json.loads(files["claude"].read_text())
    del data["hasCompletedOnboarding"]
    files["claude"].write_text(json.dumps(data, indent=2) + "\n")
    result = init_mcp(run, "--target", "claude-code", "-v")  # -v: each file written is listed
    assert result.returncode == 0, result.output
    assert result.stdout.count(f"wrote {files['claude']}") == 1
    after = json.loads(files["claude"].read_text())
    assert after["hasCompletedOnboarding"] is True
    assert after["mcpServers"]["tt-openai"]["env"]["OPENAI_API_KEY"] == SENTINEL_KEY


@needs_git
def test_a_tracked_mcp_json_gets_the_url_but_never_the_key(run, home, monkeypatch) -> None:
    repo = home / "app"
    repo.mkdir()
    git(repo, "init", "-q")
    shared = repo / ".mcp.json"
    shared.write_text(json.dumps({"mcpServers": {"tt": {"env": {"OPENAI_BASE_URL": ROOT,
                                                                 "OPENAI_API_KEY": OLD_KEY}}}}, indent=2) + "\n")
    git(repo, "add", ".mcp.json")
    monkeypatch.chdir(repo)
    result = init_mcp(run)
    assert result.returncode == 0, result.output
    # flat: the warning names the file first, and a longer temporary path (an xdist worker's) wraps it elsewhere
    assert "OPENAI_API_KEY not updated — git tracks the file" in flat(result.stderr), result.output
    env = json.loads(shared.read_text())["mcpServers"]["tt"]["env"]
    assert env == {"OPENAI_BASE_URL": ROOT + "/v1", "OPENAI_API_KEY": OLD_KEY}
    assert "is tracked by git and will now hold your API key" not in result.output


def test_detected_by_init_and_a_broken_file_is_left_alone_with_a_warning(run, home) -> None:
    files = seed(home)
    files["cline"].write_text("{ not json")
    # Codex is detected too: auth.json gives it the key (the shell target is never implied).
    result = clean(run("init", "--allow-unlisted",
                       "--yes", "-v", "--base-url", ROOT, "--model", MODEL, "--key-stdin", "--codex-auth",
                       "auth-json", input=SENTINEL_KEY))
    assert result.returncode == 0, result.output
    assert "mcp: detected (MCP servers with gateway variables:" in result.stdout
    assert f"{files['cline']}:1:" in result.stderr and "its MCP servers were left alone" in result.stderr
    assert files["cline"].read_text() == "{ not json"
    assert json.loads(files["claude"].read_text())["mcpServers"]["tt-openai"]["env"]["OPENAI_API_KEY"] == SENTINEL_KEY


def test_offline_doctor_fix_leaves_a_stale_server_and_names_the_sync_that_brings_it_back(run, home) -> None:
    files = seed(home)
    assert init_mcp(run).returncode == 0
    data = json.loads(files["cline"].read_text())
    data["mcpServers"]["summarizer"]["env"]["TAOTOKEN_API_KEY"] = OLD_KEY  # pasted back from an old guide
    files["cline"].write_text(json.dumps(data, indent=2) + "\n")
    checks = doctor(run, "mcp.key", "config.copies")
    assert checks["mcp.key"]["status"] == "warn" and checks["mcp.key"]["fixes"][0].startswith("taotoken config sync")
    # Offline doctor cannot confirm the config's values, so its --fix leaves the copies alone and names the
    # command that syncs them; following that fix brings the server back in step.
    offline = clean(run("doctor", "--offline", "--check", "mcp", "--check", "config.copies", "--fix", "--yes"))
    assert "not synced" in offline.stdout and "taotoken config sync" in offline.stdout, offline.stdout
    assert json.loads(files["cline"].read_text())["mcpServers"]["summarizer"]["env"]["TAOTOKEN_API_KEY"] == OLD_KEY
    assert clean(run("config", "sync", "--yes")).returncode == 0
    assert json.loads(files["cline"].read_text())["mcpServers"]["summarizer"]["env"]["TAOTOKEN_API_KEY"] == \
        SENTINEL_KEY
    assert doctor(run, "mcp.key")["mcp.key"]["status"] == "ok"
