"""doctor's `env.startup_line` on Windows: the PowerShell profiles' marked line and, where init wrote env.sh for it,
Git Bash's (~/.bashrc, ~/.bash_profile); a line the user commented out or removed is reported with how to bring it
back, per shell. Also the Codex/Cline proxy check reading the NO_PROXY exemption in env.ps1.

Real files in a temporary HOME written by the real shell target; Windows is asked for through its facts
(`system.for_kind("windows")` in place of `system.current`) on any OS, and is the real one under Wine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taotoken_cli.cmd.doctor.checks import startup
from taotoken_cli.cmd.doctor.checks.clients import proxied
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Result, Status
from taotoken_cli.core.clients import shell, winshell
from taotoken_cli.core.clients.base import Machine, Triple
from taotoken_cli.core.files import fileplan
from taotoken_cli.core.platform import system
from taotoken_cli.core.settings import Overrides
from tests.conftest import SENTINEL_KEY

LOOPBACK = Triple("http://127.0.0.1:18555", SENTINEL_KEY, "gpt-4o-mini")


@pytest.fixture
def as_windows(home: Path, monkeypatch: pytest.MonkeyPatch):
    """Run a step with Windows' facts; the Documents folder in the temporary HOME."""
    monkeypatch.setenv(system.ENV_DOCUMENTS, str(home / "Documents"))
    facts, here = system.for_kind("windows"), system.current()

    def step(do):
        monkeypatch.setattr(system, "current", lambda: facts)
        try:
            return do()
        finally:
            monkeypatch.setattr(system, "current", lambda: here)
    return step


def _init(as_windows, env: dict[str, str], home: Path) -> Machine:
    machine = Machine.of(env, home)
    fileplan.apply(as_windows(lambda: shell.plan(LOOPBACK, machine)), machine.config_dir)
    return machine


def _finding(as_windows, env: dict[str, str], home: Path) -> Result:
    return as_windows(lambda: startup.startup_line(DoctorContext(env=env, cwd=home, offline=True)))


def _texts(result: Result) -> str:
    return " ".join([result.message, *result.details, *(str(fix) for fix in result.fixes)])


def _comment_out(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if shell.MARKER in line)
    path.write_text(text.replace(line, "# " + line), encoding="utf-8", newline="")


def test_git_bash_s_line_is_checked_beside_the_powershell_profile(as_windows, home: Path) -> None:
    env = {**os.environ, "SHELL": "/usr/bin/bash"}  # init ran from Git Bash: env.sh and ~/.bashrc's line
    _init(as_windows, env, home)
    bashrc, profile = home / ".bashrc", home / "Documents" / "WindowsPowerShell" / winshell.PROFILE
    ok = _finding(as_windows, env, home)
    assert ok.status is Status.OK and "new PowerShell windows load" in ok.message, _texts(ok)
    assert any("new shells source" in d and str(bashrc) in d for d in ok.details), _texts(ok)
    _comment_out(bashrc)  # the user turns Git Bash's off: their choice stands, doctor says so
    off = _finding(as_windows, env, home)
    assert off.status is Status.WARN and f"is commented out in {bashrc}" in off.message, _texts(off)
    assert str(off.fixes[0]).startswith(f"remove the leading # from the line marked {shell.MARKER} in {bashrc}")
    assert any("new PowerShell windows load" in d for d in off.details)  # PowerShell's is still in effect
    bashrc.write_text("alias ll='ls -l'\n", encoding="utf-8")  # removed
    gone = _finding(as_windows, env, home)
    assert gone.status is Status.WARN and "no start-up file sources" in gone.message, _texts(gone)
    assert str(gone.fixes[0]).startswith("taotoken init --target shell")
    assert profile.exists()


def test_a_commented_out_or_removed_powershell_line_is_reported_with_how_to_bring_it_back(
        as_windows, home: Path) -> None:
    env = dict(os.environ)  # no Git Bash here: only PowerShell's line
    _init(as_windows, env, home)
    profile = home / "Documents" / "WindowsPowerShell" / winshell.PROFILE
    assert not (home / ".bashrc").exists()
    assert _finding(as_windows, env, home).status is Status.OK
    _comment_out(profile)
    off = _finding(as_windows, env, home)
    assert off.status is Status.WARN and "the line that loads" in off.message and str(profile) in off.message
    assert "new PowerShell windows lack OPENAI_BASE_URL and OPENAI_API_KEY" in off.message
    assert str(off.fixes[0]).startswith(f"remove the leading # from the line marked {shell.MARKER} in {profile}")
    assert not off.details  # Git Bash is not in use: nothing said about it
    profile.write_text("Set-PSReadLineOption -EditMode Emacs\n", encoding="utf-8")
    gone = _finding(as_windows, env, home)
    assert gone.status is Status.WARN and "no PowerShell profile loads" in gone.message, _texts(gone)


def test_a_removed_powershell_line_is_held_back_from_a_sync(as_windows, home: Path) -> None:
    """As on POSIX (tests/core/clients/test_shell_choice.py): a profile that exists without init's line had it
    removed by the user, so a sync (config set/sync, doctor --fix) leaves it so and says why; init adds it back."""
    env = dict(os.environ)
    machine = _init(as_windows, env, home)
    profile = home / "Documents" / "WindowsPowerShell" / winshell.PROFILE

    def profile_change():
        plan = as_windows(lambda: shell.plan(LOOPBACK, machine))
        return next(change for change in plan.changes if Path(change.path) == profile)

    assert not profile_change().changed  # in step: nothing to do, nothing held back
    profile.write_text("Set-PSReadLineOption -EditMode Emacs\n", encoding="utf-8")  # the user deletes the line
    held = profile_change()
    assert held.changed and held.held_back.startswith("~/Documents/WindowsPowerShell/"), held.held_back
    assert "no longer has the line that loads" in held.held_back and "taotoken init --target shell" in held.held_back
    profile.unlink()  # no profile at all: init's line creates it, nothing to hold back
    assert profile_change().held_back == ""


def test_the_proxy_check_reads_env_ps1_s_exemption_and_offers_it_where_missing(as_windows, home: Path) -> None:
    """Codex with HTTPS_PROXY in this window and a gateway on 127.0.0.1: env.ps1's NO_PROXY exemption (init's) makes
    its requests go direct; an env.ps1 written without it gets a repair that appends it."""
    env = {**os.environ, "HTTP_PROXY": "http://127.0.0.1:7890", "HTTPS_PROXY": "http://127.0.0.1:7890"}
    machine = _init(as_windows, env, home)
    env_ps1 = machine.config_dir / winshell.ENV_PS1

    def finding() -> Result:
        ctx = DoctorContext(env=env, cwd=home, offline=True, overrides=Overrides(base_url=LOOPBACK.base_url))
        return as_windows(lambda: proxied.loopback_proxy(ctx, "codex"))

    direct = finding()
    assert direct.status is Status.OK and "adds 127.0.0.1 to NO_PROXY" in direct.message, _texts(direct)
    exempted = env_ps1.read_text(encoding="utf-8")
    env_ps1.write_text(exempted[:exempted.index("# The gateway is on this machine")], encoding="utf-8")
    found = finding()
    assert found.status is Status.WARN, _texts(found)
    repair = next(r for r in found.repairs if r.path == env_ps1)
    assert winshell.exempted(repair.transform(env_ps1.read_text(encoding="utf-8")), "127.0.0.1")
