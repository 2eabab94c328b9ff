"""`taotoken init` end to end: the real CLI in a subprocess, real files in a temporary HOME."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from taotoken_cli.cmd.init import plan as init_core
from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.clients import claude_code, cline, codex
from taotoken_cli.core.clients.base import Machine
from taotoken_cli.core.files import fileplan
from taotoken_cli.core.settings import tomllib  # tomllib, or tomli on Python 3.10
from taotoken_cli.core.term.iostreams import IOStreams
from tests.conftest import SENTINEL_KEY, PtySession, flat, needs_posix, python_path, squashed
from tests.core.files.test_fileplan import snapshot

MODEL = "gpt-4o-mini"


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# The module's gateway: the mock on loopback (init asks it whether the model is listed, and for the Gemini API
# when Gemini CLI is a target); its port is chosen at import, so the expected file contents below can name it.
GATEWAY_PORT = _free_port()
ORIGIN = f"http://127.0.0.1:{GATEWAY_PORT}"
ROOT = f"{ORIGIN}/api"


@pytest.fixture(scope="module", autouse=True)
def gateway():
    from taotoken_cli.cmd.mock import MockGateway, MockOptions

    with MockGateway(MockOptions(port=GATEWAY_PORT, key=SENTINEL_KEY)) as mock:
        yield mock

CLAUDE_SETTINGS = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm run test:*)",
      "Read(~/.zshrc)"
    ],
    "deny": [
      "Read(./.env)"
    ]
  },
  "env": {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
    "ANTHROPIC_API_KEY": "sk-ant-api03-OLDkeyOLDkeyOLDkey1234",
    "ANTHROPIC_BASE_URL": "https://old.example.com/v1"
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "prettier --write \\"$CLAUDE_FILE_PATHS\\""
          }
        ]
      }
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "~/.claude/statusline.sh",
    "padding": 0
  },
  "alwaysThinkingEnabled": true,
  "cleanupPeriodDays": 30,
  "language": "français — ünïcödé"
}
"""
CLAUDE_ENV_BEFORE = """  "env": {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
    "ANTHROPIC_API_KEY": "sk-ant-api03-OLDkeyOLDkeyOLDkey1234",
    "ANTHROPIC_BASE_URL": "https://old.example.com/v1"
  },
"""
CLAUDE_ENV_AFTER = f"""  "env": {{
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
    "ANTHROPIC_BASE_URL": "{ROOT}",
    "ANTHROPIC_AUTH_TOKEN": "{SENTINEL_KEY}",
    "ANTHROPIC_MODEL": "{MODEL}",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL": "{MODEL}"
  }},
"""
CLAUDE_JSON = """{
  "numStartups": 42,
  "installMethod": "native",
  "autoUpdates": false,
  "tipsHistory": {
    "new-user-warmup": 7
  },
  "projects": {
    "/home/u/src/app": {
      "allowedTools": [],
      "hasTrustDialogAccepted": true,
      "lastCost": 0.1234
    }
  },
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-github"
      ]
    }
  },
  "userID": "0123abcd"
}
"""
CODEX_TOML = """# ~/.codex/config.toml — hand-tuned, keep my comments
model = "gpt-5-codex"   # default model
approval_policy = "on-request"
sandbox_mode = "workspace-write"

# reasoning
model_reasoning_effort = "high"

[model_providers.openrouter]
name = "OpenRouter"
base_url = "https://openrouter.ai/api/v1"
env_key = "OPENROUTER_API_KEY"
wire_api = "responses"

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]  # docs lookup

[tui]
notifications = true
"""
CODEX_TOML_AFTER = f"""# ~/.codex/config.toml — hand-tuned, keep my comments
model = "{MODEL}"   # default model
approval_policy = "on-request"
sandbox_mode = "workspace-write"

# reasoning
model_reasoning_effort = "high"
model_provider = "taotoken"

[model_providers.openrouter]
name = "OpenRouter"
base_url = "https://openrouter.ai/api/v1"
env_key = "OPENROUTER_API_KEY"
wire_api = "responses"

[model_providers.taotoken]
name = "TaoToken"
base_url = "{ROOT}/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]  # docs lookup

[tui]
notifications = true
"""
CLINE_JSON = """{
  "version": 1,
  "lastUsedProvider": "anthropic",
  "modes": {},
  "providers": {
    "anthropic": {
      "settings": {
        "provider": "anthropic",
        "apiKey": "sk-ant-other-provider-key-0000",
        "model": "claude-sonnet-4-5"
      },
      "updatedAt": "2026-07-01T10:00:00.000Z",
      "tokenSource": "manual"
    }
  }
}
"""
BASHRC = "# ~/.bashrc\nexport PATH=\"$HOME/bin:$PATH\"\nalias ll='ls -l'\n"


