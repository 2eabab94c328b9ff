"""Does `taotoken bench --sweep` find the true knee, and does it live with a rate limit?

    python benchmarks/bench_capacity.py [--step 5s] [--sweep c=1..64]

Two servers of known capacity, the product's mock in its own process (MockProcess, -q):
  capacity  12 slots, FIFO queue (--slots 12), 100 ms to the first token then 31 tokens 20 ms apart
            (--model-timing cap=100,50,32): 0.72 s a request, so at most 12 / 0.72 = 16.67 req/s, reached at c=12
  twin      the same behind a token bucket of 10 req/s answering 429 with Retry-After: 1 (--rate-limit 10):
            at most 10 good req/s (plus the bucket's one-second burst): c=7 asks 9.72 req/s, c=8 11.1
The sweep is docs/bench.md's example (`--stream -z STEP --sweep c=1..64 --slo ttft:p95<600ms`), run as users
run it (`python -m taotoken_cli bench --json`). Printed: the knee found against the truth (target: +-1 user,
+-5 % throughput), the steps measured (coarse and bisected), the requests sent, the time and CPU it took.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
KEY = "sk-bench0000000000000000000000000000"
TRUE_KNEE, TRUE_RATE = 12, 12 / 0.72
TWIN_KNEE, TWIN_RATE = 7, 7 / 0.72  # the most users whose demand (c / 0.72 s) stays within 10 req/s


def sweep(root: str, step: str, spec: str) -> tuple[dict, float, float, int]:
    env = dict(os.environ, PYTHONPATH=str(REPO), TAOTOKEN_API_KEY=KEY)
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        env.pop(name, None)
    cmd = [sys.executable, "-m", "taotoken_cli", "bench", "--base-url", root, "-m", "cap", "--stream",
           "--max-tokens", "64", "-z", step, "--sweep", spec, "--slo", "ttft:p95<600ms", "--json"]
    started = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, cwd=REPO)  # `-m` reads the cwd first
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        err.seek(0)
        code = os.waitstatus_to_exitcode(status)
        text = out.read()
        if not text:
            raise SystemExit(f"bench failed ({code}): {err.read().decode()[-2000:]}")
        return json.loads(text), time.monotonic() - started, usage.ru_utime + usage.ru_stime, code


def report(name: str, data: dict, wall: float, cpu: float, code: int, knee: float, rate: float) -> bool:
    model = data["sweep"]["models"][0]
    print(f"\n{name}: exit {code}, {wall:.0f} s, {cpu:.1f} s CPU, "
          f"{sum(s['requests'] for s in data['series']):,} requests")
    print(f"   {'load':>8} {'offered':>8} {'req/s':>8} {'goodput':>8} {'TTFT p95':>9} {'errors':>7}  SLOs")
    for step in model["steps"]:
        mark = " *" if step["probe"] else "  "
        errors = "-" if step["error_rate"] is None else f"{step['error_rate'] * 100:.1f}%"
        ttft = "-" if step["ttft_p95_ms"] is None else f"{step['ttft_p95_ms']:.0f}"
        offered = "-" if step["offered_per_s"] is None else f"{step['offered_per_s']:.2f}"
        print(f"   c={step['load']:<4g}{mark} {offered:>8} {step['requests_per_s'] or 0:>8.2f} "
              f"{step['goodput_per_s'] or 0:>8.2f} {ttft:>9} {errors:>7}  {'met' if step['meets_slo'] else 'missed'}")
    limited = [s["rate_limited"] for s in data["series"] if s["rate_limited"]]
    if limited:
        top = max(limited, key=lambda f: f["share"])  # where the limit binds hardest (report.binding_limit)
        print(f"   finding: rate-limited at ~{top['at_per_s']:.2f} req/s ({sum(f['responses'] for f in limited):,} "
              f"429s in all, Retry-After {top['retry_after_s']:g} s honoured)")
    found, good = model["knee"], model["knee_goodput_per_s"]
    if found is None:
        print("   FAIL no knee found")
        return False
    ok = abs(found - knee) <= 1 and abs(good / rate - 1) <= 0.05
    bound = model["bounded_by"]
    print(f"   {'ok  ' if ok else 'FAIL'} knee c={found:g} at {good:.2f} req/s goodput "
          f"(truth c={knee:g}, {rate:.2f} req/s: {found - knee:+g} users, {(good / rate - 1) * 100:+.1f} %); "
          f"bounded by c={bound['load']:g} ({bound['why']}); {model['probes']} steps added by bisection")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description="bench --sweep against servers of known capacity")
    parser.add_argument("--step", default="5s", help="-z of each step (default 5s)")
    parser.add_argument("--sweep", default="c=1..64", help="the --sweep spec (default c=1..64, doubling)")
    parser.add_argument("--skip-twin", action="store_true")
    args = parser.parse_args()
    from taotoken_cli.cmd.mock import MockOptions, MockProcess, ModelTiming

    print(f"cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    timing = {"cap": ModelTiming(100, 50, 32)}
    results = []
    with MockProcess(MockOptions(key=KEY, model_timing=timing, slots=12, keep_requests=1), log=False) as srv:
        results.append(report("capacity (12 slots, 0.72 s a request)", *sweep(srv.url, args.step, args.sweep),
                              TRUE_KNEE, TRUE_RATE))
    if not args.skip_twin:
        with MockProcess(MockOptions(key=KEY, model_timing=timing, slots=12, rate_limit=10, retry_after=1,
                                     keep_requests=1), log=False) as srv:
            results.append(report("twin (the same behind 10 req/s, 429 + Retry-After: 1)",
                                  *sweep(srv.url, args.step, args.sweep), TWIN_KNEE, TWIN_RATE))
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
