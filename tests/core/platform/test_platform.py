"""The platform wing: each OS's facts as data, the shell syntax of hints, private files and locks.

Another OS's facts are asked for by replacing `system.current` (the one function the features ask); what only a
real Windows can show (ACL enforcement, the registry) runs in the Windows run (scripts/windows, docs/windows.md).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from taotoken_cli.core.files.fsutil import atomic_write, is_world_readable, private_fix
from taotoken_cli.core.platform import locks, permissions, shells, system
from taotoken_cli.core.settings.loader import user_config_dir

POSIX_ONLY = pytest.mark.skipif(system.current().windows, reason="POSIX modes: Windows keeps files private by ACL")


@pytest.fixture
def on(monkeypatch: pytest.MonkeyPatch):
    """on("windows"): the features see that OS's facts for the rest of the test."""
    def switch(kind: str) -> system.Platform:
        facts = system.for_kind(kind)
        monkeypatch.setattr(system, "current", lambda: facts)
        return facts
    return switch


@pytest.mark.parametrize(("name", "kind"), [("linux", "linux"), ("darwin", "macos"), ("win32", "windows"),
                                            ("cygwin", "posix"), ("freebsd14", "posix")])
def test_each_sys_platform_maps_to_one_kind(name: str, kind: str) -> None:
    assert system.kind_of(name) == kind


def test_the_facts_differ_where_the_systems_do() -> None:
    linux, mac, windows = (system.for_kind(k) for k in ("linux", "macos", "windows"))
    assert (linux.permissions, mac.permissions, windows.permissions) == ("mode", "mode", "acl")
    assert windows.env_targets == ("windows-env", "powershell") and "launchctl" in mac.env_targets
    assert (linux.opener, mac.opener, windows.opener) == (("xdg-open",), ("open",), ())
    assert (linux.locks, windows.locks) == ("fcntl", "msvcrt")
    assert windows.managed_claude.startswith("Program Files") and mac.managed_claude.startswith("Library")
    assert linux.mp_start == "fork" and mac.mp_start == windows.mp_start == "spawn"


def test_sandbox_env_points_every_per_user_location_at_home(on, tmp_path: Path) -> None:
    on("windows")
    env = system.sandbox_env(tmp_path)
    assert env["HOME"] == env["USERPROFILE"] == str(tmp_path)
    assert env["XDG_CONFIG_HOME"] == str(tmp_path / ".config")
    assert Path(env["APPDATA"]).parent == Path(env["LOCALAPPDATA"]).parent == tmp_path / "AppData"
    on("linux")
    assert "APPDATA" not in system.sandbox_env(tmp_path)


@pytest.mark.parametrize("kind", ["linux", "macos", "windows"])
def test_taotoken_s_config_dir_follows_xdg_config_home_on_every_os(on, kind: str, tmp_path: Path) -> None:
    on(kind)
    assert user_config_dir({"XDG_CONFIG_HOME": str(tmp_path), "HOME": "/elsewhere"}) == tmp_path / "taotoken"


@pytest.mark.parametrize(("env", "expected"), [
    ({}, "powershell"),
    ({"PSModulePath": r"C:\Program Files\WindowsPowerShell\Modules"}, "powershell"),
    ({"PROMPT": "$P$G", "PSModulePath": r"C:\Program Files\WindowsPowerShell\Modules"}, "cmd"),
    ({"PROMPT": "$P$G", "PSModulePath": r"C:\Users\a\Documents\PowerShell\Modules;C:\Program Files\PowerShell\7"},
     "powershell"),
    ({"SHELL": "/usr/bin/bash"}, "posix"),
])
def test_the_shell_on_windows(on, env: dict, expected: str) -> None:
    on("windows")
    assert shells.syntax(env) == expected


def test_the_shell_elsewhere(on) -> None:
    on("linux")
    assert shells.syntax({}) == "posix" and shells.syntax({"SHELL": "/usr/bin/fish"}) == "fish"
    assert shells.syntax({"PROMPT": "$P$G"}) == "posix"


