"""A minimal HTTP/1.1 keep-alive client on asyncio protocols, used only inside the bench engine.

Why not the shared httpx client: bench must measure the gateway, not itself. With one shared
httpx.AsyncClient at 50 concurrent requests against a 50 ms server, the median came out at 98 ms
and 134 req/s where `hey` saw 52 ms and 953 req/s — the client's own overhead dominated. This
client does the least work possible per request: the request bytes are built once per series, the
response is parsed inside `data_received` (no per-chunk tasks or queues), and every byte is
timestamped when it arrives, before any parsing. Each worker process owns its connections; nothing
is shared, so nothing serialises on one pool. It speaks only what bench needs: one request at a
time per connection, Content-Length / chunked / read-until-close bodies, TLS via asyncio, and HTTP
proxies (absolute-form requests for http targets, CONNECT tunnels for https ones).

URLs still come from gateway.Endpoints, headers from gateway (User-Agent, auth), stream parsing from
sse.SSEParser and error classification from classify — only the transport is bench's own.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from typing import Protocol
from urllib.parse import urlsplit

_perf = time.perf_counter


def header_fields(head: bytes) -> dict[str, str]:
    """A response head's header fields (`head`: as it arrived, status line first): names lower-cased, a repeated
    field's values joined with ", ". Parsed only where a field is needed: most answers need none."""
    fields: dict[str, str] = {}
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name in fields:
            fields[name] += ", " + value.strip()
        else:
            fields[name] = value.strip()
    return fields


class Sink(Protocol):
    """Receives one response as it arrives; `t` is perf_counter() when the bytes were read."""

    def on_head(self, status: int, head: bytes, t: float) -> None: ...  # head: as it arrived (header_fields)

    def on_body(self, data: bytes, t: float) -> None: ...

    # A sink may also set `truncated = True`: it wants no more bytes; the response ends there.


class Target:
    """Where requests go and the request head, built once; `request_bytes` is the whole request when every
    request of a series is the same, `build(body)` otherwise.

    Through an HTTP proxy (`proxy`, e.g. http://127.0.0.1:7890): an http target is asked for in absolute
    form (`POST http://host/path`) on a connection to the proxy; an https target gets a CONNECT tunnel
    through the proxy, then TLS with the gateway inside it (what curl and httpx do).
    """

    def __init__(self, url: str, headers: dict[str, str], body: bytes, *, method: str = "POST",
                 ssl_context: ssl.SSLContext | None = None, proxy: str | None = None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"unsupported URL scheme {parts.scheme!r}")
        self.url = url
        self.scheme = parts.scheme
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        host_header = parts.netloc.rsplit("@", 1)[-1]
        self.proxy = proxy
        self.tunnel = False
        self.connect_host, self.connect_port = self.host, self.port
        proxy_lines: list[str] = []
        if proxy:
            p = urlsplit(proxy)
            self.connect_host, self.connect_port = p.hostname or "", p.port or 80
            auth = proxy_authorization(p.username, p.password)
            proxy_lines = [f"Proxy-Authorization: {auth}"] if auth else []
            if self.scheme == "https":
                self.tunnel = True
                authority = f"{self.host}:{self.port}" if ":" not in self.host else f"[{self.host}]:{self.port}"
                self.connect_bytes = "\r\n".join([f"CONNECT {authority} HTTP/1.1", f"Host: {authority}",
                                                   *proxy_lines, "", ""]).encode("latin-1")
            else:
                path = f"{parts.scheme}://{host_header}{path}"  # absolute form: the proxy forwards it
        lines = [f"{method} {path} HTTP/1.1", f"Host: {host_header}"]
        if not self.tunnel:
            lines += proxy_lines
        lines += [f"{name}: {value}" for name, value in headers.items()]
        self.head = ("\r\n".join(lines) + "\r\n").encode("latin-1")
        self.request_bytes = self.build(body)
        self.ssl_context = ssl_context if self.scheme == "https" else None

    def build(self, body: bytes) -> bytes:
        return self.head + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body


