"""A small asyncio HTTP server for what pytest-httpserver cannot do: resets, stalls, trickling
streams, truncated chunked bodies, proxies that answer 407 or 403 themselves, a tiny forwarding proxy,
a corrupt gzip body.

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


SQUID_DENIED_PAGE = (b"<!DOCTYPE html><html><head><title>ERROR: The requested URL could not be retrieved</title>"
                     b"</head><body><p>Access control configuration prevents your request from being allowed at "
                     b"this time.</p></body></html>")


async def proxy_403(request: bytes, writer: asyncio.StreamWriter) -> None:
    """A squid-like proxy whose rules deny the destination: its own 403 page, for plain requests and CONNECT."""
    writer.write(b"HTTP/1.1 403 Forbidden\r\nServer: squid/5.7\r\nMime-Version: 1.0\r\n"
                 b"Content-Type: text/html;charset=utf-8\r\nContent-Length: %d\r\n"
                 b"X-Squid-Error: ERR_ACCESS_DENIED 0\r\nVary: Accept-Language\r\nContent-Language: en\r\n"
                 b"Via: 1.1 proxy.test (squid/5.7)\r\nConnection: close\r\n\r\n%s"
                 % (len(SQUID_DENIED_PAGE), SQUID_DENIED_PAGE))
    await writer.drain()
    writer.close()


async def forwarding_proxy(request: bytes, writer: asyncio.StreamWriter) -> None:
    """A real (tiny) forward proxy for plain http: sends the request on to its target and relays the
    answer with a Via header added, as squid does for answers it did not write itself."""
    from urllib.parse import urlsplit

    head, _, body = request.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    method, target, version = lines[0].split(b" ", 2)
    url = urlsplit(target.decode())
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    kept = [line for line in lines[1:] if not line.lower().startswith((b"proxy-", b"connection:"))]
    upstream_request = b"\r\n".join([method + b" " + path.encode() + b" " + version, *kept,
                                      b"Connection: close"]) + b"\r\n\r\n" + body
    reader, upstream = await asyncio.open_connection(url.hostname, url.port or 80)
    upstream.write(upstream_request)
    await upstream.drain()
    answer = await reader.read(-1)
    upstream.close()
    status_line, _, rest = answer.partition(b"\r\n")
    writer.write(status_line + b"\r\nVia: 1.1 proxy.test (squid/5.7)\r\n" + rest)
    await writer.drain()
    writer.close()


async def bad_gzip(request: bytes, writer: asyncio.StreamWriter) -> None:
    body = b"this is not gzip data at all"
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
                 b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    writer.close()


async def reset_mid_headers(request: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: applica")
    await writer.drain()
    await asyncio.sleep(0.05)
    _reset(writer)


async def drip_headers(request: bytes, writer: asyncio.StreamWriter) -> None:
    """Slowloris in reverse: one header byte every 50 ms, so no single read ever times out."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"x" * 4000
    for byte in head:
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(0.05)


async def drip_body(request: bytes, writer: asyncio.StreamWriter) -> None:
    """Headers at once, then one body byte every 50 ms (the whole body would take minutes)."""
    body = MODELS_BODY + b" " * 4000
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
    for byte in body:
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(0.05)


ENDLESS_SENT: dict[int, int] = {}  # server port -> bytes of the endless body written before the client left


async def endless_body(request: bytes, writer: asyncio.StreamWriter) -> None:
    """A 500 whose body never ends (a runaway proxy page): the client must stop reading on its own."""
    port = writer.get_extra_info("sockname")[1]
    writer.write(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n")
    piece = _chunk(b"internal server error " + b"x" * 65000)
    ENDLESS_SENT[port] = 0
    while ENDLESS_SENT[port] < 1 << 30:
        writer.write(piece)
        await writer.drain()
        ENDLESS_SENT[port] += len(piece)


def _plain(status: bytes, body: bytes, *extra: bytes, ctype: bytes = b"application/json") -> bytes:
    head = b"HTTP/1.1 " + status + b"\r\nContent-Type: " + ctype + b"\r\nContent-Length: %d\r\n" % len(body)
    return head + b"".join(h + b"\r\n" for h in extra) + b"Connection: close\r\n\r\n" + body


async def invalid_utf8(request: bytes, writer: asyncio.StreamWriter) -> None:
    body = b'{"error":{"message":"invalid token \xff\xfe\xc3(","type":"new_api_error"}}'
    writer.write(_plain(b"401 Unauthorized", body))
    await writer.drain()
    writer.close()


async def invalid_json(request: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(_plain(b"200 OK", b'{"object":"list","data":[{"id":"gpt-4o-mini"'))
    await writer.drain()
    writer.close()


QUOTA_BODY = (b'{"error":{"message":"You exceeded your current quota, please check your plan and billing details.",'
              b'"type":"insufficient_quota","code":"insufficient_quota"}}')


async def gzip_error(request: bytes, writer: asyncio.StreamWriter) -> None:
    """A 429 whose body is gzip-encoded: only a decoded body tells quota (never retry) from a rate limit."""
    import gzip

    writer.write(_plain(b"429 Too Many Requests", gzip.compress(QUOTA_BODY), b"Content-Encoding: gzip"))
    await writer.drain()
    writer.close()


REDIRECT_TO: dict[str, str] = {"location": ""}


async def redirect(request: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(_plain(b"307 Temporary Redirect", b"", b"Location: " + REDIRECT_TO["location"].encode()))
    await writer.drain()
    writer.close()


async def stream_no_done(request: bytes, writer: asyncio.StreamWriter) -> None:
    """Content, then a clean end of the chunked body (no reset), but never `data: [DONE]`."""
    writer.write(SSE_HEAD + _chunk(_content_event("Hel")) + _chunk(_content_event("lo")) + b"0\r\n\r\n")
    await writer.drain()
    writer.close()


MODES: dict[str, Handler] = {
    "stall": stall, "reset_mid_body": reset_mid_body, "slow_stream": slow_stream,
    "truncated_stream": truncated_stream, "proxy_407": proxy_407, "bad_gzip": bad_gzip,
    "reset_mid_headers": reset_mid_headers, "drip_headers": drip_headers, "drip_body": drip_body,
    "endless_body": endless_body, "invalid_utf8": invalid_utf8, "invalid_json": invalid_json,
    "gzip_error": gzip_error, "redirect": redirect, "stream_no_done": stream_no_done, "proxy_403": proxy_403,
    "forwarding_proxy": forwarding_proxy, "forward": forwarding_proxy,
}


_STREAM_MODES = (slow_stream, truncated_stream, stream_no_done)
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
