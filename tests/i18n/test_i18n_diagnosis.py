"""`check`, `explain` and `models` in 简体中文: the failure paths read in Chinese, codes, exit statuses, commands
and --json stay as they are, and the lines fit 80 columns by display width.

Real parts: the CLI in a subprocess with TAOTOKEN_LANG=zh (the compiled catalogue in the package, no system locale),
gateways on 127.0.0.1 (pytest-httpserver, the project's mock gateway), config files in a temporary HOME. The
in-process tests switch the language with `i18n.use` and switch it back.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from taotoken_cli.core.base import i18n
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Where, texts
from taotoken_cli.core.diagnosis.catalogue import CATALOGUE, CONDITIONS, get
from taotoken_cli.core.diagnosis.classify import Diagnosis
from taotoken_cli.core.diagnosis.context import DiagnosisContext, context_for
from taotoken_cli.core.settings.origins import Source
from taotoken_cli.core.term.iostreams import IOStreams
from taotoken_cli.core.term.layout import cell_width
from tests.conftest import SENTINEL_KEY, Result, in_users_shell, squashed
from tests.rawserver import closed_port

MODEL = "gpt-4o-mini"
MODELS_PATH = "/api/v1/models"
MODELS_OK = {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "openai"},
                                        {"id": "gpt-4o", "object": "model", "owned_by": "openai"},
                                        {"id": "qwen-max", "object": "model"}]}
INVALID_TOKEN = {"error": {"message": "无效的令牌 (request id: 2025022112345678901)", "type": "one_api_error"}}
RATE_LIMITED = {"error": {"message": "Rate limit reached for requests", "type": "requests",
                          "code": "rate_limit_exceeded"}}
ZH = {"TAOTOKEN_LANG": "zh", "COLUMNS": "1000"}  # nothing wraps: an item is one line (layout has its own tests)
LABELS = ("server said: ", "likely: ", "fix: ", "more: taotoken explain {code}", "FAIL", "retry after: {seconds} s",
          "error: ", "proxy: ")
# Fixes that are only a command: the same in every language, so not translated.
COMMAND_ONLY = {"taotoken init", "taotoken config show --origin", "taotoken config set base_url {base}",
                "export TAOTOKEN_API_KEY=sk-…"}


def steps() -> list:
    """Every fix of the catalogue, the `otherwise` ones too."""
    found = [step for entry in CATALOGUE.values() for step in entry.fixes]
    return found + [step.otherwise for step in found if step.otherwise]


def own_config(home: Path, base_url: str, *, model: str = MODEL, key: str = SENTINEL_KEY) -> None:
    path = home / ".config/taotoken/config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[profiles.default]\nbase_url = "{base_url}"\napi_key = "{key}"\nmodel = "{model}"\n')


def catalogue_texts() -> list[str]:
    """Every English text of the catalogue and the failure lines' labels."""
    texts = [text for entry in CATALOGUE.values() for text in (entry.title, *entry.causes)]
    texts += [step.text for step in steps() if step.text != "{command}"]  # a bare command is no text
    texts += [text for pair in CONDITIONS.values() for text in pair]
    return [str(text) for text in texts] + list(LABELS)


def english_left(output: str, server_words: str | None = None) -> list[str]:
    """The translated English texts (up to their first placeholder) still in `output`, the server's own words
    taken out first (they are shown as they came)."""
    if server_words:
        output = output.replace(server_words, "")
    before = i18n.current()
    i18n.use("zh")
    try:
        translated = [text.split("{")[0].strip() for text in catalogue_texts() if i18n._(text) != text]
    finally:
        i18n.use(before)
    return sorted({text for text in translated if len(text) >= 4 and text in output})


def json_run(cli, *args: str, env: dict[str, str] | None = None, lang: str = "zh") -> dict:
    result = cli(*args, "--json", env={**(env or {}), "TAOTOKEN_LANG": lang}).assert_clean()
    return without_timings(json.loads(result.stdout))


def without_timings(data):
    if isinstance(data, dict):
        return {k: None if k == "latency_ms" else without_timings(v) for k, v in data.items()}
    if isinstance(data, list):
        return [without_timings(v) for v in data]
    return data


def assert_chinese_failure(result: Result, code: str, title: str, server_words: str | None = None) -> None:
    result.assert_clean()
    assert result.returncode == int(CATALOGUE[code].exit), result.output
    assert f"{code}: {title}" in result.stderr, result.stderr
    assert "修复：" in result.stderr and f"详见：taotoken explain {code}" in result.stderr
    assert english_left(result.output, server_words) == [], result.output


