"""The whole tool against the project's own mock gateway: init -> check -> doctor -> route --verify -> bench.

One temporary HOME, the real CLI in subprocesses, the mock (`taotoken_cli.cmd.mock.MockGateway`) on 127.0.0.1.
Each step asserts what really happened: the files init wrote (and that a client reading them the way the
real client does reaches the right endpoint), the exit codes, the JSON reports, and the mock's request log
(path, auth header kind, masked key).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import httpx
import pytest

from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.settings import tomllib
from tests.conftest import SENTINEL_KEY, needs_posix

MODEL = "gpt-4o-mini"
GPU_MODEL = "gpu-a100-qwen25-72b-fp16"
CPU_MODEL = "cpu-llama3-8b-int8"
SERVED = (MODEL, GPU_MODEL, CPU_MODEL)
ALIASES = {"gpt-4o": "gpt-4o-2024-08-06"}

CLAUDE_SETTINGS = '{\n  "theme": "dark",\n  "permissions": {"allow": ["Bash(git status)"]}\n}\n'
CODEX_CONFIG = '# my codex settings\napproval_policy = "on-request"\n'


def seed_home(home: Path) -> None:
    """A machine that already has Claude Code, Codex and Cline installed."""
    (home / ".claude").mkdir()
    (home / ".claude/settings.json").write_text(CLAUDE_SETTINGS)
    (home / ".codex").mkdir()
    (home / ".codex/config.toml").write_text(CODEX_CONFIG)
    (home / ".cline").mkdir()


def shell_env(home: Path) -> dict[str, str]:
    """The variables a new shell gets from init's env.sh (sourced by a real sh, as ~/.bashrc does)."""
    needs_posix("sh sourcing env.sh (on Windows init's shell target is the user environment and PowerShell)")
    env_sh = home / ".config/taotoken/env.sh"
    proc = subprocess.run(["sh", "-c", '. "$1" && env -0', "sh", str(env_sh)], capture_output=True, check=True,
                          env=dict(os.environ))
    after = dict(item.split("=", 1) for item in proc.stdout.decode().split("\0") if "=" in item)
    return {k: v for k, v in after.items() if k.startswith(("TAOTOKEN_", "OPENAI_"))}


def new_requests(mock, since: int):
    return mock.requests[since:]


def assert_log_clean(records, paths: set[str]) -> None:
    """Every request reached a served path with a Bearer key, shown masked, and nothing was flagged."""
    assert records, "the gateway received nothing"
    assert {r.path for r in records} <= paths, [r.log_line() for r in records]
    for record in records:
        assert record.auth_kind == "bearer", record.log_line()
        assert record.key_masked == mask_key(SENTINEL_KEY) == "sk-SE…WXYZ"
        assert SENTINEL_KEY not in record.log_line()
        assert record.flags == [], record.log_line()
        assert record.status == 200, record.log_line()


