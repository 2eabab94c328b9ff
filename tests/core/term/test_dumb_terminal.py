"""Colour and cursor movement by the conventions, in a real terminal (tmux, every byte the programs wrote
recorded): NO_COLOR > CLICOLOR_FORCE/FORCE_COLOR > CLICOLOR=0 > a terminal; TERM=dumb: no cursor movement at all
(doctor's spinner, bench's live line), a plain progress line every few seconds at most."""

from __future__ import annotations

import io
import re
import sys
import time
from pathlib import Path

import pytest

from taotoken_cli.cmd.bench.progress import PlainProgress
from taotoken_cli.core.term.output import color_enabled
from tests.conftest import SENTINEL_KEY, python_path
from tests.tmux import Tmux, require_tmux

MOVES = re.compile(r"\x1b\[[0-9;?]*[A-HJKSTfhl]|\r(?!\n)")  # cursor/erase/hide sequences; a CR not before LF
COLOUR = re.compile(r"\x1b\[[0-9;]*m")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("env, terminal, colour", [
    ({}, True, True),
    ({}, False, False),
    ({"NO_COLOR": "1", "FORCE_COLOR": "1", "CLICOLOR_FORCE": "1"}, True, False),  # NO_COLOR wins over everything
    ({"CLICOLOR_FORCE": "1"}, False, True),  # forced onto a pipe
    ({"FORCE_COLOR": "1", "CLICOLOR": "0"}, True, True),  # forcing wins over CLICOLOR=0
    ({"FORCE_COLOR": "0"}, False, False),  # Node's FORCE_COLOR=0 forces nothing
    ({"CLICOLOR": "0"}, True, False),
    ({"CLICOLOR": "1"}, True, True),
    ({"TERM": "dumb"}, True, False),
    ({"TERM": "dumb", "CLICOLOR_FORCE": "1"}, True, True),
])
def test_colour_precedence(env, terminal, colour) -> None:
    stream = _Terminal() if terminal else io.StringIO()
    assert color_enabled(stream, env) is colour


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "taotoken_cli", *args]


@pytest.fixture
def slow(mock_gateway, home, monkeypatch):
    mock = mock_gateway(latency_ms=3000, process=True)  # doctor waits longer than DUMB_DELAY_S, whatever runs at once
    for name, value in {"TAOTOKEN_BASE_URL": mock.url, "TAOTOKEN_API_KEY": SENTINEL_KEY,
                        "TAOTOKEN_MODEL": "gpt-4o-mini", "PYTHONPATH": python_path()}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return mock


def _run_recorded(argv: list[str], home: Path, env: dict[str, str], timeout: float = 90) -> tuple[str, str]:
    """`argv` in an 80-column tmux window; its variables set on its own command line (tmux gives a pane's program
    its own TERM)."""
    raw = home / "raw.txt"
    argv = ["env", *(f"{name}={value}" for name, value in env.items()), *argv]
    with Tmux(argv, width=80, height=60, cwd=home) as term:
        term.record(raw)
        term.wait_for(lambda s: term.dead(), timeout=timeout)
        screen = term.screen(joined=True, history=True)
    return raw.read_text(encoding="utf-8", errors="replace"), screen


def test_doctor_on_a_dumb_terminal_moves_no_cursor_and_prints_plain_progress(slow, home) -> None:
    require_tmux()
    raw, screen = _run_recorded(_cli("doctor"), home, {"TERM": "dumb"})
    assert not MOVES.findall(raw), MOVES.findall(raw)[:5]
    assert not COLOUR.findall(raw)
    progress = [line for line in raw.splitlines() if "checks done" in line]
    assert progress, raw  # it says it is waiting (the gateway takes 3 s an answer)
    assert all(not line.startswith(tuple("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏|/-\\")) for line in progress), progress
    assert "taotoken doctor — profile default" in screen


def test_doctor_on_a_colour_terminal_still_spins(slow, home) -> None:
    """The reference: the same run on xterm draws its spinner in place (the recording would show it)."""
    require_tmux()
    raw, _screen = _run_recorded(_cli("doctor"), home, {"TERM": "xterm-256color"})
    assert MOVES.findall(raw) and COLOUR.findall(raw)


def test_bench_on_a_dumb_terminal_prints_a_plain_line_every_few_seconds(mock_gateway, home, monkeypatch) -> None:
    require_tmux()
    mock = mock_gateway(latency_ms=400, process=True)
    monkeypatch.setenv("PYTHONPATH", python_path())
    monkeypatch.delenv("NO_COLOR", raising=False)
    argv = _cli("bench", "--base-url", mock.url, "--model", "gpt-4o-mini", "-n", "30", "-c", "1", "--workers", "1")
    started = time.monotonic()
    raw, screen = _run_recorded(argv, home, {"TERM": "dumb", "TAOTOKEN_API_KEY": SENTINEL_KEY})
    wall = time.monotonic() - started
    assert not MOVES.findall(raw), MOVES.findall(raw)[:5]
    assert not COLOUR.findall(raw)
    progress = [line for line in raw.splitlines() if line.startswith("gpt-4o-mini: ")]
    # 30 requests one after another at 0.4 s each take 12 s at least: a line at 5 s and at 10 s, and the closing
    # one; at most one per PlainProgress.INTERVAL_S of the time the run really took (never one per redraw)
    assert 3 <= len(progress) <= wall / PlainProgress.INTERVAL_S + 1, (progress, wall)
    assert re.match(r"gpt-4o-mini: 30 ", progress[-1]), progress
    assert "Latency" in screen or "latency" in screen, screen


def test_clicolor_force_colours_a_pipe_and_no_color_wins(cli, mock_gateway, home) -> None:
    mock = mock_gateway()
    forced = cli("check", "--base-url", mock.url, env={"TAOTOKEN_API_KEY": SENTINEL_KEY, "NO_COLOR": None,
                                                       "CLICOLOR_FORCE": "1"}).assert_clean()
    assert forced.returncode == 0 and COLOUR.search(forced.stdout), forced.stdout
    plain = cli("check", "--base-url", mock.url, env={"TAOTOKEN_API_KEY": SENTINEL_KEY, "NO_COLOR": "1",
                                                      "CLICOLOR_FORCE": "1"}).assert_clean()
    assert plain.returncode == 0 and not COLOUR.search(plain.output), plain.output