# ------------------------------------------------------------------------------------------------ check

@pytest.fixture
def gateway(httpserver, home) -> str:
    own_config(home, httpserver.url_for("/api"))
    return httpserver.url_for("/api")


def test_check_401_in_chinese_quotes_the_server_and_keeps_the_command(cli, gateway, httpserver) -> None:
    httpserver.expect_request(MODELS_PATH).respond_with_json(INVALID_TOKEN, status=401)
    result = cli("check", env=ZH)
    assert_chinese_failure(result, "auth.invalid_key", "网关拒绝了该 API 密钥", "无效的令牌 (request id:")
    assert result.stderr.startswith(f"失败 401 GET {gateway}/v1/models ")
    lines = result.stderr.splitlines()
    assert "  服务器返回：无效的令牌 (request id: 2025022112345678901)" in lines  # the server's words as they came
    assert any(line.startswith("  可能的原因：1）API 密钥复制不完整") and "；2）" in line for line in lines)
    assert "  修复：从 TaoToken 控制台的「令牌管理」重新复制 API 密钥，然后运行：taotoken config set api_key -" in lines


def test_check_quiet_line_in_chinese(cli, gateway, httpserver) -> None:
    httpserver.expect_request(MODELS_PATH).respond_with_json(INVALID_TOKEN, status=401)
    result = cli("check", "-q", env=ZH).assert_clean()
    assert result.returncode == Exit.AUTH and result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("taotoken: auth.invalid_key: 网关拒绝了该 API 密钥（服务器：无效的令牌")
    assert " — 修复：从 TaoToken 控制台的「令牌管理」重新复制 API 密钥，然后运行：taotoken config set api_key -" \
        in result.stderr
    assert english_left(result.output, "无效的令牌 (request id:") == []


def test_check_404_of_a_wrong_url_layout_in_chinese(cli, home, httpserver) -> None:
    httpserver.expect_request("/wrong/v1/models").respond_with_data("404 page not found", status=404)
    own_config(home, httpserver.url_for("/wrong"))
    result = cli("check", env=ZH)
    assert_chinese_failure(result, "url.not_found", "服务器上不存在该 URL（404）", "404 page not found")
    assert "  修复：用 API 根地址作为 Base URL，例如：taotoken config set base_url https://taotoken.net/api" \
        in result.stderr.splitlines()


def test_check_model_not_listed_in_chinese(cli, home, httpserver) -> None:
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK)
    own_config(home, httpserver.url_for("/api"), model="gpt-4o-mnii")
    result = cli("check", env=ZH)
    assert_chinese_failure(result, "model.not_found", "网关不认识该模型")
    lines = result.stderr.splitlines()
    assert "  该 API 密钥列出的 3 个模型中没有 'gpt-4o-mnii'" in lines
    assert "  修复：taotoken config set model gpt-4o-mini" in lines  # the close match first
    quiet = cli("check", "-q", env=ZH).assert_clean()
    assert quiet.stderr == ("taotoken: model.not_found: 网关不认识该模型（该 API 密钥列出的 3 个模型中没有 "
                            "'gpt-4o-mnii'） — 修复：taotoken config set model gpt-4o-mini\n")


def test_check_model_from_a_variable_gets_the_export_inside_the_chinese_fix(cli, home, httpserver) -> None:
    """The catalogue's `taotoken config set model <id>` becomes the export inside the translated text too."""
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK)
    own_config(home, httpserver.url_for("/api"))
    result = cli("check", env={**ZH, "TAOTOKEN_MODEL": "qwen-mxa"}).assert_clean()
    assert result.returncode == Exit.NOT_FOUND
    [fix] = [line for line in result.stderr.splitlines() if line.startswith("  修复：设置一个列表中的 ID：")]
    assert fix.startswith("  修复：设置一个列表中的 ID：" + in_users_shell("export TAOTOKEN_MODEL=<id>"))
    assert "taotoken config set" not in fix
    assert "（用 taotoken models qwen-mxa 查看相近的 ID）" in fix


