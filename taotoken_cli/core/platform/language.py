"""The display language the OS is set to, for when no variable (TAOTOKEN_LANG, LANGUAGE, LC_*, LANG) says:
Windows' user interface language (GetUserDefaultUILanguage), macOS's first preferred language (AppleLanguages in
~/Library/Preferences/.GlobalPreferences.plist, read with plistlib: no `defaults` process at start-up).
Returns a tag i18n understands ('zh-CN', 'zh-Hans-CN', 'en-US'), or None."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from taotoken_cli.core.platform import system

# LANGIDs of Simplified Chinese (zh-CN, zh-SG); traditional Chinese (zh-TW, zh-HK, zh-MO) is not translated
_LANGIDS = {0x0804: "zh-CN", 0x1004: "zh-SG"}


def display_language(env: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    facts = system.current()
    if facts.windows:
        return _windows()
    if facts.macos:
        return _macos(Path(env.get("HOME") or Path.home()))
    return None


def _windows() -> str | None:
    import ctypes

    try:
        langid = ctypes.WinDLL("kernel32").GetUserDefaultUILanguage()  # type: ignore[attr-defined]
    except (OSError, AttributeError):
        return None
    if langid & 0x3FF == 0x09:  # any English
        return "en"
    return _LANGIDS.get(langid, "other")


def _macos(home: Path) -> str | None:
    import plistlib

    try:
        with open(home / "Library" / "Preferences" / ".GlobalPreferences.plist", "rb") as handle:
            languages = plistlib.load(handle).get("AppleLanguages") or []
    except (OSError, ValueError, plistlib.InvalidFileException):
        return None
    return str(languages[0]) if languages else None
