"""Every command's help, Click's usage errors, `route` and the device probe in 简体中文.

Real parts: the CLI in a subprocess with TAOTOKEN_LANG=zh and the compiled catalogue; the mock gateway on
127.0.0.1 for `route --verify`; the real PoCL CPU device through pyopencl (skipped, saying so, where it is not
installed) and the stand-in NVIDIA driver library built from tests/data/fake_libcuda.c (no driver can exist here).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from taotoken_cli.core.term.layout import cell_width
from tests.conftest import REPO, SENTINEL_KEY, flat, python_path, squashed

ZH = {"TAOTOKEN_LANG": "zh", "COLUMNS": "80"}
CJK = re.compile(r"[\u4e00-\u9fff]")
# Three English words in a row (a sentence left untranslated); names, values and commands rarely make three.
ENGLISH_RUN = re.compile(r"\b[A-Za-z]{2,}(?: [a-z]{2,}){2,}\b")

WALK = r"""
import contextlib, io, json, sys
from taotoken_cli.core.base import i18n
i18n.setup(env={"TAOTOKEN_LANG": sys.argv[1]})
import typer.main
from taotoken_cli.app import app

def walk(command, path):
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        if not sub.hidden:
            yield from walk(sub, [*path, name])

found = []
for path, command in walk(typer.main.get_command(app), []):
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        try:
            app(args=[*path, "--help"], prog_name="taotoken")
        except SystemExit:
            pass
    helps = [command.help] + [p.help for p in command.params if not getattr(p, "hidden", False)]
    found.append({"path": path, "helps": helps, "shown": shown.getvalue()})