def test_each_shell_gets_its_own_syntax() -> None:
    value = "it's $x"
    assert shells.set_var("OPENAI_API_KEY", value, "powershell") == "$env:OPENAI_API_KEY = 'it''s $x'"
    assert shells.set_var("OPENAI_API_KEY", "v", "cmd") == 'set "OPENAI_API_KEY=v"'
    assert shells.set_var("OPENAI_API_KEY", value, "posix") == "export OPENAI_API_KEY='it'\"'\"'s $x'"
    assert shells.set_var("X", "v", "fish") == "set -gx X v"
    assert shells.unset_var("X", "powershell") == "Remove-Item Env:X" and shells.unset_var("X", "posix") == "unset X"
    assert shells.load_file(Path("env.ps1"), "powershell") == ". 'env.ps1'"
    assert shells.load_file(Path("env.sh"), "posix") == ". env.sh"
    assert shells.env_file_name("powershell") == "env.ps1" and shells.env_file_name("posix") == "env.sh"


def test_the_fix_for_a_readable_key_file_is_the_os_s_own(on, monkeypatch: pytest.MonkeyPatch) -> None:
    path = Path("/somewhere/config.toml")
    on("linux")
    assert private_fix(path) == f"chmod 600 {shlex.quote(str(path))}"  # Windows' path has backslashes: quoted
    on("windows")
    monkeypatch.delenv("PROMPT", raising=False)
    monkeypatch.delenv("SHELL", raising=False)
    assert private_fix(path) == f'icacls "{path}" /inheritance:r /grant:r "${{env:USERNAME}}:F"'
    monkeypatch.setenv("PROMPT", "$P$G")
    monkeypatch.setenv("PSModulePath", "")
    assert private_fix(path) == f'icacls "{path}" /inheritance:r /grant:r "%USERNAME%:F"'


@POSIX_ONLY
def test_a_secret_is_private_from_its_first_byte(tmp_path: Path) -> None:
    path = atomic_write(tmp_path / "env.sh", "export OPENAI_API_KEY=x\n", secret=True)
    assert permissions.mode_of(path) == 0o600 and not is_world_readable(path)
    plain = atomic_write(tmp_path / "plain.txt", "x\n")
    assert permissions.mode_of(plain) == 0o644 and is_world_readable(plain)
    permissions.make_private(plain)
    assert not is_world_readable(plain)


def test_a_second_lock_on_the_file_is_refused_until_the_first_is_closed(tmp_path: Path) -> None:
    first = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT)
    second = os.open(tmp_path / "lock", os.O_RDWR | os.O_CREAT)
    try:
        assert locks.try_lock(first)
        assert not locks.try_lock(second)
        os.close(first)
        first = -1
        assert locks.try_lock(second)
    finally:
        for fd in (first, second):
            if fd >= 0:
                os.close(fd)


@pytest.mark.skipif(not system.current().windows, reason="the Win32 security API: Windows only")
def test_windows_a_secret_file_s_acl_names_the_user_alone(tmp_path: Path) -> None:
    from taotoken_cli.core.platform import winacl

    plain = atomic_write(tmp_path / "plain.txt", "x\n")
    secret = atomic_write(tmp_path / "secret.txt", "key\n", secret=True)
    assert winacl.readers_besides_user(secret) == [] and not is_world_readable(secret)
    permissions.make_private(plain)
    assert winacl.readers_besides_user(plain) == []
    assert winacl.user_sid_string().startswith("S-1-5-")


def test_the_os_display_language_decides_only_when_no_variable_does() -> None:
    from taotoken_cli.core.base.i18n import choose

    assert choose({}, None, lambda: "zh-Hans-CN") == "zh"
    assert choose({}, None, lambda: "zh-CN") == "zh"
    assert choose({}, None, lambda: "zh-TW") == "en" and choose({}, None, lambda: None) == "en"
    assert choose({"LANG": "en_US.UTF-8"}, None, lambda: "zh-CN") == "en"
    assert choose({"TAOTOKEN_LANG": "en"}, None, lambda: "zh-CN") == "en"


