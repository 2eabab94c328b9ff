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
    return winshell.plan(shell.exports(TRIPLE), machine, shell.with_marked_line)


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
    notes = " ".join(windows_plan(windows).notes)
    assert f"`. '{windows.config_dir / 'env.ps1'}'`" in notes and "export" not in notes


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
