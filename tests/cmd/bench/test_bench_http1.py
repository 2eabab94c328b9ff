"""bench's HTTP/1.1 reader takes the usual answer (one Content-Length, nothing chunked, nothing that may say close)
on a fast path that reads the framing from the head's bytes, and every other answer on the general one: each shape
here is framed as HTTP says, whichever path takes it. The bytes go through the real `Connection` protocol object;
the transport is a recorder (bench's own socket tests: tests/cmd/bench/test_bench.py, against the mock)."""

from __future__ import annotations

import pytest

from taotoken_cli.cmd.bench import http1


class Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.closed = self.aborted = False

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True


class Sink:
    def __init__(self) -> None:
        self.status: int | None = None
        self.head: bytes | None = None
        self.body = b""
        self.pieces: list[bytes] = []

    def on_head(self, status: int, head: bytes, t: float) -> None:
        self.status, self.head = status, head

    def on_body(self, data: bytes, t: float) -> None:
        self.body += data
        self.pieces.append(data)


def exchange(answer: bytes, *, pieces: int = 1, eof: bool = False):
    """Send one request on a fresh Connection and feed it `answer` in `pieces` parts: (sink, outcome, transport),
    outcome None while the response is not complete, else ("done", None) or ("failed", error)."""
    conn, transport, sink = http1.Connection(), Transport(), Sink()
    conn.connection_made(transport)
    outcome: list = []
    conn.send(b"POST / HTTP/1.1\r\n\r\n", sink, lambda exc: outcome.append(("done", None) if exc is None
                                                                           else ("failed", exc)))
    size = max(1, -(-len(answer) // pieces))
    for at in range(0, len(answer), size):
        conn.data_received(answer[at:at + size])
    if eof:
        conn.connection_lost(None)
    return sink, (outcome[0] if outcome else None), transport


BODY = b'{"ok": true}'


@pytest.mark.parametrize("pieces", [1, 3, 40])
def test_the_usual_answer_is_framed_by_its_length_and_keeps_the_connection(pieces: int) -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n" + BODY
    sink, outcome, transport = exchange(answer, pieces=pieces)
    assert (sink.status, sink.body, outcome) == (200, BODY, ("done", None))
    assert not transport.closed
    assert http1.header_fields(sink.head)["content-type"] == "application/json"  # the fields, parsed when asked for


def test_connection_close_ends_the_connection_after_the_body() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: close\r\n\r\n" + BODY
    sink, outcome, transport = exchange(answer)
    assert (sink.body, outcome, transport.closed) == (BODY, ("done", None), True)


def test_http_1_0_does_not_keep_the_connection() -> None:
    sink, outcome, transport = exchange(b"HTTP/1.0 200 OK\r\nContent-Length: 12\r\n\r\n" + BODY)
    assert (sink.body, outcome, transport.closed) == (BODY, ("done", None), True)


def test_chunked_wins_over_a_content_length() -> None:
    answer = (b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"5\r\n{\"ok\"\r\n7\r\n: true}\r\n0\r\n\r\n")
    sink, outcome, _transport = exchange(answer, pieces=4)
    assert (sink.body, outcome) == (BODY, ("done", None))


def test_two_content_lengths_take_the_general_path() -> None:
    """Repeated fields are joined ("12, 12"): not a number, so the answer is refused rather than misread."""
    sink, outcome, _transport = exchange(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Length: 12\r\n\r\n"
                                         + BODY)
    assert outcome is not None and outcome[0] == "failed" and "Content-Length" in str(outcome[1])


def test_a_bad_length_is_a_protocol_error() -> None:
    _sink, outcome, transport = exchange(b"HTTP/1.1 200 OK\r\nContent-Length: twelve\r\n\r\n" + BODY)
    assert outcome[0] == "failed" and isinstance(outcome[1], http1.ProtocolError) and transport.aborted


def test_no_length_reads_until_the_server_closes() -> None:
    sink, outcome, _transport = exchange(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + BODY, eof=True)
    assert (sink.body, outcome) == (BODY, ("done", None))


def test_an_interim_answer_is_skipped_and_an_empty_one_completes_at_once() -> None:
    sink, outcome, _transport = exchange(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
    assert (sink.status, sink.body, outcome) == (204, b"", ("done", None))
    sink, outcome, _transport = exchange(b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\n"
                                         b"Content-Length: 0\r\n\r\n")
    assert (sink.status, outcome, http1.header_fields(sink.head)["retry-after"]) == (429, ("done", None), "1")


def test_the_body_stops_at_its_length() -> None:
    """Bytes after the body (a server's stray answer) are not the body."""
    sink, outcome, _transport = exchange(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n" + BODY + b"EXTRA")
    assert (sink.body, outcome) == (BODY, ("done", None))


@pytest.mark.parametrize(("head", "closed"), [
    (b"HTTP/1.1 200 OK\r\ncontent-length: 12\r\n", False),  # any case
    (b"HTTP/1.1 200 OK\r\nCONTENT-LENGTH:12\r\nConnection: Keep-Alive\r\n", False),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: Close\r\n", True),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nX-Connection: close\r\n", False),  # only Connection says close
    (b"HTTP/1.1 200\r\nX-Content-Length: 99\r\nContent-Length: 12\r\n", False),  # no reason phrase; X- is not it
    (b"HTTP/1.1 200 OK\r\nContent-Length: 12 \r\n", False),
    (b"HTTP/1.0 200 OK\r\nContent-Length: 12\r\nConnection: keep-alive\r\n", True),  # HTTP/1.0 is not kept
    (b"HTTP/2 200 OK\r\nContent-Length: 12\r\n", True),  # an unusual status line: the general path
])
def test_the_framing_fields_are_read_in_any_case_and_only_from_their_own_lines(head: bytes, closed: bool) -> None:
    sink, outcome, transport = exchange(head + b"\r\n" + BODY + b"EXTRA")
    assert (sink.status, sink.body, outcome, transport.closed) == (200, BODY, ("done", None), closed)


@pytest.mark.parametrize(("answer", "message"), [
    (b"ICY 200 OK\r\nContent-Length: 0\r\n\r\n", "not an HTTP response: 'ICY 200 OK'"),
    (b"HTTP/1.1 2xx OK\r\nContent-Length: 0\r\n\r\n", "bad status line: 'HTTP/1.1 2xx OK'"),
])
def test_a_bad_status_line_is_named_in_the_error(answer: bytes, message: str) -> None:
    _sink, outcome, _transport = exchange(answer)
    assert outcome[0] == "failed" and str(outcome[1]) == message


def test_a_bytearray_chunk_reads_as_bytes() -> None:
    """asyncio's Windows proactor hands data_received a bytearray: the same answers, read the same way (a bytearray
    key once made every answer fail on Windows)."""
    conn, transport, sink = http1.Connection(), Transport(), Sink()
    conn.connection_made(transport)
    outcomes: list = []
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n" + BODY
    for pieces in ([answer], [answer[:45], answer[45:]]):  # whole; the head and part of the body, then the rest
        conn.send(b"POST / HTTP/1.1\r\n\r\n", sink, outcomes.append)
        for piece in pieces:
            conn.data_received(bytearray(piece))
    assert (sink.status, outcomes, transport.closed) == (200, [None, None], False)
    assert sink.body == BODY * 2 and all(type(piece) is bytes for piece in sink.pieces)


def test_a_bug_in_the_reader_fails_the_answer_instead_of_leaving_it_in_flight() -> None:
    """An exception that is not the server's doing ends the response with that exception (the engine then ends the
    run with it): swallowed by the event loop's handler, it left the request waiting for its timeout."""
    class Broken(Sink):
        def on_head(self, status: int, head: bytes, t: float) -> None:
            raise LookupError("a bug")

    conn, transport = http1.Connection(), Transport()
    conn.connection_made(transport)
    outcomes: list = []
    conn.send(b"POST / HTTP/1.1\r\n\r\n", Broken(), outcomes.append)
    conn.data_received(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n" + BODY)
    assert len(outcomes) == 1 and isinstance(outcomes[0], LookupError) and transport.aborted