def test_macos_reads_apple_languages_from_the_global_preferences(on, tmp_path: Path) -> None:
    import plistlib

    from taotoken_cli.core.platform.language import display_language

    on("macos")
    prefs = tmp_path / "Library" / "Preferences" / ".GlobalPreferences.plist"
    assert display_language({"HOME": str(tmp_path)}) is None
    prefs.parent.mkdir(parents=True)
    prefs.write_bytes(plistlib.dumps({"AppleLanguages": ["zh-Hans-CN", "en-US"]}, fmt=plistlib.FMT_BINARY))
    assert display_language({"HOME": str(tmp_path)}) == "zh-Hans-CN"
    on("linux")
    assert display_language({"HOME": str(tmp_path)}) is None


def test_a_terminal_is_what_says_so_and_on_windows_a_console(tmp_path: Path) -> None:
    import io

    from taotoken_cli.core.platform.console import is_terminal

    assert not is_terminal(io.StringIO()) and not is_terminal(object())
    with open(os.devnull) as null:  # NUL says isatty() is True on Windows, and is no console there
        assert not is_terminal(null)


@pytest.mark.parametrize(("kind", "env", "expected"), [
    ("linux", {"HOME": "/h"}, Path("/h/.config/taotoken")),
    ("macos", {"HOME": "/h"}, Path("/h/Library/Application Support/taotoken")),
    ("windows", {"HOME": "/elsewhere", "LOCALAPPDATA": "/h/AppData/Local"}, Path("/h/AppData/Local/taotoken")),
])
def test_taotoken_s_config_dir_is_read_from_the_command_s_environment(on, kind: str, env: dict,
                                                                      expected: Path) -> None:
    """A sandboxed LOCALAPPDATA (the Windows CI run) or HOME is honoured, as platformdirs would compute it from
    the real one (platformdirs asks Windows' shell API, which no variable redirects)."""
    on(kind)
    assert user_config_dir(env) == expected


def test_the_fix_for_a_directory_or_file_taotoken_cannot_use_is_the_os_s_own(on, monkeypatch) -> None:
    """The lock file's directory, a client file that cannot be read: `chmod` on POSIX, an icacls grant on Windows,
    said in the user's shell (Git Bash: the MSYS runtime must leave `/grant` alone)."""
    path = Path("/some where/taotoken")
    on("linux")
    assert permissions.access_fix(path, directory=True) == f"chmod u+rwx '{path}'"
    assert permissions.access_fix(path) == f"chmod u+rw '{path}'"
    on("windows")
    for name in ("PROMPT", "SHELL", "PSModulePath"):
        monkeypatch.delenv(name, raising=False)
    assert permissions.access_fix(path, directory=True) == f'icacls "{path}" /grant "${{env:USERNAME}}:(OI)(CI)F"'
    monkeypatch.setenv("PROMPT", "$P$G")
    assert permissions.access_fix(path) == f'icacls "{path}" /grant "%USERNAME%:F"'
    monkeypatch.setenv("SHELL", "/usr/bin/bash")
    assert permissions.access_fix(path) == f'MSYS_NO_PATHCONV=1 icacls "{path}" /grant "$USERNAME:F"'
    assert private_fix(path) == f'MSYS_NO_PATHCONV=1 icacls "{path}" /inheritance:r /grant:r "$USERNAME:F"'


PYTHON_IN_PROGRAM_FILES = "C:\\Program Files\\Python313\\python.exe"


@pytest.mark.parametrize(("shell", "expected"), [
    ("posix", f"'{PYTHON_IN_PROGRAM_FILES}' -m pip install 'taotoken[html]'"),
    ("fish", f"'{PYTHON_IN_PROGRAM_FILES}' -m pip install 'taotoken[html]'"),
    ("powershell", f"& '{PYTHON_IN_PROGRAM_FILES}' -m pip install 'taotoken[html]'"),
    ("cmd", f'"{PYTHON_IN_PROGRAM_FILES}" -m pip install taotoken[html]'),
])
def test_an_install_command_is_quoted_in_the_user_s_shell(shell: str, expected: str) -> None:
    """cmd.exe takes single quotes literally (pip would be asked for `'taotoken[html]'`), and PowerShell runs a
    quoted program only after `&`."""
    from taotoken_cli.core.platform import installer

    venv = installer.Installation(installer.PIP_VENV, PYTHON_IN_PROGRAM_FILES, shell=shell)
    assert str(installer.add_extra("html", venv)) == expected
    assert str(installer.add_package("plotly>=5.20", installer.Installation(installer.PIPX, None, shell=shell))) \
        == "pipx inject taotoken " + ('"plotly>=5.20"' if shell == "cmd" else "'plotly>=5.20'")