print(json.dumps(found))
"""


def _walk(lang: str) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": python_path(), "COLUMNS": "80", "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-c", WALK, lang], capture_output=True, text=True, env=env, timeout=120,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def helps() -> list[dict]:
    return _walk("zh")


@pytest.fixture(scope="module")
def english_helps() -> list[dict]:
    return _walk("en")


def test_the_app_is_walked(helps) -> None:
    paths = {" ".join(h["path"]) for h in helps}
    assert {"", "route", "route devices", "route set", "route list", "config set", "bench", "mock"} <= paths


def test_every_help_text_is_chinese(helps, english_helps) -> None:
    """Each help text is the catalogue's translation of its English source, whole (one Chinese word in an English
    sentence is not a translation)."""
    from taotoken_cli.core.base import i18n

    english = {tuple(found["path"]): found["helps"] for found in english_helps}
    assert set(english) == {tuple(found["path"]) for found in helps}
    before = i18n.current()
    i18n.use("zh")
    from taotoken_cli.core.platform.installer import add_extra

    # a help that names the command for this installation is its template, filled in (bench --html; rich-escaped)
    command = str(add_extra("html")).replace("[", "\\[")
    try:
        for found in helps:
            for text, source in zip(found["helps"], english[tuple(found["path"])], strict=True):
                assert source and text != source and CJK.search(text), (found["path"], source, text)
                if command in source:
                    source_template = source.replace(command, "{command}")
                    assert text == i18n._(source_template).format(command=command), (found["path"], source, text)
                    continue
                assert text == i18n._(source), (found["path"], source, text)
    finally:
        i18n.use(before)


def test_every_help_page_is_chinese_whole_and_fits_80_columns(helps) -> None:
    for found in helps:
        shown, where = found["shown"], " ".join(["taotoken", *found["path"]])
        assert "用法：taotoken" in shown and "Usage:" not in shown, where
        assert "显示此帮助信息后退出。" in shown and "Show this message" not in shown, where
        assert all(cell_width(line) <= 80 for line in shown.splitlines()), where
        # no help text cut short: rich ends a cut line of a panel with "…" (the layout never breaks after one)
        assert not [line for line in shown.splitlines() if re.search(r"…\s*│$", line)], where
        plain = squashed(shown.replace("│", ""))
        for text in found["helps"]:
            if "[" not in text:  # rich reads [html] as markup, in English too
                assert squashed(text)[:6] in plain and squashed(text.split("\n\n")[0])[-6:] in plain, (where, text)
        leftovers = [m for m in ENGLISH_RUN.findall(shown) if not m.startswith(("pip install", "taotoken "))]
        assert not leftovers, (where, leftovers)


@pytest.mark.parametrize("args, words", [
    ([], ("用法：taotoken [选项] 命令 [参数]...", "为每个 AI 编程客户端配置并诊断对 TaoToken LLM 网关的访问。",
          "按本机的设备或任务选择模型；验证路由。")),
    (["route"], ("用法：taotoken route [选项] 命令 [参数]...",
                 "使用这种设备类型的路由（cuda、gpu、opencl、cpu、nvidia、intel、amd…）。",
                 "设备探测被终止前的秒数，至少 0.5；使用 --verify 时也是每个请求的时限。", "[默认：15.0]")),
])
def test_the_real_cli_helps_in_chinese_within_80_columns(cli, args: list[str], words: tuple[str, ...]) -> None:
    """`taotoken --help` and `taotoken route --help` as a person runs them: the language chosen by the entry
    point from TAOTOKEN_LANG, an 80-column terminal, a key in the environment that must not show."""
    env = {**ZH, "TAOTOKEN_API_KEY": SENTINEL_KEY}
    result = cli(*args, "--help", env=env).assert_clean()
    assert result.returncode == 0 and not result.stderr
    shows(result.stdout.replace("│", ""), *words, "显示此帮助信息后退出。")  # a panel line ends in │
    assert "Usage:" not in result.stdout and "Show this message" not in result.stdout
    assert all(cell_width(line) <= 80 for line in result.stdout.splitlines())
    english = cli(*args, "--help", env={**env, "TAOTOKEN_LANG": "en"}).assert_clean()
    assert "Usage: taotoken" in english.stdout and not CJK.search(english.stdout)


@pytest.mark.parametrize("args, words", [
    (["rout"], "没有命令 'rout'。你是不是想用 'route'？"),
    (["route", "--verif"], "没有选项 --verif（可能是：--verify）"),
    (["route", "--samples"], "选项 '--samples' 需要一个值。"),
    (["route", "--samples", "0"], "'--samples' 的值无效：0 太小：至少为 1"),
    (["doctor", "--timeout", "601"], "'--timeout' / '-t' 的值无效：601 太大：最多 600 秒"),
    (["route", "set"], "缺少参数 'KIND=MODEL...'。"),
    (["route", "list", "extra"], "多余的参数：extra"),
    (["route", "-t", "code"], "-t 不再表示 --task（每个短选项在所有命令中含义相同）；请写：--task code"),
])
def test_usage_errors_in_chinese(cli, args: list[str], words: str) -> None:
    result = cli(*args, env=ZH).assert_clean()
    assert result.returncode == 2
    shown = flat(result.stderr.replace("│", " "))
    assert squashed(words) in squashed(shown), result.stderr
    assert "Usage:" not in shown


def test_usage_errors_stay_english_in_english(cli) -> None:
    result = cli("route", "--verif", env={"TAOTOKEN_LANG": "en"}).assert_clean()
    assert result.returncode == 2 and "No such option: --verif (Possible options: --verify)" in result.stderr
    assert "Usage: taotoken route" in result.stderr


def shows(output: str, *phrases: str) -> None:
    for phrase in phrases:
        assert squashed(phrase) in squashed(output), (phrase, output)


def fits(text: str) -> bool:
    """Every line within 80 columns, but for one word alone that is longer (a path: words stay whole)."""
    return all(cell_width(line) <= 80 or " " not in line.strip() for line in text.splitlines())


def test_route_table_in_chinese(cli, home) -> None:
    empty = cli("route", env=ZH).assert_clean()
    assert empty.returncode == 3
    shows(empty.stderr, "路由表为空，配置档 'default' 也没有设置模型 [config.missing]",
          "taotoken route set cpu=MODEL   （或：taotoken config set model MODEL）")
    bad = cli("route", "set", "cpu", env=ZH).assert_clean()
    assert bad.returncode == 2
    shows(bad.stderr, "'cpu' 不是 KIND=MODEL 格式", "请写成 cpu=MODEL-ID")
    saved = cli("route", "set", "CUDA=gpu-a100-qwen25-72b-fp16", "code=qwen-coder", env=ZH).assert_clean()
    assert saved.returncode == 0 and "已设置路由 cuda = gpu-a100-qwen25-72b-fp16" in saved.stdout
    shows(saved.stderr, "提示：没有对照网关的模型列表检查：配置档 'default' 中没有可用的 Base URL 和 API 密钥")
    again = cli("route", "set", "code=qwen-coder", "embed=", env=ZH).assert_clean()
    shows(again.stdout, "路由 code 已经是 qwen-coder，没有改动", "路由 embed 未设置，无需删除")
    listed = cli("route", "list", env=ZH).assert_clean()
    assert listed.stdout.splitlines()[0].split() == ["路由", "类型", "模型"] and "设备" in listed.stdout
    assert "回退（配置档 'default' 的模型）：（未设置）" in listed.stdout
    task = cli("route", "--task", "code", env=ZH).assert_clean()
    assert task.returncode == 0 and "--task code 选中路由 code = qwen-coder" in task.stdout
    assert [line.split()[0] for line in task.stdout.splitlines()] == ["模型", "路由", "原因"]
    missing = cli("route", "--task", "embed", env=ZH).assert_clean()
    assert missing.returncode == 3
    shows(missing.stderr, "配置档 'default' 中没有路由 'embed'（现有路由：code、cuda）", "[route.missing]")
    for result in (empty, bad, saved, again, listed, task, missing):
        assert fits(result.stdout) and fits(result.stderr), result.output
    for args in (["route", "list", "--json"], ["route", "--task", "code", "--json"]):
        assert cli(*args, env=ZH).stdout == cli(*args, env={"TAOTOKEN_LANG": "en"}).stdout


def test_route_picks_the_real_cpu_device_in_chinese(cli, cpu_only_env, pocl_cpu) -> None:
    """`taotoken route` itself on a machine without a GPU: the PoCL CPU device chooses the cpu route."""
    env = {**cpu_only_env, **ZH, "TAOTOKEN_API_KEY": SENTINEL_KEY}
    cli("route", "set", "cuda=gpu-a100-qwen25-72b-fp16", "gpu=gpu-generic", "cpu=cpu-llama3-8b-int8", "--no-check",
        env=env).assert_clean()
    result = cli("route", env=env).assert_clean()
    assert result.returncode == 0, result.output
    labels = [line.split()[0] for line in result.stdout.splitlines() if not line.startswith(" ")]
    assert labels == ["模型", "路由", "原因"]
    shows(result.stdout, "模型   cpu-llama3-8b-int8", "路由   cpu   配置档 default", "没有找到 GPU；CPU",
          "（OpenCL，", "）：路由 cpu = cpu-llama3-8b-int8")
    assert fits(result.stdout) and not ENGLISH_RUN.findall(result.stdout.replace("Portable Computing Language", ""))
    chinese = json.loads(cli("route", "--json", env=env).stdout)
    english = json.loads(cli("route", "--json", env={**env, "TAOTOKEN_LANG": "en"}).stdout)
    assert chinese == english and chinese["route"] == "cpu" and "no GPU found" in chinese["reason"]


def test_route_set_warns_in_chinese_about_a_model_the_gateway_does_not_list(cli, mock_gateway) -> None:
    mock = mock_gateway(models=("cpu-llama3-8b-int8", "gpu-qwen"))
    env = {**ZH, "TAOTOKEN_BASE_URL": mock.url, "TAOTOKEN_API_KEY": SENTINEL_KEY}
    result = cli("route", "set", "cpu=cpu-lama3-8b-int8", env=env).assert_clean()
    assert result.returncode == 0
    shows(result.stderr, "警告：路由 cpu：网关未列出 'cpu-lama3-8b-int8'（相近的有：cpu-llama3-8b-int8）；仍已保存",
          "修复：taotoken route set cpu=cpu-llama3-8b-int8   （所有模型：taotoken models）")
    assert fits(result.stderr)


def normalised(text: str) -> str:
    """--verify's JSON without what differs from run to run: timings, request and response ids."""
    data = json.loads(text)
    text = json.dumps(data, sort_keys=True)
    text = re.sub(r'"elapsed_s": [0-9.e-]+', '"elapsed_s": 0', text)
    return re.sub(r"\d{16,}", "ID", text)


