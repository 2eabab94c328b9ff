"""Qwen Code's writer and reader (core/clients/qwen_code.py): the settings file, byte-faithful JSONC edits, the old
format refused, and what Qwen Code will send when the environment, .env files and settings disagree. The real Qwen
Code runs on these files in tests/real_clients/test_opencode_qwen.py."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from taotoken_cli.core.base.errors import ConfigFileError
from taotoken_cli.core.clients import qwen_code
from taotoken_cli.core.clients.base import Machine, Triple
from taotoken_cli.core.files import fileplan
from taotoken_cli.core.platform import system
from tests.conftest import SENTINEL_KEY, write

ROOT = "https://taotoken.net/api"
TRIPLE = Triple(ROOT, SENTINEL_KEY, "gpt-4o-mini")
OLD_KEY = "sk-OLDqwenKEY0123456789abcdefghijk"


def machine(home: Path, cwd: Path | None = None, **env: str) -> Machine:
    return Machine.of({"HOME": str(home), "PATH": "", **env}, cwd or home, home / ".config" / "taotoken")


def apply(plan: fileplan.Plan, home: Path) -> None:
    fileplan.apply(plan, home / ".config" / "taotoken")


def test_paths(home: Path, tmp_path: Path) -> None:
    where = qwen_code.paths(machine(home))
    assert where.settings == home / ".qwen/settings.json" and where.project is None  # cwd is HOME: no project file
    assert where.env_files == (home / ".qwen/.env", home / ".env")
    moved = qwen_code.paths(machine(home, tmp_path, QWEN_HOME=str(tmp_path / "q")))
    assert moved.settings == tmp_path / "q/settings.json" and moved.project == tmp_path / ".qwen/settings.json"
    assert qwen_code.paths(machine(home, QWEN_CODE_SYSTEM_SETTINGS_PATH=str(tmp_path / "s.json"))).system_defaults \
        == tmp_path / "system-defaults.json"
    assert system.managed_path("qwen-code", system.LINUX) == "etc/qwen-code/settings.json"
    assert system.managed_path("qwen-code", system.MACOS) == "Library/Application Support/QwenCode/settings.json"
    assert system.managed_path("qwen-code", system.WINDOWS) == "ProgramData/qwen-code/settings.json"


def test_a_fresh_home_gets_the_custom_provider_qwen_code_writes(home: Path) -> None:
    apply(qwen_code.plan(TRIPLE, machine(home)), home)
    path = home / ".qwen/settings.json"
    data = json.loads(path.read_text())
    url = ROOT + "/v1"
    assert data == {"$version": 4, "env": {"TAOTOKEN_API_KEY": SENTINEL_KEY},
                    "modelProviders": {"openai": [{"id": "gpt-4o-mini", "name": "gpt-4o-mini (TaoToken)",
                                                   "baseUrl": url, "envKey": "TAOTOKEN_API_KEY"}]},
                    "security": {"auth": {"selectedType": "openai"}},
                    "model": {"name": "gpt-4o-mini", "baseUrl": url}}
    assert next(iter(data)) == "$version" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert qwen_code.plan(TRIPLE, machine(home)).is_noop


HAND_WRITTEN = """{
  // by hand
  "$version": 4,
  "ui": { "theme": "GitHub" },
  "security": { "auth": { "selectedType": "qwen-oauth" } },
  "modelProviders": {
    "openai": [
      { "id": "qwen3-coder-plus", "baseUrl": "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "envKey": "DASHSCOPE_API_KEY" }
    ]
  },
  "model": { "name": "qwen3-coder-plus" }
}
"""


def test_hand_written_settings_keep_their_entries_and_comments(home: Path) -> None:
    path = write(home / ".qwen/settings.json", HAND_WRITTEN, 0o644)
    plan = qwen_code.plan(TRIPLE, machine(home))
    assert "set security.auth.selectedType = 'openai' (was 'qwen-oauth')" in plan.pending[0].summary
    apply(plan, home)
    text = path.read_text()
    assert text.startswith('{\n  // by hand\n  "$version": 4,\n  "ui": { "theme": "GitHub" },')
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds the key now
    found = qwen_code.effective(machine(home))
    assert (found.model, found.base_url, found.key, found.key_variable) == (
        "gpt-4o-mini", ROOT + "/v1", SENTINEL_KEY, "TAOTOKEN_API_KEY")
    assert [e["id"] for e in json.loads(text.replace("// by hand", ""))["modelProviders"]["openai"]] == [
        "qwen3-coder-plus", "gpt-4o-mini"]


def test_a_new_model_or_root_updates_every_taotoken_entry(home: Path) -> None:
    apply(qwen_code.plan(TRIPLE, machine(home)), home)
    apply(qwen_code.plan(Triple("https://gw.example/api", SENTINEL_KEY, "gpt-4.1"), machine(home)), home)
    data = json.loads((home / ".qwen/settings.json").read_text())
    assert [(e["id"], e["baseUrl"]) for e in data["modelProviders"]["openai"]] == [
        ("gpt-4o-mini", "https://gw.example/api/v1"), ("gpt-4.1", "https://gw.example/api/v1")]
    assert data["model"] == {"name": "gpt-4.1", "baseUrl": "https://gw.example/api/v1"}


def test_an_old_format_file_is_refused_with_what_to_do(home: Path) -> None:
    write(home / ".qwen/settings.json", '{"theme": "Default", "selectedAuthType": "openai", "model": "qwen3"}')
    with pytest.raises(ConfigFileError, match="old settings format") as caught:
        qwen_code.plan(TRIPLE, machine(home))
    assert caught.value.fix == "start Qwen Code once (it converts the file), then run again"


def test_the_entry_wins_over_stale_openai_variables_and_the_environment_over_the_settings(home: Path,
                                                                                          tmp_path: Path) -> None:
    apply(qwen_code.plan(TRIPLE, machine(home)), home)
    stale = {"OPENAI_API_KEY": OLD_KEY, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_MODEL": "gpt-old"}
    found = qwen_code.effective(machine(home, **stale))
    assert (found.base_url, found.key, found.model) == (ROOT + "/v1", SENTINEL_KEY, "gpt-4o-mini")
    # the variable itself: exported > a .env file > the settings' env block
    write(home / ".qwen/.env", f"TAOTOKEN_API_KEY={OLD_KEY}\n")
    found = qwen_code.effective(machine(home))
    assert (found.key, found.key_from) == (OLD_KEY, str(home / ".qwen/.env"))
    found = qwen_code.effective(machine(home, TAOTOKEN_API_KEY=SENTINEL_KEY))
    assert (found.key, found.key_from) == (SENTINEL_KEY, "$TAOTOKEN_API_KEY")
    # a project's .qwen/settings.json (outside HOME) overrides the model
    project = tmp_path / "proj"
    write(project / ".qwen/settings.json", json.dumps({"model": {"name": "qwen3-coder-plus"}}))
    found = qwen_code.effective(machine(home, project))
    assert found.model == "qwen3-coder-plus" and found.entry is None


def test_without_a_selected_type_the_openai_variables_choose_it(home: Path) -> None:
    env = {"OPENAI_API_KEY": OLD_KEY, "OPENAI_BASE_URL": "https://gw.example/v1", "OPENAI_MODEL": "m"}
    found = qwen_code.effective(machine(home, **env))
    assert (found.auth_type, found.base_url, found.key, found.model) == ("openai", "https://gw.example/v1", OLD_KEY,
                                                                         "m")
    assert qwen_code.effective(machine(home)).auth_type is None