@pytest.mark.parametrize("retry_after, wait, fix", [
    ("20", "  建议等待：20 秒", "  修复：等 20 秒（网关的 Retry-After）后再试"),
    (None, None, "  修复：等大约一分钟再试（网关没有给出等待时间；限制通常按分钟计算）"),
])
def test_check_429_in_chinese_with_and_without_retry_after(cli, gateway, httpserver, retry_after, wait, fix) -> None:
    headers = {"Retry-After": retry_after} if retry_after else {}
    httpserver.expect_request(MODELS_PATH).respond_with_json(RATE_LIMITED, status=429, headers=headers)
    result = cli("check", env=ZH)
    assert_chinese_failure(result, "rate.limited", "触发速率限制（请放慢请求）", "Rate limit reached for requests")
    lines = result.stderr.splitlines()
    assert fix in lines and "  修复：降低请求速率或并发，例如：taotoken bench -c 1" in lines
    assert (wait in lines) if wait else not any(line.startswith("  建议等待：") for line in lines)


def test_check_connection_refused_in_chinese(cli, home) -> None:
    own_config(home, f"http://127.0.0.1:{closed_port()}/api")
    result = cli("check", env=ZH)
    said = next(line for line in result.stderr.splitlines() if line.startswith("  错误："))
    assert_chinese_failure(result, "net.refused", "连接被拒绝", said.removeprefix("  错误："))
    assert "ConnectError: 连接被拒绝（ECONNREFUSED）" in said, said  # the OS error by its errno, in Chinese
    assert "  修复：检查 Base URL 和端口：taotoken config show --origin" in result.stderr.splitlines()
    quiet = cli("check", "-q", env=ZH).assert_clean()
    assert quiet.stderr.startswith("taotoken: net.refused: 连接被拒绝（错误：") and "— 修复：" in quiet.stderr


def test_check_success_line_in_chinese(cli, gateway, httpserver) -> None:
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK)
    result = cli("check", env=ZH).assert_clean()
    assert result.returncode == 0
    assert result.stdout.startswith(f"正常 200 GET {gateway}/v1/models ")
    assert result.stdout.rstrip().endswith(" ms · 3 个模型 · 模型 gpt-4o-mini 在列表中")


def test_a_missing_key_is_a_chinese_failure_with_the_same_code(cli, home, httpserver) -> None:
    own_config(home, httpserver.url_for("/api"), key="")
    result = cli("check", env=ZH)
    assert result.assert_clean().returncode == int(CATALOGUE["auth.missing_key"].exit)
    assert "auth.missing_key: 请求没有携带 API 密钥" in result.stderr


# ---------------------------------------------------------------------------------------------- explain

def test_explain_a_code_in_chinese(cli, home) -> None:
    result = cli("explain", "rate.limited", env=ZH).assert_clean()
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[:3] == ["rate.limited — 触发速率限制（请放慢请求）", "退出码：6（速率或额度）   重试：稍后可能成功",
                         "可能的原因（最可能的在前）："]
    assert "  - （网关给出了等待时间时）等 <retry_after> 秒（网关的 Retry-After）后再试" in lines  # both conditions
    assert "  - （网关没有给出等待时间时）等大约一分钟再试（网关没有给出等待时间；限制通常按分钟计算）" in lines
    assert "修复：" in lines and english_left(result.output) == []


def test_explain_a_status_in_chinese(cli, home) -> None:
    result = cli("explain", "401", env=ZH).assert_clean()
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and lines[0] == "HTTP 401 可能表示（最可能的在前）："
    assert lines[1].split() == ["auth.invalid_key", "网关拒绝了该", "API", "密钥"]
    assert lines[-1] == "逐个查看详情：taotoken explain auth.invalid_key"
    assert english_left(result.output) == []


def test_explain_a_chinese_server_message_in_chinese(cli, home) -> None:
    result = cli("explain", "无效的令牌", env=ZH).assert_clean()
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and lines[:2] == ["该消息表示：", "  auth.invalid_key  网关拒绝了该 API 密钥"]
    assert "auth.invalid_key — 网关拒绝了该 API 密钥" in lines
    assert "退出码：4（认证）   重试：没有用，重试不会成功" in lines
    assert english_left(result.output) == []


def test_explain_an_unknown_code_is_a_chinese_error(cli, home) -> None:
    result = cli("explain", "auth.invalid_kez", env=ZH).assert_clean()
    assert result.returncode == Exit.USAGE and result.stdout == ""
    assert result.stderr.startswith("错误：'auth.invalid_kez' 不是 taotoken 认识的错误代码、HTTP 状态码或消息 "
                                    "[input.invalid]")
    assert "  修复：你要找的是不是：auth.invalid_key" in result.stderr and "taotoken explain --list" in result.stderr


