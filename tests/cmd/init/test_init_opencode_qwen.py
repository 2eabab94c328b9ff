"""`init` with OpenCode and Qwen Code: detected from their folders, written through the apply flow (a hand-written
file keeps its bytes outside what init sets), and `init --undo` puts every file back exactly."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import SENTINEL_KEY, flat, write

ROOT = "http://127.0.0.1:9/api"
HAND_WRITTEN = '{\n  // mine\n  "theme": "opencode",\n}\n'


def init(run, *args: str):
    return run("init", "--key-stdin", "--base-url", ROOT, "--model", "gpt-4o-mini", *args, input=SENTINEL_KEY)


def test_their_folders_are_detected_and_undo_restores_every_byte(run, home: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # their commands are not on this PATH: the folders decide
    config = write(home / ".config/opencode/opencode.json", HAND_WRITTEN, 0o644)
    (home / ".qwen").mkdir()
    result = init(run, "--yes", "-v").assert_clean()  # -v: the targets and why (the compact default omits them)
    assert result.returncode == 0, result.output
    assert "targets: own config, opencode, qwen-code\n" in result.stdout
    assert f"opencode: detected ({home}/.config/opencode exists)" in flat(result.stdout)
    assert f"qwen-code: detected ({home}/.qwen exists)" in flat(result.stdout)
    text = config.read_text()
    assert text.startswith('{\n  // mine\n  "theme": "opencode",\n') and '"model": "taotoken/gpt-4o-mini"' in text
    assert json.loads((home / ".qwen/settings.json").read_text())["env"]["TAOTOKEN_API_KEY"] == SENTINEL_KEY
    rerun = init(run, "--yes", "-v").stdout
    assert "[opencode]" not in rerun and "[qwen-code]" not in rerun, rerun  # nothing left to change in them
    undone = run("init", "--undo").assert_clean()
    assert undone.returncode == 0, undone.output
    assert config.read_text() == HAND_WRITTEN
    assert not (home / ".qwen/settings.json").exists() and not (home / ".local/share/opencode/auth.json").exists()


def test_a_dry_run_shows_masked_diffs_and_writes_nothing(run, home: Path) -> None:
    result = init(run, "--target", "opencode", "--target", "qwen-code", "--dry-run").assert_clean()
    assert result.returncode == 0 and "dry run: nothing was written" in result.stdout
    assert '+  "model": "taotoken/gpt-4o-mini"' in result.stdout and '"envKey": "TAOTOKEN_API_KEY"' in result.stdout
    assert not (home / ".config/opencode").exists() and not (home / ".qwen").exists()
