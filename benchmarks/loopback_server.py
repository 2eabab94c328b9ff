"""A small, fast loopback chat-completions server with fixed, configurable timing (for bench).

Used by benchmarks/bench_vs_hey.py and by tests/test_bench.py. Written on asyncio protocols so it
answers tens of thousands of requests per second and its timers are exact enough to check a load
generator against known delays: each token of a stream is scheduled at an absolute time from the
request's arrival (no drift), a non-stream reply is sent exactly `--latency` after arrival.

    python -m benchmarks.loopback_server --latency 0.05 --itl 0.01 --tokens 20 \
        --profile gpu-fast=0.02,0.005,32 --profile cpu-slow=0.08,0.02,32

prints `PORT <n>` on its first stdout line. Behaviour is chosen by the request's model name:
  fail-401, rate-429 (Retry-After: 7), quota-429, nochannel (one-api 503), reset (connection reset,
  mid-stream for streams), error-event (stream with an error event), empty (stream with no content),
  nousage (stream without the usage chunk); any other model uses its --profile or the defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass


@dataclass
class Timing:
    latency: float  # seconds to the reply (non-stream) or to the first content token (stream)
    itl: float  # seconds between stream tokens
    tokens: int  # content tokens per reply


ERRORS = {
    "fail-401": (401, {"x-new-api-version": "v0.9"}, {"error": {"message": "Invalid token (request id: 2024)",
                                                                "type": "new_api_error", "code": ""}}),
    "rate-429": (429, {"retry-after": "7"}, {"error": {
        "message": "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1. "
                   "Please try again in 7s.", "type": "requests", "param": None, "code": "rate_limit_exceeded"}}),
    "quota-429": (429, {}, {"error": {"message": "You exceeded your current quota, please check your plan and "
                                                 "billing details.", "type": "insufficient_quota", "param": None,
                                      "code": "insufficient_quota"}}),
    "nochannel": (503, {"x-oneapi-request-id": "2024"}, {"error": {
        "message": "当前分组 default 下对于模型 nochannel 无可用渠道 (request id: 2024)", "type": "one_api_error",
        "param": "", "code": ""}}),
}


def _chunk(payload: dict | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    event = f"data: {data}\n\n".encode()
    return b"%x\r\n%s\r\n" % (len(event), event)


class Handler(asyncio.Protocol):
    def __init__(self, server: LoopbackServer) -> None:
        self.server = server
        self.buf = b""
        self.transport = None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def connection_lost(self, exc) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        arrived = time.perf_counter()
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(self.buf) < end + 4 + length:
                return
            body = self.buf[end + 4:end + 4 + length]
            self.buf = self.buf[end + 4 + length:]
            self.server.requests += 1
            self.handle(head.split(" ", 2)[1], body, arrived)

    # -- replies ---------------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        if self.transport is not None:
            self.transport.write(data)

    def send_json(self, status: int, obj: dict, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(obj, ensure_ascii=False).encode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.send(f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
                  f"{extra}\r\n".encode() + body)

    def handle(self, path: str, body: bytes, arrived: float) -> None:
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            request = {}
        model = str(request.get("model", ""))
        loop = asyncio.get_running_loop()
        if not path.endswith("/chat/completions"):
            self.send_json(404, {"error": {"message": f"Invalid URL (POST {path})", "type": "invalid_request_error",
                                           "code": ""}})
            return
        if model in ERRORS:
            status, headers, payload = ERRORS[model]
            self.send_json(status, payload, headers)
            return
        timing = self.server.profiles.get(model, self.server.default)
        if model == "reset" and not request.get("stream"):
            self.transport.abort()
            return
        if request.get("stream"):
            self.stream(model, timing, bool((request.get("stream_options") or {}).get("include_usage")), arrived)
            return
        reply = {"id": "chatcmpl-1", "object": "chat.completion", "model": model,
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok " * timing.tokens},
                              "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 5, "completion_tokens": timing.tokens,
                           "total_tokens": 5 + timing.tokens}}
        if timing.latency <= 0:
            self.send_json(200, reply)
        else:
            loop.call_at(arrived + timing.latency - _OFFSET, self.send_json, 200, reply)

    def stream(self, model: str, timing: Timing, include_usage: bool, arrived: float) -> None:
        loop = asyncio.get_running_loop()
        self.send(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model}
        # the role-only first chunk, at once: it is not a token and must not count as the first one
        self.send(_chunk({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}))
        tokens = 0 if model == "empty" else timing.tokens
        start = arrived - _OFFSET + timing.latency
        tail = [_chunk({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})]
        if include_usage and model != "nousage":
            tail.append(_chunk({**base, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": tokens,
                                                                 "total_tokens": 5 + tokens}}))
        tail.append(_chunk("[DONE]"))
        # Each token's callback schedules the next one at its absolute time: timers due at the same
        # instant may run in any order, and a token must never overtake another or the tail.
        loop.call_at(start, self._token, model, base, 0, tokens, start, timing.itl, b"".join(tail))

    def _token(self, model: str, base: dict, k: int, tokens: int, start: float, itl: float, tail: bytes) -> None:
        if self.transport is None:
            return
        if model == "reset" and k == 2:
            self.transport.abort()
            return
        if model == "error-event" and k == 1:
            err = {"error": {"message": "upstream overloaded", "type": "server_error", "code": "overloaded"}}
            self._end([_chunk(err)])
            return
        out = b""
        if k < tokens:
            out = _chunk({**base, "choices": [{"index": 0, "delta": {"content": f"t{k} "}}]})
        if k >= tokens - 1:
            self.send(out + tail + b"0\r\n\r\n")
            return
        self.send(out)
        asyncio.get_running_loop().call_at(start + (k + 1) * itl, self._token, model, base, k + 1, tokens, start,
                                           itl, tail)

    def _end(self, chunks: list[bytes]) -> None:
        self.send(b"".join(chunks) + b"0\r\n\r\n")



# asyncio's loop.time() is time.monotonic(); perf_counter() is the same clock on Linux but may differ
# elsewhere, so timers convert with a fixed offset measured once.
_OFFSET = time.perf_counter() - time.monotonic()


class LoopbackServer:
    def __init__(self, default: Timing, profiles: dict[str, Timing]) -> None:
        self.default = default
        self.profiles = profiles
        self.requests = 0

    async def serve(self, host: str = "127.0.0.1", port: int = 0) -> asyncio.AbstractServer:
        loop = asyncio.get_running_loop()
        return await loop.create_server(lambda: Handler(self), host, port, backlog=1024)


def _parse_profile(text: str) -> tuple[str, Timing]:
    name, _, spec = text.partition("=")
    latency, itl, tokens = spec.split(",")
    return name, Timing(float(latency), float(itl), int(tokens))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to reply / to the first token")
    parser.add_argument("--itl", type=float, default=0.0, help="seconds between stream tokens")
    parser.add_argument("--tokens", type=int, default=8)
    parser.add_argument("--profile", action="append", default=[], help="MODEL=latency,itl,tokens")
    args = parser.parse_args(argv)
    server = LoopbackServer(Timing(args.latency, args.itl, args.tokens), dict(map(_parse_profile, args.profile)))

    async def run() -> None:
        srv = await server.serve(port=args.port)
        print("PORT", srv.sockets[0].getsockname()[1], flush=True)
        await srv.serve_forever()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
