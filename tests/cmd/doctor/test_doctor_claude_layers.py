"""Claude Code's settings as Claude Code resolves them: managed settings (under $TAOTOKEN_SYSTEM_ROOT, which stands
for / here), the repository's .claude/settings.local.json and .claude/settings.json, the user's settings.json and
the shell. Real files in a temporary HOME, a real git repository (`git init`), the mock gateway on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from taotoken_cli.cmd.doctor.model import Status
from taotoken_cli.core.clients import claude_code
from taotoken_cli.core.clients.base import Machine, Triple
from taotoken_cli.core.settings import Overrides
from tests.conftest import SENTINEL_KEY
from tests.rawserver import closed_port

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")

MODEL = "gpt-4o-mini"
OTHER_KEY = "sk-otherOTHERother0123456789"


@pytest.fixture(autouse=True)
def _one_line_findings(one_line_findings: None) -> None:
    """These tests read each finding (and its fixes) as one line."""


def write(path: Path, data: dict | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2) + "\n", encoding="utf-8")
    path.chmod(0o600)
    return path


def set_up(home: Path, base: str, user_env: dict[str, str] | None = None) -> Path:
    """taotoken's config and Claude Code's user settings as `taotoken init` writes them; returns a git repository."""
    write(home / ".config/taotoken/config.toml",
          f'[profiles.default]\nbase_url = "{base}"\napi_key = "{SENTINEL_KEY}"\nmodel = "{MODEL}"\n')
    write(home / ".claude.json", {"hasCompletedOnboarding": True})
    env = {"ANTHROPIC_BASE_URL": base, "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY, "ANTHROPIC_MODEL": MODEL,
           "ANTHROPIC_DEFAULT_HAIKU_MODEL": MODEL} if user_env is None else user_env
    write(home / ".claude/settings.json", {"env": env})
    repo = home / "src/app"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def findings(result) -> dict[str, dict]:
    return {c["id"]: c for c in json.loads(result.stdout)["checks"]}


def doctor(cli, repo: Path, *checks: str, env: dict[str, str] | None = None) -> dict[str, dict]:
    args = [arg for check_id in checks for arg in ("--check", check_id)]
    return findings(cli("doctor", "--json", *args, cwd=repo, env=env).assert_clean())


# -- the resolution itself -------------------------------------------------------------------------------------

def test_effective_env_follows_claude_codes_order(home):
    repo = set_up(home, "https://user.example/api")
    root = home / "system"
    managed = write(root / "etc/claude-code/managed-settings.json", {"env": {"ANTHROPIC_MODEL": "managed-model"}})
    local = write(repo / ".claude/settings.local.json", {"env": {"ANTHROPIC_BASE_URL": "https://local.example/api",
                                                                 "ANTHROPIC_MODEL": "local-model"}})
    shared = write(repo / ".claude/settings.json", {"env": {"ANTHROPIC_BASE_URL": "https://project.example/api",
                                                            "DISABLE_TELEMETRY": "1"}})
    machine = Machine.of({"HOME": str(home), "TAOTOKEN_SYSTEM_ROOT": str(root), "PATH": "/usr/bin:/bin",
                          "ANTHROPIC_BASE_URL": "https://shell.example/api", "HTTPS_PROXY": "http://127.0.0.1:7890"},
                         cwd=repo)
    effective = claude_code.effective_env(machine)
    base = effective["ANTHROPIC_BASE_URL"]
    assert (base.value, base.role, base.path) == ("https://local.example/api", "project_local", local)
    assert [(h.role, h.value) for h in base.hidden] == [
        ("project_settings", "https://project.example/api"), ("settings", "https://user.example/api"),
        ("shell", "https://shell.example/api")]
    assert base.after_trust and base.outranks_user and base.editable
    model = effective["ANTHROPIC_MODEL"]
    assert (model.value, model.path, model.editable) == ("managed-model", managed, False)
    assert effective["DISABLE_TELEMETRY"].path == shared
    assert effective["ANTHROPIC_AUTH_TOKEN"].role == "settings"
    assert effective["HTTPS_PROXY"].where == "the shell"  # what the files do not set still comes from the shell
    assert claude_code.environment(effective)["ANTHROPIC_BASE_URL"] == "https://local.example/api"


def test_init_warns_about_an_overriding_project_file_through_the_same_resolution(home):
    repo = set_up(home, "https://taotoken.net/api")
    machine = Machine.of({"HOME": str(home), "PATH": "/usr/bin:/bin"}, cwd=repo)
    triple = Triple("https://taotoken.net/api", SENTINEL_KEY, MODEL)
    local = write(repo / ".claude/settings.local.json", {"env": {"ANTHROPIC_BASE_URL": "https://taotoken.net/api/"}})
    assert claude_code.plan(triple, machine).warnings == []  # the same root: nothing is overridden
    write(local, {"env": {"ANTHROPIC_BASE_URL": "https://old.example/api", "ANTHROPIC_MODEL": MODEL}})
    warnings = claude_code.plan(triple, machine).warnings
    assert warnings == [f"{local} sets ANTHROPIC_BASE_URL, which override the user settings inside that "
                        "repository; remove them there or run init with --scope project"]


# -- doctor: overrides of base URL, key and model ---------------------------------------------------------------

def test_a_local_settings_file_overriding_the_base_url_fails(cli, home, mock_gateway):
    """The issue's case: doctor said "No issues found" in a repository whose settings.local.json sets
    ANTHROPIC_BASE_URL, and only -v showed it, under a ✓."""
    mock = mock_gateway()
    repo = set_up(home, mock.url)
    local = write(repo / ".claude/settings.local.json", {"env": {"ANTHROPIC_BASE_URL": "https://old.example/api"}})
    checks = doctor(cli, repo, "claude")
    base = checks["claude.base_url"]
    assert base["status"] == "fail", base
    assert base["message"].startswith(f"{local} overrides ANTHROPIC_BASE_URL: Claude Code inside this repository "
                                      f"(once trusted) uses 'https://old.example/api', not '{mock.url}' "
                                      f"(taotoken's config and {home}/.claude/settings.json)")
    assert base["fixes"][0] == (f'remove "ANTHROPIC_BASE_URL" from the env block of {local} (Claude Code then uses '
                                f"the value from {home}/.claude/settings.json)")
    assert f"{home}/.claude/settings.json" in checks["claude.settings"]["details"][-1]
    text = cli("doctor", "--check", "claude", cwd=repo).assert_clean()
    assert text.returncode == 1 and "No issues found" not in text.stdout
    assert f"[✗] Claude Code base URL: {local} overrides ANTHROPIC_BASE_URL" in text.stdout


def test_the_same_value_in_a_project_file_is_a_note(cli, home, mock_gateway):
    mock = mock_gateway()
    repo = set_up(home, mock.url)
    local = write(repo / ".claude/settings.local.json", {"env": {"ANTHROPIC_BASE_URL": mock.url}})
    base = doctor(cli, repo, "claude.base_url")["claude.base_url"]
    assert base["status"] == "ok", base
    assert f"ANTHROPIC_BASE_URL comes from {local}, the same value as taotoken's config" in base["details"][0]
    assert "workspace trust prompt" in base["details"][0]


def test_a_project_model_is_a_warning_and_a_project_key_a_failure(cli, home, mock_gateway):
    mock = mock_gateway()
    repo = set_up(home, mock.url)
    shared = write(repo / ".claude/settings.json", {"env": {"ANTHROPIC_MODEL": "claude-sonnet-4-5"}})
    local = write(repo / ".claude/settings.local.json", {"env": {"ANTHROPIC_AUTH_TOKEN": OTHER_KEY}})
    checks = doctor(cli, repo, "claude.models", "claude.key")
    models = checks["claude.models"]
    assert models["status"] == "warn" and models["message"].startswith(f"{shared} overrides ANTHROPIC_MODEL")
    assert f"""or set "ANTHROPIC_MODEL": "{MODEL}" there""" in models["fixes"]
    key = checks["claude.key"]
    assert key["status"] == "fail" and key["message"].startswith(f"{local} overrides ANTHROPIC_AUTH_TOKEN")
    assert "sk-ot…6789" in key["message"] and OTHER_KEY not in json.dumps(key)


def test_a_key_only_in_a_project_file_waits_for_the_trust_prompt(cli, home, mock_gateway):
    mock = mock_gateway()
    repo = set_up(home, mock.url, user_env={"ANTHROPIC_BASE_URL": mock.url})
    local = write(repo / ".claude/settings.local.json", {"env": {"ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY}})
    key = doctor(cli, repo, "claude.key")["claude.key"]
    assert key["status"] == "warn", key
    assert key["message"].startswith(f"ANTHROPIC_AUTH_TOKEN is set only in {local}: Claude Code applies a project "
                                     "file's env only after you accept the workspace trust prompt")
    assert key["fixes"] == ["taotoken init   (writes it into ~/.claude/settings.json, which applies at start-up)"]


def test_managed_settings_outrank_everything_and_name_the_administrator(cli, home, mock_gateway):
    mock = mock_gateway()
    repo = set_up(home, mock.url)
    root = home / "system"
    managed = write(root / "etc/claude-code/managed-settings.json",
                    {"env": {"ANTHROPIC_BASE_URL": "https://llm.corp.example/anthropic"}})
    base = doctor(cli, repo, "claude.base_url", env={"TAOTOKEN_SYSTEM_ROOT": str(root)})["claude.base_url"]
    assert base["status"] == "fail", base
    assert base["message"].startswith(f"{managed} overrides ANTHROPIC_BASE_URL: every Claude Code session on this "
                                      "machine uses")
    assert base["fixes"] == [f"ask the administrator who manages {managed}: managed settings win over every other "
                             "file"]
    assert base["repairs"] == []  # never edited by doctor --fix
    env_check = doctor(cli, repo, "env.taotoken", env={"TAOTOKEN_SYSTEM_ROOT": str(root)})["env.taotoken"]
    assert env_check["status"] == "ok"  # a variable taotoken reads


def test_a_repair_edits_the_file_the_value_comes_from(home):
    """A check called directly with its context: the /v1 is in settings.local.json, so --fix edits that file."""
    from taotoken_cli.cmd.doctor.checks.clients.claude_code import claude_base_url
    from taotoken_cli.cmd.doctor.context import DoctorContext

    repo = set_up(home, "https://taotoken.net/api")
    local = write(repo / ".claude/settings.local.json", {"env": {"ANTHROPIC_BASE_URL": "https://taotoken.net/api/v1"}})
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "PATH": "/usr/bin:/bin"}
    ctx = DoctorContext(env=env, cwd=repo, offline=True, overrides=Overrides(base_url="https://taotoken.net/api"))
    result = claude_base_url(ctx)
    assert result.status is Status.FAIL and "ends in /v1" in result.message
    assert f"ANTHROPIC_BASE_URL = 'https://taotoken.net/api/v1' ({local})" in result.message
    assert [r.path for r in result.repairs] == [local]
    repaired = json.loads(result.repairs[0].transform(local.read_text()))
    assert repaired == {"env": {"ANTHROPIC_BASE_URL": "https://taotoken.net/api"}}


# -- doctor: proxies in Claude Code's settings --------------------------------------------------------------------

def test_a_dead_proxy_in_claude_settings_fails_although_the_shell_is_fine(cli, home, mock_gateway):
    mock = mock_gateway()
    proxy = f"http://127.0.0.1:{closed_port()}"
    repo = set_up(home, mock.url, user_env={"ANTHROPIC_BASE_URL": mock.url, "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY,
                                            "HTTP_PROXY": proxy})
    settings = home / ".claude/settings.json"
    checks = doctor(cli, repo, "claude.proxy", "net.proxy")
    found = checks["claude.proxy"]
    assert found["status"] == "fail", found
    assert found["message"].startswith(f"{proxy.removeprefix('http://')} (HTTP_PROXY) from {settings}: ")
    assert found["message"].endswith('inside Claude Code the classic "local proxy failed" (the shell does not use '
                                     "it)")
    assert found["details"][0] == f"Claude Code's requests to 127.0.0.1 go through {proxy}; the shell's go direct"
    assert f'or exempt the gateway: add "NO_PROXY": "127.0.0.1" to the env block of {settings}' in found["fixes"]
    assert checks["net.proxy"]["status"] == "skipped"  # the shell has no proxy at all


def test_a_no_proxy_in_claude_settings_takes_the_gateway_off_the_shells_proxy(cli, home, mock_gateway):
    mock = mock_gateway()
    repo = set_up(home, mock.url)
    local = write(repo / ".claude/settings.local.json", {"env": {"NO_PROXY": "localhost 127.0.0.1"}})
    found = doctor(cli, repo, "claude.proxy", env={"HTTP_PROXY": "http://127.0.0.1:7890"})["claude.proxy"]
    assert found["status"] == "ok" and found["message"] == "Claude Code's requests to 127.0.0.1 go direct"
    assert f"NO_PROXY=localhost 127.0.0.1 ({local})" in found["details"]
    # taotoken's own rule (the "shell's" line) never sends a loopback gateway through a proxy (issue 22 item 2)
    assert found["details"][0] == "Claude Code's requests to 127.0.0.1 go direct; the shell's go direct"


def test_a_socks_proxy_in_claude_settings_is_one_claude_code_cannot_use(cli, home):
    from tests.rawserver import RawServer

    with RawServer("stall") as listening:  # something accepts connections there: only the kind is wrong
        proxy = f"socks5://127.0.0.1:{listening.port}"
        repo = set_up(home, "https://gw.invalid/api",
                      user_env={"ANTHROPIC_BASE_URL": "https://gw.invalid/api", "HTTPS_PROXY": proxy})
        found = doctor(cli, repo, "claude.proxy")["claude.proxy"]
    assert found["status"] == "fail", found
    assert found["message"] == f"Claude Code would use the SOCKS proxy {proxy}, which it does not support"
