"""One request's response as bench reads it: stamped and parsed as bytes arrive, nothing kept but
what the figures and the classifier need; and bench's transport failures in httpx's terms, so the
shared classifier reads them like the gateway client's."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from taotoken_cli.cmd.bench import http1

BODY_LIMIT = 1 << 20  # non-stream bodies are kept only until the request is judged (same bound as gateway)
_JSON = json.JSONDecoder()
_json_decode, _json_scan = _JSON.decode, _JSON.scan_once
_NO_GAPS: list[float] = []  # shared by every answer without inter-token gaps: never appended to
# usage objects already read, by the answer's text from `"usage":{` to its end: a gateway's answers to one kind of
# request repeat a few, and reading one through the JSON scanner costs about as much as all the rest of judging
# the answer (the dicts are shared: read, never changed); bounded: emptied when full, keys not longer than
# _USAGE_TAIL_MAX characters
_USAGE_READ: dict[str, dict] = {}
_USAGE_READ_MAX, _USAGE_TAIL_MAX = 256, 512
_tail_len = [len('"usage":{}')]  # the length of the tail kept last


class Exchange:
    """The sink for one response: stamps and parses bytes as they arrive, keeps no stream text."""

    __slots__ = ("stream", "t_ref", "status", "head", "fields", "body", "sse", "parser", "summary", "last", "gaps",
                 "head_t", "truncated", "usage")

    def __init__(self, stream: bool, t_ref: float) -> None:
        self.stream = stream
        self.t_ref = t_ref
        self.status: int | None = None
        self.head: bytes | None = None  # as it arrived
        self.fields: dict[str, str] | None = None  # its header fields, once asked for (headers)
        self.body: bytes | bytearray = b""  # the first piece as it came; a bytearray once a second one follows
        self.sse = False
        self.parser = None
        self.summary = None
        self.last: float | None = None
        self.gaps: list[float] = _NO_GAPS  # a list of its own once a stream has a second content event
        self.head_t = 0.0
        self.truncated = False
        self.usage: dict | None = None  # a plain answer's usage, once read

    @property
    def headers(self) -> dict[str, str]:
        """The response's header fields (lower-cased names), parsed on first use; {} before any head."""
        if self.fields is None:
            if self.head is None:
                return {}
            self.fields = http1.header_fields(self.head)
        return self.fields

    def on_head(self, status: int, head: bytes, t: float) -> None:
        self.status, self.head, self.head_t = status, head, t
        if self.stream and 200 <= status < 300 and self.headers.get("content-type", "").startswith("text/event-stream"):
            from taotoken_cli.core.net.gateway import StreamSummary
            from taotoken_cli.core.net.sse import SSEParser

            self.sse = True
            self.parser = SSEParser()
            self.summary = StreamSummary()

    def on_body(self, data: bytes, t: float) -> None:
        if self.sse:
            self._events(self.parser.feed(data), t)
            return
        body = self.body
        if not body:  # (most answers: the whole body in one piece, kept as it came)
            self.body = data[:BODY_LIMIT]
        elif len(body) < BODY_LIMIT:
            if type(body) is bytes:
                body = self.body = bytearray(body)
            body += data[:BODY_LIMIT - len(body)]
        else:
            self.truncated = True

    def answer(self) -> bool:
        """True when the plain body is a usable chat answer: a JSON object with `choices` and no `error`. Its
        `usage` (a dict, or None when it has none) is then in self.usage.

        A chat answer in the compact form gateways send (new-api and the OpenAI-compatible servers serialise
        without spaces) takes a fast path: `usage` is found in the body's text and only that object goes through
        the JSON scanner, not the whole answer (~1 us less per request), and an object read before (the same text
        to the end of the answer) is not read again. Its shape checks stand in for the full parse: valid UTF-8,
        `{` first and `}` last, a `"choices":[{`, no `"error"` key anywhere (in a valid JSON text these can only be
        keys: a quote inside a string is escaped), and a valid `"usage":{...}` object, the last one. Any other body
        (pretty-printed, an error field, no usage) is parsed in full, so the two ways can differ only on a body
        broken between standard ends, which no gateway sends."""
        try:
            text = self.body.decode()
        except UnicodeDecodeError:
            return False
        if text[:1] == "{" and (text[-1:] == "}" or text.rstrip()[-1:] == "}") and '"error"' not in text and \
                '"choices":[{' in text:
            # the text from its last `"usage":{` on: first, as long as the last one read (a tail kept ends this text:
            # it holds one `"usage":{`, at its start, so that is this text's last one too, without a search)
            usage = _USAGE_READ.get(text[-_tail_len[0]:])
            if usage is not None:
                self.usage = usage
                return True
            at = text.rfind('"usage":{')
            if at >= 0:
                tail = text[at:]
                try:
                    usage, _end = _json_scan(tail, 8)
                except (StopIteration, ValueError):
                    return self._parsed_answer(text)
                if len(tail) <= _USAGE_TAIL_MAX:
                    if len(_USAGE_READ) >= _USAGE_READ_MAX:
                        _USAGE_READ.clear()
                    _USAGE_READ[tail] = usage
                    _tail_len[0] = len(tail)
                self.usage = usage
                return True
        return self._parsed_answer(text)

    def _parsed_answer(self, text: str) -> bool:
        """`answer` by parsing the whole body (any JSON: spaces, no usage, an error field)."""
        try:
            payload = _parsed(text)
        except ValueError:
            return False
        if not isinstance(payload, dict) or payload.get("error") or not payload.get("choices"):
            return False
        usage = payload.get("usage")
        self.usage = usage if isinstance(usage, dict) else None
        return True

    def streamed(self) -> tuple[bool, int | None, str | None, float | None] | None:
        """For a 2xx stream: (clean success?, output tokens, where the count came from, TTFT) or None when there is
        nothing usable. `clean` is the fast path; anything else goes to the shared classifier."""
        summary = self.summary
        if summary is None or not summary.content_deltas or summary.first_content_s is None:
            return None
        usage_tokens = (summary.usage or {}).get("completion_tokens")
        tokens, source = ((usage_tokens, "usage") if isinstance(usage_tokens, int)
                          else (summary.content_deltas, "counted"))
        clean = summary.error_event is None and summary.done
        return clean, tokens, source, summary.first_content_s

    def prompt_tokens(self) -> int | None:
        """The prompt tokens the server's usage reports, if it does."""
        usage = self.summary.usage if self.summary is not None else self.usage
        value = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        return value if isinstance(value, int) else None

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
                    if self.gaps is _NO_GAPS:
                        self.gaps = []
                    self.gaps.append(t - self.last)
                self.last = t


def _parsed(text: str) -> Any:
    """`text` as JSON (ValueError when it is not). Read from a str: json.loads of bytes first guesses their encoding,
    in Python. A text that is one JSON value with nothing around it (an answer) goes to the C scanner alone, a
    third cheaper than through the decoder's Python around it."""
    try:
        value, end = _json_scan(text, 0)
    except StopIteration:  # (leading whitespace, or not JSON: the decoder says which)
        return _json_decode(text)
    return value if end == len(text) else _json_decode(text)


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