def test_an_install_command_follows_the_shell_the_environment_names(on, monkeypatch) -> None:
    from taotoken_cli.core.platform import installer

    on("windows")
    monkeypatch.delenv("SHELL", raising=False)
    monkeypatch.setenv("PROMPT", "$P$G")
    monkeypatch.setenv("PSModulePath", "")
    venv = installer.Installation(installer.PIP_VENV, PYTHON_IN_PROGRAM_FILES)
    assert str(installer.add_package("httpx[socks]", venv)) == \
        f'"{PYTHON_IN_PROGRAM_FILES}" -m pip install httpx[socks]'
    # the generated docs show the same whoever generates them
    assert str(installer.add_extra("html", installer.GENERIC)) == "pip install 'taotoken[html]'"


@pytest.mark.parametrize(("shell", "expected"), [
    ("posix", 'export ANTHROPIC_AUTH_TOKEN="$ANTHROPIC_API_KEY"; unset ANTHROPIC_API_KEY'),
    ("powershell", "$env:ANTHROPIC_AUTH_TOKEN = $env:ANTHROPIC_API_KEY; Remove-Item Env:ANTHROPIC_API_KEY"),
    ("cmd", 'set "ANTHROPIC_AUTH_TOKEN=%ANTHROPIC_API_KEY%" & set ANTHROPIC_API_KEY='),
    ("fish", 'set -gx ANTHROPIC_AUTH_TOKEN "$ANTHROPIC_API_KEY"; set -e ANTHROPIC_API_KEY'),
])
def test_a_fix_that_sets_variables_is_said_in_the_user_s_shell(shell: str, expected: str) -> None:
    line = 'export ANTHROPIC_AUTH_TOKEN="$ANTHROPIC_API_KEY"; unset ANTHROPIC_API_KEY'
    assert shells.in_shell(line, shell) == expected
    assert shells.in_shell("export NO_PROXY=gw.example", "powershell") == "$env:NO_PROXY = 'gw.example'"
    # Windows' names ignore case: one removal for HTTP_PROXY and http_proxy
    assert shells.in_shell("unset HTTP_PROXY http_proxy", "cmd") == "set HTTP_PROXY="
    assert shells.in_shell("taotoken init --target shell", shell) == "taotoken init --target shell"  # not a setting
    assert shells.in_shell("export X=$(cat f)", "powershell") == "export X=$(cat f)"  # not only a setting: as is


def test_explain_and_doctor_give_windows_fixes_in_powershell(on, home: Path, monkeypatch: pytest.MonkeyPatch,
                                                              run) -> None:
    from taotoken_cli.cmd.explain.run import lookup

    on("windows")
    env = {"XDG_CONFIG_HOME": str(home / ".config")}
    fixes = [str(fix) for fix in lookup("auth.missing_key", env).fixes()]
    assert "$env:TAOTOKEN_API_KEY = 'sk-…'" in fixes and not any("export " in fix for fix in fixes)
    on("linux")
    assert "export TAOTOKEN_API_KEY=sk-…" in [str(fix) for fix in lookup("auth.missing_key", env).fixes()]


def test_doctor_s_fixes_follow_the_shell(home: Path, monkeypatch: pytest.MonkeyPatch, run) -> None:
    import json

    monkeypatch.setenv("TAOTOKEN_MODLE", "x")
    monkeypatch.setenv("SHELL", "/usr/bin/fish")
    result = run("doctor", "--json", "--offline", "--check", "env.taotoken").assert_clean()
    found = {c["id"]: c for c in json.loads(result.stdout)["checks"]}["env.taotoken"]
    assert found["fixes"] == ["set -e TAOTOKEN_MODLE; set -gx TAOTOKEN_MODEL '…'"]


