"""Windows: the user's environment variables (HKCU\\Environment), as `setx` writes them, then the broadcast
(WM_SETTINGCHANGE "Environment") that `setx` sends so that Explorer, and every program started from it after
this, sees the new values without a new login. Only used on Windows (winreg exists only there)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

KEY = "Environment"


def get(name: str) -> str | None:
    import winreg  # type: ignore[import-not-found]

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, KEY) as key:
            value, _kind = winreg.QueryValueEx(key, name)
    except FileNotFoundError:
        return None
    return str(value)


def set_values(values: Mapping[str, str | None]) -> None:
    """Set each variable (None: remove it), then tell running programs. Raises OSError."""
    import winreg  # type: ignore[import-not-found]

    with winreg.CreateKeyEx(winreg.HKEY_CURRENT_USER, KEY, 0, winreg.KEY_SET_VALUE) as key:
        for name, value in values.items():
            if value is None:
                with contextlib.suppress(FileNotFoundError):
                    winreg.DeleteValue(key, name)
            else:
                winreg.SetValueEx(key, name, 0, winreg.REG_SZ, value)
    broadcast()


def broadcast() -> None:
    """WM_SETTINGCHANGE to every top-level window, as setx does; a hung window is skipped after 5 s."""
    import ctypes
    from ctypes import wintypes

    send = ctypes.WinDLL("user32", use_last_error=True).SendMessageTimeoutW  # type: ignore[attr-defined]
    send.argtypes = [wintypes.HWND, wintypes.UINT, wintypes.WPARAM, wintypes.LPCWSTR, wintypes.UINT, wintypes.UINT,
                     ctypes.POINTER(ctypes.c_size_t)]
    send.restype = ctypes.c_size_t
    result = ctypes.c_size_t()
    hwnd_broadcast, wm_settingchange, smto_abortifhung = 0xFFFF, 0x001A, 0x0002
    send(hwnd_broadcast, wm_settingchange, 0, KEY, smto_abortifhung, 5000, ctypes.byref(result))


def documents_dir(env: Mapping[str, str]) -> str | None:
    """The user's Documents folder as Explorer has it (OneDrive may have moved it), %USERPROFILE% expanded from
    `env`; None when the registry does not say."""
    import winreg  # type: ignore[import-not-found]

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER,
                            r"Software\Microsoft\Windows\CurrentVersion\Explorer\User Shell Folders") as key:
            value, _kind = winreg.QueryValueEx(key, "Personal")
    except OSError:
        return None
    profile = env.get("USERPROFILE")
    text = str(value)
    if profile:
        text = text.replace("%USERPROFILE%", profile).replace("%userprofile%", profile)
    return text if "%" not in text else None
