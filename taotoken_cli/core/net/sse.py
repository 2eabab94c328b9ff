"""Incremental Server-Sent Events parser (bytes in, events out).

Handles CRLF/LF/CR line ends, comment lines (`: OPENROUTER PROCESSING` keep-alives), `event:`
names, multi-line `data:`, and chunks that split lines anywhere. Feed raw bytes as they arrive
so callers can timestamp the moment the bytes of an event were read, not when JSON was parsed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    data: str
    event: str = "message"
    id: str | None = None

    @property
    def is_done(self) -> bool:
        return self.data.strip() == "[DONE]"


class SSEParser:
    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._skip_lf = False

    def feed(self, chunk: bytes) -> list[Event]:
        events: list[Event] = []
        if not chunk:
            return events  # an empty read must not forget a CR waiting for its LF
        if self._skip_lf and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._skip_lf = False
        buffer = self._buffer + chunk
        start = 0
        length = len(buffer)
        while start < length:
            cr = buffer.find(b"\r", start)
            lf = buffer.find(b"\n", start)
            if cr == -1 and lf == -1:
                break
            if cr != -1 and (lf == -1 or cr < lf):
                end, nxt = cr, cr + 1
                if nxt < length and buffer[nxt:nxt + 1] == b"\n":
                    nxt += 1
                elif nxt == length:
                    self._skip_lf = True  # a CRLF split across chunks
            else:
                end, nxt = lf, lf + 1
            event = self._line(buffer[start:end].decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
            start = nxt
        self._buffer = buffer[start:]
        return events

    def close(self) -> list[Event]:
        """End of stream: a final event without its blank line still counts."""
        events = []
        if self._buffer:
            event = self._line(self._buffer.decode("utf-8", errors="replace"))
            self._buffer = b""
            if event is not None:
                events.append(event)
        event = self._line("")
        if event is not None:
            events.append(event)
        return events

    def _line(self, line: str) -> Event | None:
        if line == "":
            if not self._data:
                self._event = ""
                return None
            event = Event("\n".join(self._data), self._event or "message", self._id)
            self._data, self._event = [], ""
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            self._id = value
        return None