def init(cli, *args: str, key: str = SENTINEL_KEY, env: dict | None = None, cwd: Path | None = None):
    return cli("init", "--key-stdin", "--model", MODEL, "--base-url", ROOT, *args, input=key, env=env, cwd=cwd)


def write(path: Path, text: str, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chmod(path, mode)
    return path


@pytest.fixture
def existing(home: Path) -> dict[str, Path]:
    """A machine with every client configured by hand."""
    return {
        "settings": write(home / ".claude" / "settings.json", CLAUDE_SETTINGS),
        "claude_json": write(home / ".claude.json", CLAUDE_JSON, 0o600),
        "codex": write(home / ".codex" / "config.toml", CODEX_TOML, 0o640),
        "cline": write(home / ".cline" / "data" / "settings" / "providers.json", CLINE_JSON, 0o600),
        "bashrc": write(home / ".bashrc", BASHRC),
    }


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ------------------------------------------------------------------------------------ fresh machine

def test_all_targets_into_an_empty_home_write_the_reference_formats(cli, home: Path) -> None:
    result = init(cli, "--all", "--yes", "-v").assert_clean()  # -v: the links and every change listed
    assert result.returncode == 0, result.output

    own = tomllib.loads((home / ".config/taotoken/config.toml").read_text())
    assert own["profiles"]["default"] == {"base_url": ROOT, "api_key": SENTINEL_KEY, "model": MODEL}

    settings = json.loads((home / ".claude/settings.json").read_text())
    assert settings == {"env": {"ANTHROPIC_BASE_URL": ROOT, "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY,
                                "ANTHROPIC_MODEL": MODEL, "ANTHROPIC_DEFAULT_HAIKU_MODEL": MODEL}}
    assert json.loads((home / ".claude.json").read_text()) == {"hasCompletedOnboarding": True}

    config = tomllib.loads((home / ".codex/config.toml").read_text())
    assert config == {"model": MODEL, "model_provider": "taotoken", "model_providers": {"taotoken": {
        "name": "TaoToken", "base_url": ROOT + "/v1", "env_key": "OPENAI_API_KEY", "wire_api": "responses"}}}
    assert not (home / ".codex/auth.json").exists()

    providers = json.loads((home / ".cline/data/settings/providers.json").read_text())
    entry = providers["providers"]["openai-compatible"]
    assert list(providers) == ["version", "lastUsedProvider", "modes", "providers"]
    assert (providers["version"], providers["lastUsedProvider"], providers["modes"]) == (1, "openai-compatible", {})
    assert entry["settings"] == {"provider": "openai-compatible", "apiKey": SENTINEL_KEY, "model": MODEL,
                                 "baseUrl": ROOT + "/v1"}
    assert entry["tokenSource"] == "manual"
    assert len(entry["updatedAt"]) == 24 and entry["updatedAt"].endswith("Z")  # 2026-08-22T00:00:00.000Z

    links = (home / ".config/taotoken/cc-switch-import.txt").read_text().splitlines()
    claude_link = next(line for line in links if line.startswith("ccswitch://v1/import?app=claude"))
    codex_link = next(line for line in links if line.startswith("ccswitch://v1/import?app=codex"))
    from urllib.parse import parse_qs, urlsplit
    claude_q = {k: v[0] for k, v in parse_qs(urlsplit(claude_link).query).items()}
    codex_q = {k: v[0] for k, v in parse_qs(urlsplit(codex_link).query).items()}
    assert claude_q == {"app": "claude", "resource": "provider", "name": "TaoToken", "endpoint": ROOT,
                        "homepage": ORIGIN, "apiKey": SENTINEL_KEY, "model": MODEL,
                        "haikuModel": MODEL}
    assert codex_q == {"app": "codex", "resource": "provider", "name": "TaoToken", "endpoint": ROOT + "/v1",
                       "homepage": ORIGIN, "apiKey": SENTINEL_KEY, "model": MODEL}
    assert "ccswitch://v1/import?app=claude" in result.stdout and "apiKey=sk-SE…WXYZ" in result.stdout

    needs_posix("bash sourcing env.sh (on Windows init's shell target is the user environment and PowerShell)")
    env_sh = home / ".config/taotoken/env.sh"
    exported = subprocess.run(["bash", "-c", f". {env_sh} && env"], capture_output=True, text=True,
                              env={"PATH": os.environ["PATH"]}, check=True).stdout
    for line in (f"OPENAI_BASE_URL={ROOT}/v1", f"OPENAI_API_KEY={SENTINEL_KEY}"):
        assert line in exported.splitlines()
    # Nothing taotoken itself reads: an exported TAOTOKEN_* would shadow every later `taotoken config set`.
    assert not [line for line in exported.splitlines() if line.startswith("TAOTOKEN_")]
    bashrc = (home / ".bashrc").read_text()
    assert bashrc.count("taotoken-env") == 1 and str(env_sh) in bashrc

    for secret_file in (".config/taotoken/config.toml", ".claude/settings.json", ".cline/data/settings/providers.json",
                        ".config/taotoken/env.sh", ".config/taotoken/cc-switch-import.txt"):
        assert mode(home / secret_file) == 0o600, secret_file
    assert mode(home / ".codex/config.toml") == 0o644  # env_key mode: no key inside


def test_second_identical_run_changes_nothing_and_says_so(cli, home: Path, existing) -> None:
    assert init(cli, "--all", "--yes").assert_clean().returncode == 0
    before = snapshot(home)
    again = init(cli, "--all", "--yes").assert_clean()
    assert again.returncode == 0
    assert "already up to date" in again.stdout and "wrote" not in again.stdout
    assert snapshot(home) == before


# --------------------------------------------------------------------------- existing hand-made configs

def test_existing_configs_survive_byte_for_byte_outside_the_changed_keys(cli, home: Path, existing) -> None:
    result = init(cli, "--all", "--yes", "--verbose").assert_clean()
    assert result.returncode == 0, result.output

    assert existing["settings"].read_text() == CLAUDE_SETTINGS.replace(CLAUDE_ENV_BEFORE, CLAUDE_ENV_AFTER)
    assert "removed env.ANTHROPIC_API_KEY" in result.stdout
    assert existing["claude_json"].read_text() == CLAUDE_JSON[: -len("\n}\n")] + \
        ',\n  "hasCompletedOnboarding": true\n}\n'
    assert existing["codex"].read_text() == CODEX_TOML_AFTER
    assert mode(existing["codex"]) == 0o640  # existing mode kept

    cline_after = existing["cline"].read_text()
    anthropic_block = CLINE_JSON[CLINE_JSON.index('    "anthropic"'):CLINE_JSON.index("    }\n  }\n}")]
    assert anthropic_block in cline_after
    parsed = json.loads(cline_after)
    assert parsed["lastUsedProvider"] == "openai-compatible"
    assert parsed["providers"]["anthropic"] == json.loads(CLINE_JSON)["providers"]["anthropic"]

    assert existing["bashrc"].read_text().startswith(BASHRC)
    assert existing["bashrc"].read_text().count("\n") == BASHRC.count("\n") + 1
    assert "sk-ant-api03-OLDkeyOLDkeyOLDkey1234" not in result.output


def test_dry_run_prints_masked_diffs_and_writes_nothing(cli, home: Path, existing) -> None:
    before = snapshot(home)
    result = init(cli, "--all", "--dry-run").assert_clean()
    assert result.returncode == 0, result.output
    assert snapshot(home) == before
    assert f"--- {existing['settings']}" in result.stdout and f"+++ {existing['codex']}" in result.stdout
    assert '+    "ANTHROPIC_AUTH_TOKEN": "sk-SE…WXYZ",' in result.stdout
    assert '-    "ANTHROPIC_API_KEY": "sk-an…1234",' in result.stdout
    assert "sk-ant-api03-OLDkeyOLDkeyOLDkey1234" not in result.output
    assert "dry run: nothing was written" in result.stdout


def test_undo_restores_the_last_run_exactly(cli, home: Path, existing) -> None:
    os.chmod(existing["settings"], 0o644)
    before = snapshot(home)
    assert init(cli, "--all", "--yes").returncode == 0
    assert mode(existing["settings"]) == 0o600  # now holds the key
    result = cli("init", "--undo").assert_clean()
    assert result.returncode == 0, result.output
    assert "restored" in result.stdout and "deleted" in result.stdout
    # Everything outside taotoken's own directory (which keeps the backups) is exactly as before.
    assert snapshot(home, skip=(".config",)) == snapshot_without(before, ".config")
    assert not (home / ".config/taotoken/config.toml").exists()
    again = cli("init", "--undo")
    assert again.returncode == 1 and "no taotoken run to undo" in again.stderr


def snapshot_without(state: dict, prefix: str) -> dict:
    return {k: v for k, v in state.items() if not (k == prefix or k.startswith(prefix + "/"))}


def test_symlinked_configs_keep_the_link_and_write_the_target(cli, home: Path) -> None:
    dotfiles = home / "dotfiles"
    real_settings = write(dotfiles / "claude-settings.json", '{\n    "model": "opus"\n}\n')
    real_codex = write(dotfiles / "codex.toml", "# mine\nmodel = \"x\"\n", 0o640)
    (home / ".claude").mkdir()
    (home / ".claude/settings.json").symlink_to(real_settings)
    (home / ".codex").mkdir()
    (home / ".codex/config.toml").symlink_to(real_codex)
    result = init(cli, "--target", "claude-code", "--target", "codex", "--target", "shell", "--yes").assert_clean()
    assert result.returncode == 0, result.output
    assert (home / ".claude/settings.json").is_symlink() and (home / ".codex/config.toml").is_symlink()
    assert json.loads(real_settings.read_text())["env"]["ANTHROPIC_AUTH_TOKEN"] == SENTINEL_KEY
    assert real_settings.read_text().startswith('{\n    "model": "opus",\n    "env": {\n')  # 4-space style kept
    assert real_codex.read_text().startswith("# mine\nmodel = \"gpt-4o-mini\"\n")
    assert mode(real_codex) == 0o640


# ----------------------------------------------------------------------------------------- failures

def test_malformed_json_stops_everything_before_any_write(cli, home: Path, existing) -> None:
    write(existing["cline"], '{\n  "version": 1,\n  "providers": {\n    "x": 1,\n  }\n}\n', 0o600)
    before = snapshot(home)
    result = init(cli, "--all", "--yes").assert_clean()
    assert result.returncode == 3
    assert f"{existing['cline']}:5:3: invalid JSON" in flat(result.stderr) and "fix:" in result.stderr
    assert snapshot(home) == before


def test_malformed_toml_stops_everything_before_any_write(cli, home: Path, existing) -> None:
    write(existing["codex"], 'model = "a"\n[model_providers.x\nname = "y"\n')
    before = snapshot(home)
    result = init(cli, "--all", "--yes").assert_clean()
    assert result.returncode == 3
    # squashed: a longer temporary path (an xdist worker's) wraps the message at another word
    assert squashed(f"{existing['codex']}:2:") in squashed(result.stderr)
    assert "invalid TOML" in flat(result.stderr)
    assert snapshot(home) == before


def test_several_broken_files_are_all_named(cli, home: Path, existing) -> None:
    write(existing["codex"], "model = \n")
    write(existing["settings"], "{ nope }")
    result = init(cli, "--all", "--yes").assert_clean()
    assert result.returncode == 3
    assert f"{existing['codex']}:1:" in result.stderr and f"{existing['settings']}:1:3" in result.stderr


def test_failure_half_way_through_the_real_plan_leaves_every_file_as_before(home: Path, existing,
                                                                            monkeypatch) -> None:
    planned = init_core.build(init_core.InitRequest(base_url=ROOT, api_key=SENTINEL_KEY, model=MODEL,
                                                    all_targets=True),
                              IOStreams.memory(env=os.environ, cwd=home))
    assert len(planned.plan.pending) >= 6
    before = snapshot(home)
    real_write = fileplan.atomic_write
    calls = {"n": 0}

    def failing_write(path, data, **kwargs):  # fault injection: the 3rd write hits a full disk
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real_write(path, data, **kwargs)

    monkeypatch.setattr(fileplan, "atomic_write", failing_write)
    with pytest.raises(TaotokenError, match="nothing was changed"):
        fileplan.apply(planned.plan, home / ".config/taotoken")
    assert snapshot(home, skip=(".config",)) == snapshot_without(before, ".config")
    assert not (home / ".config/taotoken/config.toml").exists()


def test_file_edited_between_plan_and_apply_stops_the_run(home: Path, existing) -> None:
    planned = init_core.build(init_core.InitRequest(base_url=ROOT, api_key=SENTINEL_KEY, model=MODEL,
                                                    all_targets=True),
                              IOStreams.memory(env=os.environ, cwd=home))
    existing["codex"].write_text(CODEX_TOML + "# edited meanwhile\n")
    before = snapshot(home)
    with pytest.raises(TaotokenError, match="changed after the plan"):
        fileplan.apply(planned.plan, home / ".config/taotoken")
    assert snapshot(home, skip=(".config",)) == snapshot_without(before, ".config")
    assert not (home / ".config/taotoken/config.toml").exists()


def test_concurrent_runs_never_mix_files(home: Path, existing) -> None:
    env = {**os.environ, "PYTHONPATH": python_path()}
    procs = []
    for model in ("model-a", "model-b"):
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "taotoken_cli", "init", "--all", "--yes", "--key-stdin", "--model", model,
             "--base-url", ROOT, "--allow-unlisted"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=home))
    outputs = [p.communicate(SENTINEL_KEY, timeout=60) for p in procs]
    codes = [p.returncode for p in procs]
    assert 0 in codes, outputs
    for code, (_, err) in zip(codes, outputs, strict=True):
        assert code == 0 or "changed after the plan" in err or "another taotoken run" in err, err
        assert "Traceback" not in err
    model = json.loads(existing["settings"].read_text())["env"]["ANTHROPIC_MODEL"]
    assert tomllib.loads(existing["codex"].read_text())["model"] == model
    assert json.loads(existing["cline"].read_text())["providers"]["openai-compatible"]["settings"]["model"] == model


