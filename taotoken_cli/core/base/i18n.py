"""Messages in the user's language: English is the source, 简体中文 the translation.

Which language: `TAOTOKEN_LANG` (`en` or `zh`), then `lang` in taotoken's config file, then the POSIX variables
in gettext's order — `LANGUAGE` (a colon-separated list), `LC_ALL`, `LC_MESSAGES`, `LANG`; the first that names a
language decides, and anything unsupported (or `C`/`POSIX`) means English. The catalogue is compiled into the
package (`taotoken_cli/locales/zh_CN/LC_MESSAGES/taotoken.mo`) and read with the standard library's gettext, so
no system locale needs to be installed.

Machine output never changes with the language: a command that prints `--json` runs in English (`use("en")`
before it computes), exit statuses and codes are the same in every language.

In code: `_("…")` translates now; `N_("…")` marks a module-level text for extraction and is translated where it
is shown (`_(TITLE)`), because the language is chosen per run, after modules are imported.
"""

from __future__ import annotations

import gettext as _gettext
import os
from collections.abc import Callable, Iterable, Mapping
from functools import reduce
from pathlib import Path

DOMAIN = "taotoken"
LOCALEDIR = Path(__file__).resolve().parents[2] / "locales"  # taotoken_cli/locales (package data)
LANGUAGES = {"en": None, "zh": "zh_CN"}  # what TAOTOKEN_LANG accepts -> the catalogue that serves it
LANG_SETTINGS = (*LANGUAGES, "auto")  # what `config set lang` accepts (auto: follow the locale)
ENV_LANG = "TAOTOKEN_LANG"
_POSIX_ORDER = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")

_translation: _gettext.NullTranslations = _gettext.NullTranslations()
_current = "en"


def _normalise(tag: str) -> str | None:
    """'zh_CN.UTF-8' -> 'zh', 'zh-Hans' -> 'zh', 'en_US' -> 'en'; traditional Chinese and the rest -> None."""
    tag = tag.strip().split(".")[0].split("@")[0].replace("-", "_").lower()
    if not tag or tag in ("c", "posix"):
        return None
    if tag in ("zh", "zh_cn", "zh_sg", "zh_hans", "zh_hans_cn"):
        return "zh"
    if tag.split("_")[0] == "en":
        return "en"
    return None


def choose(env: Mapping[str, str], config_lang: str | Callable[[], str | None] | None = None,
           os_lang: Callable[[], str | None] | None = None) -> str:
    """The language for this run: 'en' or 'zh' (see the module docstring for the order). `config_lang` may be
    a function that reads it: the config file is then read only when TAOTOKEN_LANG does not decide. When no
    variable names a language, `os_lang` asks the OS's display language (Windows and apps started from the
    macOS Dock have no LANG; core.platform.language)."""
    explicit = env.get(ENV_LANG, "").strip()
    if explicit:
        return _normalise(explicit) or "en"
    configured = ((config_lang() if callable(config_lang) else config_lang) or "").strip()
    if configured:
        return _normalise(configured) or "en"
    for name in _POSIX_ORDER:
        value = env.get(name, "")
        if not value:
            continue
        if name == "LANGUAGE":  # a preference list: the first language we have, else keep looking
            for item in value.split(":"):
                lang = _normalise(item)
                if lang:
                    return lang
            continue
        return _normalise(value) or "en"
    if os_lang is not None:
        return _normalise(os_lang() or "") or "en"
    return "en"


def use(lang: str) -> None:
    """Make `lang` ('en' or 'zh') the language of every message from now on."""
    global _translation, _current
    catalogue = LANGUAGES.get(lang)
    _current = lang if lang in LANGUAGES else "en"
    if catalogue is None:
        _translation = _gettext.NullTranslations()
        return
    _translation = _gettext.translation(DOMAIN, str(LOCALEDIR), languages=[catalogue], fallback=True)


def current() -> str:
    return _current


def _(message: str) -> str:
    return _translation.gettext(message) if message else message


def ngettext(singular: str, plural: str, n: int) -> str:
    return _translation.ngettext(singular, plural, n)


def N_(message: str) -> str:  # noqa: N802 - the gettext convention extraction tools look for
    """Marks a text for translation where it is defined; translate it with `_()` where it is shown."""
    return message


MACHINE_FLAGS = ("--json",)  # output for programs: the same in every language


def setup(env: Mapping[str, str] | None = None, config_lang: str | Callable[[], str | None] | None = None,
          argv: tuple[str, ...] = (), os_lang: Callable[[], str | None] | None = None) -> str:
    """Choose and use the language for this process (`config_lang`: `lang` from the config file). A command
    given --json runs in English: its machine output must not change with the language."""
    env = os.environ if env is None else env
    lang = "en" if any(arg in MACHINE_FLAGS for arg in argv) else choose(env, config_lang, os_lang)
    use(lang)
    if lang != "en":
        # Typer's own words ("Options", "Commands", …) come from gettext's default domain, looked up with the
        # POSIX variables when Typer is imported: point that domain at our catalogue and ask for our language.
        _gettext.bindtextdomain("messages", str(LOCALEDIR))
        os.environ["LANGUAGE"] = LANGUAGES[lang] or "en"
    return lang


def listed(items: Iterable[str]) -> str:
    """The items of a list in a sentence, joined the language's way: "claude-code, codex"; "claude-code、codex"."""
    # i18n: joins the items of a list inside a sentence (names, files, models): "claude-code, codex, cline"
    return _(", ").join(items)


def clauses(parts: Iterable[str]) -> str:
    """Parts of a sentence, one after another: "closed loop, 8 requests"; "闭环，8 个请求"."""
    parts = list(parts)
    # i18n: two parts of a sentence, e.g. "closed loop, 8 requests" or "update ~/.claude/settings.json, create …"
    return reduce(lambda a, b: _("{first}, {second}").format(first=a, second=b), parts) if parts else ""
