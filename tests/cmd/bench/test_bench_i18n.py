"""`taotoken bench` in 简体中文: the text report, the errors by cause, a sweep, the bad-option errors, the live
view and the HTML report, against the mock gateway (its own process) with TAOTOKEN_LANG=zh — and the machine
output (--json, the HTML's embedded report) the same as in English.

Real parts: the CLI in a subprocess reading the compiled catalogue, the mock gateway on 127.0.0.1, plotly
writing the page. Widths are display widths (layout.cell_width: a Chinese character takes two columns).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest

from taotoken_cli.cmd.mock import MockOptions, ModelTiming
from taotoken_cli.core.term.layout import cell_width
from tests.conftest import SENTINEL_KEY, squashed

MOCK = MockOptions(key=SENTINEL_KEY, latency_ms=10, tokens=3,
                   model_timing={"fixed30": ModelTiming(30, 0, 4), "stream": ModelTiming(40, 100, 6)},
                   model_fail={"rate-limited": 429, "unauthorized": 401, "no-channel": "no-channel"}, retry_after=0.2)


@pytest.fixture(scope="module")
def server(module_mock_gateway):
    return module_mock_gateway(MOCK, process=True).url


@pytest.fixture
def bench(cli, server):
    def run(*args: str, lang: str = "zh", columns: str = "80"):
        env = {"TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_LANG": lang, "COLUMNS": columns}
        result = cli("bench", "--base-url", server, *args, env=env, timeout=120)
        result.assert_clean()
        return result

    return run


def fits_80(text: str) -> list[str]:
    """The lines wider than 80 columns (none, when the layout holds)."""
    return [line for line in text.splitlines() if cell_width(line) > 80]


# -- the text report ------------------------------------------------------------------------------
def test_text_report_in_chinese_fits_80_columns(bench):
    args = ("-m", "stream", "-m", "a-rather-long-model-name-for-the-side-by-side-table", "-m", "rate-limited",
            "-n", "4", "-c", "2", "--stream", "--repeat", "2")
    zh, en = bench(*args), bench(*args, lang="en")
    assert zh.returncode == en.returncode == 6  # rate.limited: the exit status of the top error, in every language
    out = zh.stdout
    for text in ("负载：闭环，4 个请求，并发 2，2 个工作进程，每组运行 2 次", "模型 stream", "请求数", "每秒请求数",
                 "（成功 8，失败 0，成功率 100.0 %）", "依据：服务器报告的 usage", "波动         重复 2 次：",
                 "时间单位 ms，仅统计成功的请求：", "TTFT：首 token 延迟；token 间隔：", "延迟直方图 (ms)：",
                 "状态码：HTTP 200 x8", "状态码：HTTP 429 x8", "错误明细：", "（HTTP 429，Retry-After 0.2 s）",
                 "服务器返回：", "修复（rate.limited）：降低并发：taotoken bench -c 1   （本次：-c 2）", "并排对比：",
                 "A = stream", "成功率", "主要错误"):
        assert squashed(text) in squashed(out), text
    # codes, numbers and units stay as they are
    assert "rate.limited" in out and "tokens/s" in out and "p95" in out
    # no English label or sentence of the report is left
    for english in ("model ", "requests/s", "times in ms", "successful requests", "status codes", "side by side",
                    "success rate", "top error", "server said", "fix (", "latency histogram", "inter-token",
                    "closed loop", "concurrent", "workers", "repeats:", "errors:", "this run"):
        assert english not in out, english
    assert fits_80(out) == []
    # the percentile table's header sits over its numbers, by display width
    header = next(line for line in out.splitlines() if line.strip().startswith("最小"))
    row = next(line for line in out.splitlines() if line.strip().startswith("延迟") and "(ms)" not in line
               and "p50" not in line)
    assert cell_width(header) == cell_width(row)


def test_errors_by_cause_in_chinese(bench):
    zh = bench("-m", "unauthorized", "-m", "no-channel", "-m", "fixed30", "-n", "4", "-c", "2")
    en = bench("-m", "unauthorized", "-m", "no-channel", "-m", "fixed30", "-n", "4", "-c", "2", lang="en")
    assert zh.returncode == en.returncode != 0
    for code in ("auth.invalid_key", "model.no_channel"):
        assert code in zh.stdout and code in en.stdout  # the codes never change with the language
    assert "状态码：HTTP 401 x4" in zh.stdout and "修复（auth.invalid_key）：" in zh.stdout
    assert "服务器返回：" in zh.stdout and "主要错误" in zh.stdout and "错误明细：" in zh.stdout
    assert fits_80(zh.stdout) == []


def test_open_loop_workload_and_limits_in_chinese(bench):
    out = bench("-m", "fixed30", "-n", "10", "--rate", "40", "--arrival", "poisson", "--ramp-up", "0.1",
                "--input-tokens", "16..32").stdout
    text = squashed(out)
    assert squashed("负载：开环，40 req/s（延迟从计划开始时间算起），10 个请求，最多 10 个进行中的请求") in text
    assert squashed("工作负载：poisson 到达过程（随机种子 1），爬坡 0.1 s，提示词约 16..32 个 token") in text
    assert "迟发" in out and "late" not in out
    stopped = bench("-m", "rate-limited", "-n", "200", "-c", "2", "--max-errors", "5")
    assert stopped.returncode == 6
    assert "已停止" in stopped.stdout and "达到 --max-errors 上限" in stopped.stdout


def test_sweep_in_chinese(bench):
    args = ("-m", "fixed30", "-m", "rate-limited", "-n", "8", "--sweep", "c=1..4", "--slo", "latency:p95<150ms",
            "--slo", "error-rate<1%")
    zh, en = bench(*args), bench(*args, lang="en")
    assert zh.returncode == en.returncode
    out = zh.stdout
    for text in ("SLO：latency:p95<150ms，error-rate<1%", "模型 fixed30：按并发扫描", "负载", "有效吞吐", "达标",
                 "（单位 ms；req/s：每秒完成的请求数，施加：每秒发起的请求数，均按稳定区间计；"
                 "有效吞吐：每秒满足 SLO 限制的请求数；* 为二分查找拐点时加测的一档）", "拐点：c=",
                 "req/s（满足全部 SLO、且达到最佳有效吞吐（5 % 以内）的最低并发）；受 c=",
                 "模型 rate-limited：按并发扫描", "未达标",
                 "拐点：无（满足全部 SLO、且达到最佳有效吞吐（5 % 以内）的最低并发）",
                 "提前停止：有一档未达到 SLO，且有效吞吐不高于此前最好的一档", "c=1：rate.limited x8；修复："):
        assert squashed(text) in squashed(out), text
    for english in ("sweep over", "knee", "goodput", "stopped early", "missed", "met "):
        assert english not in out, english
    assert fits_80(out) == []


# -- errors a person makes ------------------------------------------------------------------------------
@pytest.mark.parametrize("args, chinese, english", [
    (("-n", "0"), "-n/--requests 至少为 1（收到 0）", "must be at least 1"),
    (("-n", "5", "-z", "2s"), "同时给出了 -n/--requests 和 -z/--duration", "both given"),
    (("--sweep", "c=1..0"), "--sweep 'c=1..0'：'1..0' 不是数字列表，也不是范围", "is not a list"),
    (("--slo", "ttft:p95<2"), "--slo 'ttft:p95<2'：限制值要带单位 ms 或 s", "give the limit"),
    (("--slo", "ttft:p95<2s"), "--slo ttft:p95<2s 需要 --stream", "needs --stream"),
    (("--input-tokens", "9..3"), "--input-tokens '9..3'：范围的起点至少为 1，终点不能小于起点", "the range must"),
    (("--arrival", "poisson"), "--arrival 只用于开环压测", "needs an open loop"),
    (("-z", "soon"), "-z/--duration 'soon' 不是正的时长", "not a positive duration"),
    (("--proxy", "socks5://127.0.0.1:1080"), "--proxy 是 SOCKS 代理（socks5://127.0.0.1:1080）；bench 只支持 HTTP 代理",
     "speaks to HTTP proxies"),
])
def test_bad_options_in_chinese(bench, args, chinese, english):
    result = bench("-m", "fixed30", *args)
    assert result.returncode == 2, result.output
    assert chinese in result.stderr and english not in result.stderr


def test_unreadable_files_in_chinese(bench, tmp_path):
    dataset = tmp_path / "prompts.jsonl"
    dataset.write_text('{"prompt": "hi"}\nnot json\n', encoding="utf-8")
    result = bench("-m", "fixed30", "--dataset", str(dataset))
    assert result.returncode == 2
    assert squashed(f"--dataset {dataset}:2 不是 JSON 对象") in squashed(result.stderr)
    assert '每行一个 JSON 对象，例如 {"prompt": "Hello"}' in result.stderr
    directory = bench("-m", "fixed30", "--csv", str(tmp_path))
    assert directory.returncode == 2 and squashed(f"--csv {tmp_path} 是一个目录") in squashed(directory.stderr)
    assert "--csv bench.csv" in directory.stderr  # the example command stays whole, in ASCII


# -- machine output -------------------------------------------------------------------------------
def _shape(value: Any, key: str = "") -> Any:
    """The JSON with what changes from run to run taken out: timings, connection counts, request ids."""
    if key in ("windows", "latency_histogram_ms", "repeats", "connect_ms", "proxy_connect_ms"):
        return None
    if isinstance(value, dict):
        return {k: _shape(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    if isinstance(value, float) or key in ("connections",):
        return "number"
    if isinstance(value, str):
        return re.sub(r"\d{10,}\w*", "<id>", value)
    return value


def test_json_is_the_same_in_every_language(bench):
    args = ("-m", "stream", "-m", "rate-limited", "-m", "unauthorized", "-n", "4", "--stream", "--sweep", "c=1,2,4",
            "--slo", "ttft:p95<2s", "--resolution", "off", "--json")  # no bisection: the same steps in both
    zh, en = bench(*args), bench(*args, lang="en")
    assert zh.returncode == en.returncode
    zh_data, en_data = json.loads(zh.stdout), json.loads(en.stdout)
    assert _shape(zh_data) == _shape(en_data)
    assert zh_data["sweep"]["models"][1]["stop_reason"] is not None
    limited = next(s for s in zh_data["series"] if s["model"] == "rate-limited" and s["concurrency"] == 2)
    assert "lower the concurrency" in limited["top_error_fix"]


class _Page(HTMLParser):
    """The page's visible text by tag, its plots and scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.lang = ""
        self.texts: dict[str, list[str]] = {}
        self.scripts: list[str] = []
        self.plots = 0
        self._tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.lang = attrs.get("lang", "")
        if attrs.get("id", "").startswith("plot"):
            self.plots += 1
        self._tags.append(tag)

    def handle_endtag(self, tag):
        if tag in self._tags:
            while self._tags.pop() != tag:
                pass

    def handle_data(self, data):
        if not self._tags:
            return
        tag = self._tags[-1]
        if tag == "script":
            self.scripts.append(data)
        elif data.strip():
            self.texts.setdefault(tag, []).append(data.strip())