def test_non_tty_without_yes_refuses_instead_of_hanging(cli, home: Path, existing) -> None:
    before = snapshot(home)
    result = init(cli, "--all").assert_clean()
    assert result.returncode == 2
    assert "stdin is not a terminal" in result.stderr and "--yes" in result.stderr
    assert snapshot(home) == before


def test_missing_values_without_a_terminal_name_the_flag(run, home: Path) -> None:
    # in-process (stdin is not a terminal here either); the refusal above is the subprocess proof of the same rule
    result = run("init", "--yes", "--model", MODEL, input="").assert_clean()
    assert result.returncode == 2 and "--key-stdin" in result.stderr and "TAOTOKEN_API_KEY" in result.stderr
    result = run("init", "--yes", "--key-stdin", input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 2 and "--model" in result.stderr


def test_key_flag_works_but_warns_and_hygiene_is_reported(cli, home: Path) -> None:
    result = cli("init", "--yes", "--key", f"  '{SENTINEL_KEY}'\n", "--model", MODEL,
                 "--base-url", f"{ROOT}/v1/?utm_source=blog").assert_clean()
    assert result.returncode == 0, result.output
    assert "shell history" in result.output
    assert "removed the query string" in result.stdout and "removed the trailing /v1" in result.stdout
    own = tomllib.loads((home / ".config/taotoken/config.toml").read_text())["profiles"]["default"]
    assert own == {"base_url": ROOT, "api_key": SENTINEL_KEY, "model": MODEL}


def test_values_come_from_the_environment(cli, home: Path) -> None:
    result = cli("init", "--yes", "--target", "cline", "--allow-unlisted",
                 env={"TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_MODEL": "env-model",
                      "TAOTOKEN_BASE_URL": ROOT}).assert_clean()
    assert result.returncode == 0, result.output
    entry = json.loads((home / ".cline/data/settings/providers.json").read_text())["providers"]["openai-compatible"]
    assert entry["settings"]["model"] == "env-model"


# ------------------------------------------------------------------------------ per-client options

def test_client_directories_from_environment_variables(cli, home: Path) -> None:
    env = {"CLAUDE_CONFIG_DIR": str(home / "cc"), "CODEX_HOME": str(home / "cx"),
           "CLINE_PROVIDER_SETTINGS_PATH": str(home / "cl" / "p.json")}
    result = init(cli, "--target", "claude-code", "--target", "codex", "--target", "cline", "--target", "shell",
                  "--yes", env=env).assert_clean()
    assert result.returncode == 0, result.output
    assert (home / "cc/settings.json").exists() and (home / "cc/.claude.json").exists()
    assert not (home / ".claude.json").exists() and not (home / ".claude").exists()
    assert (home / "cx/config.toml").exists() and (home / "cl/p.json").exists()


@pytest.mark.parametrize("variable,expected", [("CLINE_DIR", "cd/data/settings/providers.json"),
                                               ("CLINE_DATA_DIR", "cd/settings/providers.json")])
def test_cline_directory_variables(home: Path, variable: str, expected: str) -> None:
    machine = Machine.of({"HOME": str(home), variable: str(home / "cd")})
    assert cline.paths(machine).providers == home / expected


def test_detection_picks_the_installed_clients(cli, home: Path) -> None:
    (home / ".cline").mkdir()
    result = init(cli, "--yes", "-v", env={"PATH": "/usr/bin:/bin"}).assert_clean()
    assert result.returncode == 0, result.output
    assert (home / ".cline/data/settings/providers.json").exists() and not (home / ".claude").exists()
    assert "cline: detected" in result.stdout


def test_the_default_output_is_one_line_per_client_then_undo_and_next(cli, home: Path, existing) -> None:
    """An ordinary run says what changed per client, a repair of what the user had set, the undo command and the
    next step: no list of every value, no other notes, no "wrote" for every file (those come with -v or --dry-run)."""
    result = init(cli, "--target", "claude-code", "--target", "codex", "--target", "shell", "--yes",
                  env={"COLUMNS": "120"}).assert_clean()
    assert result.returncode == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"taotoken init — profile 'default': {ROOT}, key sk-SE…WXYZ, model {MODEL}"
    assert lines[1:6] == ["changes:",
                          "  own config   create ~/.config/taotoken/config.toml, ~/.config/taotoken/copies.json",
                          "  claude-code  update ~/.claude/settings.json, ~/.claude.json",
                          "  codex        update ~/.codex/config.toml",
                          "  shell        create ~/.config/taotoken/env.sh, update ~/.bashrc"]
    # a repair of what the user had set is said even here (the `existing` settings.json holds an API key beside
    # the token init writes)
    assert " ".join(" ".join(lines[6:8]).split()) == (
        "note: removed env.ANTHROPIC_API_KEY (sk-an…1234): with ANTHROPIC_AUTH_TOKEN also set, requests may carry "
        "two different credentials (X-Api-Key and Bearer)")  # wrapped at 120 columns, the rest hung under the text
    assert lines[8].startswith("undo: taotoken init --undo   (backups of the previous versions: "
                               "~/.config/taotoken/backups/")
    assert lines[9:] == ["next: taotoken check   (one request: base URL, key and model)",
                         "      . ~/.config/taotoken/env.sh   (for Codex and SDK scripts started from this shell; "
                         "new shells load it themselves)"]
    assert "wrote " not in result.stdout and result.output.count("note:") == 1
    verbose = init(cli, "--target", "cline", "--yes", "-v").assert_clean()
    assert "wrote " in verbose.stdout and "set providers.openai-compatible.settings.model" in verbose.stdout


def test_detected_codex_without_a_terminal_names_the_missing_choice(cli, home: Path) -> None:
    """Codex with --codex-auth env needs the shell target, which exports the key to every shell: it is never
    added silently. Without a terminal to ask on, the error names both ways to choose; nothing is written."""
    (home / ".codex").mkdir()
    (home / ".cline").mkdir()
    before = snapshot(home)
    refused = init(cli, "--yes", env={"PATH": "/usr/bin:/bin"}).assert_clean()
    assert refused.returncode == 2 and snapshot(home) == before
    assert "Codex reads the key from $OPENAI_API_KEY" in refused.stderr
    assert "taotoken init --target codex --target cline --target shell" in refused.stderr
    assert "--codex-auth auth-json" in refused.stderr
    dry = init(cli, "--dry-run", env={"PATH": "/usr/bin:/bin"}).assert_clean()  # a dry run still shows the plan
    assert dry.returncode == 0 and "targets: own config, codex, cline\n" in dry.stdout
    assert "warning: codex: reads the key from $OPENAI_API_KEY, and no target chosen exports it" in dry.stdout
    assert dry.stdout.rstrip().endswith("dry run: nothing was written") and snapshot(home) == before
    chosen = init(cli, "--target", "codex", "--target", "cline", "--target", "shell", "--yes").assert_clean()
    assert chosen.returncode == 0, chosen.output
    assert (home / ".codex/config.toml").exists() and (home / ".config/taotoken/env.sh").exists()
    assert "next: taotoken check" in chosen.stdout and "      . ~/.config/taotoken/env.sh   (for Codex" in chosen.stdout


def test_codex_auth_json_mode(cli, home: Path) -> None:
    write(home / ".codex/auth.json", '{\n  "auth_mode": "chatgpt",\n  "OPENAI_API_KEY": null,\n  "tokens": {\n'
          '    "id_token": "a",\n    "access_token": "b",\n    "refresh_token": "c"\n  }\n}\n', 0o600)
    result = init(cli, "--target", "codex", "--codex-auth", "auth-json", "--yes").assert_clean()
    assert result.returncode == 0, result.output
    assert "replaces it" in result.stderr
    provider = tomllib.loads((home / ".codex/config.toml").read_text())["model_providers"]["taotoken"]
    assert provider["requires_openai_auth"] is True and "env_key" not in provider
    auth = json.loads((home / ".codex/auth.json").read_text())
    assert auth["auth_mode"] == "apikey" and auth["OPENAI_API_KEY"] == SENTINEL_KEY
    assert mode(home / ".codex/auth.json") == 0o600
    assert not (home / ".config/taotoken/env.sh").exists()  # no shell target needed


def test_codex_inline_mode_switches_key_source_and_protects_the_file(cli, home: Path) -> None:
    assert init(cli, "--target", "codex", "--target", "shell", "--yes").returncode == 0
    result = init(cli, "--target", "codex", "--codex-auth", "inline", "--yes").assert_clean()
    assert result.returncode == 0, result.output
    assert "plaintext" in result.stderr
    provider = tomllib.loads((home / ".codex/config.toml").read_text())["model_providers"]["taotoken"]
    assert provider["experimental_bearer_token"] == SENTINEL_KEY and "env_key" not in provider
    assert mode(home / ".codex/config.toml") == 0o600


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_project_scope_writes_the_repository_local_settings(cli, home: Path) -> None:
    repo = home / "src" / "app"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    result = init(cli, "--target", "claude-code", "--scope", "project", "--yes", cwd=repo).assert_clean()
    assert result.returncode == 0, result.output
    local = json.loads((repo / ".claude/settings.local.json").read_text())
    assert local["env"]["ANTHROPIC_BASE_URL"] == ROOT
    assert not (home / ".claude/settings.json").exists()
    assert "not git-ignored" in flat(result.stderr) and "trust prompt" in flat(result.stderr)
    outside = init(cli, "--target", "claude-code", "--scope", "project", "--yes", cwd=home).assert_clean()
    assert outside.returncode == 2 and "git repository" in outside.stderr


def test_claude_hides_an_exported_api_key_from_claude_code(home: Path) -> None:
    """The shell's ANTHROPIC_API_KEY would go to the gateway as X-Api-Key beside the Bearer token: "" in the env block
    hides it from Claude Code alone (tests/real_clients/test_init_repairs.py proves it with the real client)."""
    from taotoken_cli.core.clients.base import Triple

    machine = Machine.of({"HOME": str(home), "ANTHROPIC_API_KEY": "sk-userANTHROPICkey0123456789"})
    plan = claude_code.plan(Triple(ROOT, SENTINEL_KEY, MODEL), machine)
    settings = json.loads(next(c for c in plan.changes if c.path.name == "settings.json").after)
    assert settings["env"]["ANTHROPIC_API_KEY"] == "" and not plan.broken
    assert any('ANTHROPIC_API_KEY = ""' in line and "this shell" in line for c in plan.changes for line in c.summary)


def test_read_functions_report_state_and_parse_errors_for_doctor(home: Path, existing) -> None:
    machine = Machine.of({"HOME": str(home)}, cwd=home)
    write(existing["codex"], "model = \n")
    state = codex.read(machine)
    assert state.detection.found and state.files["config"].error is not None
    assert state.files["config"].error.line == 1
    claude = claude_code.read(machine)
    assert claude_code.env_block(claude.files["settings"].data)["ANTHROPIC_BASE_URL"] == "https://old.example.com/v1"
    assert cline.read(machine).files["providers"].data["lastUsedProvider"] == "anthropic"


def test_interactive_prompts_hide_the_key_and_ask_before_writing(home: Path, mock_gateway) -> None:
    """A real pseudo-terminal: the prompts appear, the typed key is not echoed, 'y' applies."""
    mock = mock_gateway(models=(MODEL, "typed-model"))
    with PtySession(["init", "--target", "cline"], cwd=home) as session:
        session.expect(b"Base URL [https://taotoken.net/api]")
        session.send(mock.url.encode() + b"\n")
        session.expect(b"API key (input hidden)")
        session.send(SENTINEL_KEY.encode() + b"\n")
        session.expect(b"Model: ")
        session.send(b"typed-model\n")
        session.expect(b"Apply these changes? [y/N]")
        session.send(b"y\n")
        session.expect(b"undo: taotoken init --undo")
        session.expect(b"next: taotoken check")
    seen = session.seen
    assert session.exit_code == 0, seen
    assert SENTINEL_KEY.encode() not in seen  # neither echoed nor printed
    entry = json.loads((home / ".cline/data/settings/providers.json").read_text())["providers"]["openai-compatible"]
    assert entry["settings"]["apiKey"] == SENTINEL_KEY and entry["settings"]["model"] == "typed-model"


def test_wizard_re_asks_bad_input_and_picks_the_model_from_the_gateway_list(home: Path, mock_gateway) -> None:
    """A bad URL and a broken key are asked again (not the end of the dialogue); a pasted `Bearer ` is removed
    with a note; the model is picked from the gateway's list, narrowed by typing; Codex's shell target is asked."""
    mock = mock_gateway(models=(MODEL, "gpt-4o", "qwen-max"))
    (home / ".codex").mkdir()  # Codex is detected
    with PtySession(["init"], cwd=home) as session:
        session.expect(b"Base URL [https://taotoken.net/api]: ")
        session.send(b"127.0.0.1/api\n")
        session.expect(b"error: base URL '127.0.0.1/api' has no scheme")
        session.expect(b"Base URL [https://taotoken.net/api]: ")
        session.send(mock.url.encode() + b"/v1/chat/completions\n")
        session.expect(b"note: base URL: removed the endpoint path /chat/completions")
        session.expect(b"API key (input hidden): ")
        session.send(b"sk-broken key\n")
        session.expect(b"error: the key contains whitespace inside it")
        session.expect(b"API key (input hidden): ")
        session.send(b"Bearer " + SENTINEL_KEY.encode() + b"\n")
        session.expect(b"note: API key: removed 'Bearer' before the key")
        session.expect(b"3 models listed")
        session.expect(b"3) qwen-max")
        session.expect(b"Model: ")
        session.send(b"\n")
        session.expect(b"type a number from the list")
        session.expect(b"Model: ")
        session.send(b"gpt\n")
        session.expect(b"2 of 3 match:")
        session.expect(b"2) gpt-4o")
        session.send(b"qwen-mx\n")
        session.expect(b"'qwen-mx' is not listed; close: qwen-max")
        session.send(b"2\n")  # the number in the list shown last
        session.expect(b"add the shell target, which exports it (and OPENAI_BASE_URL) in every new shell? [Y/n] ")
        session.send(b"\n")
        session.expect(b"  shell       create ~/.config/taotoken/env.sh")  # chosen: one line per target
        session.expect(b"Apply these changes? [y/N] ")
        session.send(b"y\n")
        session.expect(b"next: taotoken check")
        session.expect(b". ~/.config/taotoken/env.sh")
    assert session.exit_code == 0, session.seen
    assert SENTINEL_KEY.encode() not in session.seen
    own = tomllib.loads((home / ".config/taotoken/config.toml").read_text())["profiles"]["default"]
    assert own == {"base_url": mock.url, "api_key": SENTINEL_KEY, "model": "gpt-4o"}
    assert (home / ".codex/config.toml").exists() and (home / ".config/taotoken/env.sh").exists()


def test_wizard_without_a_list_needs_an_explicit_yes_and_says_why(home: Path, mock_gateway) -> None:
    mock = mock_gateway(models=(MODEL,))
    with PtySession(["init", "--target", "cline", "--base-url", mock.url], cwd=home) as session:
        session.expect(b"API key (input hidden): ")
        session.send(b"sk-wrongWRONGwrong0123456\n")
        session.expect(b"warning: the gateway rejected the key [auth.invalid_key; server said: Invalid token")
        session.expect(b"Model ID: ")
        session.send(b"  \n")
        session.expect(b"error: the model ID is empty")
        session.expect(b"Model ID: ")
        session.send(b"my-model\n")
        session.expect(b"Use 'my-model' without checking it? [y/N] ")
        session.send(b"n\n")
        session.expect(b"Model ID: ")
        session.send(b"my-model\n")
        session.expect(b"without checking it? [y/N] ")
        session.send(b"y\n")
        session.expect(b"Apply these changes? [y/N] ")
        session.send(b"n\n")
        session.expect(b"cancelled: nothing was written")
    assert session.exit_code == 1, session.seen
    assert not (home / ".config/taotoken").exists() and not (home / ".cline").exists()


def test_ctrl_d_at_a_question_ends_cleanly_with_nothing_written(home: Path) -> None:
    with PtySession(["init", "--target", "cline"], cwd=home) as session:
        session.expect(b"Base URL [https://taotoken.net/api]: ")
        session.send(b"\n")
        session.expect(b"API key (input hidden): ")
        session.send(b"\x04")
        session.expect(b"cancelled: nothing was written")
    assert session.exit_code == 130, session.seen
    assert b"Traceback" not in session.seen
    assert not (home / ".config").exists() and not (home / ".cline").exists()


def test_profile_option_writes_that_profile(cli, home: Path) -> None:
    assert init(cli, "--yes").returncode == 0
    result = init(cli, "--yes", "--profile", "gpu").assert_clean()
    assert result.returncode == 0, result.output
    own = tomllib.loads((home / ".config/taotoken/config.toml").read_text())
    assert own["default_profile"] == "default" and set(own["profiles"]) == {"default", "gpu"}
