"""File-system faults for `init` (issue 8, part 3), beyond tests/cmd/init/test_init.py.

Already covered there: a file edited between plan and apply, the 3rd write failing with ENOSPC at
the atomic_write level, two concurrent runs (lock). Here: a read-only config directory, a target
that is a directory, a dangling symlink, ENOSPC at the lowest level (os.fsync / os.write inside the
real atomic write) through the real CLI entry point, and `--undo` after such a partial failure.
Runs are in-process (the real `cli.run`) so faults can be injected into `os`; the tests run as
root here, where chmod cannot make a directory read-only, so the permission error is injected at
the OS call instead (with a real chmod when not root).
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import pytest

from taotoken_cli.core.files import fsutil
from tests.cmd.init.test_init import CLAUDE_SETTINGS, CODEX_TOML
from tests.cmd.init.test_init import existing as existing  # noqa: F401 - the fixture
from tests.conftest import SENTINEL_KEY, Result, flat
from tests.core.files.test_fileplan import snapshot

MODEL = "gpt-4o-mini"


@pytest.fixture
def run(run, loopback_gateway, monkeypatch):
    """The in-process runner of conftest, with the key on stdin and every run checked for leaks; the gateway init
    asks on the way is the mock on loopback."""
    monkeypatch.setenv("TAOTOKEN_BASE_URL", loopback_gateway.url)

    def invoke(*args: str, key: str = SENTINEL_KEY) -> Result:
        return run(*args, input=key).assert_clean()

    return invoke


def init(run, *args: str, model: str = MODEL) -> Result:
    return run("init", "--allow-unlisted", "--key-stdin", "--model", model, "--all", "--yes", *args)


def outside_own_dir(home: Path) -> dict:
    return snapshot(home, skip=(".config",))


def deny_writes_in(directory: Path, monkeypatch) -> None:
    """Make `directory` refuse new files: chmod when that works, else fail the OS calls as EACCES would."""
    if os.geteuid() != 0:
        os.chmod(directory, 0o500)
        return
    real_open, real_mkstemp, real_mkdir = os.open, tempfile.mkstemp, os.mkdir

    def inside(path) -> bool:
        return Path(os.path.abspath(path)).parent == directory or Path(os.path.abspath(path)) == directory

    def fake_open(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and inside(path) and not os.path.exists(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    def fake_mkstemp(*args, dir=None, **kwargs):
        if dir is not None and Path(dir) == directory:
            raise PermissionError(errno.EACCES, "Permission denied", str(dir))
        return real_mkstemp(*args, dir=dir, **kwargs)

    def fake_mkdir(path, *args, **kwargs):
        if inside(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "mkdir", fake_mkdir)
    monkeypatch.setattr(tempfile, "mkstemp", fake_mkstemp)


def test_read_only_config_directory_is_a_clear_error_and_nothing_changes(run, home, existing, monkeypatch):
    own = home / ".config" / "taotoken"
    own.mkdir(parents=True)
    before = snapshot(home)
    deny_writes_in(own, monkeypatch)
    result = init(run)
    assert result.returncode == 1, result.output
    assert "internal error" not in result.stderr
    assert str(own) in result.stderr and "fix:" in result.stderr
    assert snapshot(home) == before


def test_read_only_client_directory_restores_what_was_written(run, home, existing, monkeypatch):
    before = outside_own_dir(home)
    deny_writes_in(home / ".codex", monkeypatch)
    result = init(run)
    assert result.returncode == 1 and "init.write_failed" in result.stderr, result.output
    assert "nothing was changed" in result.stderr
    assert outside_own_dir(home) == before
    assert not (home / ".config/taotoken/config.toml").exists()


def test_a_target_that_is_a_directory_stops_before_any_write(run, home, existing):
    existing["codex"].unlink()
    existing["codex"].mkdir()  # ~/.codex/config.toml is a directory
    before = snapshot(home)
    result = init(run)
    assert result.returncode != 0, result.output
    assert "internal error" not in result.stderr
    assert "config.toml" in result.stderr and "directory" in result.stderr and "fix:" in result.stderr
    assert snapshot(home) == before


def test_dangling_symlink_keeps_the_link_and_undo_removes_what_was_created(run, home):
    link = home / ".codex" / "config.toml"
    link.parent.mkdir()
    target = home / "dotfiles" / "codex.toml"  # neither the file nor its directory exists yet
    link.symlink_to(target)
    result = run("init", "--allow-unlisted",
                 "--key-stdin", "--model", MODEL, "--target", "codex", "--target", "shell", "--yes")
    assert result.returncode == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert f'model = "{MODEL}"' in target.read_text()
    assert run("init", "--undo").returncode == 0
    assert link.is_symlink() and not target.exists() and not target.parent.exists()


@pytest.mark.parametrize("call", ["fsync", "replace"])
def test_disk_full_at_the_os_level_leaves_every_file_as_before(run, home, existing, monkeypatch, call):
    assert init(run).returncode == 0  # a first, complete run: the one `--undo` must find later
    after_first = snapshot(home)
    real = getattr(os, call)
    state = {"n": 0}

    def full(first, *args):
        # the 4th temporary file of the second run hits a full disk (fsync) or cannot be renamed
        name = os.readlink(f"/proc/self/fd/{first}") if call == "fsync" else str(first)
        if name.endswith(".tmp"):
            state["n"] += 1
            if state["n"] == 4:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real(first, *args)

    monkeypatch.setattr(os, call, full)
    result = init(run, model="second-model")
    monkeypatch.setattr(os, call, real)
    assert state["n"] >= 4, "the fault was never reached"
    assert result.returncode == 1 and "No space left on device" in flat(result.stderr), result.output
    assert "nothing was changed" in result.stderr
    assert snapshot(home, skip=(".config/taotoken/backups",)) == \
        {k: v for k, v in after_first.items() if not k.startswith(".config/taotoken/backups")}
    assert not [p for p in home.rglob("*.tmp")], "a temporary file was left behind"
    # --undo after the partial failure undoes the last *complete* run: back to the hand-made files
    undo = run("init", "--undo")
    assert undo.returncode == 0, undo.output
    assert existing["codex"].read_text() == CODEX_TOML
    assert existing["settings"].read_text() == CLAUDE_SETTINGS


def test_write_failure_inside_atomic_write_never_leaves_the_temporary_file(home, monkeypatch):
    path = home / "f.json"
    path.write_text("old")

    def broken_fsync(fd):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        fsutil.atomic_write(path, "new")
    assert path.read_text() == "old" and sorted(p.name for p in home.iterdir()) == ["f.json"]
