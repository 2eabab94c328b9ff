"""The HTTP/1.1 server (asyncio Protocol level) and the two ways to run it.

- `MockServer`: runs on the caller's event loop (`await server.start()`).
- `MockGateway`: runs its own loop in a background thread, for tests and benchmarks:
  `with MockGateway(MockOptions(key=...)) as mock: httpx.get(mock.url + "/v1/models", ...)`.
- `serve()`: the foreground loop behind `taotoken mock`, stopped cleanly by SIGINT/SIGTERM.

Delays are timer callbacks at absolute loop times from the request's arrival (arrival + latency
for the headers and the first token, arrival + latency + i/token_rate for token i), so they do
not drift with processing time or late wake-ups; each model may have its own timing. A reply
with no delay is written synchronously from `data_received` without creating a timer or task.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from taotoken_cli.cmd.mock.capacity import Slots
from taotoken_cli.cmd.mock.error_bodies import REASONS
from taotoken_cli.cmd.mock.options import MockOptions
from taotoken_cli.cmd.mock.records import RequestRecord
from taotoken_cli.cmd.mock.router import Reply, Request, Router
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.net.urlform import OPENAI_V1

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 16 * 1024 * 1024


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _encode_chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _decode_chunked(buf: bytearray, start: int) -> tuple[bytes, int] | None:
    """Decode a chunked request body beginning at `start`; None until it is complete."""
    parts: list[bytes] = []
    pos = start
    while True:
        line_end = buf.find(b"\r\n", pos)
        if line_end < 0:
            return None
        size_text = bytes(buf[pos:line_end]).split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise _BadRequest(400, "bad chunk size") from None
        pos = line_end + 2
        if size == 0:
            trailer_end = buf.find(b"\r\n\r\n", pos - 2)
            if trailer_end < 0:
                return None
            return b"".join(parts), trailer_end + 4
        if len(buf) < pos + size + 2:
            return None
        parts.append(bytes(buf[pos:pos + size]))
        pos += size + 2
        if pos - start > MAX_BODY_BYTES:
            raise _BadRequest(413, "body too large")


class _Connection(asyncio.Protocol):
    def __init__(self, server: MockServer) -> None:
        self.server = server
        self.loop = server.loop
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.busy = False
        self.timer: asyncio.TimerHandle | None = None  # the next write of a delayed or paced answer
        self.current: RequestRecord | None = None
        self.sent_continue = False

    # -- asyncio callbacks --------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.connections.add(self)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if not self.busy:
            self._process()

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.connections.discard(self)
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.current is not None:  # the client went away mid-answer (or during a stall)
            record = self.current
            if record.outcome == "ok":
                record.outcome = "client-closed"
            self._finish(record)

    # -- parsing ------------------------------------------------------------------------------
    def _parse(self) -> tuple[Request, bool] | None:
        """One complete request from the buffer (and whether to keep the connection), or None."""
        buf = self.buf
        while buf[:2] == b"\r\n":  # stray CRLF between requests is allowed
            del buf[:2]
        head_end = buf.find(b"\r\n\r\n")
        if head_end < 0:
            if len(buf) > MAX_HEAD_BYTES:
                raise _BadRequest(431, "request head too large")
            return None
        lines = bytes(buf[:head_end]).decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _BadRequest(400, "malformed request line")
        method, target, version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise _BadRequest(400, "malformed header line")
            name = name.lower()
            value = value.strip(" \t")
            headers[name] = f"{headers[name]}, {value}" if name in headers and name != "authorization" else value
        start = head_end + 4
        if "chunked" in headers.get("transfer-encoding", "").lower():
            decoded = _decode_chunked(buf, start)
            if decoded is None:
                self._maybe_continue(headers)
                return None
            body, end = decoded
        else:
            try:
                length = int(headers.get("content-length", "0"))
            except ValueError:
                raise _BadRequest(400, "bad Content-Length") from None
            if length < 0 or length > MAX_BODY_BYTES:
                raise _BadRequest(413, "body too large")
            end = start + length
            if len(buf) < end:
                self._maybe_continue(headers)
                return None
            body = bytes(buf[start:end])
        del buf[:end]
        self.sent_continue = False
        connection = headers.get("connection", "").lower()
        keep_alive = "close" not in connection if version == "HTTP/1.1" else "keep-alive" in connection
        return Request(method, target, headers, body), keep_alive

    def _maybe_continue(self, headers: dict[str, str]) -> None:
        if not self.sent_continue and headers.get("expect", "").lower() == "100-continue":
            self.sent_continue = True
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _process(self) -> None:
        while not self.busy and self.transport is not None and not self.transport.is_closing():
            try:
                parsed = self._parse()
            except _BadRequest as exc:
                body = f'{{"error":{{"message":"{exc}","type":"invalid_request_error"}}}}'.encode()
                self.transport.write(self._head(Reply(exc.status, body), False, False) + body)
                self.transport.close()
                return
            if parsed is None:
                return
            request, keep_alive = parsed
            received = self.loop.time()
            reply, record = self.server.router.handle(request, received)
            self.current = record
            self._respond(reply, record, keep_alive)

    # -- answering ----------------------------------------------------------------------------
    def _head(self, reply: Reply, keep_alive: bool, chunked: bool) -> bytes:
        lines = [f"HTTP/1.1 {reply.status} {REASONS.get(reply.status, 'Error')}", "Server: taotoken-mock"]
        if reply.content_type:
            lines.append(f"Content-Type: {reply.content_type}")
        lines.extend(f"{name}: {value}" for name, value in reply.headers)
        lines.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {len(reply.body)}")
        lines.append("Connection: keep-alive" if keep_alive else "Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")

    def _respond(self, reply: Reply, record: RequestRecord, keep_alive: bool) -> None:
        if reply.end == "stall":
            record.outcome = "stalled"
            record.status = None
            self.busy = True  # accept and never answer; the record is finished when the client gives up
            return
        keep_alive = keep_alive and reply.end == "normal"
        latency_s, interval_s, _ = reply.timing or self.server.router.options.timing_for(record.model)
        paced = reply.events is not None and interval_s > 0 and not reply.head_only
        if latency_s <= 0 and not paced and self.server.slots is None:
            self._write_all(reply, record, keep_alive)
            return
        self.busy = True
        start = record.received_at + latency_s  # every due time below is absolute: no drift
        slots = self.server.slots
        if slots is not None and reply.status == 200 and record.endpoint in ("chat", "responses", "messages"):
            last = reply.events[-1][0] * interval_s if paced and reply.events else 0.0
            start = slots.admit(record.received_at, latency_s + last) + latency_s  # FIFO: wait for a slot
        if not paced:
            self.timer = self.loop.call_at(start, self._write_all, reply, record, keep_alive)
            return
        if reply.end == "reset":
            reply.events = reply.events[: len(reply.events) // 2]
        self.timer = self.loop.call_at(start, self._stream_from, 0, reply, record, keep_alive, start, interval_s)

    def _write_all(self, reply: Reply, record: RequestRecord, keep_alive: bool) -> None:
        """Everything at once (no pacing): head, body or all events, and the end of the answer."""
        self.timer = None
        chunked = reply.events is not None
        data = self._head(reply, keep_alive, chunked)
        record.headers_at = self.loop.time()
        if reply.head_only:
            pass
        elif chunked:
            events = reply.events if reply.end != "reset" else reply.events[: len(reply.events) // 2]
            payload = b"".join(chunk for _, chunk in events)
            data += (_encode_chunk(payload) if payload else b"") + (b"" if reply.end == "reset" else b"0\r\n\r\n")
        elif reply.end == "reset":
            data += reply.body[: len(reply.body) // 2]
        else:
            data += reply.body
        self._finish(record, reply)  # before the last byte leaves: a client that got the answer sees the record
        self.transport.write(data)
        self._after(reply, keep_alive)

    def _stream_from(self, i: int, reply: Reply, record: RequestRecord, keep_alive: bool, start: float,
                     interval: float) -> None:
        """Write the events due now (token index k is due at start + k*interval), then set a timer for the next.

        A timer callback, not a task with sleeps: cheaper, and each due time is computed from the
        request's arrival, so a late wake-up delays one write and never shifts the later tokens.
        """
        self.timer = None
        transport = self.transport
        if transport is None or transport.is_closing():
            return  # connection_lost finished the record
        events = reply.events
        data = b""
        if i == 0:
            data = self._head(reply, keep_alive, True)
            record.headers_at = self.loop.time()
        if events:
            index = events[i][0]
            j = i
            while j < len(events) and events[j][0] == index:  # events due at the same moment: one write
                j += 1
            data += _encode_chunk(b"".join(chunk for _, chunk in events[i:j]))
        else:
            j = 0
        if j < len(events):
            transport.write(data)
            self.timer = self.loop.call_at(start + events[j][0] * interval, self._stream_from, j, reply, record,
                                           keep_alive, start, interval)
            return
        self._finish(record, reply)
        if reply.end != "reset":
            data += b"0\r\n\r\n"
        transport.write(data)
        self._after(reply, keep_alive)

    def _after(self, reply: Reply, keep_alive: bool) -> None:
        transport = self.transport
        if reply.end == "reset":
            sock = transport.get_extra_info("socket")
            if sock is not None:  # linger 0: close() sends RST, as a crashed upstream or proxy would
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            transport.abort()
            return
        if not keep_alive:
            transport.close()
            return
        self.busy = False
        if self.buf:
            self._process()

    def _finish(self, record: RequestRecord, reply: Reply | None = None) -> None:
        if reply is not None and reply.end == "reset":
            record.outcome = "reset"
        if self.current is record:
            self.current = None
        record.finished_at = self.loop.time()
        self.server.record(record)


class MockServer:
    """The mock gateway on an event loop you own. Use MockGateway unless you already run a loop."""

    def __init__(self, options: MockOptions, on_request: Callable[[RequestRecord], None] | None = None) -> None:
        self.options = options.validate()
        self.router = Router(self.options)
        self.on_request = on_request
        self.records: collections.deque[RequestRecord] = collections.deque(maxlen=max(1, options.keep_requests))
        self.slots = Slots(options.slots) if options.slots else None
        self.status_counts: collections.Counter[str] = collections.Counter()
        self.flag_counts: collections.Counter[str] = collections.Counter()
        self.connections: set[_Connection] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self.port = 0
        self.started_at = 0.0

    @property
    def host(self) -> str:
        return "127.0.0.1" if self.options.host == "localhost" else self.options.host

    async def start(self) -> int:
        self.loop = asyncio.get_running_loop()
        self._server = await self.loop.create_server(lambda: _Connection(self), self.host, self.options.port,
                                                     reuse_address=True, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]
        self.started_at = time.monotonic()
        return self.port

    def record(self, record: RequestRecord) -> None:
        self.records.append(record)
        self.status_counts[str(record.status) if record.status is not None else record.outcome] += 1
        for flag in record.flags:
            self.flag_counts[flag] += 1
        if self.on_request is not None:
            self.on_request(record)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for conn in list(self.connections):
            if conn.transport is not None:
                conn.transport.abort()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
        for conn in list(self.connections):
            if conn.timer is not None:
                conn.timer.cancel()


def format_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


class MockAddresses:
    """The URLs a running mock answers on; shared by the thread and the subprocess handles."""

    host: str
    port: int

    @property
    def origin(self) -> str:
        return f"http://{format_host(self.host)}:{self.port}"

    @property
    def url(self) -> str:
        """The API root, like https://taotoken.net/api: what taotoken stores and Claude Code is given."""
        return self.origin + "/api"

    @property
    def openai_base(self) -> str:
        """What OpenAI-style clients (SDKs, Codex, Cline) are given: root + /v1."""
        return OPENAI_V1.url(self.url)


