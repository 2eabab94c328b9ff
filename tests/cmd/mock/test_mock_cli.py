"""`taotoken mock` as users run it: a real subprocess, real HTTP, Ctrl-C (SIGINT) to stop."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import SENTINEL_KEY, python_path

BEARER = {"Authorization": f"Bearer {SENTINEL_KEY}"}
# Ctrl-C and SIGTERM reach the mock as signals on POSIX; on Windows a console sends CTRL_C_EVENT, which a child on
# pipes with no console of its own cannot be sent (Popen.send_signal refuses SIGINT there)
SIGNALS = pytest.mark.skipif(sys.platform == "win32", reason="stopping by SIGINT/SIGTERM is POSIX")
# MockProcess reads the mock's request log from a pipe while it runs and its summary at Ctrl-C: on Windows it is
# terminated (no summary), and under Wine the log did not arrive while it ran (not seen on a real Windows)
LOG_PIPE = pytest.mark.skipif(sys.platform == "win32", reason="MockProcess's live log and summary need POSIX")


def start_mock(home: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    full_env = dict(os.environ, PYTHONPATH=python_path(), TAOTOKEN_API_KEY=SENTINEL_KEY, **(env or {}))
    proc = subprocess.Popen([sys.executable, "-m", "taotoken_cli", "mock", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env, cwd=home)
    first = proc.stdout.readline()  # printed and flushed once listening
    if not first.startswith("{"):  # read the whole banner: communicate() skips what readline buffered
        while "Ctrl-C to stop" not in first and proc.poll() is None:
            first += proc.stdout.readline()
    return proc, first


def stop(proc: subprocess.Popen, sig: int = signal.SIGINT) -> tuple[str, str]:
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=10)
    return out, err


@SIGNALS
def test_cli_prints_the_port_logs_requests_and_stops_cleanly_on_ctrl_c(home):
    proc, first = start_mock(home)
    try:
        match = re.match(r"taotoken mock: listening on http://127\.0\.0\.1:(\d+) \(port (\d+)\)", first)
        assert match and match.group(1) == match.group(2), first
        root = f"http://127.0.0.1:{match.group(1)}/api"
        with httpx.Client(timeout=5) as client:
            assert client.get(root + "/v1/models", headers=BEARER).status_code == 200
            assert client.post(root + "/v1/v1/chat/completions", headers=BEARER,
                               json={"model": "m"}).status_code == 404
            assert client.post(root + "/v1/chat/completions", headers={"Authorization": "Bearer sk-wrong0123456789"},
                               json={"model": "m", "stream": True}).status_code == 401
    finally:
        out, err = stop(proc)
    assert proc.returncode == 0, (out, err)
    output = first + out + err
    assert "Traceback" not in output and SENTINEL_KEY not in output
    assert f"API root (taotoken --base-url, Claude Code ANTHROPIC_BASE_URL): {root}" in output
    assert "key: sk-SE…WXYZ checked (from env TAOTOKEN_API_KEY)" in output
    assert re.search(r"GET /api/v1/models bearer sk-SE…WXYZ model=- stream=no -> 200 \d+ms", output)
    assert re.search(r"POST /api/v1/v1/chat/completions bearer sk-SE…WXYZ model=m stream=no -> 404 \d+ms  "
                     r"!! doubled-v1", output)
    assert "hint: doubled-v1: the path has /v1 twice" in output
    assert re.search(r"POST /api/v1/chat/completions bearer sk-wr…6789 model=m stream=yes -> 401 \d+ms  "
                     r"!! wrong-key", output)
    assert "taotoken mock: stopped after 3 request(s)" in output and "(status 200: 1, 401: 1, 404: 1)" in output
    assert "flagged: doubled-v1 x1, wrong-key x1" in output


@SIGNALS
def test_cli_json_log_and_sigterm(home):
    proc, first = start_mock(home, "--json", "--any-key", "--latency-ms", "5", "--alias", "a=a-1")
    try:
        start = json.loads(first)
        assert start["options"]["aliases"] == {"a": "a-1"} and start["options"]["key"] is None
        httpx.post(start["root"] + "/v1/chat/completions", headers=BEARER, json={"model": "a"}, timeout=5)
    finally:
        out, err = stop(proc, signal.SIGTERM)
    assert proc.returncode == 0 and "Traceback" not in err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["model"] == "a" and lines[0]["response_model"] == "a-1" and lines[0]["status"] == 200
    assert lines[0]["latency_ms"] >= 5
    assert lines[-1]["summary"]["requests"] == 1
    assert SENTINEL_KEY not in out


@SIGNALS
def test_cli_quiet_and_options_shown_in_banner(home):
    proc, first = start_mock(home, "-q", "--fail", "429", "--retry-after", "3", "--fail-rate", "0.5",
                             "--models", "a,b", "--no-channel", "b")
    try:
        port = re.search(r"port (\d+)", first).group(1)
        httpx.get(f"http://127.0.0.1:{port}/api/v1/models", headers=BEARER, timeout=5)
    finally:
        out, err = stop(proc)
    assert proc.returncode == 0
    assert "models: a, b\n" in first
    assert "injecting --fail 429 on 0.5 of requests; Retry-After 3" in first
    assert "GET /api" not in out  # --quiet: no per-request lines
    assert "stopped after 1 request(s)" in out


@pytest.mark.parametrize(("args", "env", "message"), [
    (["--host", "0.0.0.0"], {"TAOTOKEN_API_KEY": SENTINEL_KEY}, "refusing to listen on non-loopback host"),
    ([], {}, "the mock has no key to check"),
    (["--fault", "explode", "--any-key"], {}, "unknown fault 'explode'"),
    (["--fail", "teapot", "--any-key"], {}, "not an HTTP status or a named failure"),
    (["--alias", "nonsense", "--any-key"], {}, "expected REQUESTED=ANSWERED"),
    (["--key", f"Bearer {SENTINEL_KEY}"], {}, "starts with 'Bearer '"),
])
def test_cli_refuses_bad_options_with_a_fix(cli, args, env, message):
    result = cli("mock", *args, env=env, timeout=20)
    assert result.returncode == 2, result.output
    assert message in result.stderr and "fix:" in result.stderr
    result.assert_clean()


@pytest.mark.parametrize(("shell", "command"), [
    ("/bin/bash", "export TAOTOKEN_API_KEY=sk-…"), ("/usr/bin/fish", "set -gx TAOTOKEN_API_KEY 'sk-…'")])
def test_the_mock_without_a_key_says_how_to_set_one_in_the_user_s_shell(cli, shell, command):
    result = cli("mock", env={"SHELL": shell}, timeout=20)
    assert result.returncode == 2 and "the mock has no key to check" in result.stderr
    assert command in " ".join(result.stderr.split()), result.stderr


def test_cli_port_in_use(cli):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = cli("mock", "--any-key", "--port", str(port), timeout=20)
    assert result.returncode == 2 and f"port {port} on 127.0.0.1 is already in use" in result.stderr
    result.assert_clean()


@LOG_PIPE
def test_mock_process_has_the_gateway_interface_and_precise_latency(home):
    import statistics
    import time

    from taotoken_cli.cmd.mock import MockOptions, MockProcess
    from taotoken_cli.core.net.gateway import Gateway

    options = MockOptions(key=SENTINEL_KEY, latency_ms=50, aliases={"a": "a-1"}, no_channel=("gone",),
                          tokens=4, fail=503, fail_rate=0.5, retry_after=1.5)
    from tests.timing import Oversleep

    with MockProcess(options) as mock, Gateway(mock.url, SENTINEL_KEY) as gw:
        with Oversleep() as late:  # the reference, measured beside the requests: how late a process wakes now
            statuses = [gw.chat("a").status for _ in range(4)]
            gone = gw.chat("gone")
        deadline = time.monotonic() + 3
        while len(mock.requests) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        records = mock.requests
    assert statuses == [200, 503, 200, 503] and gone.status == 503
    assert [r.response_model for r in records[:4]] == ["a-1"] * 4
    latencies = [r.latency_ms for r in records]
    # never early; late by about what any process of this machine is late waking up now (3 ms on an idle one): the
    # median within two of the latest wake-ups measured beside it (one unlucky wake-up of the mock's is one request)
    assert min(latencies) >= 50, latencies
    assert statistics.median(latencies) < 53 + 2 * late.worst_ms, (latencies, late.ms, late.worst_ms)
    assert mock.summary().requests == 5 and "Traceback" not in mock.stderr


@LOG_PIPE
def test_mock_process_without_log_still_summarises(home):
    from taotoken_cli.cmd.mock import MockOptions, MockProcess

    with MockProcess(MockOptions(any_key=True), log=False) as mock:
        assert httpx.get(mock.openai_base + "/models", headers=BEARER, timeout=5).status_code == 200
    assert mock.requests == [] and mock.summary().statuses == {"200": 1}


def test_on_an_80_column_terminal_request_lines_wrap_under_the_time_and_ctrl_c_leaves_no_mark(home, tmp_path):
    """In tmux at 80 columns: a long request line wraps under its time stamp (the terminal splits no word), and
    the summary after Ctrl-C starts at column 0, over the terminal's "^C" echo. Piped, the lines stay one each
    (test above)."""
    from taotoken_cli.core.term.layout import cell_width
    from tests.rawserver import closed_port
    from tests.tmux import Tmux, require_tmux

    require_tmux()
    port = closed_port()
    env = {"HOME": str(home), "PYTHONPATH": python_path(), "TERM": "xterm-256color"}
    with Tmux([sys.executable, "-m", "taotoken_cli", "mock", "--port", str(port), "--key", SENTINEL_KEY],
              width=80, height=40, env=env) as term:
        term.wait_for(lambda screen: "Ctrl-C to stop" in screen)
        with httpx.Client(timeout=5, trust_env=False) as client:
            client.post(f"http://127.0.0.1:{port}/api/v1/chat/completions",
                        headers={"Authorization": f"Bearer {SENTINEL_KEY}"},
                        json={"model": "gpu-a100-qwen25-72b-fp16-with-a-rather-long-deployment-name",
                              "messages": [{"role": "user", "content": "hi"}]})
        term.wait_for(lambda screen: "-> 200" in screen)
        term.send("C-c")
        screen = term.wait_for(lambda text: "taotoken mock: stopped" in text)
    lines = screen.splitlines()
    assert all(cell_width(line.rstrip()) <= 80 for line in lines), screen
    request = next(i for i, line in enumerate(lines) if "POST /api/v1/chat/completions" in line)
    assert re.match(r"\d\d:\d\d:\d\d POST ", lines[request]) and lines[request + 1].startswith(" " * 9 + "model="), \
        screen
    assert any(line.startswith("taotoken mock: stopped after 1 request(s)") for line in lines), screen
