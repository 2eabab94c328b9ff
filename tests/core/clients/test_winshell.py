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


def windows_plan(machine: Machine, triple: Triple = TRIPLE):
    """The shell target's plan on Windows (called directly elsewhere: files only, no registry there)."""
    if system.current().windows:
        return shell.plan(triple, machine)
    return winshell.plan(shell.exports(triple), machine, shell.with_marked_line, winshell.load_command(machine),
                         shell.loopback_host(triple.base_url))


def as_windows(monkeypatch: pytest.MonkeyPatch, step):
    """`step()` with Windows' facts (on any OS; what it returns is applied afterwards with this OS's, which on Linux
    has no msvcrt lock)."""
    facts, here = system.for_kind("windows"), system.current()
    monkeypatch.setattr(system, "current", lambda: facts)
    try:
        return step()
    finally:
        monkeypatch.setattr(system, "current", lambda: here)


def planned_as_windows(machine: Machine, monkeypatch: pytest.MonkeyPatch, triple: Triple = TRIPLE):
    """The whole shell target's plan with Windows' facts (on any OS; applied afterwards with this OS's)."""
    return as_windows(monkeypatch, lambda: shell.plan(triple, machine))


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
    env = windows.env
    desktopenv.set_values({"OPENAI_API_KEY": "sk-before-0000"}, env)
    fileplan.apply(windows_plan(windows), windows.config_dir)
    assert as_windows(monkeypatch, lambda: shell.after_apply(windows)) is None
    assert desktopenv.get(["OPENAI_API_KEY", "OPENAI_BASE_URL"], env) == {
        "OPENAI_API_KEY": SENTINEL_KEY, "OPENAI_BASE_URL": "https://gw.example/v1"}
    before = as_windows(monkeypatch, lambda: shell.before_undo(windows))
    fileplan.undo_last(windows.config_dir)
    assert as_windows(monkeypatch, lambda: shell.after_undo(windows, before)) is None
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


# ------------------------------------------------------- a gateway on this machine: NO_PROXY in env.ps1, the user env

LOOPBACK = Triple("http://127.0.0.1:18555", SENTINEL_KEY, "gpt-4o-mini")


def test_a_loopback_gateway_joins_no_proxy_in_env_ps1_and_the_user_environment_and_undo_puts_it_back(
        windows: Machine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex and Cline send even loopback requests through a proxy (core.clients.proxy_rules): env.ps1 adds the host
    to the window's NO_PROXY, the user environment's NO_PROXY gets it with the user's entries kept (the sandbox's
    file stands in for HKCU\\Environment), a rerun changes nothing, the undo puts the user's value back."""
    env = windows.env
    desktopenv.set_values({"NO_PROXY": "corp.example"}, env)
    plan = windows_plan(windows, LOOPBACK)
    assert any("add 127.0.0.1 to NO_PROXY" in line for change in plan.pending for line in change.summary)
    fileplan.apply(plan, windows.config_dir)
    env_ps1 = (windows.config_dir / winshell.ENV_PS1).read_text(encoding="utf-8")
    assert winshell.exempted(env_ps1, "127.0.0.1") and shell.exempted(env_ps1, "127.0.0.1")
    assert "-notcontains '127.0.0.1'" in env_ps1 and "corp.example" not in env_ps1  # the window's own entries kept
    assert as_windows(monkeypatch, lambda: shell.after_apply(windows)) is None
    assert desktopenv.get(["NO_PROXY"], env) == {"NO_PROXY": "corp.example,127.0.0.1"}
    assert windows_plan(windows, LOOPBACK).is_noop  # a rerun changes nothing
    before = as_windows(monkeypatch, lambda: shell.before_undo(windows))
    fileplan.undo_last(windows.config_dir)
    assert as_windows(monkeypatch, lambda: shell.after_undo(windows, before)) is None
    assert desktopenv.get(["NO_PROXY"], env) == {"NO_PROXY": "corp.example"}


def test_without_a_user_value_no_proxy_keeps_what_programs_get_now_and_a_remote_gateway_puts_it_back(
        windows: Machine, monkeypatch: pytest.MonkeyPatch) -> None:
    """No NO_PROXY in the user environment: a user value would hide the system one, so it starts from what programs
    get now (this process's). When the gateway later moves off this machine, the rerun puts back what was there
    before taotoken (here: nothing) and env.ps1 no longer exempts it."""
    machine = Machine.of({**windows.env, "no_proxy": "intranet.example"}, windows.cwd, windows.config_dir)
    fileplan.apply(windows_plan(machine, LOOPBACK), machine.config_dir)
    assert as_windows(monkeypatch, lambda: shell.after_apply(machine)) is None
    assert desktopenv.get(["NO_PROXY"], machine.env) == {"NO_PROXY": "intranet.example,127.0.0.1"}
    fileplan.apply(windows_plan(machine), machine.config_dir)  # https://gw.example: not on this machine
    assert as_windows(monkeypatch, lambda: shell.after_apply(machine)) is None
    assert desktopenv.get(["NO_PROXY", "OPENAI_BASE_URL"], machine.env) == {
        "NO_PROXY": None, "OPENAI_BASE_URL": "https://gw.example/v1"}
    assert "NO_PROXY" not in (machine.config_dir / winshell.ENV_PS1).read_text(encoding="utf-8")