def test_html_report_in_chinese(bench, tmp_path):
    page_path = tmp_path / "bench.html"
    args = ("-m", "stream", "-m", "rate-limited", "-n", "6", "--stream", "--sweep", "c=1,2", "--slo", "ttft:p95<2s")
    result = bench(*args, "--html", str(page_path))
    assert result.returncode == 6, result.output  # rate-limited failed at every step: its code's exit status
    text = page_path.read_text(encoding="utf-8")
    assert SENTINEL_KEY not in text
    page = _Page()
    page.feed(text)
    assert page.lang == "zh-CN"
    assert page.texts["title"] == ["taotoken bench 报告"]
    headings = page.texts["h2"]
    assert headings[0] == "概览"
    assert {"分布：延迟 (ms)", "分布：首 token 延迟 (ms)", "分布：token 间隔 (ms)", "吞吐量随时间的变化",
            "延迟随时间的变化", "负载扫描：吞吐量与有效吞吐", "负载扫描：延迟"} <= set(headings)
    assert page.plots == 7 == len(headings) - 1
    assert page.texts["th"][:4] == ["测试组", "请求数", "成功", "失败"] and "主要错误" in page.texts["th"]
    assert "达标" in page.texts["span"] and "未达标" in page.texts["span"]
    meta = " ".join(page.texts["p"])
    assert "负载：闭环，每档 6 个请求" in meta and "时间单位 ms，仅统计成功的请求" in meta
    assert "拐点 2（满足全部 SLO、且达到最佳有效吞吐（5 % 以内）的最低并发）" in meta and "无拐点" in meta
    assert "error-rate<1%（默认）" in meta
    # axis titles and legends are Chinese; series names and codes stay as they are
    layouts = [json.loads(m) for s in page.scripts if "Plotly.newPlot" in s
               for m in re.findall(r'(\{"template".*?\})\s*,\s*\{"displaylogo"', s)]
    plot_text = json.dumps(layouts, ensure_ascii=False) + " ".join(
        json.loads(f'"{n}"') for s in page.scripts for n in re.findall(r'"name":"((?:[^"\\]|\\.)*)"', s))
    for label in ("自开始起的秒数", "每秒请求数", "stream 吞吐量", "stream 有效吞吐", "拐点 stream", "并发",
                  "stream c=1"):
        assert label in plot_text, label
    for english in ("seconds since the start", "throughput", "goodput", "knee"):
        assert english not in plot_text, english
    # the embedded report is data: as --json has it in English (less the run's exit status, which is no report's)
    embedded = json.loads(next(s for s in page.scripts if s.lstrip().startswith('{"schema"')))
    machine = json.loads(bench(*args, "--json", lang="en").stdout)
    assert machine.pop("exit_code") == 6
    assert _shape(embedded) == _shape(machine)
    assert embedded["sweep"]["knee_rule"] == ("the lowest concurrency reaching the best goodput (within 5 %) while "
                                              "meeting every SLO")
    assert "lower the concurrency" in embedded["series"][3]["top_error_fix"]


# -- the live view -------------------------------------------------------------------------------
def test_live_view_in_chinese_fits_80_columns(chinese):
    from taotoken_cli.cmd.bench.progress import STATUS_WIDTH, status_text
    from tests.cmd.bench.test_bench_capacity import live_view_lines

    assert status_text(120, 3, 200, 4.2) == "120/200 29/s 3 失败 4s"
    assert cell_width(status_text(12000, 3, 20000, 124.2)) <= STATUS_WIDTH
    lines = live_view_lines(["deepseek-ai/DeepSeek-V3.1-Terminus", "通义千问-qwen-max-中文模型名"])
    assert all(cell_width(line) <= 80 for line in lines), lines
    assert any("3 失败" in line for line in lines) and any("等待中" in line for line in lines)
