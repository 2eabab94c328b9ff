"""Does `taotoken bench` measure the gateway or itself?  Run by hand:

    python benchmarks/bench_vs_hey.py [--quick] [--skip-memory]

The server is the product's own mock gateway, `taotoken mock`, in its own process (MockProcess,
no request log), with fixed timing: one mock for (a) serves `bench-model` at 50 ms and
`stream-model` at 50 ms to the first token then 100 tokens/s (--model-timing). In the same run:
  (a) accuracy:   -c 50 against a 50 ms server: bench p50 vs hey's average and vs the true 50 ms;
                  a stream (TTFT 50 ms, 10 ms per token): bench TTFT / inter-token vs the configured delays
  (b) throughput: bench req/s / hey req/s at -c 50 against the 50 ms server and a zero-latency server
  (c) memory:     peak RSS of the bench process tree at -n 10000 and -n 100000 (zero-latency server)
and prints each figure as a ratio with its target. Needs `hey` (apt-get install hey). Both tools send
the same POST body with the same headers; bench runs as users run it (`python -m taotoken_cli bench`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from taotoken_cli.cmd.mock import MockOptions, MockProcess, ModelTiming  # noqa: E402

KEY = "sk-bench0000000000000000000000000000"
PY = sys.executable


def mock(latency_ms: float, **options: object) -> MockProcess:
    """`taotoken mock -q` in its own process; `.url` is the API root bench takes as --base-url."""
    return MockProcess(MockOptions(key=KEY, latency_ms=latency_ms, keep_requests=1, **options), log=False)


def run_hey(url: str, n: int, c: int, body: Path) -> dict[str, float]:
    out = subprocess.run(["hey", "-n", str(n), "-c", str(c), "-m", "POST", "-T", "application/json", "-D", str(body),
                          "-H", f"Authorization: Bearer {KEY}", url], capture_output=True, text=True, check=True).stdout
    avg = float(re.search(r"Average:\s+([\d.]+) secs", out).group(1)) * 1000
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = float(re.search(r"50%+ in ([\d.]+) secs", out).group(1)) * 1000
    ok = sum(int(x) for x in re.findall(r"\[2\d\d\]\s+(\d+) responses", out))
    return {"avg_ms": avg, "p50_ms": p50, "rps": rps, "ok": ok}


def run_bench(root: str, *args: str, model: str = "bench-model", rss: bool = False) -> tuple[dict, float | None]:
    env = dict(os.environ, PYTHONPATH=str(REPO), TAOTOKEN_API_KEY=KEY)
    cmd = [PY, "-m", "taotoken_cli", "bench", "--base-url", root, "-m", model, "--json", *args]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    peak = _watch_rss(proc) if rss else None
    out, err = proc.communicate()
    if proc.returncode not in (0,):
        raise SystemExit(f"bench failed ({proc.returncode}): {err}")
    return json.loads(out)["series"][0], peak


def _tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except OSError:
            pass
    return pids


def _watch_rss(proc: subprocess.Popen) -> float:
    """Sum over the bench process tree of each process's peak RSS (VmHWM), in MiB."""
    peaks: dict[int, int] = {}
    while proc.poll() is None:
        for pid in _tree(proc.pid):
            try:
                with open(f"/proc/{pid}/status") as fh:
                    for line in fh:
                        if line.startswith("VmHWM:"):
                            peaks[pid] = max(peaks.get(pid, 0), int(line.split()[1]))
            except OSError:
                pass
        time.sleep(0.05)
    return sum(peaks.values()) / 1024


def verdict(ok: bool) -> str:
    return "OK  " if ok else "MISS"


