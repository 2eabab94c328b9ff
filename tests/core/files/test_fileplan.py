"""fileplan on real files: backups, atomic all-or-nothing apply, undo, lock, stale plans, git warning."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.files import fileplan
from taotoken_cli.core.files.fileplan import FileChange, Plan
from taotoken_cli.core.files.fsutil import is_world_readable
from taotoken_cli.core.platform import system
from tests.conftest import SENTINEL_KEY

MODES_MEAN_NOTHING = system.current().permissions == "acl"
UNDER_WINE = system.under_wine()


def snapshot(root: Path, skip: tuple[str, ...] = ()) -> dict[str, tuple]:
    """Every file, directory and link under root with content and mode (skipping paths under `skip`)."""
    state = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if any(rel == s or rel.startswith(s + "/") for s in skip):
            continue
        if path.is_symlink():
            state[rel] = ("link", os.readlink(path))
        elif path.is_dir():
            state[rel] = ("dir", mode(path))
        else:
            state[rel] = ("file", path.read_bytes(), mode(path))
    return state


def mode(path: Path) -> int | None:
    """The permission bits where they mean something (POSIX); None on Windows, where an ACL decides."""
    return None if MODES_MEAN_NOTHING else stat.S_IMODE(path.stat().st_mode)


def private(path: Path) -> bool:
    """Readable by the user alone: mode 0600 (0700 for a directory) on POSIX, the ACL on Windows."""
    if MODES_MEAN_NOTHING:
        # Directories inherit the profile's ACL there. Wine reports a DACL from the Unix mode for a file in a
        # directory made with mkdir(), whatever was set (docs/windows.md): only the Windows run can check it.
        return path.is_dir() or UNDER_WINE or not is_world_readable(path)
    return mode(path) == (0o700 if path.is_dir() else 0o600)


def change_for(path: Path, after: str, secret: bool = False) -> FileChange:
    return FileChange(path, fileplan.read_current(path), after.encode(), secret=secret, summary=["x"])


@pytest.fixture
def files(home: Path) -> dict[str, Path]:
    (home / "a").mkdir()
    paths = {"one": home / "a" / "one.json", "two": home / "a" / "two.toml", "three": home / "a" / "three.txt"}
    paths["one"].write_text('{"x": 1}\n', encoding="utf-8", newline="\n")
    paths["two"].write_text("x = 1\n", encoding="utf-8", newline="\n")
    os.chmod(paths["two"], 0o640)
    paths["three"].write_text("three\n", encoding="utf-8", newline="\n")
    return paths


def test_apply_backs_up_writes_and_undo_restores_exactly(home: Path, files: dict[str, Path]) -> None:
    own = home / ".config" / "taotoken"
    before = snapshot(home)
    plan = Plan([change_for(files["one"], '{"x": 2}\n'), change_for(files["two"], f'key = "{SENTINEL_KEY}"\n',
                                                                      secret=True),
                 change_for(home / "new" / "dir" / "created.env", "NEW=1\n", secret=True)])
    result = fileplan.apply(plan, own)
    assert files["one"].read_text() == '{"x": 2}\n'
    assert mode(files["one"]) in (0o644, None)  # existing mode kept
    assert private(files["two"])  # a file now holding a key loses group bits (Windows: gets a private ACL)
    assert private(home / "new" / "dir" / "created.env")
    backups = sorted(p.name for p in result.backup_dir.iterdir())
    assert backups == ["000-one.json", "001-two.toml", "manifest.json"]
    for name in backups:
        assert private(result.backup_dir / name)
    assert private(result.backup_dir)
    undone = fileplan.undo_last(own)
    assert undone.deleted == [home / "new" / "dir" / "created.env"]
    assert snapshot(home, skip=(".config",)) == before  # contents, modes, and the created dirs are gone


def test_a_removal_is_backed_up_shown_as_a_deletion_and_undone(home: Path, files: dict[str, Path]) -> None:
    """`after=None` removes a file (completion --uninstall): in the diff it goes to /dev/null, its bytes and mode
    are backed up first, and undo puts it back exactly."""
    own = home / ".config" / "taotoken"
    before = snapshot(home)
    plan = Plan([FileChange(files["two"], fileplan.read_current(files["two"]), None, target="t"),
                 change_for(files["one"], '{"x": 3}\n')])
    assert plan.changes[0].removes and not plan.changes[0].creates
    diff = fileplan.plan_diff(plan)
    assert f"--- {files['two']}\n+++ /dev/null\n" in diff and "-x = 1" in diff
    assert "remove " + str(files["two"]) in "\n".join(fileplan.change_lines(plan))
    result = fileplan.apply(plan, own)
    assert not files["two"].exists() and files["one"].read_text() == '{"x": 3}\n'
    assert [c.path for c in result.written if c.removes] == [files["two"]]
    fileplan.undo_last(own)
    assert snapshot(home, skip=(".config",)) == before  # the removed file back with its content and mode 0640


def test_noop_plan_writes_nothing(home: Path, files: dict[str, Path]) -> None:
    plan = Plan([change_for(files["one"], files["one"].read_text())])
    assert plan.is_noop
    result = fileplan.apply(plan, home / "cfg")
    assert result.noop and not (home / "cfg").exists()


def test_failure_on_the_third_write_restores_the_first_two(home: Path, files: dict[str, Path],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Fault injection at the outermost boundary: the 3rd atomic_write raises like a full disk would.
    before = snapshot(home)
    real_write = fileplan.atomic_write
    calls = {"n": 0}

    def failing_write(path, data, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real_write(path, data, **kwargs)

    monkeypatch.setattr(fileplan, "atomic_write", failing_write)
    plan = Plan([change_for(files["one"], "1\n"), change_for(home / "b" / "new.txt", "new\n"),
                 change_for(files["two"], "2\n"), change_for(files["three"], "3\n")])
    with pytest.raises(TaotokenError) as info:
        fileplan.apply(plan, home / "cfg")
    assert "No space left on device" in info.value.message and "restored" in info.value.message
    assert snapshot(home, skip=("cfg",)) == before
    assert not any((home / "cfg" / "backups").iterdir())  # the aborted run leaves no backup to undo


def test_real_write_failure_half_way_leaves_every_file_as_before(home: Path, files: dict[str, Path]) -> None:
    # No fakes: after planning, the directory the 3rd file needs becomes a regular file, so mkdir fails.
    plan = Plan([change_for(files["one"], "1\n"), change_for(files["two"], "2\n"),
                 change_for(home / "blocked" / "sub" / "x.json", "{}\n"), change_for(files["three"], "3\n")])
    before = snapshot(home)
    (home / "blocked").write_text("I am a file now\n", encoding="utf-8", newline="\n")
    before["blocked"] = ("file", b"I am a file now\n", mode(home / "blocked"))
    with pytest.raises(TaotokenError, match="nothing was changed"):
        fileplan.apply(plan, home / "cfg")
    assert snapshot(home, skip=("cfg",)) == before


def test_file_changed_between_plan_and_apply_stops_without_writing(home: Path, files: dict[str, Path]) -> None:
    plan = Plan([change_for(files["one"], "1\n"), change_for(files["two"], "2\n")])
    files["two"].write_text("x = 'edited by the user meanwhile'\n", encoding="utf-8", newline="\n")
    before = snapshot(home)
    with pytest.raises(TaotokenError, match="changed after the plan") as info:
        fileplan.apply(plan, home / "cfg")
    assert str(files["two"]) in info.value.message
    assert snapshot(home, skip=("cfg",)) == before


@pytest.mark.skipif(system.current().windows, reason="symlinks need Developer Mode or an administrator on Windows")
def test_symlink_is_kept_and_its_target_written(home: Path, files: dict[str, Path]) -> None:
    link = home / "link.json"
    link.symlink_to(files["one"])
    fileplan.apply(Plan([change_for(link, '{"linked": true}\n')]), home / "cfg")
    assert link.is_symlink() and os.readlink(link) == str(files["one"])
    assert files["one"].read_text() == '{"linked": true}\n'
    fileplan.undo_last(home / "cfg")
    assert link.is_symlink() and files["one"].read_text() == '{"x": 1}\n'


def test_second_run_waits_for_the_lock_then_refuses(home: Path, files: dict[str, Path]) -> None:
    cfg = home / "cfg"
    with fileplan.run_lock(cfg):
        started = time.monotonic()
        with pytest.raises(TaotokenError, match="another taotoken run") as info:
            fileplan.apply(Plan([change_for(files["one"], "1\n")]), cfg, lock_timeout=0.3)
        assert time.monotonic() - started >= 0.3
    assert info.value.fix and "wait" in info.value.fix
    assert files["one"].read_text() == '{"x": 1}\n'


def test_second_run_proceeds_when_the_lock_is_released_in_time(home: Path, files: dict[str, Path]) -> None:
    cfg = home / "cfg"
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with fileplan.run_lock(cfg):
            held.set()
            release.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(5)
    threading.Timer(0.2, release.set).start()
    fileplan.apply(Plan([change_for(files["one"], "1\n")]), cfg, lock_timeout=3)
    thread.join(5)
    assert files["one"].read_text() == "1\n"


def test_undo_refuses_to_discard_later_edits_unless_forced(home: Path, files: dict[str, Path]) -> None:
    cfg = home / "cfg"
    fileplan.apply(Plan([change_for(files["one"], "1\n")]), cfg)
    files["one"].write_text("user edit\n", encoding="utf-8", newline="\n")
    with pytest.raises(TaotokenError, match="changed after the last run"):
        fileplan.undo_last(cfg)
    fileplan.undo_last(cfg, force=True)
    assert files["one"].read_text() == '{"x": 1}\n'
    with pytest.raises(TaotokenError, match="no taotoken run to undo"):
        fileplan.undo_last(cfg)


def test_diff_masks_known_and_unknown_keys(home: Path, files: dict[str, Path]) -> None:
    old = "sk-oldSECRETvalue0123456789"
    files["three"].write_text(f"KEY={old}\n", encoding="utf-8", newline="\n")
    plan = Plan([change_for(files["three"], f"KEY={SENTINEL_KEY}\n")], secrets=[SENTINEL_KEY])
    diff = fileplan.plan_diff(plan)
    assert SENTINEL_KEY not in diff and old not in diff
    assert "-KEY=sk-ol…6789" in diff and "+KEY=sk-SE…WXYZ" in diff


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_warns_when_a_key_goes_into_a_git_tracked_file(home: Path, files: dict[str, Path]) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(home / "a")], check=True, env=env)
    subprocess.run(["git", "-C", str(home / "a"), "add", "one.json"], check=True, env=env)
    plan = Plan([change_for(files["one"], f'{{"k": "{SENTINEL_KEY}"}}\n', secret=True),
                 change_for(files["three"], f"{SENTINEL_KEY}\n", secret=True)])
    fileplan.add_git_warnings(plan)
    assert len(plan.warnings) == 1 and "one.json is tracked by git" in plan.warnings[0]


def test_a_config_dir_that_cannot_hold_the_lock_is_refused_with_the_os_s_own_fix(tmp_path: Path) -> None:
    """A file where the config directory should be: nothing is written, and the fix names the command that gives
    the user a writable directory in their OS's terms (chmod, or an icacls grant on Windows)."""
    from taotoken_cli.core.platform import permissions

    in_the_way = tmp_path / "taotoken"
    in_the_way.write_text("not a directory", encoding="utf-8")
    with pytest.raises(TaotokenError) as refused, fileplan.run_lock(in_the_way):
        pass
    assert refused.value.code == "init.write_failed"
    assert permissions.access_fix(in_the_way, directory=True) in str(refused.value.fix)
    assert in_the_way.read_text(encoding="utf-8") == "not a directory"
