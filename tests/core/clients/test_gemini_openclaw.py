"""Gemini CLI and OpenClaw writers (core/clients/gemini_cli.py, openclaw.py) on real files in a temporary HOME, and
`init` deciding on Gemini CLI by asking the real mock gateway (on 127.0.0.1) for the Gemini API."""

from __future__ import annotations

import json
import stat

from taotoken_cli.cmd.mock import MockOptions
from taotoken_cli.core.clients import gemini_cli, openclaw
from taotoken_cli.core.clients.base import Machine, Triple
from tests.conftest import SENTINEL_KEY, write

ROOT = "https://gw.example/api"
TRIPLE = Triple(ROOT, SENTINEL_KEY, "gpt-4o-mini")


def machine(home):
    return Machine.of({"HOME": str(home), "TAOTOKEN_SYSTEM_ROOT": str(home / "sysroot")}, home,
                      home / ".config" / "taotoken")


def apply(plan):
    for change in plan.changes:
        change.path.parent.mkdir(parents=True, exist_ok=True)
        change.path.write_bytes(change.after)


def test_gemini_cli_keeps_the_users_lines_and_comments(home):
    write(home / ".gemini" / ".env", "# mine\nOTHER=1\nGEMINI_API_KEY=sk-oldOLDold0123456789\n", 0o600)
    write(home / ".gemini" / "settings.json", '{\n  // theme\n  "ui": {"theme": "Dracula"}\n}\n')
    plan = gemini_cli.plan(TRIPLE, machine(home))
    assert {c.path.name: c.secret for c in plan.changes} == {".env": True, "settings.json": False}
    apply(plan)
    env_text = (home / ".gemini" / ".env").read_text()
    assert env_text.startswith("# mine\nOTHER=1\n") and f"GEMINI_API_KEY={SENTINEL_KEY}" in env_text
    assert f"GOOGLE_GEMINI_BASE_URL={ROOT}\n" in env_text  # the bare root: the SDK appends /v1beta/…
    settings = (home / ".gemini" / "settings.json").read_text()
    assert "// theme" in settings and '"gemini-api-key"' in settings and '"gpt-4o-mini"' in settings
    used = gemini_cli.effective(machine(home))
    assert (used.base_url.value, used.api_key.value, used.model.value, used.auth_type.value) == (
        ROOT, SENTINEL_KEY, "gpt-4o-mini", "gemini-api-key")
    assert gemini_cli.plan(TRIPLE, machine(home)).pending == []  # a rerun changes nothing


def test_gemini_cli_warns_when_a_project_env_file_shadows_its_own(home):
    project = home / "work" / "app"
    write(project / ".env", "DATABASE_URL=postgres://x\n")
    plan = gemini_cli.plan(TRIPLE, Machine.of({"HOME": str(home)}, project, home / ".config" / "taotoken"))
    assert any(str(project / ".env") in w and "GEMINI_API_KEY" in w for w in plan.warnings)


def test_openclaw_adds_the_provider_and_keeps_the_others(home):
    config = home / ".openclaw" / "openclaw.json"
    write(config, json.dumps({"models": {"providers": {"local": {"baseUrl": "http://127.0.0.1:11434/v1"}}},
                              "agents": {"defaults": {"model": {"primary": "local/llama"}}}}, indent=2) + "\n")
    plan = openclaw.plan(TRIPLE, machine(home))
    apply(plan)
    data = json.loads(config.read_text())
    assert data["models"]["providers"]["local"] == {"baseUrl": "http://127.0.0.1:11434/v1"}
    assert data["models"]["providers"]["taotoken"] == {"baseUrl": ROOT + "/v1", "apiKey": SENTINEL_KEY,
                                                       "api": "openai-completions",
                                                       "models": [{"id": "gpt-4o-mini", "name": "gpt-4o-mini"}]}
    assert data["agents"]["defaults"]["model"]["primary"] == "taotoken/gpt-4o-mini"
    assert plan.changes[0].secret


def test_openclaw_refuses_json5_it_cannot_edit_faithfully(home):
    write(home / ".openclaw" / "openclaw.json", "{ models: { providers: {} } }\n")
    file = openclaw.read_config(machine(home))
    assert file.error is not None and "openclaw config set models.providers.taotoken" in str(file.error.fix)


def test_init_writes_gemini_cli_only_where_the_gateway_serves_the_gemini_api(cli, home, mock_gateway):
    (home / ".gemini").mkdir()
    for served in (False, True):
        mock = mock_gateway(MockOptions(key=SENTINEL_KEY, gemini_api=served))
        result = cli("init", "--yes", "--base-url", mock.url, "--model", "gpt-4o-mini", "--key-stdin",
                     input=SENTINEL_KEY).assert_clean()
        assert result.returncode == 0, result.output
        assert (home / ".gemini" / ".env").exists() is served
        if not served:
            assert "gemini-cli: not written" in result.stdout and "[url.no_gemini_api]" in result.stdout
    assert stat.S_IMODE((home / ".gemini" / ".env").stat().st_mode) == 0o600
    named = mock_gateway(MockOptions(key=SENTINEL_KEY, gemini_api=False))
    refused = cli("init", "--yes", "--base-url", named.url, "--model", "gpt-4o-mini", "--key-stdin",
                  "--target", "gemini-cli", input=SENTINEL_KEY).assert_clean()
    assert refused.returncode == 5 and "[url.no_gemini_api]" in refused.stderr


def test_doctor_fails_gemini_api_only_for_a_gemini_cli_pointed_at_the_gateway(cli, home, mock_gateway):
    mock = mock_gateway(MockOptions(key=SENTINEL_KEY, gemini_api=False))
    write(home / ".gemini" / ".env", f"GEMINI_API_KEY={SENTINEL_KEY}\nGOOGLE_GEMINI_BASE_URL={mock.url}\n", 0o600)
    write(home / ".gemini" / "settings.json", '{"security": {"auth": {"selectedType": "gemini-api-key"}}}\n')
    env = {"TAOTOKEN_BASE_URL": mock.url, "TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_MODEL": "gpt-4o-mini"}
    result = cli("doctor", "--check", "gemini.config", "--check", "gemini.api", "--json", env=env).assert_clean()
    checks = {c["id"]: c for c in json.loads(result.stdout)["checks"]}
    assert checks["gemini.config"]["status"] == "ok"
    assert checks["gemini.api"]["status"] == "fail" and checks["gemini.api"]["code"] == "url.no_gemini_api"


def test_gemini_cli_names_the_unset_of_a_shadowing_variable_in_the_users_shell(home):
    """A variable of the shell that outvotes init's env file: the unset to type is said in that shell's syntax."""
    env = {"HOME": str(home), "TAOTOKEN_SYSTEM_ROOT": str(home / "sysroot"), "GOOGLE_GENAI_USE_VERTEXAI": "true"}
    for shell, command in (("/bin/bash", "`unset GOOGLE_GENAI_USE_VERTEXAI`"),
                           ("/usr/bin/fish", "`set -e GOOGLE_GENAI_USE_VERTEXAI`")):
        machine = Machine.of({**env, "SHELL": shell}, home, home / ".config" / "taotoken")
        [warning] = [w for w in gemini_cli.plan(TRIPLE, machine).warnings if "GOOGLE_GENAI_USE_VERTEXAI" in w]
        assert warning.endswith("the gateway — " + command), warning