def init(cli, mock, key: str = SENTINEL_KEY):
    return cli("init", "--all", "--yes", "--base-url", mock.url, "--model", MODEL, "--key-stdin", input=key)


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh to source env.sh")
def test_init_check_doctor_route_bench_against_the_mock(cli, home, mock_gateway):
    mock = mock_gateway(models=SERVED, aliases=ALIASES)
    seed_home(home)

    # -- init: every client in its own URL form, the user's own settings kept, key files 0600 ------------
    result = init(cli, mock).assert_clean()
    assert result.returncode == 0, result.output
    # init asks the gateway whether it lists --model (issue 23: a typo is refused before it is written) and, as
    # Gemini CLI is among --all's targets, whether it serves the Gemini API (its model list: nothing generated)
    assert [(r.method, r.path) for r in mock.requests] == [("GET", "/api/v1/models"), ("GET", "/api/v1beta/models")]
    settings = json.loads((home / ".claude/settings.json").read_text())
    assert settings["theme"] == "dark" and settings["permissions"] == {"allow": ["Bash(git status)"]}
    assert settings["env"]["ANTHROPIC_BASE_URL"] == mock.url  # bare root: Claude Code appends /v1/messages
    assert settings["env"]["ANTHROPIC_AUTH_TOKEN"] == SENTINEL_KEY
    assert "ANTHROPIC_API_KEY" not in settings["env"]
    codex_text = (home / ".codex/config.toml").read_text()
    assert codex_text.startswith("# my codex settings\n")
    codex = tomllib.loads(codex_text)
    provider = codex["model_providers"][codex["model_provider"]]
    assert provider["base_url"] == mock.url + "/v1" == mock.openai_base
    assert provider["wire_api"] == "responses"
    cline = json.loads((home / ".cline/data/settings/providers.json").read_text())
    cline_settings = cline["providers"][cline["lastUsedProvider"]]["settings"]
    assert cline_settings["baseUrl"] == mock.openai_base and cline_settings["apiKey"] == SENTINEL_KEY
    own = tomllib.loads((home / ".config/taotoken/config.toml").read_text())
    assert own["profiles"]["default"]["base_url"] == mock.url
    for secret_file in (".claude/settings.json", ".cline/data/settings/providers.json",
                        ".config/taotoken/config.toml", ".config/taotoken/env.sh"):
        assert stat.S_IMODE((home / secret_file).stat().st_mode) == 0o600, secret_file
    env = shell_env(home)  # the next steps run in a new shell, as the user's would
    assert env["OPENAI_API_KEY"] == SENTINEL_KEY and env["OPENAI_BASE_URL"] == mock.openai_base
    assert "TAOTOKEN_API_KEY" not in env  # taotoken reads its config; nothing exported may shadow it

    # The written files work the way each real client reads them (Claude Code: root + /v1/messages with
    # ANTHROPIC_AUTH_TOKEN as Bearer; Codex: base_url + /responses with $env_key; Cline: baseUrl + /chat/completions).
    with httpx.Client(timeout=5, trust_env=False) as http:
        calls = [
            (settings["env"]["ANTHROPIC_BASE_URL"] + "/v1/messages", settings["env"]["ANTHROPIC_AUTH_TOKEN"],
             {"model": MODEL, "max_tokens": 4, "messages": [{"role": "user", "content": "hi"}]}),
            (provider["base_url"] + "/responses", env[provider["env_key"]], {"model": MODEL, "input": "hi"}),
            (cline_settings["baseUrl"] + "/chat/completions", cline_settings["apiKey"],
             {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}),
        ]
        for url, key, body in calls:
            response = http.post(url, json=body, headers={"Authorization": f"Bearer {key}",
                                                          "anthropic-version": "2023-06-01"})
            assert response.status_code == 200, (url, response.text)
    assert [r.path for r in new_requests(mock, 2)] == ["/api/v1/messages", "/api/v1/responses",
                                                       "/api/v1/chat/completions"]
    assert_log_clean(new_requests(mock, 2), {"/api/v1/messages", "/api/v1/responses", "/api/v1/chat/completions"})

    # -- check ----------------------------------------------------------------------------------------
    seen = len(mock.requests)
    result = cli("check", "--json", env=env).assert_clean()
    assert result.returncode == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["model"] == MODEL and report["model_listed"] is True
    assert report["key"] == "sk-SE…WXYZ" and report["url"] == mock.url + "/v1/models"
    records = new_requests(mock, seen)
    assert [(r.method, r.path) for r in records] == [("GET", "/api/v1/models")]
    assert_log_clean(records, {"/api/v1/models"})

    seen = len(mock.requests)
    result = cli("check", "--stream", env=env).assert_clean()
    assert result.returncode == 0 and f"model {MODEL} listed" in result.stdout, result.output
    records = new_requests(mock, seen)
    assert [(r.path, r.stream) for r in records] == [("/api/v1/models", False), ("/api/v1/chat/completions", True)]
    assert_log_clean(records, {"/api/v1/models", "/api/v1/chat/completions"})

    # -- doctor ------------------------------------------------------------------------------------------
    seen = len(mock.requests)
    result = cli("doctor", "--json", env=env).assert_clean()
    report = json.loads(result.stdout)
    problems = [c for c in report["checks"] if c["status"] in ("warn", "fail")]
    assert result.returncode == 0 and problems == [], json.dumps(problems, indent=1, ensure_ascii=False)
    statuses = {c["id"]: c["status"] for c in report["checks"]}
    for check_id in ("claude.base_url", "codex.wire_api", "cline.providers", "gateway.key", "gateway.model",
                     "gateway.stream"):
        assert statuses.get(check_id) == "ok", (check_id, statuses.get(check_id))
    records = new_requests(mock, seen)
    gemini = [r for r in records if r.path == "/api/v1beta/models"]  # gemini.api: init wrote Gemini CLI too
    assert [(r.method, r.auth_kind, r.status) for r in gemini] == [("GET", "x-goog-api-key", 200)]
    assert_log_clean([r for r in records if r not in gemini], {"/api/v1/models", "/api/v1/chat/completions",
                                                               "/api/v1/messages", "/api/v1/responses"})

    # -- route: table, choice, verify ------------------------------------------------------------------------
    result = cli("route", "set", f"cuda={GPU_MODEL}", "gpu=gpt-4o", f"cpu={CPU_MODEL}", env=env).assert_clean()
    assert result.returncode == 0, result.output
    routes = tomllib.loads((home / ".config/taotoken/config.toml").read_text())["profiles"]["default"]["routes"]
    assert routes == {"cuda": GPU_MODEL, "gpu": "gpt-4o", "cpu": CPU_MODEL}
    seen = len(mock.requests)
    result = cli("route", "--verify", "--all", "--samples", "2", "--json", env=env).assert_clean()
    assert result.returncode == 0, result.output
    verdicts = {r["route"]: (r["verdict"], r["distribution"]) for r in json.loads(result.stdout)["routes"]}
    assert verdicts == {"cuda": ("equal", {GPU_MODEL: 2}), "gpu": ("variant", {"gpt-4o-2024-08-06": 2}),
                        "cpu": ("equal", {CPU_MODEL: 2})}
    records = new_requests(mock, seen)
    assert sorted(r.model for r in records) == sorted([GPU_MODEL, "gpt-4o", CPU_MODEL] * 2)
    assert_log_clean(records, {"/api/v1/chat/completions"})

    # -- bench: two models, streamed -------------------------------------------------------------------------
    seen = len(mock.requests)
    result = cli("bench", "-m", GPU_MODEL, "-m", CPU_MODEL, "--stream", "-n", "8", "-c", "2", "--workers", "1",
                 "--json", env=env).assert_clean()
    assert result.returncode == 0, result.output
    series = {s["model"]: s for s in json.loads(result.stdout)["series"]}
    assert set(series) == {GPU_MODEL, CPU_MODEL}
    for model in series.values():
        assert model["success_rate"] == 1.0 and model["ok"] == 8 and model["failed"] == 0, model
    records = new_requests(mock, seen)
    assert len(records) == 16 and all(r.stream for r in records)
    assert sorted({r.model for r in records}) == sorted([GPU_MODEL, CPU_MODEL])
    assert_log_clean(records, {"/api/v1/chat/completions"})


