"""CPU per request of `taotoken bench` against the practical Python limit, in one run:

    python benchmarks/bench_cpu.py [--requests 4000] [--rounds 11] [-c 50] [--loop default|asyncio|both]

The server is the product's mock in its own process (MockProcess, -q) answering at once (latency 0), so the
client's own cost is what is measured. The reference is a raw asyncio client written here: one process, one
event loop, `c` keep-alive connections each an asyncio.Protocol that sends the same POST and waits for
Content-Length bytes — no parsing of the answer, no statistics, no workers. It is what a Python load client
cannot beat by much. bench runs as users run it (`python -m taotoken_cli bench -n N -c C --json`, its default
workers: one per core).

The package's modules are compiled to bytecode first (an installed package has its .pyc files; with
PYTHONDONTWRITEBYTECODE set, each run would compile them again, ~60 ms of start-up that users do not pay).

What is measured: the user + system CPU time of the client's process tree (os.wait4: the process and the
workers it reaped), for two sizes of run, N and 5N requests. Their difference is what the requests cost:
  marginal CPU per request = (cpu(5N) - cpu(N)) / 4N      (no start-up in it)
  start-up CPU             = cpu(N) - N * marginal         (the intercept: interpreter, imports, workers)
  total CPU per request    = cpu(5N) / 5N                  (start-up included, as users pay it at that size)
Each figure is the median over the rounds of its per-round value. Within a round every variant and size takes
its turn (the order rotates from round to round), so a busier minute of the shared machine weighs on all
alike; the load average is printed beside the figures. Throughput is each client's own: bench's JSON
requests_per_s, and the reference's requests over the time from its first connection to its last answer.

The loop: both clients run on the loop bench would use (uvloop when installed, unless TAOTOKEN_BENCH_LOOP=
asyncio); `--loop asyncio` runs both on asyncio's, `--loop both` measures both loops in the same rounds.
uvloop makes the reference's socket work cheaper than Python can make bench's per-request bookkeeping, so the
ratio depends on the loop; both clients always share one.

The goal (issue 25): bench's marginal CPU per request <= 1.3x the reference's on the same loop; the verdict
line says, per loop, the ratio (median of the rounds' ratios) and whether it is met, with the quartiles of the
rounds' ratios: on a shared machine single rounds range widely (about 1.0 to 1.6 here), so the default is 11 rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
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
GOAL = 1.3
REFERENCE, BENCH = "raw asyncio client", "taotoken bench"


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


async def _reference(host: str, port: int, path: str, n: int, c: int) -> float:
    body = json.dumps({"model": "instant", "messages": [{"role": "user", "content": "Say OK."}],
                       "max_tokens": 16}).encode()
    request = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {KEY}\r\n"
               f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    state = {"n": n, "started": 0, "done": 0}
    started = time.perf_counter()
    conns = [await loop.create_connection(lambda: _Conn(request, state, done), host, port) for _ in range(c)]
    await done
    elapsed = time.perf_counter() - started
    for transport, _protocol in conns:
        transport.close()
    return elapsed


def reference_main(spec: dict) -> None:
    from taotoken_cli.cmd.bench.loop import run_loop  # the same loop choice as bench (uvloop if installed)

    elapsed = run_loop(_reference(spec["host"], spec["port"], spec["path"], spec["n"], spec["c"]))
    print(json.dumps({"requests": spec["n"], "requests_per_s": spec["n"] / elapsed, "event_loop": None}))


# -- measuring -----------------------------------------------------------------------------------
def timed(cmd: list[str], env: dict, cores: set[int] | None) -> tuple[int, float, float, str | None]:
    """Run one client (on `cores` when given): (requests, CPU seconds of its process tree, its own requests/s, the
    loop it named)."""
    pin = (lambda: os.sched_setaffinity(0, cores)) if cores else None
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, cwd=REPO,  # `-m` reads the cwd first
                                preexec_fn=pin)
        _, status, usage = os.wait4(proc.pid, 0)
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status):
            raise SystemExit(f"{cmd[2:4]} failed: {err.read().decode()[-2000:]}")
        data = json.loads(out.read())
    if "series" in data:
        series = data["series"][0]
        return series["requests"], usage.ru_utime + usage.ru_stime, series["requests_per_s"], \
            data["load"].get("event_loop")
    return data["requests"], usage.ru_utime + usage.ru_stime, data["requests_per_s"], None


def place(server_pid: int, shared: bool) -> set[int] | None:
    """The server on the first core and the clients on the others (None: everything shares every core).

    A zero-delay server is busy all the time: on shared cores a client's CPU per request depends on how the
    scheduler interleaves it with the server (how many answers each wake-up finds), and a client of two worker
    processes pays more for that than one of a single process. Apart, each client has its cores to itself, as
    it has when the gateway is another machine, and bench's default workers are one per core it may use."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_setaffinity") else []
    if shared or len(cores) < 2:
        print(f"cores: server and clients share {len(cores) or os.cpu_count()}")
        return None
    for task in os.listdir(f"/proc/{server_pid}/task"):  # every thread of it (affinity is per thread)
        os.sched_setaffinity(int(task), {cores[0]})
    print(f"cores: the server on core {cores[0]}, the clients on {', '.join(map(str, cores[1:]))}")
    return set(cores[1:])