# ----------------------------------------------------------------------------------------------- models

@pytest.fixture
def served(home, module_mock_gateway) -> str:
    url = module_mock_gateway(models=(MODEL, "gpt-4o", "claude-sonnet-4-5", "gpu-llama-3.1-8b")).url
    own_config(home, url, model="gpt-4o-mnii")
    return url


@pytest.mark.parametrize("width", [80, 40])
def test_models_table_in_chinese_fits_the_terminal(home, served, chinese, width) -> None:
    from taotoken_cli.cmd.models.run import ModelsOptions, run

    io = IOStreams.memory(env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "NO_COLOR": "1",
                               "COLUMNS": str(width)}, cwd=home, tty=True)
    assert run(ModelsOptions(), io) == Exit.OK
    out, err = io.written()
    lines = out.splitlines()
    assert squashed(out).startswith(squashed("API 密钥 sk-SE…WXYZ 可用 4 个模型（配置档 'default'）"))
    assert "配置档" in out and "API 密钥" in out  # wrapped at 40 columns between words, never inside a term
    assert f"{served}/v1/models，" in out and "\n来自" in out
    heading = next(line for line in lines if "所有者" in line)
    assert heading.split() == (["模型", "ID", "所有者", "创建日期"] if width == 80 else ["模型", "ID", "所有者"])
    owner_column = cell_width(heading[:heading.index("所有者")])
    row = next(line for line in lines if "claude-sonnet-4-5" in line)
    assert cell_width(row[:row.index("anthrop")]) == owner_column  # aligned by display width (cut at 40)
    assert err.startswith("警告：已配置的模型 'gpt-4o-mnii' 不在")
    joined = "".join(line.strip() for line in err.splitlines())  # a command is never split: it starts a line
    assert joined == ("警告：已配置的模型 'gpt-4o-mnii' 不在列表中（相近：gpt-4o-mini）；修复："
                      "taotoken config set model gpt-4o-mini")
    # at 40 columns a URL or a command alone is wider than the line (never split); the table still fits
    fitted = (out + err).splitlines() if width == 80 else lines[lines.index(heading):]
    assert all(cell_width(line) <= width for line in fitted), out + err
    assert SENTINEL_KEY not in out + err


def test_models_marks_the_configured_model_in_chinese(home, module_mock_gateway, chinese) -> None:
    from taotoken_cli.cmd.models.run import ModelsOptions, run

    own_config(home, module_mock_gateway(models=(MODEL, "gpt-4o")).url)
    io = IOStreams.memory(env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "NO_COLOR": "1"},
                          cwd=home, tty=True)
    run(ModelsOptions(), io)
    out = io.written()[0]
    assert f"* {MODEL} " in out and "用途" in out and "* 已配置的模型" in out
    assert next(line for line in out.splitlines() if MODEL in line).split()[2] == "模型"


def test_models_in_chinese_pipe_failure_and_no_match(cli, home, served) -> None:
    piped = cli("models", env=ZH).assert_clean()
    assert piped.stdout.splitlines() == [MODEL, "gpt-4o", "claude-sonnet-4-5", "gpu-llama-3.1-8b"]  # IDs only
    assert piped.stderr == ""
    none = cli("models", "zzz", env=ZH).assert_clean()
    assert none.returncode == Exit.FAILURE and "列表中没有与 'zzz' 匹配的模型（共列出 4 个）" in none.stderr
    rejected = cli("models", env={**ZH, "TAOTOKEN_API_KEY": "sk-wrongWRONGwrong0123456"}).assert_clean()
    assert rejected.returncode == Exit.AUTH and rejected.stderr.startswith("失败 401 GET ")
    assert "auth.invalid_key: 网关拒绝了该 API 密钥" in rejected.stderr
    assert english_left(rejected.output, "Invalid token") == []


# ---------------------------------------------------------------------------------- the same --json

