"""What differs between operating systems, as data: features ask `current()` instead of testing `os.name` or
`sys.platform` themselves (tests/app/test_layers.py refuses those tests outside core/platform).

Per OS: how environment variables reach the programs a user starts (`env_targets`: shell start-up files; the
Windows user environment and PowerShell profiles; macOS `launchctl setenv` for apps started from the Dock),
the permission model that keeps a file private (POSIX modes, or a Windows ACL), how a link is opened, how
processes are found, where system-wide managed files live, and which multiprocessing start method is safe.
`for_kind("windows")` gives another OS's facts, so they are tested on any machine.
"""

from __future__ import annotations

import errno
import functools
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ENV_DOCUMENTS = "TAOTOKEN_DOCUMENTS_DIR"  # Windows: the Documents folder to use instead of Explorer's (sandboxes)
# A JSON file standing in for the environment of programs started from the desktop (the Windows user environment,
# macOS launchd's session: core.platform.desktopenv), so a sandbox changes nothing outside its directory
ENV_DESKTOP = "TAOTOKEN_DESKTOP_ENV_FILE"
LINUX, MACOS, WINDOWS, POSIX = "linux", "macos", "windows", "posix"  # POSIX: the BSDs and other Unixes


@dataclass(frozen=True)
class Platform:
    kind: str
    env_targets: tuple[str, ...]  # init targets that make variables reach new programs, the usual one first
    permissions: str  # "mode" (chmod 600 keeps a file private) | "acl" (only an ACL does: modes are always 0o666)
    opener: tuple[str, ...]  # the command a link is handed to; () = os.startfile (Windows: no shell, `&` survives)
    processes: str  # "proc" (/proc) | "pgrep" | "tasklist"
    locks: str  # "fcntl" | "msvcrt"
    managed_claude: str  # Claude Code's managed settings, under the system root
    gemini_system: str  # Gemini CLI's system settings (they override the user's and the project's), under the root
    mp_start: str  # multiprocessing start method: fork where it is safe and fast, else spawn
    libcuda: str  # the CUDA driver library's file name
    dns_check: str  # a command that resolves a host name as the system does ({host})
    # where per-user settings live: (the variable naming the base folder, the path under it); taotoken's own
    # config dir is <that>/taotoken (what platformdirs computes, read from the environment a command was given)
    config_root: tuple[str, str] = ("HOME", ".config")
    # the POSIX shells' start-up files (env.sh and a line in ~/.bashrc): "always" where they are how variables reach
    # a user's shells; "in-use" where the OS's own environment does that and only a POSIX shell brought along reads
    # them (Windows: Git Bash, MSYS2, Cygwin), so they are written only where one is in use
    posix_startup: str = "always"

    @property
    def windows(self) -> bool:
        return self.kind == WINDOWS

    @property
    def macos(self) -> bool:
        return self.kind == MACOS


_POSIX_COMMON = {"permissions": "mode", "locks": "fcntl", "dns_check": "getent hosts {host}"}
_FACTS = {
    LINUX: Platform(LINUX, ("shell",), opener=("xdg-open",), processes="proc",
                    managed_claude="etc/claude-code/managed-settings.json", mp_start="fork",
                    gemini_system="etc/gemini-cli/settings.json", libcuda="libcuda.so.1",
                    **_POSIX_COMMON),
    POSIX: Platform(POSIX, ("shell",), opener=("xdg-open",), processes="pgrep",
                    managed_claude="etc/claude-code/managed-settings.json", mp_start="spawn",
                    gemini_system="etc/gemini-cli/settings.json", libcuda="libcuda.so.1",
                    **_POSIX_COMMON),
    MACOS: Platform(MACOS, ("shell", "launchctl"), opener=("open",), processes="pgrep",
                    managed_claude="Library/Application Support/ClaudeCode/managed-settings.json", mp_start="spawn",
                    gemini_system="Library/Application Support/GeminiCli/settings.json",
                    libcuda="libcuda.dylib", permissions="mode", locks="fcntl",
                    dns_check="dscacheutil -q host -a name {host}",
                    config_root=("HOME", "Library/Application Support")),
    WINDOWS: Platform(WINDOWS, ("windows-env", "powershell"), opener=(), processes="tasklist",
                      managed_claude="Program Files/ClaudeCode/managed-settings.json", mp_start="spawn",
                      gemini_system="ProgramData/gemini-cli/settings.json",
                      libcuda="nvcuda.dll", permissions="acl", locks="msvcrt", dns_check="Resolve-DnsName {host}",
                      config_root=("LOCALAPPDATA", ""), posix_startup="in-use"),
}