@dataclass
class Summary:
    requests: int
    seconds: float
    statuses: dict[str, int] = field(default_factory=dict)
    flags: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        # i18n: one status in the mock's closing line, "200: 5" (status: requests); Chinese: "200：5"
        statuses = listed(_("{status}: {count}").format(status=k, count=v) for k, v in sorted(self.statuses.items()))
        text = (_("taotoken mock: stopped after {n} request(s) in {seconds}s (status {statuses})") if statuses
                else _("taotoken mock: stopped after {n} request(s) in {seconds}s (status none)")).format(
            n=self.requests, seconds=f"{self.seconds:.1f}", statuses=statuses)
        if self.flags:
            flags = listed(f"{k} x{v}" for k, v in sorted(self.flags.items()))
            text = _("{summary}; flagged: {flags}").format(summary=text, flags=flags)
        return text


def _summary(server: MockServer) -> Summary:
    return Summary(requests=sum(server.status_counts.values()),
                   seconds=time.monotonic() - server.started_at if server.started_at else 0.0,
                   statuses=dict(server.status_counts), flags=dict(server.flag_counts))


class MockGateway(MockAddresses):
    """A mock gateway on its own thread: `with MockGateway(MockOptions(key=k)) as mock: ... mock.url`."""

    def __init__(self, options: MockOptions | None = None, *,
                 on_request: Callable[[RequestRecord], None] | None = None, **changes: object) -> None:
        options = options or MockOptions()
        if changes:
            options = replace(options, **changes)
        self.server = MockServer(options, on_request)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> MockGateway:
        self._thread = threading.Thread(target=self._run, name="taotoken-mock", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("the mock gateway did not start in time")
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self.server.start())
        except BaseException as exc:  # e.g. port in use: hand it to start()
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self.server.close())
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    def close(self, timeout: float = 5.0) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)
        self._thread = None

    def __enter__(self) -> MockGateway:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what callers use ---------------------------------------------------------------------
    @property
    def options(self) -> MockOptions:
        return self.server.options

    def update(self, **changes: object) -> None:
        """Change behaviour while running (e.g. `mock.update(fail=429)`); validated first."""
        new = replace(self.server.options, **changes).validate()
        for name, value in vars(new).items():
            setattr(self.server.options, name, value)

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def host(self) -> str:
        return self.server.host

    @property
    def requests(self) -> list[RequestRecord]:
        return list(self.server.records)

    @property
    def last(self) -> RequestRecord | None:
        records = self.server.records
        return records[-1] if records else None

    def clear(self) -> None:
        self.server.records.clear()
        self.server.status_counts.clear()
        self.server.flag_counts.clear()

    def summary(self) -> Summary:
        return _summary(self.server)


def serve(options: MockOptions, on_ready: Callable[[MockServer], None],
          on_request: Callable[[RequestRecord], None]) -> Summary:
    """Run in the foreground until SIGINT/SIGTERM; returns what was served."""
    server = MockServer(options, on_request)

    async def main() -> Summary:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        await server.start()
        on_ready(server)
        await stop.wait()
        await server.close()
        return _summary(server)

    return asyncio.run(main())
