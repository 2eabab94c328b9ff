"""Crash leftovers (issue 22, item 9): SIGKILL during init left `.settings.json.XXXX.tmp` files (0600, holding the
key) that no later run removed. Temporary files now carry taotoken's tag and the writer's pid; a later write to the
same file removes the ones whose writer is gone, never another program's file nor a live run's.

Real parts: real files in a temporary HOME, real processes (one that has exited, one still running) for the pids,
the real CLI in-process.
"""

from __future__ import annotations

import json
import subprocess
import sys

from taotoken_cli.core.files.fsutil import TEMP_TAG
from tests.conftest import SENTINEL_KEY, write


def test_a_later_run_removes_only_its_own_dead_leftovers(run, home) -> None:
    settings = write(home / ".claude" / "settings.json", json.dumps({"theme": "dark"}) + "\n")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ours = write(settings.parent / f".settings.json.{TEMP_TAG}-{dead_pid}-k9x2.tmp", SENTINEL_KEY)
        running = write(settings.parent / f".settings.json.{TEMP_TAG}-{live.pid}-a1b2.tmp", "being written")
        foreign = write(settings.parent / ".settings.json.x7Yq3.tmp", "another program's")
        result = run("init", "--allow-unlisted", "--target", "claude-code", "--yes", "--base-url", "https://taotoken.net/api",
                     "--model", "gpt-4o-mini", "--key-stdin", input=SENTINEL_KEY).assert_clean()
        assert result.returncode == 0, result.output
        assert not ours.exists(), "a dead run's temporary file (holding the key) is still there"
        assert running.exists() and foreign.exists()
        leftovers = [p.name for p in settings.parent.iterdir() if p.name.endswith(".tmp")]
        assert sorted(leftovers) == sorted([running.name, foreign.name]), leftovers
    finally:
        live.kill()
        live.wait()


def test_an_undo_after_a_killed_undo_resumes_it(run, home) -> None:
    """Issue 22, item 9: after a killed `init --undo` (some files restored, the rest not), the next undo claimed
    the user had edited the files. A file already back as it was is now simply done, and the undo resumes."""
    settings = write(home / ".claude" / "settings.json", json.dumps({"theme": "dark"}) + "\n")
    before = settings.read_bytes()
    assert run("init", "--allow-unlisted",
               "--target", "claude-code", "--yes", "--base-url", "https://taotoken.net/api", "--model",
               "gpt-4o-mini", "--key-stdin", input=SENTINEL_KEY).assert_clean().returncode == 0
    own = home / ".config" / "taotoken" / "config.toml"
    assert own.exists() and settings.read_bytes() != before
    settings.write_bytes(before)  # what a killed undo leaves: this file restored, config.toml not yet deleted
    result = run("init", "--undo").assert_clean()
    assert result.returncode == 0, result.output
    assert "changed after the last run" not in result.output
    assert settings.read_bytes() == before and not own.exists()
