"""A small asyncio HTTP server for what pytest-httpserver cannot do: resets, stalls, trickling
streams, truncated chunked bodies, a proxy that answers 407, a corrupt gzip body.

It runs in a background thread on 127.0.0.1, port 0. Each `mode` is a coroutine that gets the
parsed request and the raw writer, and misbehaves in its own way.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Awaitable, Callable

Handler = Callable[[bytes, asyncio.StreamWriter], Awaitable[None]]

SSE_HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
            b"Cache-Control: no-cache\r\n\r\n")


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _content_event(text: str) -> bytes:
    return (b'data: {"object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"'
            + text.encode() + b'"}}]}\n\n')


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with RST instead of FIN (SO_LINGER 0): what a crashing proxy or firewall does."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def stall(request: bytes, writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(30)


async def reset_mid_body(request: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n"
                 b'{"object":"list","data":[{"id":"gpt-4o-mini"},')
    await writer.drain()
    await asyncio.sleep(0.05)
    _reset(writer)


async def slow_stream(request: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(SSE_HEAD)
    for _ in range(200):
        writer.write(_chunk(_content_event("x")))
        await writer.drain()
        await asyncio.sleep(0.2)


async def truncated_stream(request: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(SSE_HEAD + _chunk(_content_event("Hel")) + _chunk(_content_event("lo")))
    await writer.drain()
    await asyncio.sleep(0.05)
    _reset(writer)


async def proxy_407(request: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"proxy\"\r\n"
                 b"Content-Length: 0\r\nConnection: close\r\n\r\n")
    await writer.drain()
    writer.close()


async def bad_gzip(request: bytes, writer: asyncio.StreamWriter) -> None:
    body = b"this is not gzip data at all"
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
                 b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    writer.close()


MODES: dict[str, Handler] = {
    "stall": stall, "reset_mid_body": reset_mid_body, "slow_stream": slow_stream,
    "truncated_stream": truncated_stream, "proxy_407": proxy_407, "bad_gzip": bad_gzip,
}


_STREAM_MODES = (slow_stream, truncated_stream)
MODELS_BODY = b'{"object":"list","data":[{"id":"gpt-4o-mini","object":"model"}]}'


class RawServer:
    def __init__(self, mode: str) -> None:
        self.handler = MODES[mode]
        self.port = 0
        self.requests: list[bytes] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server: asyncio.AbstractServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:  # keep-alive: the models request and the chat request may share a connection
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await asyncio.wait_for(reader.readexactly(length), 5) if length else b""
                self.requests.append(head + body)
                first_line = head.split(b"\r\n")[0]
                if self.handler in _STREAM_MODES and first_line.startswith(b"GET ") and b"/v1/models" in first_line:
                    # stream modes misbehave on the chat call only; the models list before it is fine
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                                 % (len(MODELS_BODY), MODELS_BODY))
                    await writer.drain()
                    continue
                await self.handler(head + body, writer)
                break
        except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            if not writer.transport.is_closing():
                writer.close()

    def __enter__(self) -> RawServer:
        self._thread.start()
        if not self._ready.wait(5):
            raise RuntimeError("raw test server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then released)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


class FullBacklog:
    """A listening socket whose accept queue is full: new connects time out (SYNs are dropped)."""

    def __enter__(self) -> FullBacklog:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(0)
        self.port = self.sock.getsockname()[1]
        self.fillers = []
        for _ in range(3):
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", self.port))
            self.fillers.append(filler)
        return self

    def __exit__(self, *exc: object) -> None:
        for filler in self.fillers:
            filler.close()
        self.sock.close()
