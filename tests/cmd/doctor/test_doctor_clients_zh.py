"""doctor's client checks in 简体中文: a HOME where Claude Code, its VS Code extension, Codex, Cline, CC Switch, an
MCP server and a project's .env are all set up wrong, diagnosed with TAOTOKEN_LANG=zh and with TAOTOKEN_LANG=en.
The same findings, ids and exit status in both; the Chinese lines fit 80 columns; `--json` is the same whatever the
language; the key is never shown whole.

Real parts: real files in a temporary HOME (a real SQLite store for CC Switch, a real git repository for the project),
the compiled catalogue read by the standard library's gettext, the CLI in a subprocess. Offline: nothing here needs
the gateway.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from taotoken_cli.core.term.layout import cell_width
from tests.conftest import REPO, SENTINEL_KEY, flat, squashed, write
from tests.core.clients.test_ccswitch import claude_row, make_db
from tests.core.clients.test_mcp import OLD_KEY, claude_json

ROOT = "https://taotoken.net/api"
MODEL = "gpt-4o-mini"
OTHER_KEY = "sk-OTHERkeyOTHERkeyOTHER9876"
SECRETS = (SENTINEL_KEY, OLD_KEY, OTHER_KEY)
CHECK_ID = re.compile(r"\(([a-z_]+\.[a-z_]+)\)$")

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def broken_home(home: Path) -> Path:
    """Every client set up wrong in its own way; returns the project directory doctor runs in."""
    write(home / ".config/taotoken/config.toml", f'default_profile = "default"\n\n[profiles.default]\n'
          f'base_url = "{ROOT}"\napi_key = "{SENTINEL_KEY}"\nmodel = "{MODEL}"\n')
    # Claude Code: the URL ends in /v1, ANTHROPIC_API_KEY instead of the token, the old haiku variable, a
    # settings file others can read, no onboarding flag, a stored claude.ai login beside the gateway key
    write(home / ".claude/settings.json", json.dumps({"env": {
        "ANTHROPIC_BASE_URL": ROOT + "/v1", "ANTHROPIC_API_KEY": SENTINEL_KEY, "ANTHROPIC_MODEL": MODEL,
        "ANTHROPIC_SMALL_FAST_MODEL": MODEL}}, indent=2) + "\n", mode=0o644)
    write(home / ".claude/.credentials.json", json.dumps({"claudeAiOauth": {"accessToken": "sk-ant-oat01-x"}}))
    # ~/.claude.json: MCP servers carrying gateway variables (a bare root for the OpenAI SDK, an old key)
    data = claude_json(ROOT)
    data["hasCompletedOnboarding"] = False
    write(home / ".claude.json", json.dumps(data, indent=2) + "\n")
    # Codex: wire_api "chat", a base_url without /v1, a legacy profile, a base URL in auth.json, env_key unset
    write(home / ".codex/config.toml", f'model = "{MODEL}"\nmodel_provider = "taotoken"\nprofile = "tao"\n\n'
          f'[model_providers.taotoken]\nname = "TaoToken"\nbase_url = "{ROOT}"\nenv_key = "TAOTOKEN_CODEX_KEY"\n'
          f'wire_api = "chat"\n\n[profiles.tao]\nmodel = "gpt-4.1"\n')
    write(home / ".codex/auth.json", json.dumps({"OPENAI_API_KEY": SENTINEL_KEY, "OPENAI_BASE_URL": ROOT + "/v1"}))
    # Cline: a baseUrl without a scheme (its schema rejects the file); cline.* keys in VS Code's settings, and
    # the Claude Code extension's variables with a key wrapped in spaces
    providers = {"version": 1, "lastUsedProvider": "openai-compatible", "providers": {"openai-compatible": {
        "settings": {"provider": "openai-compatible", "apiKey": SENTINEL_KEY, "model": MODEL,
                     "baseUrl": "taotoken.net/api/v1"}}}}
    write(home / ".cline/data/settings/providers.json", json.dumps(providers, indent=2) + "\n")
    write(home / ".config/Code/User/settings.json", '{\n  // mine\n  "cline.apiProvider": "openai",\n'
          '  "claudeCode.environmentVariables": [\n'
          f'    {{"name": "ANTHROPIC_BASE_URL", "value": "{ROOT}"}},\n'
          f'    {{"name": "ANTHROPIC_AUTH_TOKEN", "value": " {SENTINEL_KEY} "}}\n  ],\n}}\n')
    # CC Switch: manages Claude Code's settings.json with another provider selected; its TaoToken provider
    # stores a URL ending in /v1 and an old key
    make_db(home, 5, [claude_row("tt", "TaoToken", ROOT + "/v1", key=OTHER_KEY),
                      claude_row("anthropic-official", "Anthropic", "https://api.anthropic.com", current=True)])
    write(home / ".cc-switch/settings.json", json.dumps({"currentProviderClaude": "anthropic-official"}))
    # the project: a .env with an old key, committed; a project settings file choosing another model
    project = home / "app"
    write(project / ".env", f"OPENAI_BASE_URL={ROOT}/v1\nOPENAI_API_KEY={OLD_KEY}\n")
    write(project / ".claude/settings.json", json.dumps({"env": {"ANTHROPIC_MODEL": "claude-opus-4"}}))
    for args in (("init", "-q"), ("add", ".env")):
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)
    return project


@pytest.fixture
def short_home(home: Path):
    """A HOME with a short path (the `home` fixture's environment otherwise), so that a line of the report is
    too long only when its words are, not because pytest's temporary directory is deep."""
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="tt", dir="/tmp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def doctor(cli, project: Path, lang: str, *args: str):
    home = project.parent
    env = {"TAOTOKEN_LANG": lang, "COLUMNS": "80", "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    result = cli("doctor", "--offline", *args, env=env, cwd=project)
    for secret in SECRETS:
        result.assert_clean(secret)
    return result


def problems(output: str) -> dict[str, str]:
    """check id -> its mark, for every finding the text view shows as a problem (its headline, wrapped or not,
    ends with the id)."""
    found, headline = {}, ""
    for line in [*output.splitlines(), ""]:
        continues = line.startswith("      ") and not line[6:7].isspace() and \
            not line[6:].startswith(("•", "-", "fix:", "--fix:", "修复："))
        if continues and headline:
            headline += " " + line.strip()
            continue
        match = CHECK_ID.search(headline)
        if match:
            found[match.group(1)] = headline.split("]")[0] + "]"
        headline = line.strip() if line.startswith("  [") else ""
    return found


def test_the_broken_clients_in_chinese_same_findings_and_exit_status_as_in_english(cli, short_home) -> None:
    project = broken_home(short_home)
    chinese, english = doctor(cli, project, "zh"), doctor(cli, project, "en")
    assert chinese.returncode == english.returncode == 1, chinese.output
    ids = problems(english.stdout)
    for check_id in ("claude.settings", "claude.base_url", "claude.key", "claude.login", "claude.onboarding",
                     "claude.models", "claude.vscode", "codex.base_url", "codex.wire_api",
                     "codex.profiles", "codex.auth_json", "codex.env_key", "cline.providers", "cline.vscode",
                     "ccswitch.managed", "ccswitch.claude", "mcp.base_url", "mcp.key", "env.project_files",
                     "env.project_tracked"):
        assert check_id in ids, f"{check_id} not reported:\n{english.stdout}"
    assert problems(chinese.stdout) == ids  # the same checks, with the same marks
    text = squashed(chinese.stdout)
    for phrase in (
            "以 /v1 结尾：Claude Code 会自己追加 /v1/messages",  # claude.base_url
            f"用的是 ANTHROPIC_API_KEY（{short_home}/.claude/settings.json）而不是 ANTHROPIC_AUTH_TOKEN",
            "保存了 API 密钥，且其他用户可读",  # the settings file is 0644
            "首次启动向导会要求登录 Anthropic",  # claude.onboarding
            "已弃用；Claude Code 读取的是 ANTHROPIC_DEFAULT_HAIKU_MODEL",  # claude.models
            "中的 claude.ai OAuth 凭据",  # claude.login
            "覆盖了 ANTHROPIC_MODEL：本仓库内的 Claude Code",  # a project file overrides the model
            "的 API 密钥两侧有空白字符、换行符或引号",  # the VS Code extension's key
            "Codex 拒绝启动",  # codex.wire_api
            "Codex 0.134 起不再接受",  # codex.profiles
            "auth.json 不保存 Base URL",  # codex.auth_json
            "当前 shell 中没有设置 TAOTOKEN_CODEX_KEY",  # codex.env_key
            "不是有效的 URL：Cline 会拒绝整个文件",  # cline.providers
            "Cline 在这里没有设置项",  # cline.vscode
            "CC Switch 管理着",  # ccswitch.managed
            "在 CC Switch 中为 Claude Code 选用 TaoToken",
            "与 taotoken 的 API 密钥 sk-SE…WXYZ 不同",  # MCP, CC Switch and .env copies
            "且被 git 跟踪：API 密钥一经提交即已泄露",  # env.project_tracked
    ):
        assert squashed(phrase) in text, f"{phrase!r} not in:\n{chinese.stdout}"
    # the repairs `doctor --fix` would make are described in Chinese too
    for phrase in ("把 env.ANTHROPIC_API_KEY 重命名为 env.ANTHROPIC_AUTH_TOKEN",
                   "由 [profiles.tao] 创建 tao.config.toml",
                   '在 [model_providers.taotoken] 中设置 wire_api = "responses"'):
        assert squashed(phrase) in text, f"{phrase!r} not in:\n{chinese.stdout}"
    # commands inside the Chinese fixes stay verbatim
    assert re.search(r"git rm --cached \.env\s+（在\s", chinese.stdout), chinese.stdout
    assert "修复：taotoken init" in chinese.stdout and "fix: " not in chinese.stdout, chinese.stdout
    assert_fits(chinese.stdout)


def assert_fits(output: str) -> None:
    """Every line within 80 columns, counted in display cells (a Chinese character takes two)."""
    for line in output.splitlines():
        assert cell_width(line) <= 80, f"{line!r} does not fit:\n{output}"


def _english_sentences() -> list[str]:
    """The English texts of this area's messages between their placeholders, those of three words or more (not
    commands, nor what a check title says: doctor's view shows the titles)."""
    from babel.messages import pofile

    # fragments that start a shell command (a message's English text may hold one in backquotes or after a colon)
    command_words = {"taotoken", "export", "unset", "git", "echo", "chmod", "cline", "codex", "claude", "pip"}

    with (REPO / "i18n/zh_CN/doctor_clients.po").open("rb") as handle:
        catalogue = pofile.read_po(handle)
    titles = {check.title for check in _checks() if _mine(check.run.__module__)}
    parts = []
    for message in catalogue:
        if message.id and message.id not in titles:
            for text in message.id if isinstance(message.id, tuple) else (message.id,):  # plurals: both forms
                parts += [p.strip(" :;,()—") for p in re.split(r"\{[^{}]*\}", text)]
    return sorted({p for p in parts if len(re.findall(r"\b[a-z]{2,}\b", p)) >= 3 and p.split()[0] not in command_words
                   and not any(p in title for title in titles)})


# the modules whose messages this area translates
_AREA = ("taotoken_cli.cmd.doctor.checks.clients.", "taotoken_cli.cmd.doctor.checks.mcp",
         "taotoken_cli.cmd.doctor.checks.project_env")


def _mine(module: str) -> bool:
    return module.startswith(_AREA)


def _checks():
    from taotoken_cli.cmd.doctor.registry import all_checks

    return all_checks()


def test_no_english_sentence_of_the_client_checks_is_left_in_the_chinese_run(cli, short_home) -> None:
    project = broken_home(short_home)
    output = doctor(cli, project, "zh", "--verbose").stdout
    assert_fits(output)
    text = flat(output)
    left = [sentence for sentence in _english_sentences() if sentence in text]
    assert not left, f"untranslated: {left}\n{text}"


def test_json_is_the_same_in_every_language(cli, short_home) -> None:
    project = broken_home(short_home)

    def report(lang: str) -> dict:
        data = json.loads(doctor(cli, project, lang, "--json").stdout)
        data.pop("elapsed_s")
        for check in data["checks"]:
            check.pop("elapsed_ms")
        return data

    chinese = report("zh")
    assert chinese == report("en")
    assert any(c["id"] == "codex.wire_api" and "Codex refuses to start" in c["message"] for c in chinese["checks"])


def test_titles_are_marked_and_translated(home) -> None:
    """Every client check's title has a translation (doctor's view shows it translated)."""
    code = ("from taotoken_cli.core.base import i18n; i18n.use('zh'); "
            "from taotoken_cli.cmd.doctor.registry import all_checks; "
            "import json; "
            "print(json.dumps({c.id: [c.run.__module__, c.title, i18n._(c.title)] for c in all_checks()}))")
    titles = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                       cwd=REPO).stdout)
    mine = {check_id: (source, title) for check_id, (module, source, title) in titles.items() if _mine(module)}
    # 27, claude.provider, Gemini CLI's two, OpenClaw's one, OpenCode's three, Qwen Code's three, and a <client>.proxy
    # for each of Codex, Cline, Gemini CLI, OpenClaw, OpenCode and Qwen Code
    assert len(mine) == 43, sorted(mine)
    assert mine["codex.profiles"][1] == "Codex 的旧式配置档（profile）"
    # translated whole: no title is its English source, none keeps an English phrase (names in brackets may stay)
    untranslated = {check_id: pair for check_id, pair in mine.items()
                    if pair[1] == pair[0] or not re.search(r"[\u4e00-\u9fff]", pair[1])
                    or re.search(r"\b[A-Za-z]{2,} [a-z]{2,} [a-z]{2,}\b", pair[1])}
    assert not untranslated, untranslated
