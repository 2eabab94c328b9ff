"""Files stay the user's (issue 22, item 4): under `sudo` (root, HOME the user's), init left settings.json,
config.toml and ~/.config/taotoken as root:root, so Claude Code could no longer read its settings and later runs as
the user failed. Now an edited file keeps its owner, group and mode, and every file and directory a run creates under
a HOME owned by another user is given to that user; the run says so once.

Real parts: a real HOME owned by another user (chown: the test needs root, as `sudo` is; skipped otherwise), the
real CLI in-process.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import SENTINEL_KEY, write

pytestmark = pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="chown to another user needs root")
USER = 65534  # nobody: a uid that is not root's


def test_init_as_root_leaves_every_file_to_the_homes_owner(run, home: Path) -> None:
    os.chown(home, USER, USER)
    settings = write(home / ".claude" / "settings.json", json.dumps({"theme": "dark"}) + "\n", mode=0o600)
    os.chown(settings.parent, USER, USER)
    os.chown(settings, USER, USER)
    result = run("init", "--allow-unlisted",
                 "--target", "claude-code", "--yes", "--base-url", "https://taotoken.net/api", "--model",
                 "gpt-4o-mini", "--key-stdin", input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 0, result.output
    assert json.loads(settings.read_text())["env"]["ANTHROPIC_AUTH_TOKEN"] == SENTINEL_KEY
    own_files = [home / ".config", home / ".config" / "taotoken", home / ".config" / "taotoken" / "config.toml",
                 home / ".config" / "taotoken" / "copies.json"]
    everything = [*own_files, settings, *(home / ".config" / "taotoken").rglob("*")]
    for path in everything:
        info = path.lstat()
        assert (info.st_uid, info.st_gid) == (USER, USER), (path, info.st_uid, info.st_gid)
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    assert " ".join(result.output.split()).count("running as root: the files written were given to") == 1

    undo = run("init", "--undo").assert_clean()
    assert undo.returncode == 0, undo.output
    assert (settings.stat().st_uid, settings.stat().st_gid) == (USER, USER)  # restored, still the user's


def test_a_root_owned_place_stays_roots(run, home: Path) -> None:
    result = run("init", "--allow-unlisted",
                 "--yes", "--base-url", "https://taotoken.net/api", "--model", "gpt-4o-mini", "--key-stdin",
                 input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 0
    assert (home / ".config" / "taotoken" / "config.toml").stat().st_uid == 0
    assert "running as root" not in result.output
