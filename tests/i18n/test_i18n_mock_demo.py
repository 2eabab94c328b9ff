"""`taotoken mock` and `taotoken demo` in 简体中文: their own lines translated and within 80 columns, exit
statuses and the `--json` log the same as in English.

Real parts: the CLI in a subprocess with TAOTOKEN_LANG=zh (the compiled catalogue read by the standard library's
gettext), real HTTP to the mock on 127.0.0.1, SIGINT to stop it; the demo runs its real steps. The reporter and
banner tests render real objects in-process at 80 columns.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import pytest

from taotoken_cli.cmd.demo.model import CommandResult, DemoInfo, DemoSummary, GatewayLine
from taotoken_cli.cmd.demo.sandbox import FileShown, Sandbox
from taotoken_cli.cmd.demo.steps import DEMO_KEY, Command, Step
from taotoken_cli.cmd.demo.view import TranscriptReporter
from taotoken_cli.cmd.mock import MockOptions, MockServer, ModelTiming
from taotoken_cli.cmd.mock import view as mock_view
from taotoken_cli.core.base import i18n
from taotoken_cli.core.term.layout import cell_width
from taotoken_cli.core.term.output import Output
from tests.conftest import SENTINEL_KEY, in_users_shell, python_path, squashed

BEARER = {"Authorization": f"Bearer {SENTINEL_KEY}"}
ZH = {"TAOTOKEN_LANG": "zh", "COLUMNS": "80"}
_REQUEST_LINE = re.compile(r"^\d\d:\d\d:\d\d ")  # the mock's log of one request: a record, never wrapped


def has(text: str, phrase: str) -> bool:
    return squashed(phrase) in squashed(text)


def too_wide(lines: list[str], width: int = 80) -> list[str]:
    return [line for line in lines if cell_width(line) > width]


# -- mock ---------------------------------------------------------------------------------------------

def start_mock(home: Path, *args: str, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    full_env = dict(os.environ, PYTHONPATH=python_path(), TAOTOKEN_API_KEY=SENTINEL_KEY, **env)
    proc = subprocess.Popen([sys.executable, "-m", "taotoken_cli", "mock", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env, cwd=home)
    first = proc.stdout.readline()  # the banner is printed and flushed at once when listening
    if not first.startswith("{"):
        while "Ctrl-C" not in first and proc.poll() is None:
            first += proc.stdout.readline()
    return proc, first


def stop(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    return proc.communicate(timeout=10)


def test_mock_banner_log_hints_and_summary_in_chinese(home):
    proc, banner = start_mock(home, env=ZH)
    try:
        port = re.match(r"taotoken mock：正在监听 http://127\.0\.0\.1:(\d+)（端口 \d+）", banner).group(1)
        root = f"http://127.0.0.1:{port}/api"
        with httpx.Client(timeout=5, trust_env=False) as client:
            assert client.get(root + "/v1/models", headers=BEARER).status_code == 200
            assert client.post(root + "/v1/v1/chat/completions", headers=BEARER, json={"model": "m"}).status_code \
                == 404
            assert client.post(root + "/v1/chat/completions", headers={"Authorization": "Bearer sk-wrong0123456789"},
                               json={"model": "m"}).status_code == 401
    finally:
        out, err = stop(proc)
    assert proc.returncode == 0, (out, err)
    output = banner + out + err
    assert "Traceback" not in output and SENTINEL_KEY not in output
    text = squashed(output)
    assert has(text, f"API 根地址（taotoken --base-url、Claude Code 的 ANTHROPIC_BASE_URL）： {root}")
    assert has(text, f"OpenAI 风格的客户端（SDK、Codex、Cline 的 Base URL）： {root}/v1")
    assert has(text, "API 密钥：校验 sk-SE…WXYZ（来自环境变量 TAOTOKEN_API_KEY）")
    assert has(text, "模型：gpt-4o-mini、claude-sonnet-4-5、gpu-llama-3.1-8b、cpu-qwen2.5-0.5b（任何模型名都会响应）")
    assert has(text, "延迟 0 ms；16 个 token；错误格式 new-api") and has(text, "按 Ctrl-C 停止")
    # The request lines are the same log records as in English; the hints under them are Chinese.
    assert re.search(r"POST /api/v1/v1/chat/completions bearer sk-SE…WXYZ model=m stream=no -> 404 \d+ms  "
                     r"!! doubled-v1", output)
    assert has(text, "提示：doubled-v1：路径中有两个 /v1：客户端的 Base URL 已经以 /v1 结尾")
    assert has(text, "提示：wrong-key：API 密钥不是该网关期望的那个")
    summary = squashed(out[out.index("taotoken mock：已停止"):])
    expected = squashed(r"taotoken mock：已停止，\d+\.\d 秒内处理了 3 个请求（状态码 200：1、401：1、404：1）；"
                        r"已标记：doubled-v1 x1、wrong-key x1")
    assert re.match(expected, summary), summary
    for english in ("listening on", "API root", "checked", "any name is served", "Ctrl-C to stop", "hint:",
                    "the path has /v1 twice", "stopped after", "flagged:"):
        assert english not in output, english
    assert too_wide([line for line in output.splitlines() if not _REQUEST_LINE.match(line)]) == []


def test_mock_banner_with_every_behaviour_fits_80_columns_in_chinese(chinese):
    options = MockOptions(key=SENTINEL_KEY, models=("gpt-4o-mini", "claude-sonnet-4-5"),
                          aliases={"gpt-4o-mini": "gpt-4o-mini-2024-07-18"}, no_channel=("gpt-5",), latency_ms=50,
                          token_rate=100, fail=429, fail_rate=0.25, retry_after=3,
                          model_timing={"claude-sonnet-4-5": ModelTiming(300.0, 20.0, 1)},
                          model_fail={"gpt-4o-mini": 503})
    server = MockServer(options)
    server.port = 65535
    lines = mock_view.banner(server, "env TAOTOKEN_API_KEY", 80)
    text = squashed("\n".join(lines))
    assert has(text, "别名 gpt-4o-mini->gpt-4o-mini-2024-07-18") and has(text, "无可用渠道：gpt-5")
    assert has(text, "对 0.25 比例的请求注入 --fail 429；Retry-After 3")
    assert has(text, "16 个 token，每秒 100 个")
    assert has(text, "模型 claude-sonnet-4-5：延迟 300 ms；1 个 token，每秒 20 个")
    assert has(text, "模型 gpt-4o-mini：每个请求都失败（503）")
    assert too_wide(lines) == [] and SENTINEL_KEY not in text
    assert all(line.startswith("  ") for line in lines[1:])  # continuation lines hang, never at column 0


@pytest.mark.parametrize("args, chinese_message, chinese_fix", [
    (("--fail", "99"), "--fail 99：不是错误状态码", "使用 400 到 599 之间的状态码"),
    (("--fail", "teapot"), "--fail 'teapot'：既不是 HTTP 状态码，也不是预设的故障名称",
     "使用 429、503 这样的状态码，或以下之一：quota、concurrency"),
    (("--host", "0.0.0.0"), "拒绝在非回环地址 '0.0.0.0' 上监听",
     "使用 --host 127.0.0.1；如果确实需要，加上 --allow-remote"),
    (("--model-timing", "fast"), "--model-timing 'fast'：应为 MODEL=LATENCY_MS[,TOKEN_RATE[,TOKENS]] 的形式",
     "例如 --model-timing fast=20,200,32"),
    (("--fail-style", "azure"), "未知的错误格式 'azure'", "使用以下之一：openai、one-api、new-api"),
    (("--fail", "429", "--fault", "reset"), "--fail 和 --fault 不能同时使用", "每个模拟网关只注入一种故障"),
])
def test_mock_usage_errors_in_chinese(cli, args, chinese_message, chinese_fix):
    zh = cli("mock", *args, env={"TAOTOKEN_LANG": "zh", "TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean()
    en = cli("mock", *args, env={"TAOTOKEN_LANG": "en", "TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean()
    assert zh.returncode == en.returncode == 2, zh.output
    assert has(zh.stderr, chinese_message) and has(zh.stderr, chinese_fix), zh.stderr
    assert zh.stdout == "" and "Traceback" not in zh.stderr


def test_mock_without_a_key_and_on_a_busy_port_in_chinese(cli, home):
    no_key = cli("mock", env={"TAOTOKEN_LANG": "zh"}).assert_clean()
    assert no_key.returncode == 2
    assert "模拟网关没有可校验的 API 密钥" in no_key.stderr
    assert has(no_key.stderr, "传入 --key、在环境变量中设置 API 密钥（{command}），或用 --any-key 接受任何密钥".format(
        command=in_users_shell("export TAOTOKEN_API_KEY=sk-…")))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        taken = cli("mock", "--any-key", "--port", str(port), env={"TAOTOKEN_LANG": "zh"}).assert_clean()
    assert taken.returncode == 2
    assert f"127.0.0.1 上的端口 {port} 已被占用" in taken.stderr
    assert has(taken.stderr, "换一个 --port，或用 --port 0 自动选择空闲端口")


_VOLATILE = {"received_at", "headers_at", "finished_at", "latency_ms", "duration_ms", "request_id", "seconds",
             "listening", "port", "root", "headers"}


def _normalised(item):
    if isinstance(item, dict):
        return {key: _normalised(value) for key, value in item.items() if key not in _VOLATILE}
    return item


def test_mock_json_log_is_the_same_in_chinese_and_english(home):
    logs = {}
    for lang in ("zh", "en"):
        proc, first = start_mock(home, "--json", "--alias", "a=a-1", env={"TAOTOKEN_LANG": lang})
        try:
            root = json.loads(first)["root"]
            with httpx.Client(timeout=5, trust_env=False) as client:
                client.post(root + "/v1/chat/completions", headers=BEARER, json={"model": "a"})
                client.get(root + "/v1/v1/models")
        finally:
            out, err = stop(proc)
        assert proc.returncode == 0 and err == "", err
        logs[lang] = [_normalised(json.loads(line)) for line in (first + out).splitlines()]
    assert logs["zh"] == logs["en"]
    assert [item.get("status") for item in logs["zh"][1:3]] == [200, 404]
    assert not re.search(r"[\u4e00-\u9fff]", json.dumps(logs["zh"], ensure_ascii=False))


# -- demo ---------------------------------------------------------------------------------------------

def demo_own_lines(transcript: str) -> list[str]:
    """The lines the demo writes itself: not a command to retype, not a command's output, not a file's
    content, not a gateway log record (those are shown as they are)."""
    own, in_command = [], False
    for line in transcript.splitlines():
        if line.startswith("$ "):
            in_command = True
            continue
        if in_command and not line.startswith("[退出码 "):
            continue
        in_command = False
        if line.startswith("    │ ") or line.startswith("  $ ") or re.match(r"  (GET|POST|HEAD) /", line):
            continue
        own.append(line)
    return own


def test_demo_fast_in_chinese(home):
    parent = Path(tempfile.mkdtemp(prefix="tt-", dir="/tmp"))  # a short path: the intro shows it
    try:
        env = {**os.environ, "PYTHONPATH": python_path(), "TMPDIR": str(parent), **ZH}
        proc = subprocess.run([sys.executable, "-m", "taotoken_cli", "demo", "--fast"], capture_output=True,
                              text=True, env=env, timeout=180)
        leftovers = list(parent.iterdir())
    finally:
        parent.rmdir()
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert leftovers == [] and "Traceback" not in output
    assert DEMO_KEY not in output and SENTINEL_KEY not in output
    assert output.count("[退出码 0；") == 10, output  # every command worked, in whatever language it speaks
    own = demo_own_lines(proc.stdout)
    text = squashed("\n".join(own))
    assert text.startswith(squashed("taotoken demo：每条命令都真实运行，连接本地网关，使用临时 HOME"))
    assert has(text, "网关 http://127.0.0.1:") and has(text, "（回环地址上的 taotoken mock；API 密钥 sk-de…DEMO）")
    assert has(text, "gpt-4o 以 gpt-4o-2024-08-06 的名义响应") and has(text, "（下文显示为 ~）")
    for title in ("1/5 init：把网关的 Base URL、API 密钥和模型写入每个客户端", "2/5 check：一次快速请求：设置能用吗？",
                  "4/5 route：按本机设备选择模型，并验证实际响应的模型", "5/5 bench：简短压测，两个模型并排对比"):
        assert has(text, "──── " + title), title
    assert has(text, "# 用配置的 URL 和 API 密钥列出模型") and has(text, "网关收到：")
    assert has(text, "~ 中现在的文件（API 密钥已遮盖）：") and has(text, "（新建，权限 0600）")
    assert re.search(squashed(r"──── 完成，用时 \d+\.\d 秒：共 10 条命令，全部成功"), text)
    assert has(text, "已删除临时目录；其他内容均未改动") and has(text, "接下来，用于你真实的环境：")
    for english in ("the gateway received:", "files now in ~", "(shown as ~ below)", "all worked", "what next",
                    "removed the temporary directory", "[exit ", "lists the models"):
        assert english not in "\n".join(own), english
    assert too_wide(own) == []


def test_transcript_failure_kept_and_interrupted_in_chinese_fit_80_columns(chinese):
    import io

    stream = io.StringIO()
    reporter = TranscriptReporter(Output(stdout=stream, env={"COLUMNS": "80", "NO_COLOR": "1"}))
    kept = Path("/tmp/taotoken-demo-abcdefgh")  # only shown (a path is never split: the test's own are too long)
    reporter.intro(DemoInfo(kept, kept / "home", "http://127.0.0.1:40000/api", "sk-de…DEMO", ("a-model",), {},
                            ["check"], ["init"], ["~/.claude/settings.json"]))
    command = Command(("check",), why="lists the models with the configured URL and key")
    reporter.step(Step("check", "one fast request: does the setup work?", [command]))
    reporter.command(command)
    gateway = [GatewayLine(f"GET /api/v1/models/{n} bearer sk-de…DEMO model=- stream=no -> 404", 2)
               for n in range(10)]
    files = [FileShown("~/.config/taotoken/config.toml", "0600", "changed", "model = 'a-model'\n")]
    failed = CommandResult("check", command, 4, "", "error: …\n", 0.5, gateway, files, backups=2)
    reporter.result(failed)
    reporter.outro(DemoSummary([failed], 1.25, kept, removed=False))
    reporter.outro(DemoSummary([failed], 1.25, None, removed=True, interrupted=True))
    transcript = stream.getvalue()
    text = squashed(transcript)
    assert "prepared" not in transcript and has(text, "已先静默准备：init")
    assert has(text, "[退出码 4，应为 0：这一步没有按预期工作；0.50 秒]")
    assert has(text, "……另有 4 个请求")  # 8 lines shown, 2 more lines of 2 requests each
    assert has(text, "~/.config/taotoken/config.toml （已修改，权限 0600）")
    assert has(text, "（另有 2 个旧版本的备份文件")
    assert has(text, "结束，用时 1.2 秒；1 条命令中有 1 条未成功：`taotoken check`（退出码 4）")
    assert has(text, f"已保留 {kept}（网关已停止）；可以查看：ls -la {kept / 'home'}")
    assert has(text, f"用完后删除：rm -rf {kept}")
    assert has(text, "已中断，用时 1.2 秒（运行了 1 条命令）")
    own = demo_own_lines(transcript)
    assert too_wide(own) == [], own


@pytest.mark.parametrize("base, lang, expected", [
    ({"LANG": "zh_CN.UTF-8"}, "zh", None),  # the locale the steps inherit already says Chinese
    ({"LANG": "zh_CN.UTF-8", "TAOTOKEN_LANG": "en"}, "en", "en"),  # TAOTOKEN_LANG is scrubbed: passed on instead
    ({"LANG": "en_US.UTF-8"}, "zh", "zh"),  # Chinese from the real config's `lang`, which the steps' HOME lacks
    ({"LANGUAGE": "zh_CN", "LANG": "C.UTF-8"}, "zh", None),
    ({"LANG": "C.UTF-8"}, "en", None),
])
def test_the_steps_speak_the_demos_language(tmp_path, base, lang, expected):
    box = Sandbox.create(tmp_path)
    try:
        env = box.env(base, lang=lang)
        assert env.get("TAOTOKEN_LANG") == expected
        assert i18n.choose(env) == lang
        for name in ("LANG", "LANGUAGE"):
            assert env.get(name) == base.get(name)  # the locale variables stay
    finally:
        box.remove()
