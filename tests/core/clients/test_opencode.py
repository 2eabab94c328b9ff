"""OpenCode's writer and reader (core/clients/opencode.py): which file it edits, byte-faithful JSONC edits, where
the key goes, and what OpenCode will send when several files and auth.json disagree. The real OpenCode runs on
these files in tests/real_clients/test_opencode_qwen.py."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from taotoken_cli.core.base.errors import ConfigFileError
from taotoken_cli.core.clients import opencode
from taotoken_cli.core.clients.base import Machine, Triple
from taotoken_cli.core.files import fileplan
from taotoken_cli.core.formats.jsonedit import parse_json
from taotoken_cli.core.platform import system
from tests.conftest import SENTINEL_KEY, write

ROOT = "https://taotoken.net/api"
TRIPLE = Triple(ROOT, SENTINEL_KEY, "gpt-4o-mini")
OLD_KEY = "sk-OLDopencodeKEY0123456789abcdefgh"


def machine(home: Path, **env: str) -> Machine:
    return Machine.of({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "PATH": "", **env}, home,
                      home / ".config" / "taotoken")


def apply(plan: fileplan.Plan, home: Path) -> None:
    fileplan.apply(plan, home / ".config" / "taotoken")


def test_paths_follow_xdg_and_the_file_opencode_writes(home: Path) -> None:
    where = opencode.paths(machine(home))
    assert where.config == home / ".config/opencode/opencode.jsonc"  # none exists: OpenCode creates this one
    assert where.auth == home / ".local/share/opencode/auth.json"
    write(home / ".config/opencode/config.json", "{}")
    assert opencode.paths(machine(home)).config.name == "config.json"
    write(home / ".config/opencode/opencode.json", "{}")
    assert opencode.paths(machine(home)).config.name == "opencode.json"  # jsonc > json > config.json
    data = machine(home, XDG_CONFIG_HOME=str(home / "cfg"), XDG_DATA_HOME=str(home / "data"))
    assert opencode.paths(data).config == home / "cfg/opencode/opencode.jsonc"
    assert opencode.paths(data).auth == home / "data/opencode/auth.json"


def test_a_fresh_home_gets_the_provider_and_the_key_in_auth_json(home: Path) -> None:
    plan = opencode.plan(TRIPLE, machine(home))
    apply(plan, home)
    config = json.loads((home / ".config/opencode/opencode.jsonc").read_text())
    assert config == {"$schema": opencode.SCHEMA, "model": "taotoken/gpt-4o-mini", "provider": {"taotoken": {
        "npm": "@ai-sdk/openai-compatible", "name": "TaoToken", "options": {"baseURL": ROOT + "/v1"},
        "models": {"gpt-4o-mini": {"name": "gpt-4o-mini"}}}}}
    assert SENTINEL_KEY not in (home / ".config/opencode/opencode.jsonc").read_text()
    auth = home / ".local/share/opencode/auth.json"
    assert json.loads(auth.read_text()) == {"taotoken": {"type": "api", "key": SENTINEL_KEY}}
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600
    assert opencode.plan(TRIPLE, machine(home)).is_noop  # a rerun changes nothing


HAND_WRITTEN = """{
  // my providers
  "theme": "tokyonight",
  "provider": {
    "ollama": { "npm": "@ai-sdk/openai-compatible", "options": { "baseURL": "http://localhost:11434/v1" } },
  },
  "model": "ollama/llama3", // default
}
"""


def test_a_hand_written_jsonc_file_keeps_every_other_byte(home: Path) -> None:
    path = write(home / ".config/opencode/opencode.json", HAND_WRITTEN, 0o644)
    apply(opencode.plan(TRIPLE, machine(home)), home)
    text = path.read_text()
    assert text.startswith('{\n  // my providers\n  "theme": "tokyonight",\n  "provider": {\n    "ollama": { "npm"')
    assert '"model": "taotoken/gpt-4o-mini", // default\n}\n' in text
    data = parse_json(text, path, allow_comments=True)
    assert set(data["provider"]) == {"ollama", "taotoken"} and "$schema" not in data
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # the key went to auth.json: the config stays readable


def test_a_key_kept_in_the_config_is_updated_there(home: Path) -> None:
    config = {"provider": {"taotoken": {"npm": "@ai-sdk/openai-compatible",
                                        "options": {"baseURL": "https://old.example/v1", "apiKey": OLD_KEY},
                                        "models": {"gpt-4o-mini": {}}}}, "model": "taotoken/gpt-4o-mini"}
    path = write(home / ".config/opencode/opencode.json", json.dumps(config, indent=2) + "\n", 0o644)
    plan = opencode.plan(TRIPLE, machine(home))
    assert [c.path.name for c in plan.pending] == ["opencode.json"] and plan.pending[0].secret
    assert OLD_KEY in plan.secrets  # masked in the diff too
    apply(plan, home)
    options = json.loads(path.read_text())["provider"]["taotoken"]["options"]
    assert options == {"baseURL": ROOT + "/v1", "apiKey": SENTINEL_KEY}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and not (home / ".local/share/opencode/auth.json").exists()


def test_other_credentials_in_auth_json_stay(home: Path) -> None:
    auth = write(home / ".local/share/opencode/auth.json", json.dumps(
        {"anthropic": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1}}))
    apply(opencode.plan(TRIPLE, machine(home)), home)
    assert set(json.loads(auth.read_text())) == {"anthropic", "taotoken"}


def test_a_provider_that_is_not_an_object_is_refused(home: Path) -> None:
    write(home / ".config/opencode/opencode.json", '{"provider": {"taotoken": "yes"}}')
    with pytest.raises(ConfigFileError, match="provider.taotoken is not a JSON object"):
        opencode.plan(TRIPLE, machine(home))


def test_what_opencode_sends_follows_its_precedence(home: Path, tmp_path: Path) -> None:
    apply(opencode.plan(TRIPLE, machine(home)), home)
    found = opencode.effective(machine(home))
    assert (found.model, found.base_url, found.key) == ("taotoken/gpt-4o-mini", ROOT + "/v1", SENTINEL_KEY)
    assert found.key_from == str(home / ".local/share/opencode/auth.json")
    # OPENCODE_AUTH_CONTENT replaces auth.json
    content = json.dumps({"taotoken": {"type": "api", "key": OLD_KEY}})
    assert opencode.effective(machine(home, OPENCODE_AUTH_CONTENT=content)).key == OLD_KEY
    # a project's opencode.json (from the git root down to the working directory) wins over the user's
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    write(project / "sub" / "opencode.json", json.dumps({"model": "taotoken/gpt-4.1", "provider": {"taotoken": {
        "options": {"apiKey": "{env:MY_KEY}"}}}}))
    inside = Machine.of({**machine(home).env, "MY_KEY": OLD_KEY}, project / "sub", home / ".config/taotoken")
    found = opencode.effective(inside)
    assert found.model == "taotoken/gpt-4.1" and found.key == OLD_KEY
    assert found.key_from == f"provider.taotoken.options.apiKey = {{env:MY_KEY}} ({project / 'sub' / 'opencode.json'})"
    assert found.overridden == [(str(project / "sub" / "opencode.json"), "model, provider")]
    assert opencode.effective(Machine.of({**inside.env, "OPENCODE_DISABLE_PROJECT_CONFIG": "1"}, inside.cwd,
                                         inside.config_dir)).model == "taotoken/gpt-4o-mini"


def test_the_administrators_folder_is_per_os() -> None:
    assert system.managed_path("opencode", system.LINUX) == "etc/opencode"
    assert system.managed_path("opencode", system.MACOS) == "Library/Application Support/opencode"
    assert system.managed_path("opencode", system.WINDOWS) == "ProgramData/opencode"
    assert system.managed_path("opencode", system.POSIX) == "etc/opencode"


def test_a_key_read_from_a_variable_is_left_alone_and_said(home: Path) -> None:
    config = {"provider": {"taotoken": {"options": {"apiKey": "{env:TT_KEY}"}}}}
    path = write(home / ".config/opencode/opencode.json", json.dumps(config) + "\n", 0o644)
    plan = opencode.plan(TRIPLE, machine(home))
    assert any("{env:TT_KEY}: OpenCode sends what that gives" in w for w in plan.warnings)
    apply(plan, home)
    assert json.loads(path.read_text())["provider"]["taotoken"]["options"]["apiKey"] == "{env:TT_KEY}"