def test_the_sandbox_s_own_variables_are_known_to_doctor(home: Path, run) -> None:
    import json

    result = run("doctor", "--json", "--offline", "--check", "env.taotoken").assert_clean()
    found = {c["id"]: c for c in json.loads(result.stdout)["checks"]}["env.taotoken"]
    assert found["status"] == "ok", found  # TAOTOKEN_DESKTOP_ENV_FILE (and on Windows TAOTOKEN_DOCUMENTS_DIR)


def test_posix_only_advice_is_not_given_on_windows_or_macos(on) -> None:
    from taotoken_cli.core.clients.ccswitch import open_command
    from taotoken_cli.core.devices.probe import no_driver_hints

    links = Path("/x/cc-switch-import.txt")
    on("linux")
    assert open_command(links).startswith("xdg-open ") and "libcuda.so.1" in no_driver_hints()["cuda"]
    on("macos")
    assert open_command(links).startswith("open ") and "macOS has no CUDA" in no_driver_hints()["cuda"]
    on("windows")
    assert open_command(links).startswith("Start-Process (Select-String -Path ")
    for text in no_driver_hints().values():
        assert not any(posix in text for posix in ("libcuda.so", "LD_LIBRARY_PATH", "/etc/", "docker"))


def test_the_fix_at_a_variable_s_source_is_in_the_user_s_shell(home: Path) -> None:
    """config's and models' fix for a value set in this shell (doctor's too): the user's shell's syntax."""
    from taotoken_cli.core.settings import Overrides, load_settings
    from taotoken_cli.core.settings.origins import fix_at_source

    env = {**os.environ, "TAOTOKEN_MODEL": "m"}
    for shell, expected in (("/bin/bash", "export TAOTOKEN_MODEL=x"), ("/usr/bin/fish", "set -gx TAOTOKEN_MODEL x")):
        env["SHELL"] = shell
        fix = fix_at_source(load_settings(Overrides(), env), "model", "x", env)
        assert [command.line for command in fix.commands] == [expected]
        assert fix.where is not None and fix.where.name == "TAOTOKEN_MODEL"


def test_route_s_sycl_replacement_is_said_in_the_user_s_shell(on) -> None:
    from taotoken_cli.core.devices.selection import selection_env_notes

    def replacement(env: dict) -> str:
        [note] = [n for n in selection_env_notes({"SYCL_DEVICE_FILTER": "opencl:cpu", **env}) if n.level == "warning"]
        return note.note.split("replace it: ")[1]

    on("linux")
    assert replacement({}) == "unset SYCL_DEVICE_FILTER; export ONEAPI_DEVICE_SELECTOR='opencl:cpu'"
    assert replacement({"SHELL": "/usr/bin/fish"}) == \
        "set -e SYCL_DEVICE_FILTER; set -gx ONEAPI_DEVICE_SELECTOR opencl:cpu"
    on("windows")
    assert replacement({}) == "Remove-Item Env:SYCL_DEVICE_FILTER; $env:ONEAPI_DEVICE_SELECTOR = 'opencl:cpu'"


def test_init_says_where_codex_s_key_variable_lasts_on_each_os(on) -> None:
    """Codex with --codex-auth env and no shell target: the notes and the refusal name the OS's own lasting place
    (the shell's start-up file and env.sh; on Windows the user environment and the PowerShell profile)."""
    from taotoken_cli.cmd.init.plan import _codex_key_source

    for kind, where, how in (("linux", "your shell's start-up file", "env.sh exports OPENAI_API_KEY"),
                             ("windows", "your Windows user environment", "in your Windows user environment and "
                                                                          "PowerShell profile")):
        on(kind)
        notes: list[str] = []
        _codex_key_source(["codex"], notes, [], None, assume_yes=True, key_exported=True)
        assert notes == [f"codex: reads the key from $OPENAI_API_KEY, which is set here: keep it set in {where} "
                         "(or add --target shell)"]
        notes = []
        refused = _codex_key_source(["codex"], notes, [], None, assume_yes=True, key_exported=False)
        assert refused is not None and how in str(refused.fix) and how in notes[0]
        assert ("env.sh" in str(refused.fix)) == (kind == "linux")


