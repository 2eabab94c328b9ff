"""The shell target on Windows: env.ps1 and PowerShell profile lines (files, checked on any OS with Windows'
facts), the user environment record, and on Windows (the Wine run) the registry values set and undone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from taotoken_cli.core.clients import shell, winshell
from taotoken_cli.core.clients.base import Machine, Triple
from taotoken_cli.core.files import fileplan
from taotoken_cli.core.platform import desktopenv, system
from tests.conftest import SENTINEL_KEY

TRIPLE = Triple("https://gw.example", SENTINEL_KEY, "gpt-4o-mini")


@pytest.fixture
def windows(home: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    docs = home / "Documents"
    monkeypatch.setenv(system.ENV_DOCUMENTS, str(docs))
    return Machine.of(dict(os.environ), home)


def windows_plan(machine: Machine):
    """The shell target's plan on Windows (called directly elsewhere: files only, no registry there)."""
    if system.current().windows:
        return shell.plan(TRIPLE, machine)
    return winshell.plan(shell.exports(TRIPLE), machine, shell.with_marked_line, winshell.load_command(machine))


def planned_as_windows(machine: Machine, monkeypatch: pytest.MonkeyPatch):
    """The whole shell target's plan with Windows' facts (on any OS; applied afterwards with this OS's)."""
    facts, here = system.for_kind("windows"), system.current()
    monkeypatch.setattr(system, "current", lambda: facts)
    try:
        return shell.plan(TRIPLE, machine)
    finally:
        monkeypatch.setattr(system, "current", lambda: here)


def test_powershell_gets_env_ps1_and_one_marked_line_in_its_profile(windows: Machine, home: Path) -> None:
    profile = home / "Documents" / "WindowsPowerShell" / winshell.PROFILE
    profile.parent.mkdir(parents=True)
    profile.write_bytes(b"Set-PSReadLineOption -EditMode Emacs\r\n")
    plan = windows_plan(windows)
    fileplan.apply(plan, windows.config_dir)
    env_ps1 = windows.config_dir / "env.ps1"
    assert f"$env:OPENAI_API_KEY = '{SENTINEL_KEY}'" in env_ps1.read_text(encoding="utf-8")
    assert "$env:OPENAI_BASE_URL = 'https://gw.example/v1'" in env_ps1.read_text(encoding="utf-8")
    text = profile.read_bytes().decode()
    assert text.startswith("Set-PSReadLineOption -EditMode Emacs\r\n") and text.count(winshell.MARKER) == 1
    assert SENTINEL_KEY not in text and f". '{env_ps1}'" in text and text.endswith("\r\n")  # CRLF kept
    assert not (home / "Documents" / "PowerShell").exists()  # PowerShell 7 is not installed here
    record = json.loads((windows.config_dir / winshell.RECORD).read_text(encoding="utf-8"))
    assert record["set"] == {"OPENAI_BASE_URL": "https://gw.example/v1", "OPENAI_API_KEY": SENTINEL_KEY}
    again = windows_plan(windows)
    assert again.is_noop  # a rerun changes nothing
    fileplan.undo_last(windows.config_dir)
    assert profile.read_bytes() == b"Set-PSReadLineOption -EditMode Emacs\r\n" and not env_ps1.exists()


def test_powershell_7_gets_its_profile_when_installed(windows: Machine, home: Path) -> None:
    (home / "Documents" / "PowerShell").mkdir(parents=True)
    targets = [change.path for change in windows_plan(windows).pending]
    assert home / "Documents" / "PowerShell" / winshell.PROFILE in targets
    assert home / "Documents" / "WindowsPowerShell" / winshell.PROFILE in targets


def test_the_hint_for_this_window_is_in_powershell_syntax(windows: Machine) -> None:
    notes = " ".join(windows_plan(windows).details)  # said with -v or --dry-run; the next step says it too
    assert f"`. '{windows.config_dir / 'env.ps1'}'`" in notes and "export" not in notes


