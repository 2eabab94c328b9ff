"""bench's own Python per request, without the sockets: the engine's closed loop (Runner.closed, one worker) on a
transport that answers each request on the next turn of the loop with a recorded answer of the mock gateway, and
beside it the raw asyncio client of bench_cpu.py on the same transport:

    python benchmarks/bench_engine.py [-n 30000] [--rounds 5]      (TAOTOKEN_BENCH_LOOP=asyncio: asyncio's loop)

No server, no system calls, one process: what is left is the Python each client runs per request (parsing, recording,
the callbacks, the loop's own scheduling), and it varies far less with the machine's load than bench_cpu.py's
end-to-end figures — the minimum of the rounds is printed. The sockets' share (write, read, epoll) is bench_cpu.py's
marginal figure for the raw client minus its figure here.

    python benchmarks/bench_engine.py --callgrind        (valgrind installed: apt-get install valgrind)

counts machine instructions per request instead: the same figure on every run whatever the machine's load, so a
change of a few percent shows (a timed run on a shared machine varies by more). Instructions are not time (a cache
miss or a slow division costs more than one), but in this code they follow it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_cpu import _Conn  # noqa: E402  (the reference client)

from taotoken_cli.cmd.bench import engine, http1  # noqa: E402
from taotoken_cli.cmd.bench.loop import frozen_heap, loop_name, run_loop  # noqa: E402
from taotoken_cli.cmd.bench.plan import SeriesPlan, Tally, split  # noqa: E402

ANSWER = (b'HTTP/1.1 200 OK\r\nServer: taotoken-mock\r\nContent-Type: application/json\r\n'
          b'X-Oneapi-Request-Id: 2026120504502200000001mock\r\nX-New-Api-Version: v0.mock-0.1.0\r\n'
          b'Content-Length: 410\r\nConnection: keep-alive\r\n\r\n'
          b'{"id":"chatcmpl-2026120504502200000001mock","object":"chat.completion","created":1796446222,'
          b'"model":"instant","system_fingerprint":"fp_mock","choices":[{"index":0,"message":{"role":"assistant",'
          b'"content":"Hello from the taotoken mock gateway: this is token text, streamed at a steady",'
          b'"refusal":null},"logprobs":null,"finish_reason":"stop"}],'
          b'"usage":{"prompt_tokens":3,"completion_tokens":16,"total_tokens":19}}')


class Echo:
    """A transport whose peer answers every write at once (on the loop's next turn)."""

    def __init__(self, protocol: asyncio.Protocol, loop: asyncio.AbstractEventLoop) -> None:
        self.protocol, self.loop = protocol, loop

    def write(self, data: bytes) -> None:
        self.loop.call_soon(self.protocol.data_received, ANSWER)

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass


async def _echo_connection(target: http1.Target, timeout: float) -> http1.Connection:
    conn = http1.Connection()
    conn.connection_made(Echo(conn, asyncio.get_running_loop()))
    return conn


async def bench_engine(n: int, c: int) -> tuple[float, str]:
    plan = SeriesPlan(root="http://127.0.0.1:9/api", api_key="sk-bench", model="instant", requests=n, concurrency=c)
    runner = engine.Runner(plan, split(plan)[0], Tally(plan))
    runner.measuring = True
    runner.stats.started_at = time.perf_counter()
    started = time.process_time()
    with frozen_heap():  # as run_worker runs the load
        await runner.closed(time.perf_counter())
    assert runner.stats.ok == n, runner.stats.ok
    return time.process_time() - started, loop_name(runner.loop)


async def raw_client(n: int, c: int) -> tuple[float, str]:
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    state = {"n": n, "started": 0, "done": 0}
    started = time.process_time()
    for _ in range(c):
        conn = _Conn(b"POST", state, done)
        conn.connection_made(Echo(conn, loop))
    await done
    return time.process_time() - started, loop_name(loop)


CLIENTS = {"raw asyncio client": raw_client, "taotoken bench engine": bench_engine}


def instructions(name: str, n: int, c: int) -> int:
    """Machine instructions one run of `name` with `n` requests executes, counted by callgrind (the whole process:
    the difference of two sizes is what the requests cost)."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__, "--one", name,
           "-n", str(n), "-c", str(c)]
    run = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONHASHSEED="0"), check=True)
    return int(re.search(r"Collected : (\d+)", run.stderr).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description="bench's own Python per request, on a transport that echoes")
    parser.add_argument("-n", type=int, default=30000)
    parser.add_argument("-c", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--callgrind", action="store_true",
                        help="count machine instructions per request under valgrind instead of timing: the same "
                             "figure on every run and every machine load (runs of n/10 and n/10 + 10000 requests)")
    parser.add_argument("--one", choices=list(CLIENTS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    http1.open_connection = _echo_connection  # the only socket bench opens, replaced by the echo
    if args.one:
        run_loop(CLIENTS[args.one](args.n, args.c))
        return
    if args.callgrind:
        small = max(1000, args.n // 10)
        print(f"machine instructions per request (callgrind; runs of {small} and {small + 10000} requests, "
              f"-c {args.c}):")
        counts = {}
        for name in CLIENTS:
            counts[name] = (instructions(name, small + 10000, args.c) - instructions(name, small, args.c)) / 10000
            print(f"  {name:<22} {counts[name]:8,.0f}")
        ratio = counts["taotoken bench engine"] / counts["raw asyncio client"]
        print(f"  bench / raw = {ratio:.2f}")
        return
    figures: dict[str, list[float]] = {name: [] for name in CLIENTS}
    loop = ""
    for _ in range(args.rounds):  # taking turns
        for name, run in CLIENTS.items():
            cpu, loop = run_loop(run(args.n, args.c))
            figures[name].append(cpu / args.n * 1e6)
    print(f"event loop: {loop}; -n {args.n} -c {args.c}; load average {os.getloadavg()[0]:.1f}")
    for name, values in figures.items():
        print(f"  {name:<22} {min(values):5.2f} us/request (min of {args.rounds}; rounds: "
              f"{', '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
