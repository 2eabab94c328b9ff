"""`taotoken route`: selection, export, the routing table, devices output, and --verify.

Every command runs as the real CLI in a subprocess. --verify talks to a real HTTP server on
127.0.0.1 (pytest-httpserver) that answers like one-api/new-api: the model asked for, a dated
snapshot of it, another model, or new-api's 503 "no available channel". Tests about the automatic
choice run as on a machine without GPUs (`cpu_only_env`), with the real PoCL CPU device where pyopencl
and PoCL are installed (skipped, saying so, where they are not).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from itertools import count

import pytest
from werkzeug import Request, Response

from taotoken_cli.core.base.errors import TaotokenError
from tests.conftest import SENTINEL_KEY, flat, hidden_package, needs_posix, python_path
from tests.rawserver import closed_port

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10 only
    import tomli as tomllib

NO_CHANNEL = {"error": {"message": "No available channel for model gpu-missing under group default (distributor)",
                        "type": "new_api_error", "code": "model_not_found"}}
UNKNOWN_MODEL = {"error": {"message": "The model `gpu-typo` does not exist", "type": "invalid_request_error",
                           "code": "model_not_found"}}
ANSWER_AS = {  # model asked -> model the fake gateway reports
    "exact-model": "exact-model",
    "gpt-4o": "gpt-4o-2024-08-06",
    "claude-x": "claude-x-20250101",
    "cpu-llama3-8b-int8": "gpt-3.5-turbo",
}


@pytest.fixture
def gateway(httpserver):
    """A one-api/new-api-like gateway; 'mixed-model' alternates between two channels."""
    turns = count()

    def handler(request: Request) -> Response:
        headers = {"X-Oneapi-Request-Id": f"2025010112000000{next(turns):04d}", "X-New-Api-Version": "v0.6.11"}
        if request.headers.get("Authorization") != f"Bearer {SENTINEL_KEY}":
            return Response(json.dumps({"error": {"message": "无效的令牌", "type": "new_api_error"}}), 401,
                            headers, content_type="application/json")
        asked = json.loads(request.get_data())["model"]
        if asked == "gpu-missing":
            return Response(json.dumps(NO_CHANNEL), 503, headers, content_type="application/json")
        if asked == "gpu-typo":
            return Response(json.dumps(UNKNOWN_MODEL), 404, headers, content_type="application/json")
        if asked == "mixed-model":
            answered = "mixed-model" if int(headers["X-Oneapi-Request-Id"][-4:]) % 2 == 0 else "cheap-model"
        else:
            answered = ANSWER_AS.get(asked, asked)
        body = {"id": "chatcmpl-abc123", "object": "chat.completion", "created": 1735689600, "model": answered,
                "system_fingerprint": "fp_test", "choices": [{"index": 0, "finish_reason": "length",
                                                              "message": {"role": "assistant", "content": "OK"}}],
                "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}}
        return Response(json.dumps(body), 200, {**headers, "openai-processing-ms": "42"},
                        content_type="application/json")

    httpserver.expect_request("/api/v1/chat/completions", method="POST").respond_with_handler(handler)
    return httpserver


@pytest.fixture
def env(gateway):
    return {"TAOTOKEN_BASE_URL": gateway.url_for("/api"), "TAOTOKEN_API_KEY": SENTINEL_KEY}


def set_routes(cli, *pairs: str):
    result = cli("route", "set", *pairs).assert_clean()
    assert result.returncode == 0, result.output
    return result


# -- the routing table -----------------------------------------------------------------------

def test_set_list_and_remove_routes(cli, home):
    result = set_routes(cli, "CUDA=gpu-a100-qwen25-72b-fp16", "cpu=' cpu-llama3-8b-int8 '", "code=qwen-coder")
    assert "set route cuda = gpu-a100-qwen25-72b-fp16" in result.stdout
    assert "removed surrounding whitespace/quotes" in result.stderr
    path = home / ".config" / "taotoken" / "config.toml"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    data = tomllib.loads(path.read_text())
    assert data["profiles"]["default"]["routes"] == {"cuda": "gpu-a100-qwen25-72b-fp16", "cpu": "cpu-llama3-8b-int8",
                                                     "code": "qwen-coder"}
    listed = json.loads(cli("route", "list", "--json").stdout)
    assert [(r["key"], r["kind"]) for r in listed["routes"]] == [("cuda", "device"), ("cpu", "device"),
                                                                 ("code", "task")]
    result = cli("route", "set", "code=", "embed=").assert_clean()
    assert "removed route code" in result.stdout and "route embed was not set" in result.stdout
    assert "code" not in tomllib.loads(path.read_text())["profiles"]["default"]["routes"]


def test_set_keeps_comments_and_rejects_bad_input_without_writing(cli, home):
    path = home / ".config" / "taotoken" / "config.toml"
    path.parent.mkdir(parents=True)
    original = '# my notes\n[profiles.default]\nmodel = "gpt-4o-mini"  # keep me\n'
    path.write_text(original)
    for bad, message in (("cpu", "is not KIND=MODEL"), ("c pu=x", "is not allowed"), ("cpu=a b", "whitespace")):
        result = cli("route", "set", bad).assert_clean()
        assert result.returncode == 2 and message in result.stderr and "fix:" in result.stderr
        assert path.read_text() == original
    set_routes(cli, "cpu=cpu-m")
    text = path.read_text()
    assert "# my notes" in text and "# keep me" in text and 'cpu = "cpu-m"' in text


def test_set_keeps_crlf_line_endings_and_a_failed_write_is_exit_one(home, monkeypatch):
    from taotoken_cli.cmd.route.run import set_routes as run_set
    from taotoken_cli.core.files import applyflow
    from taotoken_cli.core.term.iostreams import IOStreams

    path = home / ".config" / "taotoken" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'default_profile = "default"\r\n\r\n[profiles.default]\r\nmodel = "m"\r\n')
    io = IOStreams.memory(env=dict(os.environ), cwd=home)
    assert run_set(io, ["cpu=cpu-m"], None, check_models=False) == 0
    data = path.read_bytes()
    assert b'cpu = "cpu-m"\r\n' in data and data.count(b"\n") == data.count(b"\r\n")  # was rewritten with LF

    def full_disk(*_args, **_kwargs):  # the outermost boundary: the disk refuses the write
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(applyflow, "atomic_write", full_disk)
    with pytest.raises(TaotokenError) as failed:
        run_set(io, ["cpu=other"], None, check_models=False)
    assert failed.value.exit_code == 1 and "No space left on device" in failed.value.message  # was exit 3
    assert failed.value.fix and str(path.parent) in failed.value.fix and b"other" not in path.read_bytes()


def test_set_warns_about_a_model_the_gateway_does_not_list(cli, httpserver):
    httpserver.expect_request("/api/v1/models").respond_with_json(
        {"object": "list", "data": [{"id": "cpu-llama3-8b-int8"}, {"id": "gpu-qwen"}]})
    env = {"TAOTOKEN_BASE_URL": httpserver.url_for("/api"), "TAOTOKEN_API_KEY": SENTINEL_KEY}
    result = cli("route", "set", "cpu=cpu-lama3-8b-int8", "gpu=gpu-qwen", env=env).assert_clean()
    assert result.returncode == 0 and "set route cpu = cpu-lama3-8b-int8" in result.stdout  # saved all the same
    assert "warning: route cpu: 'cpu-lama3-8b-int8' is not listed by the gateway (close: cpu-llama3-8b-int8)" \
        in result.stderr and "fix: taotoken route set cpu=cpu-llama3-8b-int8" in result.stderr
    assert "route gpu" not in result.stderr and len(httpserver.log) == 1
    skipped = cli("route", "set", "cpu=other-typo", "--no-check", env=env).assert_clean()
    assert skipped.returncode == 0 and skipped.stderr == "" and len(httpserver.log) == 1


def test_set_without_a_list_is_a_note_never_a_failure(cli, httpserver):
    no_key = cli("route", "set", "cpu=m1").assert_clean()
    assert no_key.returncode == 0 and "note: the model(s) were not checked" in no_key.stderr
    assert "no usable base URL and key" in no_key.stderr
    httpserver.expect_request("/api/v1/models").respond_with_json({"error": {"message": "无效的令牌"}}, status=401)
    env = {"TAOTOKEN_BASE_URL": httpserver.url_for("/api"), "TAOTOKEN_API_KEY": SENTINEL_KEY}
    rejected = cli("route", "set", "cpu=m2", env=env).assert_clean()
    assert rejected.returncode == 0 and "[auth.invalid_key]" in rejected.stderr and "--no-check" in rejected.stderr
    offline = cli("route", "set", "cpu=m3", env={**env, "TAOTOKEN_BASE_URL": f"http://127.0.0.1:{closed_port()}/api"})
    assert offline.assert_clean().returncode == 0 and "note: the model(s) were not checked" in offline.stderr


# -- selection and export --------------------------------------------------------------------

def test_auto_selects_the_real_cpu_device_and_explains_why(cli, cpu_only_env, pocl_cpu):
    set_routes(cli, "cuda=gpu-a100-qwen25-72b-fp16", "gpu=gpu-generic", "cpu=cpu-llama3-8b-int8")
    result = cli("route", env=cpu_only_env).assert_clean()
    assert result.returncode == 0, result.output
    assert "model   cpu-llama3-8b-int8" in result.stdout
    assert "no GPU found" in result.stdout and "OpenCL" in result.stdout
    data = json.loads(cli("route", "--json", env=cpu_only_env).stdout)
    assert data["route"] == "cpu" and data["source"] == "auto"
    assert data["device"]["detail"]["compute_units"] >= 1


def test_task_device_and_profile_fallback(cli, cpu_only_env):
    set_routes(cli, "code=qwen-coder", "intel=intel-arc-model")
    assert json.loads(cli("route", "--task", "CODE", "--json").stdout)["model"] == "qwen-coder"
    assert json.loads(cli("route", "-d", "intel", "--json").stdout)["route"] == "intel"
    # No route matches a CPU-only machine: the profile's model, with the reason.
    result = cli("route", "--json", env={**cpu_only_env, "TAOTOKEN_MODEL": "fallback-model"})
    data = json.loads(result.stdout)
    assert (data["model"], data["source"]) == ("fallback-model", "profile")
    assert "no route matches" in data["reason"]
    missing = cli("route", "--task", "embed").assert_clean()
    assert missing.returncode == 3 and "no route 'embed'" in missing.stderr
    assert "taotoken route set embed=MODEL" in missing.stderr


def test_nothing_to_choose_is_a_config_error(cli):
    result = cli("route").assert_clean()
    assert result.returncode == 3
    assert "routing table is empty" in result.stderr and "fix:" in result.stderr


def test_export_is_safe_for_eval_in_a_real_bash(cli, home):
    needs_posix("bash's eval")
    tricky = "nv/qwen:7b;$(id)&'q'`x`|z"
    set_routes(cli, f"code={tricky}")
    env = dict(os.environ)
    env["PYTHONPATH"] = python_path()
    script = (f'eval "$({sys.executable} -m taotoken_cli route --task code --export --openai)"; '
              'printf "%s|%s" "$TAOTOKEN_MODEL" "$OPENAI_MODEL"')
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, cwd=home, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{tricky}|{tricky}"
    plain = cli("route", "--task", "code", "--export")
    assert plain.stdout.splitlines() == ["export TAOTOKEN_MODEL='nv/qwen:7b;$(id)&'\"'\"'q'\"'\"'`x`|z'"]


def test_conflicting_options_are_usage_errors(run):
    for args in (("--device", "cpu", "--task", "x"), ("--openai",), ("--export", "--json"), ("--all",)):
        result = run("route", *args).assert_clean()  # in-process: refused before anything runs
        assert result.returncode == 2, (args, result.output)
        assert "fix:" in result.stderr


# -- devices -----------------------------------------------------------------------------------

def test_devices_shows_the_pocl_cpu_and_no_nvidia_driver(cli, cpu_only_env, pocl_cpu):
    result = cli("route", "devices", env={**cpu_only_env, "SYCL_DEVICE_FILTER": "opencl:cpu"}).assert_clean()
    assert result.returncode == 0
    assert re.search(r"^OpenCL +CPU +pthread", result.stdout, re.M), result.stdout  # the device row
    # flat: the CUDA row names the (temporary, per xdist worker longer) library path, which wraps at another word
    assert re.search(r"^CUDA +no driver/device: no NVIDIA driver library\s+\(", result.stdout, re.M), result.stdout
    shown = flat(result.stdout)
    assert "; pycuda is not installed either" in shown and "install the NVIDIA driver" in shown
    assert "SYCL_DEVICE_FILTER" in result.stdout and "ONEAPI_DEVICE_SELECTOR='opencl:cpu'" in result.stdout
    data = json.loads(cli("route", "devices", "--json", env=cpu_only_env).stdout)
    assert data["backends"]["opencl"]["status"] == "present" and data["backends"]["opencl"]["source"] == "pyopencl"
    cuda = data["backends"]["cuda"]
    assert (cuda["status"], cuda["source"], cuda["pycuda"]) == ("no_driver", None, "not_installed")


def test_devices_without_pyopencl_says_not_installed(cli, tmp_path, cpu_only_env):
    fake = hidden_package(tmp_path / "fake", "pyopencl")
    result = cli("route", "devices", env={**cpu_only_env, "PYTHONPATH": python_path(fake, cpu_only_env["PYTHONPATH"])}
                 ).assert_clean()
    assert result.returncode == 0
    assert "OpenCL  not installed" in result.stdout
    assert "pip install 'taotoken[opencl]'" in result.stdout
    assert "no compute devices found" in result.stdout


# -- verify ------------------------------------------------------------------------------------

def test_verify_all_routes_equal_dated_different_and_no_channel(cli, env):
    set_routes(cli, "code=exact-model", "gpu=gpt-4o", "nvidia=claude-x", "cpu=cpu-llama3-8b-int8",
               "cuda=gpu-missing")
    result = cli("route", "--verify", "--all", "--samples", "2", "--json", env=env).assert_clean()
    data = json.loads(result.stdout)
    verdicts = {r["route"]: r["verdict"] for r in data["routes"]}
    assert verdicts == {"code": "equal", "gpu": "variant", "nvidia": "variant", "cpu": "different",
                        "cuda": "failed"}
    by_route = {r["route"]: r for r in data["routes"]}
    assert by_route["gpu"]["distribution"] == {"gpt-4o-2024-08-06": 2}
    assert by_route["cpu"]["distribution"] == {"gpt-3.5-turbo": 2}
    failed = by_route["cuda"]["samples"][0]
    assert failed["diagnosis"]["code"] == "model.no_channel" and failed["status"] == 503
    assert by_route["code"]["samples"][0]["headers"]["x-new-api-version"] == "v0.6.11"
    # The no-channel failure decides the exit class (NOT_FOUND), not the mismatch.
    assert result.returncode == 5 == data["exit_code"]


def test_verify_text_shows_suffix_match_headers_and_exits_zero(cli, env, cpu_only_env):
    set_routes(cli, "gpu=gpt-4o", "cpu=claude-x")
    result = cli("route", "--verify", "--samples", "2", env={**env, **cpu_only_env}).assert_clean()  # auto: cpu
    assert result.returncode == 0, result.output
    assert "cpu -> claude-x: equal up to a date/version suffix" in result.stdout
    assert "x-oneapi-request-id=" in result.stdout and "openai-processing-ms=42" in result.stdout
    assert "distribution over 2 sample(s): claude-x-20250101 x2" in result.stdout
    assert "gpt-4o" not in result.stdout  # only the chosen route was asked


def test_verify_mismatch_exits_one_and_sampling_shows_both_channels(cli, env):
    set_routes(cli, "code=mixed-model")
    result = cli("route", "--verify", "--task", "code", "--samples", "4", env=env).assert_clean()
    assert result.returncode == 1
    assert "different (remapped or ignored)" in result.stdout
    assert "mixed-model x2" in result.stdout and "cheap-model x2" in result.stdout


def test_verify_no_channel_differs_from_a_bad_key(cli, env):
    set_routes(cli, "cuda=gpu-missing")
    no_channel = cli("route", "--verify", "-d", "cuda", "--samples", "1", env=env).assert_clean()
    assert no_channel.returncode == 5
    assert "model.no_channel" in no_channel.stdout and "No available channel" in no_channel.stdout
    bad_key = cli("route", "--verify", "-d", "cuda", "--samples", "1",
                  env={**env, "TAOTOKEN_API_KEY": "sk-wrongkey0123456789abcdefghijkl"}).assert_clean()
    assert bad_key.returncode == 4
    assert "auth.invalid_key" in bad_key.stdout and "model.no_channel" not in bad_key.stdout


def test_verify_fixes_for_a_route_name_route_set(cli, env):
    set_routes(cli, "cuda=gpu-typo")
    # The profile's model comes from the environment: its fix (an export) is not the route's.
    result = cli("route", "--verify", "-d", "cuda", "--samples", "1", env={**env, "TAOTOKEN_MODEL": "m"}).assert_clean()
    assert result.returncode == 5 and "model.not_found" in result.stdout
    assert "fix: set a listed ID: taotoken route set cuda=<id>" in result.stdout
    assert "config set model" not in result.stdout and "TAOTOKEN_MODEL" not in result.stdout


def test_verify_needs_a_key(cli, gateway):
    set_routes(cli, "cpu=exact-model")
    result = cli("route", "--verify", env={"TAOTOKEN_BASE_URL": gateway.url_for("/api")}).assert_clean()
    assert result.returncode == 3 and "no API key" in result.stderr