def test_git_bash_gets_env_sh_and_a_bashrc_line_beside_the_user_environment(
        windows: Machine, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Git Bash (SHELL set: taotoken runs from it) reads ~/.bashrc, not the PowerShell profile: a window opened from
    a program started before init has the old user environment, so it needs its start-up line as PowerShell does.
    The line names env.sh with forward slashes (C:/Users/…), which Git Bash, MSYS2 and Cygwin all open."""
    import shlex
    import subprocess

    machine = Machine.of({**windows.env, "SHELL": "/usr/bin/bash"}, home)
    plan = planned_as_windows(machine, monkeypatch)
    env_sh, bashrc = machine.config_dir / "env.sh", home / ".bashrc"
    assert {env_sh, bashrc, machine.config_dir / "env.ps1", machine.config_dir / winshell.RECORD} <= \
        {change.path for change in plan.pending}
    loads_env_sh = f". {shlex.quote(env_sh.as_posix())}"
    # this Git Bash window: source env.sh, not env.ps1 (a detail of the plan: init's compact output says it as its
    # next step)
    assert f"`{loads_env_sh}`" in " ".join(plan.details)
    fileplan.apply(plan, machine.config_dir)
    assert b"\r" not in env_sh.read_bytes()  # bash would take a CR into the key
    assert f"export OPENAI_API_KEY={SENTINEL_KEY}" in env_sh.read_text(encoding="utf-8")
    assert loads_env_sh in bashrc.read_text(encoding="utf-8") and SENTINEL_KEY not in bashrc.read_text(
        encoding="utf-8")
    if not system.current().windows:  # a real bash reads the line (Wine has no Windows bash)
        got = subprocess.run(["bash", "-c", '. ~/.bashrc; printf %s "$OPENAI_BASE_URL"'], capture_output=True,
                             text=True, env={"HOME": str(home), "PATH": os.environ["PATH"]}, check=True)
        assert got.stdout == "https://gw.example/v1"
    fileplan.undo_last(machine.config_dir)
    assert not env_sh.exists() and not bashrc.exists()


def test_windows_without_a_posix_shell_gets_no_env_sh_and_git_bash_s_own_file_when_it_was_used(
        windows: Machine, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not any(change.path.name in ("env.sh", ".bashrc") for change in planned_as_windows(windows, monkeypatch)
                   .pending)
    (home / ".bash_profile").write_text("# Git Bash was used here\n", encoding="utf-8")
    targets = {change.path for change in planned_as_windows(windows, monkeypatch).pending}
    assert windows.config_dir / "env.sh" in targets and home / ".bash_profile" in targets
    assert home / ".bashrc" not in targets  # the existing start-up file is the one Git Bash reads


def test_the_user_environment_follows_the_record_and_undo_puts_back_what_was_there(
        windows: Machine, monkeypatch: pytest.MonkeyPatch) -> None:
    """On any OS: the sandbox's file stands in for HKCU\\Environment (what the demo uses); the hooks run with
    Windows' facts (the files are written with this OS's, which has no msvcrt lock)."""
    env, facts, here = windows.env, system.for_kind("windows"), system.current()

    def as_windows(hook):
        monkeypatch.setattr(system, "current", lambda: facts)
        try:
            return hook()
        finally:
            monkeypatch.setattr(system, "current", lambda: here)

    desktopenv.set_values({"OPENAI_API_KEY": "sk-before-0000"}, env)
    fileplan.apply(windows_plan(windows), windows.config_dir)
    assert as_windows(lambda: shell.after_apply(windows)) is None
    assert desktopenv.get(["OPENAI_API_KEY", "OPENAI_BASE_URL"], env) == {
        "OPENAI_API_KEY": SENTINEL_KEY, "OPENAI_BASE_URL": "https://gw.example/v1"}
    before = as_windows(lambda: shell.before_undo(windows))
    fileplan.undo_last(windows.config_dir)
    assert as_windows(lambda: shell.after_undo(windows, before)) is None
    assert desktopenv.get(["OPENAI_API_KEY", "OPENAI_BASE_URL"], env) == {
        "OPENAI_API_KEY": "sk-before-0000", "OPENAI_BASE_URL": None}


@pytest.mark.skipif(not system.current().windows, reason="the Windows registry (HKCU\\Environment)")
def test_windows_the_user_environment_is_set_and_undone(windows: Machine, monkeypatch: pytest.MonkeyPatch) -> None:
    from taotoken_cli.core.platform import winenv

    monkeypatch.delenv(system.ENV_DESKTOP)  # the registry itself, not the sandbox's stand-in
    machine = Machine.of(dict(os.environ), windows.cwd, windows.config_dir)
    users = {name: winenv.get(name) for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}  # put back at the end
    winenv.set_values({"OPENAI_API_KEY": "sk-before-0000", "OPENAI_BASE_URL": None})
    try:
        fileplan.apply(windows_plan(machine), machine.config_dir)
        assert shell.after_apply(machine) is None
        assert winenv.get("OPENAI_API_KEY") == SENTINEL_KEY
        assert winenv.get("OPENAI_BASE_URL") == "https://gw.example/v1"
        before = shell.before_undo(machine)
        fileplan.undo_last(machine.config_dir)
        assert shell.after_undo(machine, before) is None
        assert winenv.get("OPENAI_API_KEY") == "sk-before-0000" and winenv.get("OPENAI_BASE_URL") is None
    finally:
        winenv.set_values(users)
