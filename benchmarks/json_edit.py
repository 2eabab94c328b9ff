"""Is the splicing JSON editor fast enough for a large ~/.claude.json?  Run by hand:

    python benchmarks/json_edit.py [--mb 5]

Claude Code's ~/.claude.json grows with per-project state (several MB is common). `init` sets one key there
(`hasCompletedOnboarding`). In the same run this times, on the same generated file:
  reference  the full rewrite the editor replaced: json.loads + json.dumps(indent=2)
  edit       jsonedit.edit_json: parse, diff, splice one member, verify
and prints edit / reference as a ratio (target: under 3; the edit also re-parses to verify its result).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from taotoken_cli.core.formats.jsonedit import edit_json  # noqa: E402


def claude_json(megabytes: float) -> str:
    project = {"allowedTools": [], "history": [{"display": "fix the failing test in src/x.py", "pastedContents": {}}
                                              for _ in range(20)], "lastCost": 0.1234, "lastDuration": 1e5}
    projects, text = {}, ""
    while len(text) < megabytes * 1e6:
        for _ in range(200):
            projects[f"/home/me/src/project-{len(projects)}"] = project
        text = json.dumps({"numStartups": 42, "projects": projects}, indent=2)
    return text


def best(func, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        func()
        times.append(time.perf_counter() - started)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=5.0)
    args = parser.parse_args()
    text = claude_json(args.mb)
    data = json.loads(text)
    data["hasCompletedOnboarding"] = True

    def reference() -> None:
        new = json.loads(text)
        new["hasCompletedOnboarding"] = True
        json.dumps(new, indent=2)

    def edit() -> None:
        edit_json(text, data)

    assert edit_json(text, data).startswith(text[:-2])
    ref_best, ref_median = best(reference)
    edit_best, edit_median = best(edit)
    print(f"file {len(text) / 1e6:.1f} MB")
    print(f"reference (loads + dumps): best {ref_best * 1000:.0f} ms, median {ref_median * 1000:.0f} ms")
    print(f"edit_json (splice):        best {edit_best * 1000:.0f} ms, median {edit_median * 1000:.0f} ms")
    print(f"ratio edit/reference: {edit_best / ref_best:.2f} (target < 3)")


if __name__ == "__main__":
    main()
