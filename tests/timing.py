"""Timing assertions that hold on a busy machine: a bound is the command's own budget plus a slack measured in the
same test, never an absolute number of seconds.

CI runs on a loaded two-core machine where starting Python and importing the CLI takes ten times what it takes on
an idle one. A test that asserts "`doctor --timeout 2` ends within 4.5 s" then fails for nothing. Instead the test
times a reference run of the same entry point doing no work (`taotoken --version`: interpreter start, imports, exit)
right beside the run it judges, and allows a multiple of it on top of the budget the command was given:

    reference = startup_s(cli)
    ... elapsed = time the command with --timeout 2 ...
    assert_within(elapsed, 2, reference)

On an idle machine the reference is a few hundred ms, so the bound stays tight enough to catch a deadline that is
ignored; on a loaded one it grows with the load, as the command's own overhead does.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# How many reference runs the overhead of a real command may cost: a command imports more than `--version` does
# (httpx, its own modules), renders, and its threads compete with the test's servers for the same cores.
OVERHEAD_FACTOR = 4.0


def startup_s(cli: Callable[..., object], runs: int = 2) -> float:
    """The fastest of `runs` subprocess runs of `taotoken --version`: what starting the CLI costs right now."""
    best = float("inf")
    for _ in range(runs):
        started = time.monotonic()
        cli("--version")
        best = min(best, time.monotonic() - started)
    return best


def assert_within(elapsed_s: float, budget_s: float, reference_s: float, factor: float = OVERHEAD_FACTOR) -> None:
    """`elapsed_s` is at most the command's budget plus `factor` reference runs (see the module docstring)."""
    bound = budget_s + factor * reference_s
    assert elapsed_s <= bound, (f"took {elapsed_s:.2f} s: more than the budget {budget_s} s + {factor} x the reference "
                                f"{reference_s:.2f} s measured beside it = {bound:.2f} s")


_OVERSLEEP = """
import statistics, sys, time
late = []
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter()
    time.sleep(float(sys.argv[1]))
    late.append(time.perf_counter() - t0 - float(sys.argv[1]))
print(statistics.median(late) * 1000)
"""


class Oversleep:
    """How late a process of this machine wakes from a sleep (median, ms), measured in a process of its own while
    the test does its timed work beside it: the reference for a server in its own process (MockProcess) that sleeps
    for its latency, taken at the same moments of a load that comes and goes.

        with Oversleep() as late:
            ... timed requests ...
        late.ms
    """

    def __init__(self, seconds: float = 0.05, runs: int = 8) -> None:
        self.args = [str(seconds), str(runs)]
        self.ms = float("nan")

    def __enter__(self) -> Oversleep:
        import subprocess
        import sys

        self.proc = subprocess.Popen([sys.executable, "-c", _OVERSLEEP, *self.args], stdout=subprocess.PIPE,
                                     text=True)
        return self

    def __exit__(self, *exc: object) -> None:
        out, _ = self.proc.communicate(timeout=120)
        self.ms = float(out)