def commands(url: str, port: int, n: int, args) -> dict[str, list[str]]:
    spec = json.dumps({"host": "127.0.0.1", "port": port, "path": "/api/v1/chat/completions", "n": n, "c": args.c})
    return {REFERENCE: [sys.executable, __file__, "--reference", spec],
            BENCH: [sys.executable, "-m", "taotoken_cli", "bench", "--base-url", url, "-m", "instant", "-n", str(n),
                    "-c", str(args.c), "--json", *(["--workers", str(args.workers)] if args.workers else [])]}


def main() -> None:
    parser = argparse.ArgumentParser(description="bench's CPU per request vs a raw asyncio client")
    parser.add_argument("--requests", "-n", type=int, default=4000, help="N: the runs are N and 5N requests")
    parser.add_argument("-c", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--loop", choices=("default", "asyncio", "both"), default="default",
                        help="default: the loop bench uses (uvloop if installed, or TAOTOKEN_BENCH_LOOP)")
    parser.add_argument("--workers", type=int, help="bench's --workers (default: bench's own default, one per core)")
    parser.add_argument("--shared-cores", action="store_true",
                        help="let the server and the clients share every core (default: the server on core 0, "
                             "the clients on the others)")
    parser.add_argument("--reference", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference:
        reference_main(json.loads(args.reference))
        return
    from taotoken_cli.cmd.mock import MockOptions, MockProcess

    env = dict(os.environ, PYTHONPATH=str(REPO), TAOTOKEN_API_KEY=KEY)
    # as installed: with the modules' bytecode cached (pip compiles it), not compiled anew by each run
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(REPO / "taotoken_cli", quiet=1)
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        env.pop(name, None)
    loops = {"default": [env.get("TAOTOKEN_BENCH_LOOP", "") or "default"], "asyncio": ["asyncio"],
             "both": ["default", "asyncio"]}[args.loop]
    sizes = (args.requests, 5 * args.requests)
    print(f"cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}; -n {sizes[0]} and {sizes[1]}, "
          f"-c {args.c}, zero-delay server, {args.rounds} rounds (variants and sizes take turns)")
    # (loop, client, size) -> per round (requests, cpu, requests/s)
    runs: dict[tuple[str, str, int], list[tuple[int, float, float]]] = {}
    named: dict[str, set[str]] = {loop: set() for loop in loops}  # the loop bench's JSON says it ran on
    loads = []
    with MockProcess(MockOptions(key=KEY, latency_ms=0, keep_requests=1), log=False) as srv:
        client_cores = place(srv.proc.pid, args.shared_cores)
        turns = [(loop, client, size) for loop in loops for client in (REFERENCE, BENCH) for size in sizes]
        for round_ in range(args.rounds):
            loads.append(os.getloadavg()[0])
            shift = round_ % len(turns)
            for loop, client, size in turns[shift:] + turns[:shift]:
                run_env = dict(env)
                if loop == "asyncio":
                    run_env["TAOTOKEN_BENCH_LOOP"] = "asyncio"
                else:
                    run_env.pop("TAOTOKEN_BENCH_LOOP", None)
                requests, cpu, rate, event_loop = timed(commands(srv.url, srv.port, size, args)[client], run_env,
                                                        client_cores)
                runs.setdefault((loop, client, size), []).append((requests, cpu, rate))
                if event_loop:
                    named[loop].add(event_loop)
    med = statistics.median
    for loop in loops:
        print(f"event loop: {', '.join(sorted(named[loop])) or loop} (both clients)")
        marginal: dict[str, list[float]] = {}
        for client in (REFERENCE, BENCH):
            small, big = runs[(loop, client, sizes[0])], runs[(loop, client, sizes[1])]
            marginal[client] = [(b[1] - s[1]) / (b[0] - s[0]) for s, b in zip(small, big, strict=True)]
            startup = [s[1] - s[0] * m for s, m in zip(small, marginal[client], strict=True)]
            total = [b[1] / b[0] for b in big]
            print(f"  {client:<20} marginal {med(marginal[client]) * 1e6:5.1f} us/request "
                  f"(rounds: {', '.join(f'{m * 1e6:.1f}' for m in marginal[client])}); start-up "
                  f"{med(startup):.2f} s CPU; total {med(total) * 1e6:5.1f} us/request at -n {sizes[1]}; "
                  f"{med(b[2] for b in big):,.0f} req/s")
        ratios = [b / r for b, r in zip(marginal[BENCH], marginal[REFERENCE], strict=True)]
        ratio = med(ratios)
        spread = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratio, ratio, ratio]
        print(f"  {'ok  ' if ratio <= GOAL else 'MISS'} marginal CPU per request, bench / reference = {ratio:.2f} "
              f"(median of the rounds' ratios, quartiles {spread[0]:.2f}-{spread[2]:.2f}: "
              f"{', '.join(f'{r:.2f}' for r in ratios)}; goal <= {GOAL})")
    print(f"load average during the rounds: {min(loads):.1f}-{max(loads):.1f} (now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
