"""Ctrl-C and SIGTERM during `taotoken bench`: the load stops, what is in flight is settled, the partial
report is printed (marked interrupted), --raw/--csv are flushed, and the exit status is 130 / 143. Also:
bench names each file it wrote. The gateway is the mock in its own process; bench runs as users run it."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
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
    # slower: every request takes 2 s, so c users answer together, 2 s apart, and a second signal lands while
    # a batch is in flight
    return module_mock_gateway(MockOptions(key=SENTINEL_KEY, model_timing={"slow": ModelTiming(150, 0, 2),
                                                                           "slower": ModelTiming(2000, 0, 2)}),
                               process=True)


@pytest.fixture
def server(mock):
    return mock.url


def start(server: str, home: Path, *args: str, model: str = "slow") -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO), TAOTOKEN_API_KEY=SENTINEL_KEY, HOME=str(home))
    return subprocess.Popen([sys.executable, "-m", "taotoken_cli", "bench", "--base-url", server, "-m", model,
                             "-z", "60s", "-c", "4", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=home)


def answered(mock, model: str) -> int:
    return sum(1 for record in mock.requests if record.model == model and record.endpoint == "chat")


def wait_for_answers(proc: subprocess.Popen, mock, model: str, count: int) -> None:
    """Until the mock has answered `count` more chat requests for `model` (at most 30 s, or until bench exits)."""
    before = answered(mock, model)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and answered(mock, model) < before + count and proc.poll() is None:
        time.sleep(0.02)


def interrupt_twice(proc: subprocess.Popen, sig: int) -> tuple[str, str]:
    """The signal twice, 0.3 s apart (the second abandons the requests in flight), then bench's output."""
    proc.send_signal(sig)
    time.sleep(0.3)
    proc.send_signal(sig)
    return proc.communicate(timeout=30)


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


def test_a_second_interrupt_abandons_the_requests_in_flight_and_keeps_what_finished(mock, server, home, tmp_path):
    """The first Ctrl-C waits for the requests in flight (here 2 s each); a second one does not: they are left
    out, and what finished before is still reported and written. (Before, the second one exited 130 in silence
    and left --raw empty.)"""
    raw = tmp_path / "requests.jsonl"
    before = answered(mock, "slower")
    proc = start(server, home, "--raw", str(raw), "--json", model="slower")
    wait_for_answers(proc, mock, "slower", 4)
    time.sleep(0.2)  # the batch's records reach the mock's log; the next batch is 2 s away
    finished = answered(mock, "slower") - before
    out, err = interrupt_twice(proc, signal.SIGINT)
    assert proc.returncode == 130, err
    data = json.loads(out)
    assert data["interrupted"] == "SIGINT" and data["in_flight"] == "abandoned"
    series = data["series"][0]
    # only what had finished: settling the batch in flight would have counted 4 more
    assert series["requests"] == series["ok"] == finished >= 4
    assert series["aborted"]["reason"] == "interrupted"
    lines = [json.loads(line) for line in raw.read_text().splitlines()]
    assert len(lines) == finished and all(line["ok"] for line in lines)
    assert f"wrote {raw}" in err and "Traceback" not in err and SENTINEL_KEY not in out + err


def test_the_second_interrupt_says_so_in_the_text_report(mock, server, home):
    proc = start(server, home, model="slower")
    wait_for_answers(proc, mock, "slower", 4)
    out, err = interrupt_twice(proc, signal.SIGTERM)
    assert proc.returncode == 143, err
    assert "interrupted twice (SIGTERM)" in out and "abandoned (not counted)" in out and "Traceback" not in err