def proxy_authorization(user: str | None, password: str | None) -> str | None:
    """Basic credentials from a proxy URL's user:password (percent-decoded), as httpx sends them."""
    if not user and not password:
        return None
    import base64
    from urllib.parse import unquote

    raw = f"{unquote(user or '')}:{unquote(password or '')}".encode()
    return "Basic " + base64.b64encode(raw).decode()


def default_ssl_context() -> ssl.SSLContext:
    """Same trust as the shared gateway client (gateway.tls_context: SSL_CERT_FILE, SSL_CERT_DIR, certifi)."""
    from taotoken_cli.core.net.gateway import tls_context

    return tls_context()


class ProtocolError(Exception):
    """The server sent something that is not HTTP/1.1 as bench reads it."""


class ProxyError(Exception):
    """The proxy itself failed the tunnel: it refused the CONNECT, wants credentials (407), or could not
    reach the gateway (502/503 of its own)."""


# body framing modes
_LENGTH, _CHUNKED, _UNTIL_CLOSE, _NONE = range(4)
# chunked sub-states
_C_SIZE, _C_DATA, _C_DATA_END, _C_TRAILER = range(4)


class Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._buf = bytearray()
        self._sink: Sink | None = None
        # the response in flight: told how it ended (None: complete, or the error) once, then forgotten
        self._on_done: Callable[[BaseException | None], None] | None = None
        self._receiving = False  # inside data_received: a completion is told when the chunk is handled
        self._told: tuple[Callable[[BaseException | None], None], BaseException | None] | None = None
        self._in_head = False
        self._mode = _NONE
        self._remaining = 0
        self._cstate = _C_SIZE
        self._keep_alive = True
        self._tunnel: asyncio.Future | None = None  # a CONNECT waiting for the proxy's answer
        self.end_time = 0.0
        self.fresh = True  # opened for the current request (its connect time is the request's)
        self.connect_s = 0.0  # how long opening this connection took (TCP, CONNECT, TLS)
        self.proxy_s: float | None = None  # of which the CONNECT exchange with the proxy
        self.deadline: float | None = None  # when the response in flight must be complete (Pool.watch)
        self.deadline_error: Callable[[], BaseException] | None = None

    # -- asyncio callbacks -------------------------------------------------------------------
    def connection_made(self, transport) -> None:
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._tunnel is not None and not self._tunnel.done():
            self._tunnel.set_exception(exc or ConnectionResetError("the proxy closed the connection"))
        if self._on_done is None:
            return
        if exc is None and not self._in_head and self._mode == _UNTIL_CLOSE:
            self._finish(_perf())
            return
        if exc is None:
            exc = ConnectionResetError("server closed the connection before the response was complete")
        self._tell(exc)

    def data_received(self, data: bytes) -> None:
        t = _perf()  # stamped before any parsing
        if self._tunnel is not None:
            self._tunnel_answer(data)
            return
        if self._on_done is None:
            return  # stray bytes after a finished response (or a timed-out one): ignored
        if type(data) is not bytes:  # (asyncio's Windows proactor hands over a bytearray)
            data = bytes(data)
        self._receiving = True
        try:
            if self._in_head:
                self._parse_head(data, t)
            elif data:
                self._parse_body(data, t)
            if self._on_done is not None and getattr(self._sink, "truncated", False):
                # The sink has all it will keep (an endless error page): judge the response now and drop
                # the connection instead of draining the rest.
                self._keep_alive = False
                self._finish(t)
        except Exception as exc:  # a ProtocolError, or a bug (the caller ends the run with it): this response is over
            self._fail(exc)
        finally:
            self._receiving = False
        told, self._told = self._told, None
        if told is not None:  # after the chunk: the next request may go out on this very connection
            told[0](told[1])

    def eof_received(self) -> bool | None:
        return None  # close the transport; connection_lost decides if the response was complete

    # -- CONNECT through a proxy --------------------------------------------------------------
    def handshake(self, data: bytes) -> asyncio.Future:
        """Send a CONNECT; the future resolves to (status, reason) once the proxy's answer head is in."""
        self._tunnel = asyncio.get_running_loop().create_future()
        self._buf.clear()
        self.transport.write(data)
        return self._tunnel

    def _tunnel_answer(self, data: bytes) -> None:
        buf = self._buf
        buf += data
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            if len(buf) > 65536:
                self._tunnel.set_exception(ProxyError("the proxy's answer to CONNECT is not HTTP"))
                self._tunnel = None
            return
        status_line = bytes(buf[:end]).split(b"\r\n", 1)[0].decode("latin-1")
        parts = status_line.split(" ", 2)
        future, self._tunnel = self._tunnel, None
        buf.clear()
        try:
            future.set_result((int(parts[1]), parts[2] if len(parts) > 2 else ""))
        except (IndexError, ValueError):
            future.set_exception(ProxyError(f"the proxy's answer to CONNECT is not HTTP: {status_line[:80]!r}"))

    # -- request ---------------------------------------------------------------------------
    def send(self, data: bytes, sink: Sink, on_done: Callable[[BaseException | None], None]) -> None:
        """Write one request; `on_done(None)` once the response is complete, `on_done(error)` when it failed (a
        callback, not a future: the caller may write its next request from it, as a raw client would)."""
        self._on_done = on_done
        self._sink = sink
        self._in_head = True
        self._buf.clear()
        self._mode = _NONE
        self._keep_alive = True
        self.transport.write(data)

    def abort(self, exc: BaseException) -> None:
        """Give up on the current response (timeout) and drop the connection."""
        self._fail(exc)

    def _tell(self, exc: BaseException | None) -> None:
        on_done, self._on_done = self._on_done, None
        if on_done is None:
            return
        if self._receiving:
            self._told = (on_done, exc)
        else:
            on_done(exc)

    def _fail(self, exc: BaseException) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()
        self._tell(exc)

    def _finish(self, t: float) -> None:
        self.end_time = t
        if not self._keep_alive:
            self.closed = True
            self.transport.close()
        self._tell(None)

    # -- parsing ---------------------------------------------------------------------------
    def _parse_head(self, data: bytes, t: float) -> None:
        """`data`: what arrived, after what an earlier chunk left of an unfinished head (kept in _buf).

        The framing (Content-Length, chunked, keep-alive) is read from the bytes: most answers need nothing
        else, and their header fields are parsed into a dict only when the sink asks (header_fields)."""
        buf = self._buf
        if buf:
            buf += data
            data = bytes(buf)
            buf.clear()
        while True:
            raw, found, rest = data.partition(b"\r\n\r\n")  # (head and body apart in one step: no slicing)
            if not found:
                if len(data) > 65536:
                    raise ProtocolError("response headers larger than 64 KiB")
                buf += data
                return
            known = _STATUS_LINES.get(raw[:13])  # the start of a status line seen before: "HTTP/1.1 200 "
            if known is not None:
                status, version = known
            else:
                status, version = _status_line(raw)
            if 100 <= status < 200:  # interim response (100 Continue): skip it
                data = rest
                continue
            break
        self._in_head = False
        # The usual answer: one Content-Length, no Transfer-Encoding, nothing that may say "close". Searched as
        # lower-cased text: `in` on a str is the cheapest search Python has (on bytes it first tries its operand as
        # an int, formatting a TypeError it drops; find() parses its arguments; a regex costs several times more).
        low = raw.decode("latin-1").lower()
        _, length_field, after = low.partition("\r\ncontent-length:")
        if length_field and "content-length" not in after and "transfer-encoding" not in low and "close" not in low:
            try:
                remaining = int(after.partition("\r\n")[0])
            except ValueError:
                raise ProtocolError("bad Content-Length") from None
            self._keep_alive = version == b"HTTP/1.1"
            sink = self._sink
            sink.on_head(status, raw, t)
            if len(rest) >= remaining:  # the whole body came with the head (most answers)
                if remaining:
                    sink.on_body(rest if len(rest) == remaining else rest[:remaining], t)
                self._finish(t)
                return
            self._mode, self._remaining = _LENGTH, remaining
        else:
            self._frame(status, version, header_fields(raw))
            self._sink.on_head(status, raw, t)
            if self._mode == _LENGTH and self._remaining == 0:
                self._finish(t)
                return
        if rest:
            self._parse_body(rest, t)

    def _frame(self, status: int, version: bytes, headers: dict[str, str]) -> None:
        """How the body is delimited, from the parsed header fields (the general case)."""
        connection = headers.get("connection", "").lower()
        self._keep_alive = version == b"HTTP/1.1" and "close" not in connection
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._mode, self._cstate = _CHUNKED, _C_SIZE
        elif "content-length" in headers:
            try:
                self._remaining = int(headers["content-length"])
            except ValueError:
                raise ProtocolError("bad Content-Length") from None
            self._mode = _LENGTH
        elif status in (204, 304):
            self._remaining, self._mode = 0, _LENGTH
        else:
            self._mode, self._keep_alive = _UNTIL_CLOSE, False

    def _parse_body(self, data: bytes, t: float) -> None:
        mode = self._mode
        if mode == _LENGTH:
            if len(data) >= self._remaining:
                piece = data[:self._remaining]
                self._remaining = 0
                if piece:
                    self._sink.on_body(piece, t)
                self._finish(t)
            else:
                self._remaining -= len(data)
                self._sink.on_body(data, t)
        elif mode == _CHUNKED:
            self._parse_chunked(data, t)
        elif mode == _UNTIL_CLOSE:
            self._sink.on_body(data, t)

    def _parse_chunked(self, data: bytes, t: float) -> None:
        buf = self._buf
        pos, length = 0, len(data)
        while pos < length:
            state = self._cstate
            if state == _C_DATA:
                take = min(self._remaining, length - pos)
                self._sink.on_body(data[pos:pos + take], t)
                pos += take
                self._remaining -= take
                if self._remaining == 0:
                    self._cstate = _C_DATA_END
                    self._remaining = 2
                continue
            if state == _C_DATA_END:  # the CRLF after a chunk's data
                take = min(self._remaining, length - pos)
                pos += take
                self._remaining -= take
                if self._remaining == 0:
                    self._cstate = _C_SIZE
                continue
            # _C_SIZE or _C_TRAILER: line-oriented
            nl = data.find(b"\n", pos)
            if nl < 0:
                buf += data[pos:]
                if len(buf) > 4096:
                    raise ProtocolError("chunk-size line too long")
                return
            line = bytes(buf) + data[pos:nl]
            buf.clear()
            pos = nl + 1
            line = line.rstrip(b"\r")
            if state == _C_SIZE:
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise ProtocolError(f"bad chunk size {line[:20]!r}") from None
                if size == 0:
                    self._cstate = _C_TRAILER
                else:
                    self._cstate, self._remaining = _C_DATA, size
            elif not line:  # the empty line that ends the trailer: response complete
                self._finish(t)
                return


