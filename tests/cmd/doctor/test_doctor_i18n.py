"""`taotoken doctor` in 简体中文: the report, the verdict, `--list` and `--fix` read in Chinese; ids, codes, exit
statuses, commands and `--json` stay what they are in English; every line fits 80 columns by display width.

Real parts: the CLI in a subprocess with TAOTOKEN_LANG=zh (the compiled catalogue in the package, no system locale),
the project's mock gateway on 127.0.0.1, config files in a temporary HOME, an 80-column tmux window. The client
checks (doctor/checks/clients, mcp, project_env) are translated separately: the lines asserted free of English
here are those of the other checks.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from taotoken_cli.cmd.doctor.model import Check, Finding, Repair, Report, Result, Status
from taotoken_cli.cmd.doctor.view import progress_text, verdict_line
from taotoken_cli.core.base import i18n
from taotoken_cli.core.base.fix import Fix
from taotoken_cli.core.term.layout import cell_width
from tests.conftest import SENTINEL_KEY, own_config, python_path
from tests.tmux import Tmux, require_tmux

MODEL = "gpt-4o-mini"
ZH = {"TAOTOKEN_LANG": "zh"}
EN = {"TAOTOKEN_LANG": "en"}
SECTIONS_ZH = ("配置", "环境", "客户端", "网络", "网关", "设备")
# The checks whose every word comes from the doctor shard (the others show texts of other shards: the client
# checks, the device probe's own report).
OWN_CHECKS = ("config.", "env.taotoken", "env.openai", "env.anthropic", "env.proxy", "net.", "gateway.",
              "devices.env", "devices.route")


@pytest.fixture(autouse=True)
def _one_line_findings(one_line_findings: None) -> None:
    """Each finding is one line here (COLUMNS=1000); the 80-column layout has its own test below."""


def english_left(text: str) -> list[str]:
    """Runs of three or more English words in `text`, once code spans, commands, paths, URLs, hosts and
    `NAME=value` pairs are taken out: what an untranslated sentence leaves."""
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\S*(?:/|=|\$|_|\.\w|:\d)\S*", " ", text)
    text = re.sub(r"\b(?:taotoken|unset|export|chmod|getent) [^\u3000-\uffff]*", " ", text)
    return re.findall(r"[A-Za-z'-]+(?:[\s,;:()]+[A-Za-z'-]+){2,}", text)


def own_lines(output: str) -> list[str]:
    """The lines of the findings of OWN_CHECKS (headline and the lines under it): -v names every check."""
    lines, keep = [], False
    for line in output.splitlines():
        match = re.search(r"  \(([a-z_]+\.[a-z_.]+)\)(?: \[[a-z_.]+\])?$", line)
        if line.startswith("  [") and match:
            keep = match.group(1).startswith(OWN_CHECKS)
        elif not line.startswith("      "):
            keep = False
        if keep:
            lines.append(line)
    return lines


def ids_shown(output: str) -> list[str]:
    return re.findall(r"  \(([a-z_]+\.[a-z_.]+)\)(?: \[[a-z_.]+\])?$", output, flags=re.M)


def normalised(text: str) -> object:
    """--json with the timings (and the mock's port, the same in one test anyway) made constant."""
    data = json.loads(text)

    def walk(value: object) -> object:
        if isinstance(value, dict):
            return {k: 0 if k in ("elapsed_s", "elapsed_ms", "latency_ms") else walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, str):
            return re.sub(r"\d+(\.\d+)? (ms|s)\b", "N \\2", value)
        return value

    return walk(data)


# -- a healthy setup and a broken one, against the mock gateway ------------------------------------------

def test_a_healthy_run_reads_in_chinese(cli, home, mock_gateway) -> None:
    mock = mock_gateway(models=(MODEL, "gpt-4.1"))
    own_config(home, mock.url)
    result = cli("doctor", "-v", env=ZH).assert_clean()
    assert result.returncode == 0, result.output
    out = result.stdout
    assert out.startswith("taotoken doctor — 配置档 default\n")
    for section in SECTIONS_ZH:
        assert f"\n{section}\n" in out, out
    assert "  [✓] 网关接受 API 密钥：GET /v1/models 已接受（" in out
    assert f"  [✓] 模型在列表中：{MODEL} 是你的 API 密钥可用的 2 个模型之一  (gateway.model)" in out
    assert re.search(r"  \[✓\] 流式补全：\d+ 个 token 块，首个在 \d+ ms 后到达，以 \[DONE\] 结束", out), out
    assert re.search(r"\n用时 [\d.]+ 秒。\n✓ 未发现问题（已运行 \d+ 项检查，跳过 \d+ 项）。\n$", out), out
    mine = own_lines(out)
    assert len(mine) > 15, out
    for line in mine:
        assert not english_left(line), f"English left in {line!r}: {english_left(line)}"
    english = cli("doctor", "-v", env=EN).assert_clean()
    assert english.returncode == 0 and ids_shown(english.stdout) == ids_shown(out)  # the ids never change


def _broken(home: Path, mock_gateway) -> dict[str, str]:
    """A key with a trailing newline in the config file, a model with a typo, two conflicting Anthropic
    variables, a misspelt TAOTOKEN_ variable and a proxy on a closed port (that the loopback gateway bypasses)."""
    mock = mock_gateway(models=(MODEL, "gpt-4.1"))
    own_config(home, mock.url, key=SENTINEL_KEY + "\n", model="gpt-4o-mni")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    return {"ANTHROPIC_API_KEY": SENTINEL_KEY, "ANTHROPIC_AUTH_TOKEN": "sk-otherKEY0123456789abcdefWXYZ",
            "TAOTOKEN_MODLE": "x", "HTTPS_PROXY": f"http://127.0.0.1:{closed}"}


def test_a_broken_run_reads_in_chinese_with_ids_commands_and_exit_status_unchanged(cli, home, mock_gateway) -> None:
    env = _broken(home, mock_gateway)
    result = cli("doctor", "-v", env={**env, **ZH}).assert_clean()
    english = cli("doctor", "-v", env={**env, **EN}).assert_clean()
    assert result.returncode == english.returncode == 1, result.output
    assert ids_shown(result.stdout) == ids_shown(english.stdout)
    out = result.stdout
    assert ("  [✗] ANTHROPIC_API_KEY 与 ANTHROPIC_AUTH_TOKEN：ANTHROPIC_API_KEY 和 ANTHROPIC_AUTH_TOKEN 都已设置，"
            "且是不同的密钥  (env.anthropic_conflict)") in out
    assert ("      修复：unset ANTHROPIC_API_KEY   （保留 ANTHROPIC_AUTH_TOKEN：Claude Code 以 Bearer 发送它）"
            in out.splitlines())
    assert "  [✗] 模型在列表中：模型 'gpt-4o-mni' 不在列表中；你是不是想用 'gpt-4o-mini'？  (gateway.model)" in out
    assert "      修复：taotoken config set model gpt-4o-mini" in out.splitlines()  # the command verbatim
    assert "  [!] TAOTOKEN_* 变量：taotoken 不读取 TAOTOKEN_MODLE（你是不是想用 TAOTOKEN_MODEL？）" in out
    assert "      --fix：将 [profiles.default] 中的 api_key 设为去掉空白字符/引号后的 API 密钥（" in out
    assert re.search(r"网络\n(.*\n)*  \[!\] 已配置的代理可连接：代理 127\.0\.0\.1:\d+ \(HTTPS_PROXY\)：", out), out
    assert "  [-] 对话补全：网关不提供 gpt-4o-mni（见 gateway.model）  (gateway.chat)" in out
    verdict = out.rstrip("\n").splitlines()[-1]
    assert re.fullmatch(r"✗ doctor 发现 \d+ 个失败、\d+ 个警告（已运行 \d+ 项检查，跳过 \d+ 项）；其中 \d+ 项可用 "
                        r"taotoken doctor --fix 修复。", verdict), verdict
    for line in own_lines(out):
        if "需要清理：" in line:  # what was cleaned is hygiene's text (another shard)
            line = line.split("需要清理：")[0]
        assert not english_left(line), f"English left in {line!r}: {english_left(line)}"


def test_json_is_the_same_in_every_language(cli, home, mock_gateway) -> None:
    env = _broken(home, mock_gateway)
    chinese = cli("doctor", "--json", env={**env, **ZH}).assert_clean()
    english = cli("doctor", "--json", env={**env, **EN}).assert_clean()
    assert chinese.returncode == english.returncode == 1
    assert normalised(chinese.stdout) == normalised(english.stdout)
    # chosen by the locale (no TAOTOKEN_LANG: env.taotoken lists one variable less)
    by_locale = [cli("doctor", "--json", env={**env, "LANG": lang}).assert_clean() for lang in ("zh_CN.UTF-8",
                                                                                               "en_US.UTF-8")]
    assert normalised(by_locale[0].stdout) == normalised(by_locale[1].stdout)
    data = json.loads(chinese.stdout)
    assert {c["section"] for c in data["checks"]} == {"Configuration", "Environment", "Clients", "Network",
                                                      "Gateway", "Devices"}
    assert next(c for c in data["checks"] if c["id"] == "gateway.model")["title"] == "Model listed"


# -- the verdict and the spinner's line -----------------------------------------------------------------

def _finding(status: Status, repairable: bool = False, title: str = "Key accepted") -> Finding:
    repairs = [Repair(Path("/x"), "d", lambda text: text)] if repairable else []
    return Finding(Check("gateway.key", "Gateway", title, lambda ctx: Result.ok("")), Result(status, "m",
                                                                                            repairs=repairs))


def _report(*findings: Finding, strict: bool = False) -> Report:
    return Report(list(findings), 1.0, 8.0, False, "default", None, {}, strict=strict)


@pytest.mark.parametrize("findings, strict, english, chinese_text", [
    ([Status.OK, Status.SKIPPED], False, "✓ No issues found (1 check run, 1 skipped).",
     "✓ 未发现问题（已运行 1 项检查，跳过 1 项）。"),
    ([Status.OK, Status.OK], False, "✓ No issues found (2 checks run).", "✓ 未发现问题（已运行 2 项检查）。"),
    ([Status.WARN], True, "! No failures, 1 warning (--strict: treated as failure) (1 check run).",
     "! 没有失败，1 个警告（--strict：按失败处理）（已运行 1 项检查）。"),
    ([Status.FAIL, Status.WARN, Status.WARN], False, "✗ Doctor found 1 failure and 2 warnings (3 checks run).",
     "✗ doctor 发现 1 个失败、2 个警告（已运行 3 项检查）。"),
])
def test_the_verdict_in_both_languages(findings, strict, english, chinese_text) -> None:
    report = _report(*(_finding(s) for s in findings), strict=strict)
    assert verdict_line(report) == english
    i18n.use("zh")
    try:
        assert verdict_line(report) == chinese_text
    finally:
        i18n.use("en")


def test_the_verdict_counts_what_doctor_fix_can_repair(chinese) -> None:
    report = _report(_finding(Status.FAIL, repairable=True), _finding(Status.FAIL), _finding(Status.WARN))
    verdict = verdict_line(report)
    assert str(verdict) == ("✗ doctor 发现 2 个失败、1 个警告（已运行 3 项检查）；其中 1 项可用 "
                            "taotoken doctor --fix 修复。")
    assert isinstance(verdict, Fix) and [c.line for c in verdict.commands] == ["taotoken doctor --fix"]


def test_the_spinner_names_the_check_it_waits_for_in_chinese(chinese) -> None:
    checks = [_finding(Status.OK, title=t).check for t in ("Key accepted", "Model listed", "Chat completion")]
    assert progress_text(checks, {"x"}) == "已完成 0/3 项检查，正在等待：网关接受 API 密钥（另有 2 项）"
    assert progress_text(checks, {"gateway.key"}) == "已完成 3/3 项检查"
    i18n.use("en")
    assert progress_text(checks, set()) == "0 of 3 checks done, waiting for: Key accepted (+2 more)"


# -- --list ---------------------------------------------------------------------------------------------

def test_list_shows_chinese_sections_and_titles_with_the_same_ids(cli, home) -> None:
    chinese = cli("doctor", "--list", env=ZH).assert_clean()
    english = cli("doctor", "--list", env=EN).assert_clean()
    assert chinese.returncode == english.returncode == 0
    for section in SECTIONS_ZH:
        assert f"\n{section}\n" in "\n" + chinese.stdout
    lines = chinese.stdout.splitlines()
    assert "  net.dns                 网关主机的 DNS（需联网）" in lines
    assert "  config.copies           三项设置的副本保持一致" in lines
    assert "  devices.route           本机的路由" in lines
    ids = re.compile(r"^  ([a-z_]+\.[a-z_.]+) ", re.M)
    assert ids.findall(chinese.stdout) == ids.findall(english.stdout)
    assert cli("doctor", "--list", "--json", env=ZH).stdout == cli("doctor", "--list", "--json", env=EN).stdout


def test_an_unknown_check_is_refused_in_chinese(cli, home) -> None:
    bad = cli("doctor", "--check", "gateway.modle", env=ZH).assert_clean()
    assert bad.returncode == 2
    assert "没有名为 'gateway.modle' 的 doctor 检查项" in bad.stderr
    assert "你是不是想用 gateway.model" in bad.stderr and "用 taotoken doctor --list 列出" in bad.stderr


# -- --fix ----------------------------------------------------------------------------------------------

def test_fix_shows_its_plan_refuses_without_a_terminal_then_repairs_in_chinese(cli, home) -> None:
    config = own_config(home, "https://gateway.example/api/v1", key=SENTINEL_KEY + "\n")
    before = config.read_bytes()
    args = ("doctor", "--offline", "--check", "config", "--fix")
    refused = cli(*args, env=ZH).assert_clean()
    assert refused.returncode == 2 and "--yes" in refused.stderr  # stdin is not a terminal: nothing written
    assert config.read_bytes() == before
    out = refused.stdout
    assert "--fix 将修改 1 个文件（会保留备份；撤销：taotoken init --undo）：" in out.splitlines()
    assert "将 [profiles.default] 中的 base_url 设为 https://gateway.example/api  (config.base_url)" in out
    assert "将 [profiles.default] 中的 api_key 设为去掉空白字符/引号后的 API 密钥  (config.api_key)" in out
    assert '-base_url = "https://gateway.example/api/v1"' in out  # the diff itself is the file's text
    fixed = cli(*args, "--yes", env=ZH).assert_clean()
    assert re.search(r"^--fix：已修复 1 个文件；备份在 \S+$", fixed.stdout, re.M), fixed.stdout
    assert "--fix：再次运行 taotoken doctor 确认；用 taotoken init --undo 可恢复原来的文件" in fixed.stdout
    assert f'api_key = "{SENTINEL_KEY}"\n' in config.read_text()
    again = cli(*args, env=ZH).assert_clean()
    assert again.returncode == 0 and again.stdout.rstrip().endswith("--fix：没有可自动修复的问题")


def test_a_console_that_shows_chinese_but_not_the_check_marks(home) -> None:
    """A GBK console (Windows' Chinese code page) has no ✓: the ASCII marks are Chinese words there."""
    own_config(home, "https://gateway.example/api")
    proc = subprocess.run([sys.executable, "-m", "taotoken_cli", "doctor", "--offline", "--check", "config"],
                          capture_output=True, cwd=home,
                          env={**os.environ, **ZH, "PYTHONIOENCODING": "gbk",
                               "PYTHONPATH": python_path()})
    out = proc.stdout.decode("gbk")
    assert proc.returncode == 0, out + proc.stderr.decode("gbk", errors="replace")
    assert "  [正常] Base URL：https://gateway.example/api（来自 " in out
    assert "✓" not in out and "[OK]" not in out


# -- 80 columns -----------------------------------------------------------------------------------------

def test_chinese_doctor_fits_80_columns_in_a_terminal(mock_gateway, home, monkeypatch) -> None:
    """A slow gateway (the spinner shows) and a model with a typo (a fix to print), configured through the
    environment; the language through the locale, as a user has it."""
    require_tmux()
    mock = mock_gateway(latency_ms=1200, process=True, models=(MODEL, "claude-sonnet-4-5"))
    for name, value in {"TAOTOKEN_BASE_URL": mock.url, "TAOTOKEN_API_KEY": SENTINEL_KEY,
                        "TAOTOKEN_MODEL": "gpt-4o-mni", "PYTHONPATH": python_path(), "LANG": "zh_CN.UTF-8",
                        "HTTPS_PROXY": "http://127.0.0.1:9"}.items():
        monkeypatch.setenv(name, value)
    with Tmux([sys.executable, "-m", "taotoken_cli", "doctor"], width=80, height=60, cwd=home) as term:
        waiting = term.wait_for(lambda s: "项检查，正在等待：" in s, timeout=30)
        spinning = next(line for line in waiting.splitlines() if "项检查，正在等待：" in line)
        assert re.match(r"\S 已完成 \d+/\d+ 项检查，正在等待：", spinning), spinning
        assert cell_width(spinning) < 80
        term.wait_for(lambda s: term.dead(), timeout=60)
        screen = "\n".join(line for line in term.screen(joined=True, history=True).splitlines()
                           if not line.startswith("Pane is dead"))
    lines = screen.rstrip("\n").splitlines()
    assert lines[0] == "taotoken doctor — 配置档 default（详情：taotoken doctor -v）", screen
    # joined: a line the terminal had to wrap shows here as one longer than the window
    for line in lines:
        assert cell_width(line) <= 80 or " " not in line.strip(), f"{line!r} does not fit:\n{screen}"
    body = lines[1:lines.index(next(line for line in lines if line.startswith(("✓", "!", "✗"))))]
    for line in body:
        if line and line not in SECTIONS_ZH:
            assert line.startswith(("  [", "      ")), f"not hanging under its text: {line!r}\n{screen}"
    assert "      修复：taotoken config set model gpt-4o-mini" in lines, screen
    assert any(line.startswith("✗ doctor 发现 ") for line in lines), screen