def test_route_verify_in_chinese_and_its_json_unchanged(cli, mock_gateway) -> None:
    mock = mock_gateway(aliases={"gpt-4o": "gpt-4o-2024-08-06", "cpu-m": "gpt-3.5-turbo"},
                        no_channel=("gpu-missing",))
    env = {**ZH, "TAOTOKEN_BASE_URL": mock.url, "TAOTOKEN_API_KEY": SENTINEL_KEY}
    cli("route", "set", "gpu=gpt-4o", "cpu=cpu-m", "cuda=gpu-missing", "code=exact", "--no-check", env=env)
    result = cli("route", "--verify", "--all", "--samples", "2", env=env).assert_clean()
    assert result.returncode == 5  # the no-channel failure decides the class, in every language
    for words in (f"正在对照 {mock.url} 验证路由", "gpu -> gpt-4o: 相同（仅差日期/版本后缀）",
                  "变体 gpt-4o-2024-08-06（'-2024-08-06' 是 'gpt-4o' 的日期/版本后缀）",
                  "cpu -> cpu-m: 不同（被重新映射或忽略）", "请求的是 'cpu-m'，网关以 'gpt-3.5-turbo' 应答",
                  "失败 [model.no_channel]", "2 次采样的分布：失败：model.no_channel x2", "相同 exact（模型 ID 相同）",
                  "4 条路由中有 2 条失败或由其他模型应答（退出码 5）", "提示：`model` 不同只是线索，不是证据"):
        shows(result.stdout, words)
    assert fits(result.stdout)
    args = ("route", "--verify", "--all", "--samples", "2", "--json")
    chinese, english = cli(*args, env=env), cli(*args, env={**env, "TAOTOKEN_LANG": "en"})
    assert chinese.returncode == english.returncode == 5
    assert normalised(chinese.stdout) == normalised(english.stdout)


