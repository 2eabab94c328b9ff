"""init, config and the shared core in 简体中文: the plan, the wizard's questions, config set/sync/show, a broken
file's line:column — the same exit statuses and JSON as in English, every line within 80 columns.

Real parts: the CLI in a subprocess (or on a real pseudo-terminal for the wizard) with TAOTOKEN_LANG=zh, real
files in a temporary HOME, the project's mock gateway on 127.0.0.1 for the model list.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from taotoken_cli.core.term.layout import cell_width
from taotoken_cli.core.term.output import split_label
from tests.conftest import SENTINEL_KEY, PtySession, flat

ZH = {"TAOTOKEN_LANG": "zh", "COLUMNS": "80"}
EN = {"TAOTOKEN_LANG": "en", "COLUMNS": "80"}
MODEL = "gpt-4o-mini"


def outside_diffs(text: str) -> list[str]:
    """`text`'s lines less its unified diffs (the files' own text): a diff runs from a `--- ` header through the
    `+++`, `@@`, `+`, `-` and ` ` lines after it."""
    lines, in_diff = [], False
    for line in text.splitlines():
        in_diff = line.startswith("--- ") or (in_diff and line.startswith(("+", "-", "@@", " ")))
        if not in_diff:
            lines.append(line)
    return lines


def too_wide(text: str, home: Path) -> list[str]:
    """The lines wider than 80 columns outside the diffs; the temporary HOME counts as `~` (a path is never split,
    and this one is longer than a real one)."""
    return [line for line in outside_diffs(text.replace(str(home), "~")) if cell_width(line) > 80]


def english_sentences(text: str) -> list[str]:
    """Lines with a run of five plain English words (paths, commands and values are not that)."""
    return [line for line in text.splitlines() if re.search(r"\b(?:[a-z]{2,} ){4}[a-z]{2,}\b", line)
            and not line.startswith(("+", "-", "@@"))]


def test_init_dry_run_in_chinese(cli, home: Path) -> None:
    (home / ".claude").mkdir()
    result = cli("init", "--allow-unlisted",
                 "--key-stdin", "--base-url", "https://taotoken.net/api/v1/?utm_source=x", "--model", MODEL,
                 "--target", "claude-code", "--target", "shell", "--dry-run", input=SENTINEL_KEY + "\n",
                 env=ZH).assert_clean()
    assert result.returncode == 0, result.output
    out = result.stdout
    assert "taotoken init —— 配置档 'default'" in out
    assert "提示：Base URL：已删除查询字符串 ?utm_source=x" in out
    assert "提示：Base URL：已删除末尾的 /v1" in out
    assert "提示：API 密钥：已删除 API 密钥末尾的换行" in out
    assert "写入目标：taotoken 自己的配置，claude-code、shell" in out
    assert "变更：" in out and "设置 env.ANTHROPIC_AUTH_TOKEN = sk-SE…WXYZ" in out
    assert "预演：未写入任何内容" in out
    assert not too_wide(result.output, home), too_wide(result.output, home)
    assert not english_sentences(result.output), english_sentences(result.output)
    assert not (home / ".claude/settings.json").exists()


def test_init_on_a_terminal_asks_in_chinese_and_writes(home: Path, mock_gateway) -> None:
    mock = mock_gateway(models=(MODEL, "gpt-4o", "qwen-max"))
    with PtySession(["init", "--allow-unlisted", "--allow-unlisted", "--target", "cline"], cwd=home, env=ZH) as session:
        session.expect("Base URL [https://taotoken.net/api]：".encode())
        session.send(b"127.0.0.1/api\n")
        session.expect("Base URL '127.0.0.1/api' 缺少协议".encode())
        session.expect("修复：加上 https://，例如 https://127.0.0.1/api".encode())
        session.send(mock.url.encode() + b"/v1\n")
        session.expect("提示：Base URL：已删除末尾的 /v1".encode())
        session.expect("API 密钥（输入不显示）：".encode())
        session.send(b"sk-broken key\n")
        session.expect("API 密钥中间含有空白字符".encode())
        session.expect("API 密钥（输入不显示）：".encode())
        session.send(SENTINEL_KEY.encode() + b"\n")
        session.expect("共列出 3 个模型".encode())
        session.expect("模型：".encode())
        session.send(b"gpt\n")
        session.expect("3 个中有 2 个匹配：".encode())
        session.send(b"qwen-mx\n")
        session.expect("'qwen-mx' 不在列表中；相近的：qwen-max".encode())
        session.send(b"1\n")
        session.expect("应用这些更改？ [y/N] ".encode())
        session.send(b"y\n")
        session.expect("撤销：taotoken init --undo".encode())
        session.expect("下一步：taotoken check".encode())
    assert session.exit_code == 0, session.seen.decode(errors="replace")
    assert SENTINEL_KEY.encode() not in session.seen
    entry = json.loads((home / ".cline/data/settings/providers.json").read_text())["providers"]["openai-compatible"]
    assert entry["settings"]["model"] == MODEL and entry["settings"]["apiKey"] == SENTINEL_KEY


def test_init_without_a_terminal_names_what_is_missing_in_chinese(cli, home: Path) -> None:
    result = cli("init", "--allow-unlisted", "--target", "cline", "--yes", env=ZH).assert_clean()
    assert result.returncode == 2
    assert "未提供 API 密钥，且标准输入不是终端，无法询问" in flat(result.stderr)
    assert "传入 --key-stdin 或设置 TAOTOKEN_API_KEY" in flat(result.stderr)


@pytest.fixture
def written(cli, home: Path):
    """A first init that wrote Claude Code's settings and the shell's env.sh (English: the setup is not tested)."""
    (home / ".claude").mkdir()
    result = cli("init", "--allow-unlisted",
                 "--key-stdin", "--base-url", "https://taotoken.net/api", "--model", MODEL, "--target",
                 "claude-code", "--target", "shell", "--yes", input=SENTINEL_KEY, env=EN).assert_clean()
    assert result.returncode == 0, result.output
    return home


def test_config_set_sync_and_show_in_chinese(cli, written: Path) -> None:
    stale = cli("config", "set", "model", "qwen-max", "--allow-unlisted",
                env=ZH).assert_clean()  # no terminal, no --yes
    assert stale.returncode == 0, stale.output
    assert "在配置档 'default' 中设置 model = qwen-max" in flat(stale.stdout)
    assert "警告：1 个副本仍是旧值：~/.claude/settings.json" in flat(stale.stderr)
    assert "使其保持一致：taotoken config sync --yes" in flat(stale.stderr)
    synced = cli("config", "sync", "--yes", env=ZH).assert_clean()
    assert synced.returncode == 0, synced.output
    assert "变更：" in synced.stdout and "设置 env.ANTHROPIC_MODEL = 'qwen-max'（原为 'gpt-4o-mini'）" in synced.stdout
    assert "已写入 " in synced.stdout and "撤销本次运行的全部更改：taotoken init --undo" in synced.stdout
    again = cli("config", "sync", env=ZH).assert_clean()
    assert "所有副本都已是配置档 'default' 的值" in flat(again.stdout) and "无需操作" in flat(again.stdout)
    shown = cli("config", "show", "--origin", env={**ZH, "TAOTOKEN_MODEL": "  gpt-4o "}).assert_clean()
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("配置档    default   （文件")
    assert any(line.startswith("model     gpt-4o   （环境变量 TAOTOKEN_MODEL）") for line in lines), lines
    assert "          提示：已删除模型 ID 两侧的空白/引号" in shown.stdout
    assert any(line.startswith("配置文件  ") for line in lines), lines
    for result in (stale, synced, again, shown):
        assert not too_wide(result.output, written), too_wide(result.output, written)
        assert not english_sentences(result.output), english_sentences(result.output)


def test_a_bad_value_and_an_unknown_setting_are_refused_in_chinese(cli, home: Path) -> None:
    bad = cli("config", "set", "base_url", "taotoken.net/api", env=ZH).assert_clean()
    assert bad.returncode == 2 and "Base URL 'taotoken.net/api' 缺少协议" in bad.stderr
    unknown = cli("config", "set", "colour", "blue", env=ZH).assert_clean()
    assert unknown.returncode == 2 and "未知的设置 'colour'" in unknown.stderr
    assert "（路由用 taotoken route set KIND=MODEL）" in flat(unknown.stderr)  # the command stays as it is


def test_a_broken_config_file_names_line_and_column_in_chinese(cli, home: Path) -> None:
    path = home / ".config/taotoken/config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('[profiles.default]\nmodel = "unterminated\n')
    result = cli("config", "show", env=ZH).assert_clean()
    assert result.returncode == 3
    assert f"{path}:2:" in result.stderr and "TOML 无效：" in result.stderr
    assert "在该位置修正文件，或把它移走后运行 taotoken init" in flat(result.stderr)


def test_a_broken_client_file_names_line_and_column_in_chinese(cli, home: Path) -> None:
    settings = home / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "env": {\n    "A": "1"\n    "B": "2"\n  }\n}\n')
    result = cli("init", "--allow-unlisted",
                 "--key-stdin", "--model", MODEL, "--target", "claude-code", "--yes", input=SENTINEL_KEY,
                 env=ZH).assert_clean()
    assert result.returncode == 3, result.output
    assert f"{settings}:4:5: JSON 无效：缺少分隔符 ','" in flat(result.stderr)
    assert "修正第 4 行第 5 列的 JSON" in flat(result.stderr)
    assert settings.read_text().count('"B"') == 1 and not (home / ".config/taotoken/config.toml").exists()


def test_config_show_json_is_the_same_in_every_language(cli, home: Path) -> None:
    env = {"TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_BASE_URL": "https://taotoken.net/api/v1", "TAOTOKEN_MODEL": ""}
    chinese = cli("config", "show", "--json", env={**env, **ZH}).assert_clean()
    english = cli("config", "show", "--json", env={**env, **EN}).assert_clean()
    assert chinese.returncode == english.returncode == 0
    assert json.loads(chinese.stdout) == json.loads(english.stdout)
    assert "removed the trailing /v1" in chinese.stdout  # the notes, too, are English for programs
    assert cli("config", "profiles", "--json", env=ZH).stdout == cli("config", "profiles", "--json", env=EN).stdout


@pytest.mark.parametrize("note, label, text", [
    ("warning: codex: no key", "warning: ", "codex: no key"),
    ("警告：codex：没有密钥", "警告：", "codex：没有密钥"),
    ("提示：Base URL：已删除末尾的 /v1", "提示：", "Base URL：已删除末尾的 /v1"),
    ("the shell: a sentence", "", "the shell: a sentence"),  # more than one word before the colon
    ("已删除末尾的 /v1：保存的是根地址", "", "已删除末尾的 /v1：保存的是根地址"),
])
def test_a_note_is_split_at_its_label_in_either_language(note: str, label: str, text: str) -> None:
    assert split_label(note) == (label, text)


# -- the operating system's and the libraries' words, by errno or type ------------------------------------

def test_os_errors_are_translated_by_errno_and_keep_their_name(chinese) -> None:
    import errno
    import socket

    from taotoken_cli.core.base.oserrors import os_error_text

    assert os_error_text(FileNotFoundError(errno.ENOENT, "No such file or directory")) == "没有那个文件或目录（ENOENT）"
    assert os_error_text(PermissionError(errno.EACCES, "Permission denied")) == "权限不够（EACCES）"
    refused = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    assert os_error_text(refused) == "连接被拒绝（ECONNREFUSED）"
    name_error = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    assert os_error_text(name_error) == "未知的名称或服务（EAI_NONAME）"
    assert os_error_text(OSError(12345, "Something odd")) == "Something odd"  # unknown: the OS's words


def test_os_errors_in_english_are_the_os_words_as_they_came() -> None:
    import errno

    from taotoken_cli.core.base.oserrors import os_error_text

    assert os_error_text(FileNotFoundError(errno.ENOENT, "No such file or directory")) == "No such file or directory"


def test_toml_parser_messages_are_translated_by_their_shape(chinese) -> None:
    from taotoken_cli.core.formats.tomlerrors import toml_message

    assert toml_message("Expected ']' at the end of a table declaration (at line 2, column 18)") == \
        "表声明的末尾应为 ']'"
    assert toml_message("Cannot declare ('profiles', 'default') twice (at line 5, column 1)") == \
        "不能两次声明 ('profiles', 'default')"
    assert toml_message("Unexpected character: 'x' at line 3 col 7") == "意外的字符：'x'"  # tomlkit's form
    assert toml_message("a message no parser here says") == "a message no parser here says"


def test_a_broken_config_and_a_missing_file_are_chinese_through_and_through(cli, home: Path) -> None:
    config = home / ".config/taotoken/config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('default_profile = "default"\n[profiles.default\nbase_url = 1\n')
    broken = cli("config", "show", env=ZH)
    assert broken.returncode == 3 and "TOML 无效：表声明的末尾应为 ']'" in flat(broken.stderr), broken.stderr
    assert "Expected" not in broken.stderr
    missing = cli("bench", "--dataset", str(home / "nowhere.jsonl"), "-n", "1", env={**ZH, "TAOTOKEN_API_KEY": "x"})
    assert "没有那个文件或目录（ENOENT）" in flat(missing.stderr) and "No such file" not in missing.stderr


def test_the_usage_line_is_chinese(cli, home: Path) -> None:
    result = cli("--help", env=ZH).assert_clean()
    assert "taotoken [选项] 命令 [参数]..." in result.stdout and "[OPTIONS]" not in result.stdout
    assert "taotoken [OPTIONS] COMMAND [ARGS]..." in cli("--help", env=EN).stdout


def test_chinese_punctuation_is_enforced_in_translations() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    from i18n import punctuation_problems

    assert punctuation_problems("网关拒绝了该 API 密钥; 请重新复制") != []  # ASCII ; between Chinese words
    assert punctuation_problems("状态码, 请求") != [] and punctuation_problems("行:列") != []
    assert punctuation_problems("来自 文件") == ["a space between two Chinese words"]
    assert punctuation_problems("网关拒绝了该 API 密钥；请重新复制") == []
    # `code` and {fields} are not prose
    assert punctuation_problems("运行 `taotoken a; taotoken b` 然后 {name}: 继续") == []


def test_a_value_of_the_wrong_type_is_refused_in_chinese(cli, home: Path) -> None:
    """Typer checks values with pydantic, whose words ("Input should be a valid number, …") are translated by
    their shape inside Click's "Invalid value for …"."""
    result = cli("check", "--timeout", "abc", env={**ZH, "COLUMNS": "120"})
    assert result.returncode == 2, result.stderr
    assert "的值无效：应为数字：无法把这个字符串解析为数字" in flat(result.stderr), result.stderr
    assert "Input should be" not in result.stderr
