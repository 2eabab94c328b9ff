"""What a person at an 80-column terminal sees (tmux): doctor and route show a spinner while they wait and
leave no trace of it; every line fits, hangs under its text, and keeps its command whole. The spinner's
rules (when it draws, how it erases) are checked on a stream here too."""

from __future__ import annotations

import io
import re
import sys
import time

import pytest

from taotoken_cli.core.term.layout import cell_width
from taotoken_cli.core.term.output import Output
from taotoken_cli.core.term.spinner import Spinner
from tests.conftest import SENTINEL_KEY, python_path
from tests.tmux import Tmux, require_tmux

SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "taotoken_cli", *args]


@pytest.fixture
def slow_gateway(mock_gateway, home, monkeypatch):
    """A gateway that takes 1.2 s per answer, configured through the environment, serving the model asked for
    with a typo: doctor has fixes to print."""
    mock = mock_gateway(latency_ms=1200, process=True, models=("gpt-4o-mini", "claude-sonnet-4-5"))
    for name, value in {"TAOTOKEN_BASE_URL": mock.url, "TAOTOKEN_API_KEY": SENTINEL_KEY,
                        "TAOTOKEN_MODEL": "gpt-4o-mni", "PYTHONPATH": python_path()}.items():
        monkeypatch.setenv(name, value)
    return mock


def _finished(term: Tmux) -> str:
    """The whole screen once the program exited, lines the terminal wrapped joined again."""
    term.wait_for(lambda s: term.dead(), timeout=60)
    return "\n".join(line for line in term.screen(joined=True, history=True).splitlines()
                     if not line.startswith("Pane is dead"))


def test_doctor_at_80_columns_spins_while_it_waits_then_fits_every_line(slow_gateway, home) -> None:
    require_tmux()
    with Tmux(_cli("doctor"), width=80, height=60, cwd=home) as term:
        waiting = term.wait_for(lambda s: "checks done" in s, timeout=30)
        line = next(line for line in waiting.splitlines() if "checks done" in line)
        assert re.match(rf"[{SPINNER_FRAMES}] \d+ of \d+ checks done, waiting for: ", line), line
        assert cell_width(line) < 80
        screen = _finished(term)
    lines = screen.rstrip("\n").splitlines()
    assert not any("checks done" in line or (line and line[0] in SPINNER_FRAMES) for line in lines), screen
    assert lines[0].startswith("taotoken doctor — profile default")
    # joined: a line the terminal had to wrap shows here as one longer than the window; only a path, URL or
    # command too long for any line may be (alone on its line)
    for line in lines:
        assert cell_width(line) <= 80 or " " not in line.strip(), f"{line!r} does not fit:\n{screen}"
    body = lines[1:lines.index(next(line for line in lines if line.startswith(("✓", "!", "✗"))))]
    for line in (line for line in body if line and not line[0].isupper()):
        assert line.startswith(("  [", "      ")), f"not hanging under its text: {line!r}\n{screen}"
    assert "      fix: taotoken config set model gpt-4o-mini" in lines, screen


def test_doctor_fix_commands_stay_whole_at_80_columns(home, monkeypatch) -> None:
    """No key and no model, offline: the fixes are long commands; not one is split."""
    require_tmux()
    monkeypatch.setenv("PYTHONPATH", python_path())
    with Tmux(_cli("doctor", "--offline", "--check", "config"), width=80, cwd=home) as term:
        screen = _finished(term)
    assert "      fix: taotoken config set model <model-id>   (gateway.model lists your" in screen, screen
    assert "           models)" in screen, screen
    assert "      fix: export TAOTOKEN_API_KEY=sk-…" in screen


def test_route_verify_names_the_request_it_waits_for_and_leaves_no_trace(slow_gateway, home) -> None:
    require_tmux()
    with Tmux(_cli("route", "--verify", "--samples", "3"), width=80, cwd=home) as term:
        waiting = term.wait_for(lambda s: "asking the gateway" in s, timeout=30)
        assert re.search(r"asking the gateway: gpt-4o-mni \(request [123] of 3\)…", waiting), waiting
        screen = _finished(term)
    assert "asking the gateway" not in screen
    assert "(profile model) -> gpt-4o-mni: " in screen, screen


# -- the spinner's rules, on streams ----------------------------------------------------------------------------

class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_spinner_draws_only_after_a_delay_and_erases_itself() -> None:
    stream = FakeTerminal()
    with Spinner(stream, "probing CUDA and OpenCL devices…", width=80, delay_s=0.3):
        time.sleep(0.1)
    assert stream.getvalue() == ""  # a quick wait shows nothing
    stream = FakeTerminal()
    with Spinner(stream, "probing CUDA and OpenCL devices…", width=80, delay_s=0.0):
        time.sleep(0.3)
    text = stream.getvalue()
    assert "probing CUDA and OpenCL devices…" in text
    assert text.startswith("\x1b[?25l") and text.endswith("\r\x1b[2K\x1b[?25h")  # cursor hidden, line erased


def test_on_a_dumb_terminal_the_spinner_prints_plain_lines_that_fit_and_never_moves_the_cursor() -> None:
    stream = FakeTerminal()
    long = "waiting for: " + "a very long check title " * 10
    with Spinner(stream, lambda: long, width=40, dumb=True, unicode=False, delay_s=0.0):
        time.sleep(0.25)
    text = stream.getvalue()
    assert "\x1b" not in text and "\r" not in text  # no escape sequence, no carriage return: nothing redrawn
    lines = text.splitlines()
    assert len(lines) == 1 and cell_width(lines[0]) <= 39 and lines[0].endswith("…")  # one line per interval
    assert text.endswith("\n")  # and left as it is


@pytest.mark.parametrize("out_tty, err_tty, enabled, spins", [(True, True, True, True), (False, True, True, False),
                                                              (True, False, True, False), (True, True, False, False)])
def test_a_spinner_needs_two_terminals_and_no_machine_output(out_tty, err_tty, enabled, spins) -> None:
    out = Output(stdout=FakeTerminal() if out_tty else io.StringIO(),
                 stderr=FakeTerminal() if err_tty else io.StringIO(), env={})
    assert isinstance(out.spinner("x", enabled=enabled), Spinner) is spins
