"""Quick throughput check of the mock gateway: N keep-alive connections, raw sockets, fixed duration.

    python scripts/mock_throughput.py [--seconds 3] [--connections 50] [--stream] [--latency-ms 0]
                                      [--token-rate 0] [--tokens 16] [--subprocess | --mock-process]

The load generator is deliberately minimal (raw HTTP/1.1 over keep-alive sockets, asyncio) so it
measures the server, not an HTTP client library. With --subprocess the mock runs in its own
process (`python -m taotoken_cli mock`), which is how a benchmark should run it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEY = "sk-THROUGHPUTkey0123456789abcdefWXYZ"


async def worker(port: int, request: bytes, stop_at: float, counts: list[int], latencies: list[float]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    loop = asyncio.get_running_loop()
    while loop.time() < stop_at:
        started = loop.time()
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        if b"chunked" in head:
            await reader.readuntil(b"\r\n0\r\n\r\n")
        else:
            length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
            await reader.readexactly(length)
        latencies.append(loop.time() - started)
        counts[0] += 1
    writer.close()


async def load(port: int, seconds: float, connections: int, stream: bool) -> tuple[int, list[float]]:
    body = json.dumps({"model": "gpt-4o-mini", "stream": stream, "max_tokens": 16,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = (b"POST /api/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + KEY.encode()
               + b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    counts = [0]
    latencies: list[float] = []
    stop_at = asyncio.get_running_loop().time() + seconds
    await asyncio.gather(*(worker(port, request, stop_at, counts, latencies) for _ in range(connections)))
    return counts[0], latencies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--latency-ms", type=float, default=0)
    parser.add_argument("--token-rate", type=float, default=0, help="paced streams: tokens per second")
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--subprocess", action="store_true", help="`taotoken mock -q` in a subprocess")
    parser.add_argument("--mock-process", action="store_true", help="MockProcess (subprocess + JSON log)")
    args = parser.parse_args()
    proc = None
    if args.subprocess:
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        proc = subprocess.Popen([sys.executable, "-m", "taotoken_cli", "mock", "--port", "0", "--key", KEY, "-q",
                                 "--latency-ms", str(args.latency_ms), "--token-rate", str(args.token_rate),
                                 "--tokens", str(args.tokens)], stdout=subprocess.PIPE, text=True, env=env)
        port = int(re.search(r"port (\d+)", proc.stdout.readline()).group(1))
        mock = None
    else:
        from taotoken_cli.cmd.mock import MockGateway, MockOptions, MockProcess

        kind = MockProcess if args.mock_process else MockGateway
        mock = kind(MockOptions(key=KEY, latency_ms=args.latency_ms, token_rate=args.token_rate, tokens=args.tokens,
                                keep_requests=1000)).start()
        port = mock.port
    try:
        cpu_before = _cpu_seconds(proc.pid) if proc is not None else None
        started = time.perf_counter()
        count, latencies = asyncio.run(load(port, args.seconds, args.connections, args.stream))
        elapsed = time.perf_counter() - started
        cpu = _cpu_seconds(proc.pid) - cpu_before if proc is not None else None
    finally:
        if mock is not None:
            mock.close()
        if proc is not None:
            proc.terminate()
            proc.wait(5)
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[int(len(latencies) * 0.99)] * 1000
    where = "subprocess -q" if args.subprocess else ("MockProcess" if args.mock_process else "MockGateway thread")
    print(f"{count} requests in {elapsed:.2f}s = {count / elapsed:.0f} req/s "
          f"(c={args.connections}, stream={args.stream}, latency={args.latency_ms:g} ms, "
          f"token rate {args.token_rate:g}/s, mock {where}); "
          f"client-side p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    if cpu is not None:  # robust on a shared machine, where req/s moves with the other processes' load
        print(f"mock process CPU: {cpu / count * 1e6:.0f} us per request ({cpu:.2f} s user+sys)")


def _cpu_seconds(pid: int) -> float:
    """user + system CPU time of a process (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