# "HTTP/1.1 200 " (or "...200\r" without a reason phrase) -> (200, b"HTTP/1.1"): filled by _status_line as status
# lines come, read with one dict lookup after (at most 2 versions x 900 codes x 3 endings)
_STATUS_LINES: dict[bytes, tuple[int, bytes]] = {}


def _status_line(raw: bytes) -> tuple[int, bytes]:
    """A head's status code and HTTP version (ProtocolError when it is not an HTTP response)."""
    status_line = raw.split(b"\r\n", 1)[0].split(b" ", 2)
    if len(status_line) < 2 or not status_line[0].startswith(b"HTTP/"):
        raise ProtocolError(f"not an HTTP response: {_first_line(raw)!r}")
    version, code = status_line[0], status_line[1]
    try:
        status = int(code)
    except ValueError:
        raise ProtocolError(f"bad status line: {_first_line(raw)!r}") from None
    if version in (b"HTTP/1.1", b"HTTP/1.0") and len(code) == 3 and code.isdigit() and raw[12:13] in (b" ", b"\r", b""):
        _STATUS_LINES[raw[:13]] = (status, version)
    return status, version


def _first_line(raw: bytes) -> str:
    return raw.split(b"\r\n", 1)[0].decode("latin-1")[:80]


async def open_connection(target: Target, timeout: float) -> Connection:
    """A connection ready for requests: straight to the server, to a forwarding proxy, or through a
    CONNECT tunnel (then TLS inside it). Its `connect_s` and `proxy_s` say what opening it cost."""
    loop = asyncio.get_running_loop()

    async def connect() -> Connection:
        started = _perf()
        if not target.tunnel:
            ssl_context = None if target.proxy else target.ssl_context
            _transport, conn = await loop.create_connection(
                Connection, target.connect_host, target.connect_port, ssl=ssl_context,
                server_hostname=target.host if ssl_context else None)
        else:
            transport, conn = await loop.create_connection(Connection, target.connect_host, target.connect_port)
            asked = _perf()
            try:
                status, reason = await conn.handshake(target.connect_bytes)
            except OSError as exc:
                transport.abort()
                raise ProxyError(f"the proxy closed the connection on CONNECT {target.host}:{target.port}") from exc
            conn.proxy_s = _perf() - asked
            if status != 200:
                transport.abort()
                raise ProxyError(f"{status} {reason} from the proxy on CONNECT {target.host}:{target.port}".strip())
            conn.transport = await loop.start_tls(transport, conn, target.ssl_context, server_hostname=target.host)
        conn.connect_s = _perf() - started
        return conn

    return await asyncio.wait_for(connect(), timeout)


