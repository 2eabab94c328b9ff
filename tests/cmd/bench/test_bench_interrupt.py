"""Ctrl-C and SIGTERM during `taotoken bench`: the load stops, what is in flight is settled, the partial
report is printed (marked interrupted), --raw/--csv are flushed, and the exit status is 130 / 143. Also:
bench names each file it wrote. The gateway is the mock in its own process; bench runs as users run it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taotoken_cli.cmd.mock import MockOptions, ModelTiming
from taotoken_cli.core.platform import system
from tests.conftest import REPO, SENTINEL_KEY

# Windows cannot send SIGINT or SIGTERM to one child process (Ctrl-C reaches the whole console)
pytestmark = pytest.mark.skipif(system.current().windows, reason="POSIX signals sent to one process")


@pytest.fixture(scope="module")
def mock(module_mock_gateway):
    return module_mock_gateway(MockOptions(key=SENTINEL_KEY, model_timing={"slow": ModelTiming(150, 0, 2)}),
                               process=True)


@pytest.fixture
def server(mock):
    return mock.url


def start(server: str, home: Path, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO), TAOTOKEN_API_KEY=SENTINEL_KEY, HOME=str(home))
    return subprocess.Popen([sys.executable, "-m", "taotoken_cli", "bench", "--base-url", server, "-m", "slow",
                             "-z", "60s", "-c", "4", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=home)


def interrupt_after_requests(proc: subprocess.Popen, mock, sig: int) -> tuple[str, str]:
    """Send `sig` once the run is measuring (the mock has answered 8 more requests), then collect its output."""
    seen = len(mock.requests)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(mock.requests) < seen + 8 and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(sig)
    return proc.communicate(timeout=30)


@pytest.mark.parametrize("sig, status, name", [(signal.SIGINT, 130, "SIGINT"), (signal.SIGTERM, 143, "SIGTERM")])
def test_an_interrupted_run_keeps_its_results(mock, server, home, tmp_path, sig, status, name):
    raw, csv = tmp_path / "requests.jsonl", tmp_path / "requests.csv"
    started = time.monotonic()
    proc = start(server, home, "--raw", str(raw), "--csv", str(csv), "--json")
    out, err = interrupt_after_requests(proc, mock, sig)
    took = time.monotonic() - started
    assert proc.returncode == status, err
    assert took < 30  # stopped long before -z 60s: the load stopped, only what was in flight finished
    data = json.loads(out)
    assert data["interrupted"] == name
    series = data["series"][0]
    assert series["ok"] > 0 and series["failed"] == 0  # the requests in flight were settled, not cut
    assert series["aborted"]["reason"] == "interrupted"
    lines = [json.loads(line) for line in raw.read_text().splitlines()]
    assert len(lines) == series["requests"] and all(line["ok"] for line in lines)
    assert len(csv.read_text().splitlines()) == series["requests"] + 1  # the header, a row per request
    summary = tmp_path / "requests.summary.csv"
    for path in (raw, csv, summary):
        assert f"wrote {path}" in err
    assert "Traceback" not in err and SENTINEL_KEY not in out + err


def test_the_text_report_says_it_is_partial(mock, server, home):
    proc = start(server, home)
    out, err = interrupt_after_requests(proc, mock, signal.SIGINT)
    assert proc.returncode == 130, err
    assert "interrupted (SIGINT): the load was stopped" in out and "figures below are partial" in out
    assert "model slow" in out and "stopped" in out and "Traceback" not in err
