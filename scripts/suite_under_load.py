"""Run the test suite with CPU-bound processes beside it: the proof that no test depends on an idle machine.

    python scripts/suite_under_load.py                 # two burners, the README's command (pytest -n auto)
    python scripts/suite_under_load.py --burners 0     # the same run on the machine as it is (the reference)
    python scripts/suite_under_load.py -- -x -q tests/cmd/bench   # pytest's own arguments after --

Each burner is `python -c 'while 1: pass'`, one busy core each: on a two-core machine the suite then gets about
half of the CPU time it would get alone, like CI on a shared runner. The burners are ended whatever happens. Prints
the wall time, the load average before and after, and exits with pytest's status.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The README's test command, less the install (tests/docs/test_docs.py keeps README and .ci/run the same).
SUITE = [sys.executable, "-m", "pytest", "-n", "auto"]


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on Windows
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--burners", type=int, default=2, help="CPU-bound processes to run beside the suite (2)")
    parser.add_argument("pytest_args", nargs="*", help="arguments for pytest (after --)")
    args = parser.parse_args(argv)
    burners = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(max(0, args.burners))]
    try:
        print(f"suite_under_load: {len(burners)} burner(s); load average before: {_load()}", flush=True)
        started = time.monotonic()
        status = subprocess.call([*SUITE, *args.pytest_args], cwd=REPO)
        wall = time.monotonic() - started
    finally:
        for proc in burners:
            proc.kill()
            proc.wait()
    print(f"suite_under_load: pytest exited {status} after {wall:.0f} s with {len(burners)} burner(s); "
          f"load average after: {_load()}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
