"""init asks a gateway two questions (is the model listed, does it serve the Gemini API): a silent gateway costs one
wait in all, not one per question (5 s + 8 s before)."""

from __future__ import annotations

import pytest

from taotoken_cli.cmd.init import plan as init_plan
from taotoken_cli.cmd.mock import MockOptions
from taotoken_cli.core.diagnosis import gemini_api, model_check
from tests.conftest import SENTINEL_KEY

MODEL = "gpt-4o-mini"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


def test_each_question_gets_what_the_earlier_ones_left() -> None:
    clock = Clock()
    patience = init_plan.Patience(8.0, clock.monotonic)
    given: list[float] = []

    def question(takes: float):
        def ask(seconds: float) -> str:
            given.append(seconds)
            clock.now += min(takes, seconds)
            return "answer"
        return ask

    assert patience.asking(5.0, question(5.0)) == "answer"  # the model list: its own 5 s, all spent (silent)
    patience.asking(8.0, question(8.0))  # the Gemini API: what is left, 3 s, not 8
    patience.asking(8.0, question(8.0))  # nothing left: the gateway's client turns 0 into its shortest limit
    assert given == [5.0, 3.0, 0.0]
    fast = init_plan.Patience(8.0, clock.monotonic)
    fast.asking(5.0, question(0.5))  # an answer in 0.5 s leaves 7.5 s
    fast.asking(8.0, question(8.0))
    assert given[3:] == [5.0, 7.5]


def test_init_against_a_silent_gateway_puts_both_questions_under_one_wait(run, home, mock_gateway,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The real init, the mock answering nothing (fault=stall); limits shortened so that the test is quick: a 1 s
    wait in all for a model check that may take 1 s and a Gemini probe that may take 1 s."""
    monkeypatch.setattr(gemini_api, "PROBE_TIMEOUT_S", 1.0)
    monkeypatch.setattr(model_check, "CHECK_TIMEOUT_S", 1.0)
    asked: list[tuple[float, float]] = []
    real = init_plan.Patience.asking

    def recorded(self, most, question):
        asked.append((most, self.left))
        return real(self, most, question)

    monkeypatch.setattr(init_plan.Patience, "asking", recorded)
    mock = mock_gateway(MockOptions(key=SENTINEL_KEY, fault="stall"))
    result = run("init", "--key-stdin", "--model", MODEL, "--base-url", mock.url, "--all", "--yes",
                 input=SENTINEL_KEY)
    assert result.returncode == 0, result.output
    assert "[net.timeout]" in result.output  # Gemini CLI left out: the gateway did not answer in time
    assert [most for most, _left in asked] == [1.0, 1.0]  # the model check, then the Gemini probe
    assert asked[1][1] < 0.5, asked  # the probe had only what the silent model check left (~0 s), not its own 1 s
    result.assert_clean()
