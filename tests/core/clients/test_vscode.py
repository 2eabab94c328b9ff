"""doctor reads the VS Code side (issue 17): Claude Code's `claudeCode.environmentVariables` in VS Code's
settings.json (JSONC), and Cline's stores before 4.0 — globalState.json + secrets.json (3.66–3.89, CLI 2.x) and
VS Code's state.vscdb (≤ 3.65, the key an encrypted SecretStorage entry that cannot be read).

Real files in a temporary HOME, the real CLI (`taotoken doctor --json --offline`); one check is also called
directly with a DoctorContext. Extension folders are empty directories named as VS Code names them.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from taotoken_cli.core.settings import Overrides
from tests.conftest import SENTINEL_KEY

ROOT = "https://taotoken.net/api"
SETTING = "claudeCode.environmentVariables"
OTHER_KEY = "sk-OTHERkey0123456789abcdefghijWXYZ"


def write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    path.chmod(mode)
    return path


def own_config(home: Path) -> None:
    write(home / ".config" / "taotoken" / "config.toml",
          f'[profiles.default]\nbase_url = "{ROOT}"\napi_key = "{SENTINEL_KEY}"\nmodel = "gpt-4o-mini"\n')


def vscode_settings(home: Path, body: str, flavour: str = "Code") -> Path:
    return write(home / ".config" / flavour / "User" / "settings.json", body)


def extension(home: Path, name: str) -> None:
    (home / ".vscode" / "extensions" / name).mkdir(parents=True)


def doctor(cli, *checks: str) -> dict[str, dict]:
    args = [a for c in checks for a in ("--check", c)]
    result = cli("doctor", "--json", "--offline", *args).assert_clean()
    return {c["id"]: c for c in json.loads(result.stdout)["checks"]}


JSONC = """{
  // my editor
  "editor.fontSize": 14,
  "claudeCode.environmentVariables": [
    {"name": "ANTHROPIC_BASE_URL", "value": "%s"}, /* the gateway */
    {"name": "ANTHROPIC_AUTH_TOKEN", "value": "%s"},
  ],
}
"""


def test_claude_vscode_env_checked_like_the_settings_env_block(cli, home) -> None:
    own_config(home)
    path = vscode_settings(home, JSONC % (ROOT + "/v1", SENTINEL_KEY + "\\n"))
    found = doctor(cli, "claude.vscode")["claude.vscode"]
    assert found["status"] == "fail"
    assert found["message"].startswith(f"ANTHROPIC_BASE_URL = '{ROOT}/v1' ({SETTING} in {path}) ends in /v1")
    assert any("ANTHROPIC_AUTH_TOKEN in" in d and "whitespace" in d for d in found["details"])
    assert f'set the value of ANTHROPIC_BASE_URL in {SETTING} of {path} to "{ROOT}"' in found["fixes"]
    assert len(found["repairs"]) == 2


def test_claude_vscode_fix_keeps_the_comments_and_undo_restores_the_bytes(cli, home) -> None:
    own_config(home)
    original = JSONC % (ROOT + "/v1", " " + SENTINEL_KEY)
    path = vscode_settings(home, original.replace("\n", "\r\n"))
    fixed = cli("doctor", "--offline", "--check", "claude.vscode", "--fix", "--yes").assert_clean()
    assert "--fix: repaired 1 file(s)" in fixed.stdout, fixed.output
    text = path.read_bytes().decode()
    assert text == (JSONC % (ROOT, SENTINEL_KEY)).replace("\n", "\r\n")  # only the two values changed
    assert doctor(cli, "claude.vscode")["claude.vscode"]["status"] == "ok"
    assert cli("init", "--undo").assert_clean().returncode == 0
    assert path.read_bytes() == original.replace("\n", "\r\n").encode()


def test_claude_vscode_both_credentials_and_an_object_instead_of_an_array(cli, home) -> None:
    own_config(home)
    vscode_settings(home, json.dumps({SETTING: [{"name": "ANTHROPIC_BASE_URL", "value": ROOT},
                                                {"name": "ANTHROPIC_AUTH_TOKEN", "value": SENTINEL_KEY},
                                                {"name": "ANTHROPIC_API_KEY", "value": OTHER_KEY}]}))
    vscode_settings(home, json.dumps({SETTING: {"ANTHROPIC_BASE_URL": ROOT}}), flavour="Cursor")
    found = doctor(cli, "claude.vscode")["claude.vscode"]
    assert found["status"] == "fail"
    text = " ".join([found["message"], *found["details"]])
    assert "passes both ANTHROPIC_AUTH_TOKEN and ANTHROPIC_API_KEY" in text
    assert "is an object, not an array" in text and "Cursor" in text
    assert OTHER_KEY not in json.dumps(found)


def test_claude_vscode_key_differs_shown_masked(cli, home) -> None:
    own_config(home)
    vscode_settings(home, JSONC % (ROOT, OTHER_KEY))
    found = doctor(cli, "claude.vscode")["claude.vscode"]
    assert found["status"] == "warn" and "sk-OT…WXYZ differs from taotoken's key sk-SE…WXYZ" in found["message"]


def test_claude_vscode_nothing_set_with_the_extension_installed_is_a_hint(cli, home) -> None:
    own_config(home)
    vscode_settings(home, '{"editor.fontSize": 14}')
    extension(home, "anthropic.claude-code-2.1.240-linux-x64")
    found = doctor(cli, "claude.vscode")["claude.vscode"]
    assert found["status"] == "ok" and any("claudeCode.disableLoginPrompt" in d for d in found["details"])


def test_claude_vscode_called_directly_with_its_context(home) -> None:
    from taotoken_cli.cmd.doctor.checks.clients.vscode import claude_vscode
    from taotoken_cli.cmd.doctor.context import DoctorContext
    from taotoken_cli.cmd.doctor.model import Status

    path = vscode_settings(home, JSONC % (ROOT + "/", SENTINEL_KEY))
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "PATH": "/usr/bin:/bin"}
    ctx = DoctorContext(env=env, cwd=home, overrides=Overrides(base_url=ROOT, api_key=SENTINEL_KEY), offline=True)
    result = claude_vscode(ctx)
    assert result.status is Status.FAIL and "is not the bare API root" in result.message
    after = result.repairs[0].transform(path.read_text())
    assert after == JSONC % (ROOT, SENTINEL_KEY)


# --------------------------------------------------------------------------------------- Cline before 4.0

def cline_file_store(home: Path, state: dict, secrets: dict, mode: int = 0o600) -> None:
    write(home / ".cline" / "data" / "globalState.json", json.dumps(state))
    write(home / ".cline" / "data" / "secrets.json", json.dumps(secrets), mode)


def test_cline_file_store_of_3_66_to_3_89(cli, home) -> None:
    own_config(home)
    extension(home, "saoudrizwan.claude-dev-3.80.1")
    cline_file_store(home, {"mode": "act", "actModeApiProvider": "openai", "planModeApiProvider": "anthropic",
                            "openAiBaseUrl": ROOT, "actModeOpenAiModelId": "gpt-4o"},
                     {"openAiApiKey": OTHER_KEY}, mode=0o644)
    write(home / ".cline" / "data" / "settings" / "providers.json", "{}")
    found = doctor(cli, "cline.legacy")["cline.legacy"]
    assert found["status"] == "fail"
    text = " ".join([found["message"], *found["details"]])
    assert f"openAiBaseUrl '{ROOT}' should be {ROOT}/v1" in text
    assert "Cline 3.80.1 does not read" in text and "providers.json" in text
    assert "sk-OT…WXYZ differs from taotoken's key" in text and "readable by other users" in text
    assert OTHER_KEY not in json.dumps(found)


def test_cline_file_store_healthy_and_4x_skipped(cli, home) -> None:
    own_config(home)
    cline_file_store(home, {"apiProvider": "openai", "openAiBaseUrl": ROOT + "/v1", "openAiModelId": "gpt-4o-mini"},
                     {"openAiApiKey": SENTINEL_KEY})
    found = doctor(cli, "cline.legacy")["cline.legacy"]
    assert found["status"] == "ok" and "Cline CLI 2.x: OpenAI Compatible at" in found["message"]
    extension(home, "saoudrizwan.claude-dev-4.1.13")
    assert doctor(cli, "cline.legacy")["cline.legacy"]["status"] == "skipped"


def state_db(home: Path, global_state: dict | None, secret: bool) -> Path:
    path = home / ".config" / "Code" / "User" / "globalStorage" / "state.vscdb"
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        if global_state is not None:
            conn.execute("INSERT INTO ItemTable VALUES (?, ?)", ("saoudrizwan.claude-dev", json.dumps(global_state)))
        if secret:
            conn.execute("INSERT INTO ItemTable VALUES (?, ?)",
                         ('secret://{"extensionId":"saoudrizwan.claude-dev","key":"openAiApiKey"}', b"v10\x00enc"))
    conn.close()
    return path


def test_cline_3_65_reads_vscode_state_and_says_the_key_cannot_be_read(cli, home) -> None:
    own_config(home)
    extension(home, "saoudrizwan.claude-dev-3.40.0")
    db = state_db(home, {"apiProvider": "openai", "openAiBaseUrl": ROOT + "/v1/", "openAiModelId": "gpt-4o"},
                  secret=True)
    before = db.read_bytes()
    found = doctor(cli, "cline.legacy")["cline.legacy"]
    assert found["status"] == "fail" and f"openAiBaseUrl '{ROOT}/v1/'" in found["message"]
    text = " ".join(found["details"])
    assert "an OpenAI Compatible key is stored" in text and "cannot read or compare it" in text
    assert "open Cline's settings" in text
    assert db.read_bytes() == before  # read only


def test_cline_3_65_without_a_stored_key(cli, home) -> None:
    own_config(home)
    extension(home, "saoudrizwan.claude-dev-3.40.0")
    state_db(home, {"apiProvider": "openai", "openAiBaseUrl": ROOT + "/v1", "openAiModelId": "gpt-4o-mini"},
             secret=False)
    found = doctor(cli, "cline.legacy")["cline.legacy"]
    assert found["status"] == "fail" and "no API key for OpenAI Compatible" in found["message"]


def test_cline_vscode_removal_keeps_comments(cli, home) -> None:
    own_config(home)
    (home / ".cline").mkdir()
    path = vscode_settings(home, '{\n  // mine\n  "cline.apiProvider": "openai", // old advice\n'
                                 '  "editor.tabSize": 2e0,\n}\n')
    fixed = cli("doctor", "--offline", "--check", "cline.vscode", "--fix", "--yes").assert_clean()
    assert "--fix: repaired 1 file(s)" in fixed.stdout, fixed.output
    assert path.read_text() == '{\n  // mine\n  // old advice\n  "editor.tabSize": 2e0,\n}\n'


def test_cline_cli_store_left_over_next_to_providers_json_is_not_checked(cli, home) -> None:
    own_config(home)
    cline_file_store(home, {"apiProvider": "openai", "openAiBaseUrl": "https://old.example"}, {})
    write(home / ".cline" / "data" / "settings" / "providers.json", "{}")
    found = doctor(cli, "cline.legacy")["cline.legacy"]
    assert found["status"] == "skipped" and "reads" in found["message"] and "providers.json" in found["message"]