def test_an_env_ps1_written_before_the_exemption_gets_it_appended_with_every_byte_kept() -> None:
    old = "# Written by `taotoken init`\r\n$env:OPENAI_API_KEY = 'sk-x'"
    added = shell.with_exemption(old, "localhost", powershell=True)
    assert added.startswith(old + "\n") and winshell.exempted(added, "localhost")
    assert shell.with_exemption(added, "localhost", powershell=True) == added  # once
    assert not winshell.exempted(added, "127.0.0.1")


# ------------------------------------------------------- profile lines that outvote env.ps1 (Codex reads its key there)

OLD_KEY = "sk-OLDkeyFROMprofile0123456789abcdEF"


def _profile(home: Path) -> Path:
    return home / "Documents" / "WindowsPowerShell" / winshell.PROFILE


def init_plan_as_windows(machine: Machine, monkeypatch: pytest.MonkeyPatch, *, codex: bool = True):
    """What init plans for `--target shell` (and Codex reading OPENAI_API_KEY) with Windows' facts: the shell target,
    then the start-up lines that outvote it (cmd/init/plan.py does the same)."""
    def step():
        plan = shell.plan(TRIPLE, machine)
        shell.repair_overrides(plan, TRIPLE, machine, fails={"OPENAI_API_KEY": "Codex"} if codex else {})
        return plan
    return as_windows(monkeypatch, step)


