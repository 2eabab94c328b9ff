"""CPU per request of `taotoken bench` against the practical Python limit, in one run:

    python benchmarks/bench_cpu.py [--requests 20000] [--rounds 5] [-c 50]

The server is the product's mock in its own process (MockProcess, -q) answering at once (latency 0), so the
client's own cost is what is measured. The reference is a raw asyncio client written here: one process, one
event loop (uvloop when bench would use it), `c` keep-alive connections each an asyncio.Protocol that sends
the same POST and waits for Content-Length bytes — no parsing of the answer, no statistics, no workers. It is
what a Python load client cannot beat by much. bench runs as users run it (`python -m taotoken_cli bench
-n N -c C --json`, its default workers).

CPU per request is the user + system time of the client's process tree (os.wait4: the process and the
workers it reaped) over the requests, start-up included for both. The variants take turns within each round
(the 2-core machine is shared: a busier minute weighs on both alike); the figures are the medians of the
rounds, with the load average beside them. The goal (issue 25): bench <= 1.3x the reference's CPU/request.
The loop decides the reference's cost more than bench's (uvloop halves the raw client's CPU per request, it takes
a fifth off bench's): the last line names it; TAOTOKEN_BENCH_LOOP=asyncio measures both on asyncio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
KEY = "sk-bench0000000000000000000000000000"


# -- the reference client ------------------------------------------------------------------------
class _Conn(asyncio.Protocol):
    def __init__(self, request: bytes, state: dict, done: asyncio.Future) -> None:
        self.request, self.state, self.done = request, state, done
        self.buf = b""
        self.need: int | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.send()

    def send(self) -> None:
        if self.state["started"] >= self.state["n"]:
            return
        self.state["started"] += 1
        self.buf, self.need = b"", None
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if self.need is None:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end].lower()
            at = head.find(b"content-length:")
            self.need = end + 4 + int(head[at + 15:head.find(b"\r\n", at) if head.find(b"\r\n", at) > 0 else None])
        if len(self.buf) >= self.need:
            self.state["done"] += 1
            if self.state["done"] >= self.state["n"]:
                if not self.done.done():
                    self.done.set_result(None)
                return
            self.send()


async def _reference(host: str, port: int, path: str, n: int, c: int) -> None:
    body = json.dumps({"model": "instant", "messages": [{"role": "user", "content": "Say OK."}],
                       "max_tokens": 16}).encode()
    request = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {KEY}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    state = {"n": n, "started": 0, "done": 0}
    conns = [await loop.create_connection(lambda: _Conn(request, state, done), host, port) for _ in range(c)]
    await done
    for transport, _protocol in conns:
        transport.close()


def reference_main(spec: dict) -> None:
    from taotoken_cli.cmd.bench.loop import run_loop  # the same loop choice as bench (uvloop if installed)

    run_loop(_reference(spec["host"], spec["port"], spec["path"], spec["n"], spec["c"]))
    print(json.dumps({"requests": spec["n"]}))


# -- measuring -----------------------------------------------------------------------------------
def timed(cmd: list[str], env: dict) -> tuple[dict, float, float]:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, cwd=REPO)  # `-m` reads the cwd first
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"{cmd[2:4]} failed: {err.read().decode()[-2000:]}")
        return json.loads(out.read()), usage.ru_utime + usage.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description="bench's CPU per request vs a raw asyncio client")
    parser.add_argument("--requests", "-n", type=int, default=20000)
    parser.add_argument("-c", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, help="bench's --workers (default: bench's own default, one per core)")
    parser.add_argument("--reference", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference:
        reference_main(json.loads(args.reference))
        return
    from taotoken_cli.cmd.mock import MockOptions, MockProcess

    env = dict(os.environ, PYTHONPATH=str(REPO), TAOTOKEN_API_KEY=KEY)
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        env.pop(name, None)
    print(f"cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}; -n {args.requests} -c {args.c}, "
          f"zero-delay server, {args.rounds} rounds (variants interleaved)")
    figures: dict[str, list[tuple[float, float]]] = {"raw asyncio client": [], "taotoken bench": []}
    loads = []
    loops: set[str] = set()  # the event loop bench's workers ran on (its JSON's load.event_loop)
    with MockProcess(MockOptions(key=KEY, latency_ms=0, keep_requests=1), log=False) as srv:
        spec = json.dumps({"host": "127.0.0.1", "port": srv.port, "path": "/api/v1/chat/completions",
                           "n": args.requests, "c": args.c})
        commands = {"raw asyncio client": [sys.executable, __file__, "--reference", spec],
                    "taotoken bench": [sys.executable, "-m", "taotoken_cli", "bench", "--base-url", srv.url, "-m",
                                       "instant", "-n", str(args.requests), "-c", str(args.c), "--json",
                                       *(["--workers", str(args.workers)] if args.workers else [])]}
        one = {name: [*cmd[:-1], cmd[-1].replace(f'"n": {args.requests}', '"n": 1')] if name.startswith("raw")
               else [*cmd] for name, cmd in commands.items()}
        one["taotoken bench"][one["taotoken bench"].index(str(args.requests))] = "1"
        startup: dict[str, list[float]] = {name: [] for name in commands}
        for _round in range(args.rounds):
            loads.append(os.getloadavg()[0])
            for name, cmd in commands.items():
                data, cpu, wall = timed(cmd, env)
                requests = data["series"][0]["requests"] if "series" in data else data["requests"]
                if "load" in data:
                    loops.add(str(data["load"].get("event_loop")))
                figures[name].append((cpu / requests * 1e6, requests / wall))
                startup[name].append(timed(one[name], env)[1])  # the fixed cost: one request
    ref = statistics.median(us for us, _ in figures["raw asyncio client"])
    for name, rows in figures.items():
        us = statistics.median(u for u, _ in rows)
        rate = statistics.median(r for _, r in rows)
        spread = ", ".join(f"{u:.0f}" for u, _ in rows)
        print(f"  {name:<20} {us:7.1f} us/request (median; rounds: {spread}), {rate:,.0f} req/s wall, "
              f"{us / ref:.2f}x the reference")
    fixed = {name: statistics.median(values) for name, values in startup.items()}
    marginal = {name: statistics.median(u - fixed[name] / args.requests * 1e6 for u, _ in rows)
                for name, rows in figures.items()}
    print(f"  start-up (one request): bench {fixed['taotoken bench']:.2f} s CPU, reference "
          f"{fixed['raw asyncio client']:.2f} s; without it: bench {marginal['taotoken bench']:.1f} us/request, "
          f"reference {marginal['raw asyncio client']:.1f} -> "
          f"{marginal['taotoken bench'] / marginal['raw asyncio client']:.2f}x")
    ratio = statistics.median(b / r for (b, _), (r, _) in zip(figures["taotoken bench"],
                                                            figures["raw asyncio client"], strict=True))
    print(f"  {'ok  ' if ratio <= 1.3 else 'MISS'} bench / reference CPU per request, median of the rounds' "
          f"ratios = {ratio:.2f}  (goal <= 1.3); load average {min(loads):.1f}-{max(loads):.1f}; event loop "
          f"(both): {', '.join(sorted(loops))}")


if __name__ == "__main__":
    main()