def test_the_demo_speaks_the_user_s_shell_and_loads_env_ps1_on_windows(on) -> None:
    from taotoken_cli.cmd.demo.steps import build_steps, what_next
    from taotoken_cli.core.clients import envfiles, winshell

    on("windows")
    init = build_steps("http://127.0.0.1:1/api", True, "powershell")[0]
    assert init.commands[0].shown.startswith("$env:TAOTOKEN_KEY | taotoken init")
    assert init.commands[1].source == ".config/taotoken/env.ps1"
    assert what_next("powershell")[0][0].startswith("$env:TAOTOKEN_KEY | ")
    text = winshell.env_ps1_text({"OPENAI_BASE_URL": "http://h/v1", "OPENAI_API_KEY": "it's"})
    assert envfiles.parse_env_ps1(text) == {"OPENAI_BASE_URL": "http://h/v1", "OPENAI_API_KEY": "it's"}
    on("linux")
    assert build_steps("http://127.0.0.1:1/api", True)[0].commands[1].source == ".config/taotoken/env.sh"
    assert what_next()[0][0].startswith('printf %s "$TAOTOKEN_KEY" | ')


def test_macos_paths_of_every_client_through_the_platform_table(on, home: Path) -> None:
    """What each client reads on macOS: VS Code's User folder (Cline's and Claude Code's extension settings) under
    ~/Library/Application Support, Claude Code's managed settings under /Library, taotoken's own config there
    when XDG_CONFIG_HOME is unset, zsh's ~/.zshrc, the LaunchAgent; ~/.claude, ~/.codex, ~/.cline and
    ~/.cc-switch as on Linux."""
    from taotoken_cli.core.clients import ccswitch, claude_code, cline, codex, macshell, shell, vscode
    from taotoken_cli.core.clients.base import Machine

    on("macos")
    user = home / "Library" / "Application Support" / "Code" / "User"
    user.mkdir(parents=True)
    (user / "settings.json").write_text("{}\n", encoding="utf-8")
    env = {"HOME": str(home), "PATH": ""}
    machine = Machine.of(env, home)
    assert machine.config_dir == home / "Library" / "Application Support" / "taotoken"
    assert vscode.settings_files(machine) == [user / "settings.json"]
    claude = claude_code.paths(machine)
    assert claude.managed == Path("/Library/Application Support/ClaudeCode/managed-settings.json")
    assert claude.settings == home / ".claude" / "settings.json"
    assert codex.paths(machine).config == home / ".codex" / "config.toml"
    assert cline.paths(machine).providers == home / ".cline" / "data" / "settings" / "providers.json"
    assert ccswitch.paths(machine).home == home / ".cc-switch"
    assert shell.rc_files(shell.paths(machine), env) == [home / ".zshrc"]
    assert macshell.agent_path(machine) == home / "Library" / "LaunchAgents" / "net.taotoken.env.plist"


def test_a_port_another_socket_holds_is_taken_on_each_os(on) -> None:
    """A real bind on a held port gives EADDRINUSE here; Windows says WSAEACCES (10013) for a port held exclusively
    or reserved by the system, which Wine showed for the mock's busy-port test: the same "already in use"."""
    import errno
    import socket

    with socket.socket() as held, socket.socket() as second:
        held.bind(("127.0.0.1", 0))
        held.listen()
        with pytest.raises(OSError) as refused:
            second.bind(held.getsockname())
    assert system.address_taken(refused.value)
    on("linux")
    assert not system.address_taken(OSError(errno.EACCES, "Permission denied"))
    denied = OSError(errno.EACCES, "An attempt was made to access a socket in a way forbidden by its access "
                     "permissions")
    denied.winerror = 10013  # type: ignore[attr-defined]  # what Windows' socket module sets beside errno
    assert not system.address_taken(denied)
    on("windows")
    assert system.address_taken(denied)
    # what the mock sees: asyncio's create_server re-raises it with the errno alone
    assert system.address_taken(OSError(errno.EACCES, "error while attempting to bind on address: access denied"))
    assert not system.address_taken(OSError(errno.EADDRNOTAVAIL, "cannot assign requested address"))