def test_a_later_profile_line_setting_an_old_key_is_commented_out_and_undo_puts_it_back(
        windows: Machine, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The marked line an earlier init added, then the user's `$env:OPENAI_API_KEY = '…'` below it: every new
    PowerShell window would give Codex the old key. init comments that one line out (named by file and line, marked
    `# taotoken-off`), keeps every other byte (CRLF too), and the undo brings it back."""
    profile = _profile(home)
    profile.parent.mkdir(parents=True)
    profile.write_bytes(b"Set-PSReadLineOption -EditMode Emacs\r\n")
    fileplan.apply(init_plan_as_windows(windows, monkeypatch), windows.config_dir)
    mine = profile.read_bytes() + f"$env:OPENAI_API_KEY = '{OLD_KEY}'  # work\r\n".encode()
    profile.write_bytes(mine)
    number = mine.decode().splitlines().index(f"$env:OPENAI_API_KEY = '{OLD_KEY}'  # work") + 1
    plan = init_plan_as_windows(windows, monkeypatch)
    assert not plan.broken, plan.broken
    said = " ".join(plan.repairs)
    assert f"{winshell.PROFILE}:{number} (OPENAI_API_KEY=" in said and OLD_KEY not in said, said
    assert "instead of the value env.ps1 sets" in said
    fileplan.apply(plan, windows.config_dir)
    lines = profile.read_bytes().decode().split("\r\n")
    assert lines[number - 1].startswith(f"# $env:OPENAI_API_KEY = '{OLD_KEY}'  # work  # taotoken-off")
    assert lines[:number - 1] == mine.decode().split("\r\n")[:number - 1] and lines[-1] == ""
    fileplan.undo_last(windows.config_dir)
    assert profile.read_bytes() == mine


@pytest.mark.parametrize("line", [
    "[Environment]::SetEnvironmentVariable('OPENAI_API_KEY', $key, 'User')",
    "Set-Item env:OPENAI_API_KEY (Get-Content ~/.openai-key)",
    "  $env:OPENAI_API_KEY = 'sk-INDENTEDinsideAblock0123456789ab'",
])
def test_a_later_profile_line_init_cannot_comment_out_is_a_failure_for_codex_named_by_file_and_line(
        windows: Machine, home: Path, monkeypatch: pytest.MonkeyPatch, line: str) -> None:
    profile = _profile(home)
    profile.parent.mkdir(parents=True)
    fileplan.apply(init_plan_as_windows(windows, monkeypatch), windows.config_dir)
    profile.write_text(profile.read_text(encoding="utf-8") + line + "\n", encoding="utf-8", newline="")
    number = len(profile.read_text(encoding="utf-8").splitlines())
    before = profile.read_bytes()
    plan = init_plan_as_windows(windows, monkeypatch)
    broken = " ".join(plan.broken)
    assert "Codex started from a new terminal fails: " in broken and f"{winshell.PROFILE}:{number} exports " \
        "OPENAI_API_KEY=" in broken and "or change it to the value env.ps1 sets" in broken, broken
    assert "sk-INDENTED" not in broken  # masked
    assert plan.is_noop or all(change.path != profile for change in plan.pending)
    assert profile.read_bytes() == before
    without_codex = init_plan_as_windows(windows, monkeypatch, codex=False)  # a warning for the shell target alone
    assert not without_codex.broken and any(f"{winshell.PROFILE}:{number}" in w for w in without_codex.warnings)


def test_a_profile_line_before_the_marked_one_or_setting_taotokens_value_is_left_alone(
        windows: Machine, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above init's line env.ps1 replaces the old value in every new window; a later line with the same value
    changes nothing: neither is named."""
    profile = _profile(home)
    profile.parent.mkdir(parents=True)
    profile.write_text(f"$env:OPENAI_API_KEY = '{OLD_KEY}'\n", encoding="utf-8")
    fileplan.apply(init_plan_as_windows(windows, monkeypatch), windows.config_dir)
    profile.write_text(profile.read_text(encoding="utf-8") + f'$env:OPENAI_API_KEY = "{SENTINEL_KEY}"\n',
                       encoding="utf-8")
    plan = init_plan_as_windows(windows, monkeypatch)
    assert not plan.broken and not plan.repairs and not plan.warnings, (plan.broken, plan.warnings)


def test_git_bash_s_later_export_is_commented_out_where_its_line_is_in_bash_profile(
        windows: Machine, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Git Bash with only a ~/.bash_profile: init's line goes there (not ~/.bashrc), and an old key exported below
    it is the line to comment out, as in ~/.bashrc on Linux."""
    bash_profile = home / ".bash_profile"
    bash_profile.write_text("# Git Bash was used here\n", encoding="utf-8")
    fileplan.apply(init_plan_as_windows(windows, monkeypatch), windows.config_dir)
    assert shell.MARKER in bash_profile.read_text(encoding="utf-8") and not (home / ".bashrc").exists()
    mine = bash_profile.read_text(encoding="utf-8") + f"export OPENAI_API_KEY={OLD_KEY}\n"
    bash_profile.write_text(mine, encoding="utf-8")
    plan = init_plan_as_windows(windows, monkeypatch)
    assert not plan.broken and any(".bash_profile:3 (OPENAI_API_KEY=" in r and "env.sh" in r for r in plan.repairs)
    fileplan.apply(plan, windows.config_dir)
    assert bash_profile.read_text(encoding="utf-8").splitlines()[2].startswith(
        f"# export OPENAI_API_KEY={OLD_KEY}  # taotoken-off: OPENAI_* from env.sh")
    fileplan.undo_last(windows.config_dir)
    assert bash_profile.read_text(encoding="utf-8") == mine


@pytest.mark.parametrize("encoding, bom", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")])
def test_a_utf16_profile_stays_utf16_and_its_later_line_is_still_found(
        windows: Machine, home: Path, monkeypatch: pytest.MonkeyPatch, encoding: str, bom: bytes) -> None:
    """Windows PowerShell 5.1 writes a profile in UTF-16 with a BOM (`echo … > $PROFILE`, Out-File): init reads it,
    adds its line and comments out a later old key in that encoding (BOM and CRLF kept, every other byte too), and
    the undo gives the same bytes back; doctor's reader sees the marked line."""
    profile = _profile(home)
    profile.parent.mkdir(parents=True)
    mine = bom + "Set-PSReadLineOption -EditMode Emacs\r\n# 我的配置\r\n".encode(encoding)
    profile.write_bytes(mine)
    fileplan.apply(init_plan_as_windows(windows, monkeypatch), windows.config_dir)
    written = profile.read_bytes()
    assert written.startswith(mine) and written.decode(encoding).count(winshell.MARKER) == 1
    assert shell.line_states([profile], winshell.MARKER) == {profile: True}
    with_old = written + f"$env:OPENAI_API_KEY = '{OLD_KEY}'\r\n".encode(encoding)
    profile.write_bytes(with_old)
    plan = init_plan_as_windows(windows, monkeypatch)
    assert not plan.broken and f"{winshell.PROFILE}:4 (OPENAI_API_KEY=" in " ".join(plan.repairs), plan.repairs
    fileplan.apply(plan, windows.config_dir)
    lines = profile.read_bytes().decode(encoding).split("\r\n")
    assert lines[0] == "\ufeffSet-PSReadLineOption -EditMode Emacs" and lines[1] == "# 我的配置"
    assert lines[3].startswith(f"# $env:OPENAI_API_KEY = '{OLD_KEY}'  # taotoken-off")
    fileplan.undo_last(windows.config_dir)
    assert profile.read_bytes() == with_old
