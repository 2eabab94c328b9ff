"""The interface in 简体中文: choosing the language, complete catalogues, machine output the same in every language.

Real parts: the compiled catalogue in the package read by the standard library's gettext (no system locale is
installed here: LANG=zh_CN.UTF-8 names a locale this machine does not have), the CLI in a subprocess.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from taotoken_cli.core.base import i18n
from tests.conftest import REPO


@pytest.mark.parametrize("env, config_lang, expected", [
    ({}, None, "en"),
    ({"LANG": "zh_CN.UTF-8"}, None, "zh"),
    ({"LANG": "zh_CN.UTF-8", "TAOTOKEN_LANG": "en"}, None, "en"),  # TAOTOKEN_LANG wins over a Chinese locale
    ({"LANG": "en_US.UTF-8"}, "zh", "zh"),  # the config's `lang` over the system locale
    ({"TAOTOKEN_LANG": "en"}, "zh", "en"),  # …but not over TAOTOKEN_LANG
    ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, None, "zh"),  # POSIX order: LC_ALL before LANG
    ({"LANGUAGE": "fr:zh_CN:en", "LANG": "en_US.UTF-8"}, None, "zh"),  # the first language we have
    ({"LANGUAGE": "fr", "LC_MESSAGES": "zh_SG.UTF-8"}, None, "zh"),
    ({"LANG": "zh_TW.UTF-8"}, None, "en"),  # traditional Chinese is not supported: English
    ({"LANG": "C.UTF-8"}, None, "en"),
    ({"LANG": "de_DE.UTF-8"}, None, "en"),
    ({"TAOTOKEN_LANG": "zh-Hans"}, None, "zh"),
    ({"TAOTOKEN_LANG": "klingon", "LANG": "zh_CN.UTF-8"}, None, "en"),  # unsupported means English
])
def test_the_language_is_chosen_in_the_documented_order(env, config_lang, expected) -> None:
    assert i18n.choose(env, config_lang) == expected


def test_every_message_is_translated_with_the_same_placeholders_and_compiled() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "scripts/i18n.py"), "check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr + "\nfix with: python scripts/i18n.py update, " \
        "translate i18n/zh_CN/*.po, python scripts/i18n.py compile"


def test_typer_speaks_chinese_without_a_system_locale() -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "LANG": "zh_CN.UTF-8", "COLUMNS": "100"}
    proc = subprocess.run([sys.executable, "-m", "taotoken_cli", "--help"], capture_output=True, text=True,
                          env=env, check=True)
    assert "选项" in proc.stdout and "命令" in proc.stdout
    english = subprocess.run([sys.executable, "-m", "taotoken_cli", "--help"], capture_output=True, text=True,
                             env={**env, "TAOTOKEN_LANG": "en"}, check=True)
    assert "Options" in english.stdout and "选项" not in english.stdout


def test_config_set_lang_chooses_the_language_and_auto_follows_the_locale(cli, home) -> None:
    assert cli("config", "set", "lang", "zh").assert_clean().returncode == 0
    assert 'lang = "zh"' in (home / ".config/taotoken/config.toml").read_text()
    assert "选项" in cli("--help", env={"LANG": "en_US.UTF-8"}).stdout  # the config's lang over the locale
    assert "Options" in cli("--help", env={"TAOTOKEN_LANG": "en"}).stdout  # TAOTOKEN_LANG over the config
    assert cli("config", "set", "lang", "auto").assert_clean().returncode == 0
    assert "lang" not in (home / ".config/taotoken/config.toml").read_text()
    bad = cli("config", "set", "lang", "klingon").assert_clean()
    assert bad.returncode == 2 and "use en, zh, or auto" in bad.stderr