class Pool:
    """At most `size` connections of one worker; idle ones are reused (keep-alive).

    It also ends responses that run past their deadline (`watch`): one timer for the whole pool, set for the
    earliest deadline of the requests in flight, instead of a timer per request (a timer is a heap entry and a
    handle to cancel: a noticeable share of a request's CPU at zero delay)."""

    def __init__(self, target: Target, size: int, connect_timeout: float) -> None:
        self.target = target
        self.size = size
        self.connect_timeout = connect_timeout
        self._idle: list[Connection] = []
        self._open: list[Connection] = []  # every connection opened and not yet seen closed
        self.opened = 0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = float("inf")  # perf_counter() time the timer is set for

    def idle(self) -> Connection | None:
        """An idle connection to reuse now, or None (then `await open()`)."""
        idle = self._idle
        while idle:
            conn = idle.pop()
            if not conn.closed:
                conn.fresh = False
                return conn
        return None

    async def open(self) -> Connection:
        """A new connection (`fresh` is set on it until it is reused)."""
        self.opened += 1
        conn = await open_connection(self.target, self.connect_timeout)
        conn.fresh = True
        self._open.append(conn)
        return conn

    async def get(self) -> Connection:
        """An idle connection, or a new one."""
        return self.idle() or await self.open()

    def put(self, conn: Connection) -> None:
        conn.deadline = None
        if not conn.closed:
            self._idle.append(conn)

    def watch(self, conn: Connection, deadline: float, error: Callable[[], BaseException]) -> None:
        """Abort `conn`'s response with `error()` unless it is complete by `deadline` (perf_counter time)."""
        conn.deadline = deadline
        conn.deadline_error = error
        if deadline < self._timer_at:
            self._arm(deadline)

    def _arm(self, at: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer_at = at
        self._timer = loop.call_at(loop.time() + max(0.0, at - _perf()), self._sweep)

    def _sweep(self) -> None:
        self._timer, self._timer_at = None, float("inf")
        now = _perf()
        earliest = float("inf")
        still_open = []
        for conn in self._open:
            deadline = conn.deadline
            if deadline is not None:
                if deadline <= now:
                    conn.deadline = None
                    conn.abort(conn.deadline_error())
                elif deadline < earliest:
                    earliest = deadline
            if not conn.closed:
                still_open.append(conn)
        self._open = still_open
        if earliest < self._timer_at:  # (an abort above may have started a request that armed it already)
            self._arm(earliest)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for conn in self._idle:
            if conn.transport is not None:
                conn.transport.close()
        self._idle.clear()
