"""Timing assertions that hold on a busy machine: a bound is the command's own budget plus a slack measured in the
same test, never an absolute number of seconds.

CI runs on a loaded two-core machine where starting Python and importing the CLI takes ten times what it takes on
an idle one. A test that asserts "`doctor --timeout 2` ends within 4.5 s" then fails for nothing. Instead the test
times a reference right beside the run it judges, and allows a multiple of it on top of the budget the command was
given. The best reference is the same command doing no waiting: pointed at a closed port, it fails at once and so
costs exactly its own work (start-up, imports, classifying, rendering) at this moment's load:

    result, elapsed, reference = judged(cli, lambda url: ["doctor", "--base-url", url, "--timeout", "2"], base)
    assert_within(elapsed, 2, reference)

For the CLI's start-up alone, `startup_s(cli)` times `taotoken --version`. On an idle machine a reference is a few
hundred ms, so the bound stays tight enough to catch a deadline that is ignored; on a loaded one it grows with the
load, as the command's own overhead does. `judged` adds the latest wake-up of a thread sleeping beside the run
(`WakeUps`): a timeout is a timer, woken late on a loaded machine. `Oversleep` is the reference for a server (in a
process of its own) that sleeps for its latency.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

# How many reference runs the overhead of a real command may cost: a command imports more than `--version` does
# (httpx, its own modules), renders, and its threads compete with the test's servers for the same cores.
OVERHEAD_FACTOR = 4.0


def fastest_s(call: Callable[[], object], runs: int = 2) -> float:
    """The fastest of `runs` calls of `call`, in seconds: what that work costs on this machine right now."""
    best = float("inf")
    for _ in range(runs):
        started = time.monotonic()
        call()
        best = min(best, time.monotonic() - started)
    return best


def startup_s(cli: Callable[..., object], runs: int = 2) -> float:
    """The fastest of `runs` subprocess runs of `taotoken --version`: what starting the CLI costs right now."""
    return fastest_s(lambda: cli("--version"), runs)


def timed(call: Callable[..., T], *args: object, **kwargs: object) -> tuple[T, float]:
    """`call(*args, **kwargs)` and the seconds it took."""
    started = time.monotonic()
    result = call(*args, **kwargs)
    return result, time.monotonic() - started


def judged(call: Callable[..., T], args: Callable[[str], Sequence[str]], base: str,
           **kwargs: object) -> tuple[T, float, float]:
    """`call(*args(base), **kwargs)`, the seconds it took, and its reference: the same command with a closed port on
    127.0.0.1 for `base`, run just before (refused at once: what the command's own work costs now), plus the latest
    wake-up of a thread of this process sleeping beside the run (a timeout is a timer, and a loaded machine, or the
    test's own server threads holding the GIL, wake a timer late)."""
    from tests.rawserver import closed_port

    refused = f"http://127.0.0.1:{closed_port()}/api"
    reference = fastest_s(lambda: call(*args(refused), **kwargs))
    with WakeUps() as late:
        result, elapsed = timed(call, *args(base), **kwargs)
    return result, elapsed, reference + late.worst_s


class WakeUps:
    """The latest wake-up of a thread of this process that sleeps `seconds` at a time while the block runs."""

    def __init__(self, seconds: float = 0.02) -> None:
        import threading

        self.seconds = seconds
        self.worst_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            time.sleep(self.seconds)
            self.worst_s = max(self.worst_s, time.perf_counter() - started - self.seconds)

    def __enter__(self) -> WakeUps:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def assert_within(elapsed_s: float, budget_s: float, reference_s: float, factor: float = OVERHEAD_FACTOR) -> None:
    """`elapsed_s` is at most the command's budget plus `factor` reference runs (see the module docstring)."""
    bound = budget_s + factor * reference_s
    assert elapsed_s <= bound, (f"took {elapsed_s:.2f} s: more than the budget {budget_s} s + {factor} x the reference "
                                f"{reference_s:.2f} s measured beside it = {bound:.2f} s")


_OVERSLEEP = """
import sys, time
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter()
    time.sleep(float(sys.argv[1]))
    print((time.perf_counter() - t0 - float(sys.argv[1])) * 1000)
"""


class Oversleep:
    """How late a process of this machine wakes from a sleep, measured in a process of its own while the test does
    its timed work beside it: the reference for a server in its own process (MockProcess) that sleeps for its
    latency, taken at the same moments of a load that comes and goes. `ms` is the median lateness (what a typical
    wake-up costs now), `worst_ms` the latest wake-up seen (what one unlucky wake-up may cost now).

        with Oversleep() as late:
            ... timed requests ...
        late.ms, late.worst_ms
    """

    def __init__(self, seconds: float = 0.05, runs: int = 8) -> None:
        self.args = [str(seconds), str(runs)]
        self.ms = self.worst_ms = float("nan")

    def __enter__(self) -> Oversleep:
        import subprocess
        import sys

        self.proc = subprocess.Popen([sys.executable, "-c", _OVERSLEEP, *self.args], stdout=subprocess.PIPE,
                                     text=True)
        return self

    def __exit__(self, *exc: object) -> None:
        import statistics

        out, _ = self.proc.communicate(timeout=120)
        late = [float(line) for line in out.split()]
        self.ms, self.worst_ms = statistics.median(late), max(late)
