"""The shell target on macOS: env.sh and ~/.zshrc for shells, and for apps started from the Dock a LaunchAgent that
runs `launchctl setenv` from env.sh at each login, plus `launchctl setenv` now; undone by `init --undo`; doctor
checks it (env.desktop).

macOS is asked for through its facts (`system.for_kind("macos")` in place of `system.current`), and `launchctl` is
the one thing that cannot exist here: a stand-in script first on PATH keeps launchd's session in a directory (the
outermost boundary: taotoken runs `launchctl` as a program, and the agent's own /bin/sh script runs it too).
"""

from __future__ import annotations

import json
import os
import plistlib
import subprocess
from pathlib import Path

import pytest

from taotoken_cli.core.clients import macshell, shell
from taotoken_cli.core.clients.base import Machine
from taotoken_cli.core.platform import desktopenv, system
from tests.conftest import SENTINEL_KEY

pytestmark = pytest.mark.skipif(system.current().windows, reason="the stand-in launchctl is a POSIX shell script")

BASE = "http://127.0.0.1:9/api"
LAUNCHCTL = """#!/bin/sh
# Stand-in for macOS launchctl (setenv/unsetenv/getenv only): launchd's session is a directory of files.
state={state}
mkdir -p "$state"
case "$1" in
  setenv) printf %s "$3" > "$state/$2" ;;
  unsetenv) rm -f "$state/$2" ;;
  getenv) [ -f "$state/$2" ] && cat "$state/$2" && echo ;;
  *) echo "launchctl stand-in: $1 not supported" >&2; exit 64 ;;
esac
"""


class Launchd:
    def __init__(self, state: Path) -> None:
        self.state = state

    def session(self) -> dict[str, str]:
        return {p.name: p.read_text(encoding="utf-8") for p in self.state.iterdir()} if self.state.exists() else {}


@pytest.fixture
def macos(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Launchd:
    facts = system.for_kind("macos")
    monkeypatch.setattr(system, "current", lambda: facts)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    state = tmp_path / "launchd-session"
    script = bin_dir / "launchctl"
    script.write_text(LAUNCHCTL.format(state=state), encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv(system.ENV_DESKTOP)  # the real (stand-in) launchctl, not the sandbox's file
    return Launchd(state)


def _init(run) -> None:
    run("init", "--key-stdin", "--base-url", BASE, "--model", "gpt-4o-mini", "--target", "shell", "--yes",
        input=SENTINEL_KEY).assert_clean()


def test_init_writes_zshrc_a_launch_agent_and_sets_launchd_now(macos: Launchd, home: Path, run) -> None:
    result = run("init", "--key-stdin", "--base-url", BASE, "--model", "gpt-4o-mini", "--target", "shell", "--yes",
                 input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 0, result.output
    env_sh = home / ".config" / "taotoken" / "env.sh"
    assert shell.MARKER in (home / ".zshrc").read_text(encoding="utf-8")  # zsh: macOS's default shell
    assert not (home / ".bashrc").exists()
    agent = home / "Library" / "LaunchAgents" / "net.taotoken.env.plist"
    written = plistlib.loads(agent.read_bytes())  # a valid property list
    assert written["Label"] == "net.taotoken.env" and written["RunAtLoad"] is True
    assert written["ProgramArguments"][:2] == ["/bin/sh", "-c"] and written["ProgramArguments"][3] == str(env_sh)
    assert SENTINEL_KEY not in agent.read_text(encoding="utf-8")  # the key stays in the 0600 env.sh alone
    assert macos.session() == {"OPENAI_BASE_URL": BASE + "/v1", "OPENAI_API_KEY": SENTINEL_KEY}
    assert "Dock" in result.output

    undo = run("init", "--undo").assert_clean()
    assert undo.returncode == 0, undo.output
    assert not agent.exists() and macos.session() == {}


def test_the_agent_sets_launchd_from_env_sh_at_login(macos: Launchd, home: Path, run) -> None:
    _init(run)
    for name in list(macos.session()):
        subprocess.run(["launchctl", "unsetenv", name], check=True)  # a new login: launchd's session is empty
    agent = plistlib.loads((home / "Library" / "LaunchAgents" / "net.taotoken.env.plist").read_bytes())
    subprocess.run(agent["ProgramArguments"], check=True, env={"PATH": os.environ["PATH"]}, timeout=30)
    assert macos.session() == {"OPENAI_BASE_URL": BASE + "/v1", "OPENAI_API_KEY": SENTINEL_KEY}


def test_config_set_updates_launchd_with_env_sh(macos: Launchd, run) -> None:
    _init(run)
    run("config", "set", "base_url", "http://127.0.0.1:10/api", "--yes").assert_clean()
    assert macos.session()["OPENAI_BASE_URL"] == "http://127.0.0.1:10/api/v1"


def test_a_value_set_by_hand_is_named_before_it_is_replaced(macos: Launchd, run) -> None:
    subprocess.run(["launchctl", "setenv", "OPENAI_API_KEY", "sk-byhand0000000000000000"], check=True)
    result = run("init", "--key-stdin", "--base-url", BASE, "--model", "gpt-4o-mini", "--target", "shell",
                 "--dry-run", input=SENTINEL_KEY).assert_clean()
    assert "OPENAI_API_KEY already set for apps started from the Dock" in " ".join(result.output.split())
    assert macos.session()["OPENAI_API_KEY"] == "sk-byhand0000000000000000"  # a dry run sets nothing


def test_doctor_checks_the_agent_and_launchd(macos: Launchd, home: Path, run) -> None:
    def desktop() -> dict:
        result = run("doctor", "--json", "--offline", "--check", "env.desktop").assert_clean()
        return {c["id"]: c for c in json.loads(result.stdout)["checks"]}["env.desktop"]

    assert desktop()["status"] == "skipped"  # init --target shell was not run
    _init(run)
    assert desktop()["status"] == "ok"
    subprocess.run(["launchctl", "unsetenv", "OPENAI_API_KEY"], check=True)
    found = desktop()
    assert found["status"] == "warn" and "OPENAI_API_KEY" in found["message"]
    assert "taotoken init --target shell" in found["fixes"][0]
    (home / "Library" / "LaunchAgents" / "net.taotoken.env.plist").unlink()
    found = desktop()
    assert found["status"] == "warn" and "LaunchAgent" in found["message"]


def test_bash_on_macos_gets_bash_profile(macos: Launchd, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELL", "/bin/bash")
    where = shell.paths(Machine.of())
    assert shell.rc_files(where) == [home / ".bash_profile"]  # Terminal's login bash never reads ~/.bashrc
    monkeypatch.delenv("SHELL")
    assert shell.rc_files(where) == [home / ".zshrc"]


def test_the_sandbox_file_stands_in_for_launchd(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = system.for_kind("macos")
    monkeypatch.setattr(system, "current", lambda: facts)
    env = dict(os.environ)
    assert desktopenv.kind(env) == desktopenv.FILE  # the demo's and the tests' sandbox: nothing outside it
    desktopenv.set_values({"OPENAI_API_KEY": "x"}, env)
    assert json.loads(Path(env[system.ENV_DESKTOP]).read_text(encoding="utf-8")) == {"OPENAI_API_KEY": "x"}
    assert macshell.after_apply(Machine.of(env), home / "missing-env.sh") is None