def test_route_devices_in_chinese(cli, cpu_only_env, pocl_cpu) -> None:
    env = {**cpu_only_env, **ZH, "SYCL_DEVICE_FILTER": "opencl:cpu"}
    result = cli("route", "devices", env=env).assert_clean()
    assert result.returncode == 0
    for words in ("OpenCL CPU", "个计算单元", "CUDA 无驱动/设备：没有 NVIDIA 驱动库（", "）；也没有安装 pycuda",
                  "修复：有 NVIDIA GPU 时：安装 NVIDIA 驱动", "OpenCL 正常：1 个平台上共 1 个 OpenCL 设备",
                  "CUDA_VISIBLE_DEVICES （未设置） 未设置：CUDA 能看到所有 GPU", "警告：自 2022 年起已弃用",
                  "export ONEAPI_DEVICE_SELECTOR='opencl:cpu'"):
        shows(result.stdout, words)
    # the words of the system's library loader, as they came
    assert "libcuda.so.1" in flat(result.stdout)
    assert fits(result.stdout)  # a temporary path longer than a line is alone on its line, never split
    wide = cli("route", "devices", env={**env, "COLUMNS": "200"}).assert_clean()
    assert wide.stdout.splitlines()[0].split()[:4] == ["后端", "类型", "设备", "厂商"]
    zh = json.loads(cli("route", "devices", "--json", env=env).stdout)
    en = json.loads(cli("route", "devices", "--json", env={**env, "TAOTOKEN_LANG": "en"}).stdout)
    for data in (zh, en):
        for backend in data["backends"].values():
            backend["elapsed_s"] = 0
    assert zh == en