# Where other clients keep system-wide (administrator) files, under the system root, per OS: client -> kind -> path.
# The BSDs and other Unixes use the Linux location.
_MANAGED = {
    "opencode": {LINUX: "etc/opencode", MACOS: "Library/Application Support/opencode",
                 WINDOWS: "ProgramData/opencode"},  # a folder: opencode.json / opencode.jsonc
    "qwen-code": {LINUX: "etc/qwen-code/settings.json", MACOS: "Library/Application Support/QwenCode/settings.json",
                  WINDOWS: "ProgramData/qwen-code/settings.json"},
}


def managed_path(client: str, kind: str | None = None) -> str:
    """A client's system-wide file or folder on this OS (or on `kind`), relative to the system root."""
    table = _MANAGED[client]
    return table.get(kind or current().kind, table[LINUX])


def kind_of(platform_name: str) -> str:
    """`sys.platform` -> one of LINUX, MACOS, WINDOWS, POSIX."""
    if platform_name.startswith("linux"):
        return LINUX
    if platform_name == "darwin":
        return MACOS
    if platform_name == "win32":  # cygwin and msys Pythons are POSIX programs
        return WINDOWS
    return POSIX


def for_kind(kind: str) -> Platform:
    return _FACTS[kind]


@functools.lru_cache(maxsize=1)
def current() -> Platform:
    return _FACTS[kind_of(sys.platform)]


def user_config_root(env: Mapping[str, str]) -> Path | None:
    """The folder per-user settings live in on this OS, from `env` (~/.config, ~/Library/Application Support,
    %LOCALAPPDATA%); None when the variable naming it is not set."""
    variable, under = current().config_root
    base = env.get(variable)
    if not base:
        return None
    return Path(base) / under if under else Path(base)


def system_root(env: Mapping[str, str]) -> Path:
    """The file system root that system-wide files are found under: C:\\ on Windows, / elsewhere."""
    if current().windows:
        return Path((env.get("SYSTEMDRIVE") or os.environ.get("SYSTEMDRIVE", "C:")) + "\\")
    return Path("/")


def sandbox_env(home: Path) -> dict[str, str]:
    """The variables that point every per-user location at `home` on this OS (the demo's sandbox, the tests):
    HOME and XDG_* everywhere (taotoken's own config dir follows XDG_CONFIG_HOME on every OS), a file in place of
    the desktop's environment (no registry value, no `launchctl setenv`), and on Windows the profile folders that
    platformdirs and the clients read (USERPROFILE, APPDATA, LOCALAPPDATA)."""
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
           "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_STATE_HOME": str(home / ".local" / "state"),
           ENV_DESKTOP: str(home / ".desktop-environment.json")}
    if current().windows:
        env.update({"USERPROFILE": str(home), "APPDATA": str(home / "AppData" / "Roaming"),
                    "LOCALAPPDATA": str(home / "AppData" / "Local"),
                    # the Documents folder (PowerShell's profiles) is read from the registry, which no variable
                    # redirects: this one does
                    ENV_DOCUMENTS: str(home / "Documents")})
    return env


def address_taken(exc: OSError) -> bool:
    """Did binding a listening socket fail because the port is held? EADDRINUSE everywhere; on Windows also
    WSAEACCES (10013), what bind gives for a port another socket holds exclusively (SO_EXCLUSIVEADDRUSE, as
    asyncio's servers do there) or one in a range the system reserved (Hyper-V, WSL: `netsh interface ipv4 show
    excludedportrange protocol=tcp`)."""
    if exc.errno == errno.EADDRINUSE:
        return True
    # asyncio's create_server re-raises bind's error as a plain OSError(errno, text): winerror is gone, EACCES stays
    return current().windows and (exc.errno == errno.EACCES or getattr(exc, "winerror", None) in (10013, 10048))


def under_wine() -> bool:
    """Is this Windows Wine (which exports wine_get_version from ntdll)? For the tests and doctor's notes only:
    Wine is not Windows for ACLs, symlinks and PowerShell."""
    if not current().windows:
        return False
    import ctypes

    try:
        return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")  # type: ignore[attr-defined]
    except OSError:
        return False