def test_wrong_key_fails_check_with_the_catalogue_code(cli, home, mock_gateway):
    mock = mock_gateway(models=SERVED)
    seed_home(home)
    wrong = "sk-WRONGkey9876543210zyxwvuABCD"
    assert init(cli, mock, key=wrong).assert_clean(wrong).returncode == 0

    result = cli("check").assert_clean(wrong)
    assert result.returncode == 4, result.output
    assert "auth.invalid_key" in result.stdout + result.stderr
    report = json.loads(cli("check", "--json").assert_clean(wrong).stdout)
    assert (report["exit_code"], report["code"], report["status"]) == (4, "auth.invalid_key", 401)
    record = mock.last
    assert record.path == "/api/v1/models" and record.auth_kind == "bearer" and record.status == 401
    assert record.key_masked == "sk-WR…ABCD" and "wrong-key" in record.flags


def test_doubled_v1_in_claude_settings_is_found_by_doctor(cli, home, mock_gateway):
    mock = mock_gateway(models=SERVED)
    seed_home(home)
    assert init(cli, mock).assert_clean().returncode == 0
    settings_path = home / ".claude/settings.json"
    settings = json.loads(settings_path.read_text())
    settings["env"]["ANTHROPIC_BASE_URL"] = mock.url + "/v1"  # the classic mistake: an OpenAI-style URL
    settings_path.write_text(json.dumps(settings, indent=2))

    # What Claude Code would do with that file: the mock flags the doubled /v1.
    with httpx.Client(timeout=5, trust_env=False) as http:
        response = http.post(settings["env"]["ANTHROPIC_BASE_URL"] + "/v1/messages",
                             json={"model": MODEL, "max_tokens": 4, "messages": [{"role": "user", "content": "hi"}]},
                             headers={"Authorization": f"Bearer {SENTINEL_KEY}"})
    assert response.status_code == 404
    assert mock.last.path == "/api/v1/v1/messages" and "doubled-v1" in mock.last.flags

    result = cli("doctor", "--json", "--check", "claude", env={"TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean()
    finding = next(c for c in json.loads(result.stdout)["checks"] if c["id"] == "claude.base_url")
    assert finding["status"] == "fail", finding
    assert "/v1/v1/messages" in finding["message"]
    assert any(mock.url in fix for fix in finding["fixes"]), finding["fixes"]
    assert result.returncode != 0