def test_check_json_is_the_same_in_every_language(cli, gateway, httpserver) -> None:
    httpserver.expect_request(MODELS_PATH).respond_with_json(INVALID_TOKEN, status=401)
    chinese = json_run(cli, "check", lang="zh")
    assert chinese == json_run(cli, "check", lang="en") == json_run(cli, "check", env={"LANG": "zh_CN.UTF-8"},
                                                                    lang="")
    assert chinese["error"]["title"] == "The gateway rejected the key"
    assert chinese["error"]["fixes"][0].startswith("copy the key again from the key list (令牌管理)")
    httpserver.clear()
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK)
    listed = json_run(cli, "check", env={"TAOTOKEN_MODEL": "gpt-4o-mnii"})
    assert listed == json_run(cli, "check", env={"TAOTOKEN_MODEL": "gpt-4o-mnii"}, lang="en")
    assert listed["error"]["details"][0] == "'gpt-4o-mnii' is not among the 3 models this key lists"


@pytest.mark.parametrize("query", ["auth.invalid_key", "rate.limited", "401", "无效的令牌", "429 concurrency limit"])
def test_explain_json_is_the_same_in_every_language(cli, home, query) -> None:
    assert json_run(cli, "explain", query) == json_run(cli, "explain", query, lang="en")


def test_explain_list_and_models_json_are_the_same_in_every_language(cli, served) -> None:
    listing = json_run(cli, "explain", "--list")
    assert listing == json_run(cli, "explain", "--list", lang="en")
    assert listing["codes"][0] == {"code": "auth.missing_key", "exit_code": 3, "retry": False,
                                   "title": "No API key was sent"}
    assert json_run(cli, "models") == json_run(cli, "models", lang="en")
    rejected = {"TAOTOKEN_API_KEY": "sk-wrongWRONGwrong0123456"}
    failed = json_run(cli, "models", env=rejected)
    failed["error"]["server_message"] = failed["error"]["request_id"] = None  # the mock numbers its requests
    again = json_run(cli, "models", env=rejected, lang="en")
    again["error"]["server_message"] = again["error"]["request_id"] = None
    assert failed == again and failed["error"]["title"] == "The gateway rejected the key"


# ------------------------------------------------------------------------------------- 80 columns

@pytest.mark.parametrize("args", [["check"], ["check", "--chat"], ["explain", "auth.invalid_key"],
                                  ["explain", "401"], ["explain", "无效的令牌"], ["explain", "--list"],
                                  ["explain", "proxy.refused"], ["explain", "model.no_channel"]])
def test_chinese_lines_fit_80_columns(cli, gateway, httpserver, args) -> None:
    httpserver.expect_request(MODELS_PATH).respond_with_json(INVALID_TOKEN, status=401)
    result = cli(*args, env={"TAOTOKEN_LANG": "zh", "COLUMNS": "80"}).assert_clean()
    lines = result.output.splitlines()
    assert lines and all(cell_width(line) <= 80 for line in lines), result.output


def test_every_explained_entry_fits_80_columns_in_chinese(home, chinese) -> None:
    """A fix that adds a package names the interpreter taotoken runs on; its path is the checkout's (a worktree's
    longer name pushed `PY -m pip install 'httpx[socks]'` to 81 columns), not the layout's, so it counts as
    `python`. A command is never broken: a line that is one whole command may be wider (PowerShell's removal of
    three proxy variables is)."""
    from taotoken_cli.cmd.explain.run import ExplainOptions, lookup, run
    from taotoken_cli.core.platform import installer

    interpreter = installer.current().python or "python"
    for code in CATALOGUE:
        io = IOStreams.memory(env={"HOME": str(home), "COLUMNS": "80"}, cwd=home)
        assert run(ExplainOptions(code=code), io) == Exit.OK, (code, io.written())
        assert io.written()[0].strip(), code
        commands = {command.line for fix in lookup(code, io.env).fixes() for command in fix.commands}
        too_wide = [line for line in io.written()[0].splitlines()
                    if cell_width(line.replace(interpreter, "python")) > 80 and line.strip() not in commands]
        assert too_wide == [], code


# ------------------------------------------------------------------------- the catalogue in Chinese