def test_an_interrupted_sweep_step_neither_bounds_the_knee_nor_stops_the_sweep(mock, server, home):
    """Ctrl-C during the second step of a sweep: the step is shown, marked, and nothing is concluded from it (it
    was reported as "stopped by the error limits", the knee bounded by it)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), TAOTOKEN_API_KEY=SENTINEL_KEY, HOME=str(home))
    proc = subprocess.Popen([sys.executable, "-m", "taotoken_cli", "bench", "--base-url", server, "-m", "slow",
                             "-z", "2s", "--sweep", "c=1,2,4", "--json"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=home)
    # c=1 for 2 s at 150 ms a request: about 13 answers; a few more are from the second step
    wait_for_answers(proc, mock, "slow", 18)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    data = json.loads(out)
    model = data["sweep"]["models"][0]
    assert [(step["load"], step["interrupted"]) for step in model["steps"]] == [(1.0, False), (2.0, True)]
    assert model["interrupted"] and model["stop_reason"] is None and not model["stopped_early"]
    assert model["knee"] is None and model["bounded_by"] is None  # c=1 alone confirms no knee
    assert "Traceback" not in err


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (a real terminal)")
def test_sigterm_in_a_real_terminal_clears_the_live_line_and_restores_the_cursor(mock, server, home):
    """bench in tmux at 80 columns, its live line drawn, then `kill PID` (SIGTERM, as a process manager stops
    it): the live line is erased, the cursor it hid is shown again, the partial report follows, exit 143."""
    from tests.tmux import Tmux

    env = {"HOME": str(home), "TERM": "xterm-256color", "PYTHONPATH": str(REPO), "TAOTOKEN_API_KEY": SENTINEL_KEY}
    drawn = home / "drawn.bin"
    bench = shlex.join([sys.executable, "-m", "taotoken_cli", "bench", "--base-url", server, "-m", "slow", "-n", "400",
                        "-c", "2"])
    # bench as a child of a shell that says its pid and its exit status (tmux's own pane_dead_status is sometimes
    # left empty when the pane is polled while it dies); it starts once the recording has begun
    script = f"while [ ! -e go ]; do sleep 0.05; done; {bench} & echo PID=$!; wait $!; echo EXIT=$?; sleep 60"
    with Tmux(["bash", "--norc", "--noprofile", "-c", script], width=80, height=60, cwd=home, env=env) as term:
        term.record(drawn)
        before = answered(mock, "slow")
        (home / "go").touch()
        screen = term.wait_for(lambda text: "━" in text and "PID=" in text, timeout=60)
        # and the load under way (on a loaded machine the line is up while the workers still start): a report
        # with the model's figures
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and answered(mock, "slow") < before + 2:
            time.sleep(0.02)
        os.kill(int(re.search(r"PID=(\d+)", screen).group(1)), signal.SIGTERM)
        screen = term.wait_for(lambda text: re.search(r"EXIT=\d", text), timeout=60, history=True)
    status = int(re.search(r"EXIT=(\d+)", screen).group(1))
    assert status == 143, screen
    assert "interrupted (SIGTERM)" in screen and "model slow" in screen, screen
    assert "━" not in screen and "Traceback" not in screen, screen
    data = drawn.read_bytes()
    hidden = data.rfind(b"\x1b[?25l")
    assert hidden >= 0 and data.find(b"\x1b[?25h", hidden) > hidden


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (a real terminal)")
def test_ctrl_c_on_a_dumb_terminal_leaves_the_echoed_caret_c_on_its_own_line(mock, server, home):
    """TERM=dumb: bench in tmux, Ctrl-C pressed (the terminal echoes "^C" where the cursor is, at the start of a
    line): the plain progress and the partial report start on the next line, not after the "^C"."""
    from tests.tmux import Tmux

    env = {"HOME": str(home), "PYTHONPATH": str(REPO), "TAOTOKEN_API_KEY": SENTINEL_KEY}
    bench = shlex.join(["env", "TERM=dumb", sys.executable, "-m", "taotoken_cli", "bench", "--base-url", server,
                        "-m", "slow", "-n", "400", "-c", "2"])
    # in the foreground (Ctrl-C reaches it), once the test is ready to count the mock's answers; TERM set on the
    # command itself (tmux sets the pane's TERM)
    script = f"while [ ! -e go ]; do sleep 0.05; done; {bench}; echo EXIT=$?; sleep 60"
    with Tmux(["bash", "--norc", "--noprofile", "-c", script], width=80, height=60, cwd=home, env=env) as term:
        before = answered(mock, "slow")
        (home / "go").touch()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and answered(mock, "slow") < before + 6:
            time.sleep(0.02)
        term.send("C-c")
        screen = term.wait_for(lambda text: re.search(r"EXIT=\d", text), timeout=60, history=True)
    assert "EXIT=130" in screen and "interrupted (SIGINT)" in screen, screen
    lines = screen.splitlines()
    echoed = [i for i, line in enumerate(lines) if "^C" in line]
    assert echoed and all(lines[i].strip() == "^C" for i in echoed), screen  # nothing written after the "^C"
    assert lines[echoed[0] + 1].startswith("slow: "), screen  # the progress line that follows starts the next one


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_second_interrupt_in_open_loop_leaves_no_pending_request_behind(mock, server, home, tmp_path, workers):
    """Open loop (--rate), in one process and in two: the requests waiting for their answer are cancelled, not left
    pending when the event loop closes (asyncio would complain on stderr), and what finished is written."""
    raw = tmp_path / "requests.jsonl"
    proc = start(server, home, "--raw", str(raw), "--json", "--rate", "4", "--workers", workers, model="slower")
    wait_for_answers(proc, mock, "slower", 2)
    out, err = interrupt_twice(proc, signal.SIGINT)
    assert proc.returncode == 130, err
    data = json.loads(out)
    assert data["in_flight"] == "abandoned" and data["series"][0]["requests"] >= 2
    assert len(raw.read_text().splitlines()) == data["series"][0]["requests"]
    assert err.splitlines() == [f"wrote {raw} (--raw)"], err  # nothing else: no traceback, no asyncio complaint


@pytest.mark.parametrize("as_json", [False, True])
def test_interrupted_before_the_first_request_says_nothing_was_measured(run, mock, server, home, monkeypatch,
                                                                         as_json):
    """A signal while the live line is up but before any series started (on a loaded machine the workers take a
    moment): the report says nothing was measured, and its load line the workers planned (it said "0 workers")."""
    from taotoken_cli.cmd.bench import campaign

    installed = campaign.stop_on_signals

    def signalled_at_once():
        restore = installed()
        os.kill(os.getpid(), signal.SIGTERM)  # the real handler takes it: the run stops before its first request
        return restore

    monkeypatch.setattr(campaign, "stop_on_signals", signalled_at_once)
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    before = answered(mock, "slow")
    result = run("bench", "--base-url", server, "-m", "slow", "-n", "40", "-c", "2", "--workers", "2",
                 *(["--json"] if as_json else [])).assert_clean()
    assert result.returncode == 143, result.output
    assert answered(mock, "slow") == before  # no request went out
    if as_json:
        data = json.loads(result.stdout)
        assert (data["interrupted"], data["series"], data["load"]["workers"]) == ("SIGTERM", [], 2)
    else:
        assert "interrupted (SIGTERM) before the first request: nothing was measured" in " ".join(result.stdout.split())
        assert "2 workers" in result.stdout and "partial" not in result.stdout
