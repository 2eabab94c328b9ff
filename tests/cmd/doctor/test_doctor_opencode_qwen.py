"""doctor's OpenCode and Qwen Code checks: a HOME written by the real `taotoken init`, then broken the way users
break it (a stale key, the wrong URL form, a model missing from the provider, a .env file that wins), read by
`taotoken doctor --offline` in-process; `--fix` repairs what is mechanical, and the next run is clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taotoken_cli.core.base.masking import mask_key
from tests.cmd.doctor.test_doctor import assert_finding
from tests.conftest import SENTINEL_KEY, write

ROOT = "http://127.0.0.1:9/api"  # nothing is contacted: --offline
OLD_KEY = "sk-OLDstaleKEY0123456789abcdefghij"


@pytest.fixture(autouse=True)
def _one_line_findings(one_line_findings: None) -> None:
    """These tests read each finding (and its fixes) as one line."""


def init(run, *targets: str) -> None:
    args = ["init", "--yes", "--base-url", ROOT, "--model", "gpt-4o-mini", "--key-stdin"]
    for target in targets:
        args += ["--target", target]
    assert run(*args, input=SENTINEL_KEY).returncode == 0


def doctor(run, *args: str):
    return run("doctor", "--offline", *args).assert_clean()


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n")


def test_a_fresh_init_is_clean(run, home: Path) -> None:
    init(run, "opencode", "qwen-code")
    result = doctor(run, "--check", "opencode", "--check", "qwen", "--json")
    checks = {c["id"]: c for c in json.loads(result.stdout)["checks"]}
    assert {c: checks[c]["status"] for c in checks} == {c: "ok" for c in (
        "opencode.config", "opencode.base_url", "opencode.key", "opencode.proxy", "qwen.settings", "qwen.base_url",
        "qwen.key", "qwen.proxy")}
    auth = home / ".local/share/opencode/auth.json"
    assert checks["opencode.key"]["message"] == f"{mask_key(SENTINEL_KEY)} (from {auth})"


def test_opencode_stale_key_wrong_url_form_and_a_missing_model_are_repaired(run, home: Path) -> None:
    init(run, "opencode")
    config = home / ".config/opencode/opencode.jsonc"
    auth = home / ".local/share/opencode/auth.json"
    edit_json(auth, lambda d: d["taotoken"].update(key=OLD_KEY))

    def breaks(data: dict) -> None:
        data["provider"]["taotoken"]["options"]["baseURL"] = ROOT  # no /v1: OpenCode posts to <root>/chat/…
        data["provider"]["taotoken"]["models"] = {"other": {}}

    edit_json(config, breaks)
    result = doctor(run, "--check", "opencode")
    assert result.returncode == 1
    assert_finding(result, "opencode.base_url", "fail",
                   f'set "provider.taotoken.options.baseURL": "{ROOT}/v1" in {config}')
    text = assert_finding(result, "opencode.key", "warn", "taotoken config sync")
    assert f"OpenCode sends {mask_key(OLD_KEY)} (from {auth}), not taotoken's key {mask_key(SENTINEL_KEY)}" in text
    assert_finding(result, "opencode.config", "fail", "taotoken init --target opencode")
    assert '"Model not found"' in result.stdout and OLD_KEY not in result.stdout
    fixed = run("doctor", "--offline", "--check", "opencode", "--fix", "--yes").assert_clean()
    assert "--fix: repaired 2 file(s)" in fixed.stdout
    assert json.loads(auth.read_text())["taotoken"]["key"] == SENTINEL_KEY
    provider = json.loads(config.read_text())["provider"]["taotoken"]
    assert provider["options"]["baseURL"] == ROOT + "/v1" and "gpt-4o-mini" in provider["models"]
    assert "[!]" not in doctor(run, "--check", "opencode").stdout


def test_opencode_a_project_file_that_selects_another_model_is_named(run, home: Path, tmp_path: Path,
                                                                     monkeypatch) -> None:
    init(run, "opencode")
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    local = write(project / "opencode.json", json.dumps({"model": "anthropic/claude-sonnet-4-5"}), 0o644)
    monkeypatch.chdir(project)
    result = doctor(run, "--check", "opencode.config")
    text = assert_finding(result, "opencode.config", "fail", "taotoken init --target opencode")
    assert f'model "anthropic/claude-sonnet-4-5" ({local}) uses provider anthropic, which no config file' in text


def test_qwen_stale_key_and_doubled_v1_are_repaired(run, home: Path) -> None:
    init(run, "qwen-code")
    settings = home / ".qwen/settings.json"

    def breaks(data: dict) -> None:
        data["env"]["TAOTOKEN_API_KEY"] = OLD_KEY
        data["modelProviders"]["openai"][0]["baseUrl"] = data["model"]["baseUrl"] = ROOT + "/v1/v1"

    edit_json(settings, breaks)
    result = doctor(run, "--check", "qwen")
    assert_finding(result, "qwen.base_url", "fail", f'set "baseUrl": "{ROOT}/v1" in the modelProviders.openai entry '
                                                    f"of gpt-4o-mini in {settings}")
    text = assert_finding(result, "qwen.key", "warn", "taotoken config sync")
    assert f"Qwen Code sends {mask_key(OLD_KEY)} (from env.TAOTOKEN_API_KEY ({settings}))" in text
    assert OLD_KEY not in result.stdout
    assert "--fix: repaired 1 file(s)" in run("doctor", "--offline", "--check", "qwen", "--fix", "--yes").stdout
    data = json.loads(settings.read_text())
    assert data["env"]["TAOTOKEN_API_KEY"] == SENTINEL_KEY
    assert data["modelProviders"]["openai"][0]["baseUrl"] == ROOT + "/v1"
    assert "[!]" not in doctor(run, "--check", "qwen").stdout


def test_qwen_a_dotenv_file_that_wins_over_the_settings_fails_with_its_line_to_delete(run, home: Path) -> None:
    init(run, "qwen-code")
    dotenv = write(home / ".qwen/.env", f"# mine\nTAOTOKEN_API_KEY={OLD_KEY}\n")
    result = doctor(run, "--check", "qwen.key")
    text = assert_finding(result, "qwen.key", "fail", f"delete the line {dotenv}:2 (TAOTOKEN_API_KEY=…)")
    assert f"Qwen Code sends {mask_key(OLD_KEY)} from {dotenv}, which wins over {home}/.qwen/settings.json" in text


def test_qwen_not_using_an_openai_provider_is_a_warning(run, home: Path) -> None:
    write(home / ".qwen/settings.json", '{"$version": 4, "security": {"auth": {"selectedType": "qwen-oauth"}}}')
    result = doctor(run, "--check", "qwen")
    assert_finding(result, "qwen.settings", "warn", "taotoken init --target qwen-code")
    assert "auth type 'qwen-oauth'" in result.stdout
    assert "[-] Qwen Code base URL" in result.stdout


def test_a_config_file_that_does_not_parse_names_its_line(run, home: Path) -> None:
    write(home / ".config/opencode/opencode.json", '{\n  "model": "taotoken/x"\n  "theme": "y"\n}\n')
    write(home / ".qwen/settings.json", '{\n  // fine\n  "model": {"name": }\n}\n')
    result = doctor(run, "--check", "opencode.config", "--check", "qwen.settings")
    text = assert_finding(result, "opencode.config", "fail")
    assert f"{home}/.config/opencode/opencode.json:3:" in text
    assert f"{home}/.qwen/settings.json:3:" in assert_finding(result, "qwen.settings", "fail")


def test_qwen_an_old_format_file_says_to_start_qwen_code_once(run, home: Path) -> None:
    write(home / ".qwen/settings.json", '{"theme": "Default", "selectedAuthType": "openai", "model": "qwen3"}')
    result = doctor(run, "--check", "qwen.settings")
    assert_finding(result, "qwen.settings", "warn", "start Qwen Code once, then run taotoken init --target qwen-code")