def test_every_catalogue_text_is_translated_and_bare_commands_are_not_texts(chinese) -> None:
    untranslated = {str(text) for text in catalogue_texts() if i18n._(text) == text}
    assert untranslated == set()
    bare = {step.commands[0][1].line for step in steps() if step.text == "{command}"}
    assert bare == COMMAND_ONLY


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_translated_fixes_keep_options_and_placeholders_and_hold_no_command(code) -> None:
    """A fix's commands are `{command}` fields, never in the text a translator sees; the fields and the options
    prose names stay the same in Chinese."""
    before = i18n.current()
    try:
        for step in [s for s in steps() if s in get(code).fixes or s in [f.otherwise for f in get(code).fixes]]:
            i18n.use("zh")
            chinese = i18n._(step.text)
            i18n.use("en")
            assert re.findall(r"--[a-z-]+", chinese) == re.findall(r"--[a-z-]+", step.text), (step.text, chinese)
            assert sorted(re.findall(r"\{\w+\}", chinese)) == sorted(re.findall(r"\{\w+\}", step.text)), chinese
            assert {name for name, _command in step.commands} <= set(re.findall(r"\{(\w+)\}", step.text))
            assert not any(command.line in step.text for _name, command in step.commands), step.text
    finally:
        i18n.use(before)


SHELL_ONLY = "   （它是在当前 shell 中设置的，taotoken 没有在任何启动文件中找到它）"


@pytest.mark.parametrize("code, name, expected, command", [
    ("model.no_channel", "model",
     "选一个列表中的模型（taotoken models m 会显示相近的 ID），然后运行：export TAOTOKEN_MODEL=<id>" + SHELL_ONLY,
     "export TAOTOKEN_MODEL=<id>"),
    ("model.not_found", "model",
     "设置一个列表中的 ID：export TAOTOKEN_MODEL=<id>" + SHELL_ONLY + "   （用 taotoken models m 查看相近的 ID）",
     "export TAOTOKEN_MODEL=<id>"),
    ("auth.missing_key", "api_key", "taotoken init   （或：export TAOTOKEN_API_KEY=sk-…" + SHELL_ONLY + "）",
     "export TAOTOKEN_API_KEY=sk-…"),
    ("url.doubled_v1", "base_url",
     "保存不带 /v1 的根地址：export TAOTOKEN_BASE_URL=https://g.example/api" + SHELL_ONLY,
     "export TAOTOKEN_BASE_URL=https://g.example/api"),
    ("auth.invalid_key", "api_key",
     "从 TaoToken 控制台的「令牌管理」重新复制 API 密钥，然后运行：export TAOTOKEN_API_KEY=sk-…" + SHELL_ONLY,
     "export TAOTOKEN_API_KEY=sk-…"),
])
def test_at_source_replaces_the_command_inside_a_translated_fix(chinese, code, name, expected, command) -> None:
    """The catalogue's `taotoken config set NAME VALUE` is a command part marked as setting NAME: where NAME comes
    from a variable, the instruction that sets the variable takes its place, and the Chinese around it stays."""
    variable = {"model": "TAOTOKEN_MODEL", "api_key": "TAOTOKEN_API_KEY", "base_url": "TAOTOKEN_BASE_URL"}[name]
    expected, command = expected.replace(command, in_users_shell(command)), in_users_shell(command)
    context = context_for(base="https://g.example/api", model="m")
    context.sources = {name: Source(name, Where("env", variable))}
    fixes = Diagnosis(code, get(code), context=context).fixes()
    [fix] = [fix for fix in fixes if str(fix) == expected]
    assert command in [c.line for c in fix.commands]
    assert not any("taotoken config set" in c.line for c in fix.commands)
    assert fix.where == Where("env", variable)


def test_at_source_leaves_the_config_file_instruction_where_the_value_comes_from_the_file(chinese) -> None:
    context = context_for(base="https://g.example/api", model="m")
    [fix] = Diagnosis("auth.invalid_key", get("auth.invalid_key"), context=context).fixes()[:1]
    assert [c.line for c in fix.commands] == ["taotoken config set api_key -"]
    assert str(fix) == "从 TaoToken 控制台的「令牌管理」重新复制 API 密钥，然后运行：taotoken config set api_key -"


def test_diagnosis_text_follows_the_language_it_is_produced_in(chinese) -> None:
    diagnosis = Diagnosis("rate.limited", get("rate.limited"), context=DiagnosisContext(retry_after="20"))
    assert diagnosis.title == "触发速率限制（请放慢请求）"
    assert texts(diagnosis.fixes())[0] == "等 20 秒（网关的 Retry-After）后再试"
    assert diagnosis.to_dict()["causes"][0] == "该 API 密钥、账户或 IP 每分钟的请求数或 token 数过多"
    i18n.use("en")
    assert diagnosis.title == "Rate limit reached (slow down)"
    assert diagnosis.to_dict()["fixes"][0] == "wait 20 s (the gateway's Retry-After), then try again"