def main() -> None:
    parser = argparse.ArgumentParser(description="bench vs hey vs the true latency")
    parser.add_argument("--quick", action="store_true", help="fewer requests (noisier figures)")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    if not shutil.which("hey"):
        raise SystemExit("hey is not installed: apt-get install hey")
    n_lat = 2000 if args.quick else 5000
    n_zero = 5000 if args.quick else 20000
    body = Path(tempfile.mkdtemp()) / "body.json"
    body.write_text(json.dumps({"model": "bench-model", "messages": [{"role": "user", "content": "Say OK."}],
                                "max_tokens": 16}))
    print(f"server: taotoken mock (own process, -q); cores: {os.cpu_count()}; "
          f"load average: {os.getloadavg()[0]:.2f}")

    print("\n(a)+(b) -c 50 against a fixed 50 ms server")
    with mock(50, model_timing={"stream-model": ModelTiming(50, 100, 20)}) as srv:
        run_bench(srv.url, "-n", "200", "-c", "50")  # warm both sides' caches once
        hey = run_hey(srv.openai_base + "/chat/completions", n_lat, 50, body)
        ours, _ = run_bench(srv.url, "-n", str(n_lat), "-c", "50")
        p50 = ours["latency_ms"]["p50"]
        print(f"  hey:   avg {hey['avg_ms']:.2f} ms, p50 {hey['p50_ms']:.2f} ms, {hey['rps']:.1f} req/s "
              f"({hey['ok']} ok)")
        print(f"  bench: p50 {p50:.2f} ms, mean {ours['latency_ms']['mean']:.2f} ms, "
              f"{ours['requests_per_s']:.1f} req/s ({ours['ok']} ok, {ours['failed']} failed)")
        r1, r2, r3 = p50 / hey["avg_ms"], p50 / 50.0, ours["requests_per_s"] / hey["rps"]
        print(f"  {verdict(abs(r1 - 1) <= 0.05)} bench p50 / hey avg      = {r1:.3f}  (target 0.95-1.05)")
        print(f"  {verdict(abs(r2 - 1) <= 0.05)} bench p50 / true 50 ms   = {r2:.3f}  (target 0.95-1.05)")
        print(f"  {verdict(r3 >= 0.9)} bench req/s / hey req/s  = {r3:.3f}  (target >= 0.9)")

        print("\n(a) stream: TTFT 50 ms, then 100 tokens/s (10 ms apart), 20 tokens, -c 20 "
              "(same mock, --model-timing stream-model=50,100,20)")
        s, _ = run_bench(srv.url, "-n", "400" if args.quick else "1000", "-c", "20", "--stream", "--max-tokens", "20",
                         model="stream-model")
    ttft, itl, tpot = s["ttft_ms"]["p50"], s["itl_ms"]["p50"], s["tpot_ms"]["p50"]
    print(f"  bench: TTFT p50 {ttft:.2f} ms, inter-token p50 {itl:.2f} ms (mean {s['itl_ms']['mean']:.2f}), "
          f"per-token p50 {tpot:.2f} ms, {s['ok']} ok, {s['output_tokens']} tokens from {s['tokens_source']}")
    for label, value, true in (("TTFT p50 / 50 ms", ttft, 50.0), ("inter-token p50 / 10 ms", itl, 10.0),
                               ("inter-token mean / 10 ms", s["itl_ms"]["mean"], 10.0),
                               ("per-token p50 / 10 ms", tpot, 10.0)):
        print(f"  {verdict(abs(value / true - 1) <= 0.05)} {label:<24} = {value / true:.3f}  (target 0.95-1.05)")

    print("\n(b) zero-latency server, -c 50")
    with mock(0) as srv:
        run_bench(srv.url, "-n", "500", "-c", "50")
        hey = run_hey(srv.openai_base + "/chat/completions", n_zero, 50, body)
        ours, _ = run_bench(srv.url, "-n", str(n_zero), "-c", "50")
    r = ours["requests_per_s"] / hey["rps"]
    print(f"  hey {hey['rps']:.1f} req/s, bench {ours['requests_per_s']:.1f} req/s")
    print(f"  {verdict(r >= 0.25)} bench req/s / hey req/s  = {r:.3f}  (aim >= 0.25 on 2 cores)")

    if not args.skip_memory:
        print("\n(c) peak RSS of the bench process tree (parent + workers), zero-latency server, -c 50")
        with mock(0) as srv:
            figures = []
            for n in (10000, 100000):
                s, peak = run_bench(srv.url, "-n", str(n), "-c", "50", rss=True)
                figures.append(peak)
                print(f"  -n {n:>6}: {peak:.1f} MiB total ({s['requests_per_s']:.0f} req/s, {s['ok']} ok)")
        growth = figures[1] / figures[0]
        print(f"  {verdict(growth <= 1.1)} RSS(-n 100000) / RSS(-n 10000) = {growth:.3f}  (target: no growth, <= 1.1)")


if __name__ == "__main__":
    main()