def test_the_driver_speaks_chinese_around_its_own_words(cli, libcuda_standin, cpu_only_env) -> None:
    env = {**cpu_only_env, **ZH, "TAOTOKEN_LIBCUDA": str(libcuda_standin)}
    present = cli("route", "devices", env={**env, "FAKE_CUDA_DEVICES": "2"}).assert_clean()
    shows(present.stdout, "132 个 SM", "总线 0000:18:00.0", "CUDA 正常：2 个 CUDA 设备 [经由驱动 API（",
          "提示：未安装 pycuda（可选：驱动 API 已给出结果）；pycuda 需要从源码构建")
    hidden = cli("route", "devices", env={**env, "CUDA_VISIBLE_DEVICES": "5"}).assert_clean()
    shows(hidden.stdout, "NVIDIA 驱动没有看到支持 CUDA 的设备（CUDA_ERROR_NO_DEVICE）："
                         "CUDA_VISIBLE_DEVICES='5'：没有设备 5（驱动有 1 块 GPU，索引 0）",
          "没有设备 5（驱动有 1 块 GPU，索引 0）：CUDA 看不到任何 GPU；请取消设置，或只列出存在的 GPU",
          "修复：取消设置 CUDA_VISIBLE_DEVICES，或只列出存在的 GPU（例如 CUDA_VISIBLE_DEVICES=0）")
    broken = cli("route", "devices", env={**env, "FAKE_CUDA_INIT_ERROR": "999"}).assert_clean()
    # "cuInit failed" in Chinese; the driver's name, number and description of its error as it gave them
    assert broken.stdout.startswith("CUDA    故障：cuInit 调用失败：", broken.stdout.index("CUDA    "))
    shows(broken.stdout, "故障：cuInit 调用失败：CUDA_ERROR_UNKNOWN (999): unknown error [经由驱动 API（")
    for result in (present, hidden, broken):
        assert fits(result.stdout), result.stdout


def test_a_probe_message_is_translated_from_its_template_with_the_drivers_words_as_they_came(chinese) -> None:
    from taotoken_cli.core.devices.probe import parse_probe_output

    said = {"status": "no_driver", "message": "no NVIDIA driver library (libcuda.so.1: cannot open)",
            "message_i18n": {"text": "no NVIDIA driver library ({error})",
                             "args": {"error": "libcuda.so.1: cannot open"}}}
    report = parse_probe_output("cuda", 0, json.dumps(said).encode(), b"", 0.1)
    assert report.message == "没有 NVIDIA 驱动库（libcuda.so.1: cannot open）"
    # a template the catalogue does not know (a newer probe's): in English, from the template
    newer = {**said, "message": "a newer probe's words 1", "message_i18n": {"text": "a newer probe's words {x}",
                                                                           "args": {"x": 1}}}
    assert parse_probe_output("cuda", 0, json.dumps(newer).encode(), b"", 0.1).message == "a newer probe's words 1"
    # arguments that do not fit the template: the text as it came
    unfit = {**said, "message": "as it came", "message_i18n": {"text": "no NVIDIA driver library ({error})",
                                                                "args": {}}}
    assert parse_probe_output("cuda", 0, json.dumps(unfit).encode(), b"", 0.1).message == "as it came"
    bare = {"status": "broken", "message": "LogicError: clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR"}
    assert parse_probe_output("opencl", 0, json.dumps(bare).encode(), b"", 0.1).message == bare["message"]


def test_the_probe_runs_alone_with_the_standard_library() -> None:
    """It runs in a child interpreter, imported from nowhere: its templates travel with each message."""
    env = {"PATH": os.environ.get("PATH", ""), "TAOTOKEN_LIBCUDA": "/nonexistent/libcuda.so.1"}
    script = REPO / "taotoken_cli/core/devices/backends.py"
    proc = subprocess.run([sys.executable, "-S", "-I", str(script), "cuda-driver"], capture_output=True, text=True,
                          env=env, timeout=60)
    data = json.loads(proc.stdout)
    assert data["message_i18n"]["text"] == "no NVIDIA driver library ({error})"
    assert data["message"] == data["message_i18n"]["text"].format(**data["message_i18n"]["args"])
