"""One request's response as bench reads it: stamped and parsed as bytes arrive, nothing kept but
what the figures and the classifier need; and bench's transport failures in httpx's terms, so the
shared classifier reads them like the gateway client's."""

from __future__ import annotations

import asyncio

from taotoken_cli.cmd.bench import http1

BODY_LIMIT = 1 << 20  # non-stream bodies are kept only until the request is judged (same bound as gateway)


class Exchange:
    """The sink for one response: stamps and parses bytes as they arrive, keeps no stream text."""

    __slots__ = ("stream", "t_ref", "status", "headers", "body", "sse", "parser", "summary", "last", "gaps",
                 "head_t", "truncated", "usage")

    def __init__(self, stream: bool, t_ref: float) -> None:
        self.stream = stream
        self.t_ref = t_ref
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.sse = False
        self.parser = None
        self.summary = None
        self.last: float | None = None
        self.gaps: list[float] = []
        self.head_t = 0.0
        self.truncated = False
        self.usage: dict | None = None  # a plain answer's usage, once read

    def on_head(self, status: int, headers: dict[str, str], t: float) -> None:
        self.status, self.headers, self.head_t = status, headers, t
        if self.stream and 200 <= status < 300 and headers.get("content-type", "").startswith("text/event-stream"):
            from taotoken_cli.core.net.gateway import StreamSummary
            from taotoken_cli.core.net.sse import SSEParser

            self.sse = True
            self.parser = SSEParser()
            self.summary = StreamSummary()

    def on_body(self, data: bytes, t: float) -> None:
        if self.sse:
            self._events(self.parser.feed(data), t)
        elif len(self.body) < BODY_LIMIT:
            self.body += data[:BODY_LIMIT - len(self.body)]
        else:
            self.truncated = True

    def finish_stream(self, t: float) -> None:
        if self.sse:
            self._events(self.parser.close(), t)

    def _events(self, events: list, t: float) -> None:
        from taotoken_cli.core.net.gateway import absorb_event

        summary = self.summary
        for event in events:
            before = summary.content_deltas
            absorb_event(summary, event, t - self.t_ref)
            summary.text = ""  # bench keeps no response text
            if summary.content_deltas != before:
                if self.last is not None:
                    self.gaps.append(t - self.last)
                self.last = t


def decoded(ex: Exchange) -> bytes:
    """The body as the classifier must read it: gzip/deflate undone (bench asks for no encoding, but an
    error page from a proxy may come compressed anyway), bounded like the body itself."""
    body = bytes(ex.body)
    encoding = ex.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("gzip", "x-gzip", "deflate") or not body:
        return body
    import zlib

    try:
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 32 if encoding != "deflate" else zlib.MAX_WBITS)
        return inflater.decompress(body, BODY_LIMIT)
    except zlib.error:
        return body  # not what the header says: classified as the raw bytes (resp.not_json)


def as_httpx_error(exc: BaseException, connecting: bool) -> BaseException:
    """The exception httpx would have raised, so classify() reads bench's failures like the gateway client's."""
    import socket
    import ssl

    import httpx

    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        cls = httpx.ConnectTimeout if connecting else httpx.ReadTimeout
    elif isinstance(exc, http1.ProxyError):
        cls = httpx.ProxyError
    elif isinstance(exc, (socket.gaierror, ssl.SSLError, ConnectionRefusedError)) or connecting:
        cls = httpx.ConnectError
    elif isinstance(exc, http1.ProtocolError) or (isinstance(exc, ConnectionResetError) and not exc.errno):
        cls = httpx.RemoteProtocolError
    elif isinstance(exc, OSError):
        cls = httpx.ReadError
    else:
        return exc
    text = str(exc) or type(exc).__name__
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)) and not str(exc):
        text = "timed out"
    mapped = cls(text)
    mapped.__cause__ = exc
    return mapped
