"""Per-series figures gathered by a worker process; merged across workers (and repeats) by the parent.

Everything here is bounded: counters, small dicts keyed by status or error code, histograms with a
bounded number of buckets, and at most MAX_WINDOWS time windows. No response bodies are kept.
"""

from __future__ import annotations

import math
from typing import Any

from taotoken_cli.cmd.bench.histogram import Histogram

HISTOGRAMS = ("latency", "ttft", "itl", "tpot", "tokens_per_s", "connect", "proxy_connect")
MAX_WINDOWS = 240
BASE_WINDOW_S = 0.25


def window_width(duration: float | None) -> float:
    """The starting window width: 0.25 s doubled until a known duration needs at most 120 windows."""
    width = BASE_WINDOW_S
    while duration is not None and duration / width > MAX_WINDOWS / 2:
        width *= 2
    return width


class TimeWindows:
    """Requests by the window of time they ended in, from the series' start. When a run outlasts
    MAX_WINDOWS windows, neighbours merge and the width doubles; widths are BASE_WINDOW_S x 2^k, so
    windows from several workers (or repeats) line up exactly."""

    def __init__(self, width: float = 1.0) -> None:
        self.width = width
        # index -> [requests, ok, failed, output tokens, latency, ttft, started, good, first]: ended in the window,
        # except `started` (requests that started in it); `first`: when the window's first request ended (seconds
        # from the start; inf while none has), so that a rate can be taken between two answers (report.steady)
        self.rows: dict[int, list[Any]] = {}
        # a width of 2^k s (BASE_WINDOW_S doubled, as every series has): a window's bounds are then exact, and
        # comparing with them splits time as the division does (doubling keeps it so)
        self._exact = math.frexp(width)[0] == 0.5
        self._forget()

    def _forget(self) -> None:
        """Drop the last row used (its bounds change when the windows do)."""
        self._low, self._high, self._last = _NONE, _NONE, None

    def _row(self, at: float) -> list[Any]:
        if self._low <= at < self._high:  # most requests start and end in the window the last one did
            return self._last
        index = int(at / self.width) if at > 0 else 0
        while index >= MAX_WINDOWS:
            self._coarsen()
            index = int(at / self.width)
        row = self.rows.get(index)
        if row is None:
            row = self.rows[index] = [0, 0, 0, 0, Histogram(), Histogram(), 0, 0, _NONE]
        if at > 0 and self._exact:
            last = self._last
            if last is not None and last is not row:
                # the window left behind (mostly over): its values sorted in now, not held until the run ends
                last[4].fold()
                last[5].fold()
            self._low, self._high, self._last = index * self.width, (index + 1) * self.width, row
        return row

    def add(self, at: float, ok: bool, latency: float, ttft: float | None, tokens: int | None,
            good: bool = False, started: float | None = None) -> None:
        """A request ended at `at` (and started at `started`, counted in its own window, when given)."""
        row = self._last if self._low <= at < self._high else self._row(at)  # (_row's own first test, inline)
        if started is not None:
            # (usually the window it ended in: the row just found, without a second lookup)
            (row if self._low <= started < self._high else self._row(started))[6] += 1
        row[0] += 1
        if at < row[8]:
            row[8] = at
        if ok:
            row[1] += 1
            row[4].record(latency)
            if ttft is not None:
                row[5].record(ttft)
            if tokens:
                row[3] += tokens
            if good:
                row[7] += 1
        else:
            row[2] += 1

    def _coarsen(self) -> None:
        self._forget()
        old, self.rows = self.rows, {}
        self.width *= 2
        for index, row in old.items():
            self._merge_row(index // 2, row)

    def _merge_row(self, index: int, row: list[Any], shift_s: float = 0.0) -> None:
        self._forget()
        mine = self.rows.get(index)
        first = row[8] + shift_s
        if mine is None:
            self.rows[index] = [row[0], row[1], row[2], row[3], _copy(row[4]), _copy(row[5]), row[6], row[7], first]
            return
        for i in (0, 1, 2, 3, 6, 7):
            mine[i] += row[i]
        mine[4].merge(row[4])
        mine[5].merge(row[5])
        mine[8] = min(mine[8], first)

    def merge(self, other: TimeWindows, offset: float = 0.0) -> None:
        """Add `other`'s windows, shifted by `offset` seconds (a later repeat)."""
        while self.width < other.width:
            self._coarsen()
        factor = round(self.width / other.width)
        shift = int(offset / self.width + 0.5)
        for index, row in other.rows.items():
            target = index // factor + shift
            while target >= MAX_WINDOWS:
                self._coarsen()
                factor, shift = round(self.width / other.width), int(offset / self.width + 0.5)
                target = index // factor + shift
            self._merge_row(target, row, shift * self.width)

    def to_state(self) -> dict[str, Any]:
        return {"width": self.width, "rows": {i: r[:4] + [r[4].to_state(), r[5].to_state()] + r[6:]
                                              for i, r in self.rows.items()}}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> TimeWindows:
        windows = cls(state["width"])
        windows.rows = {int(i): r[:4] + [Histogram.from_state(r[4]), Histogram.from_state(r[5])] + r[6:]
                        for i, r in state["rows"].items()}
        return windows


_NONE = float("inf")


def _copy(hist: Histogram) -> Histogram:
    return Histogram.from_state(hist.to_state())


class SeriesStats:
    def __init__(self, window_s: float = 1.0) -> None:
        self.ok = 0
        self.failed = 0
        self.good = 0  # successful requests within the per-request SLO limits (goodput)
        self.late_starts = 0
        self.lateness_total = 0.0
        self.lateness_max = 0.0
        self.status: dict[str, int] = {}  # "200", "429", … "none" (no response)
        self.errors: dict[str, dict[str, Any]] = {}  # catalogue code -> count + first example
        # seconds, successful requests, from the (scheduled) start to the last byte; with TTFT, filled from the
        # windows when a worker's load is over (fill_from_windows)
        self.latency = Histogram()
        self.ttft = Histogram()
        self.itl = Histogram()
        self.tpot = Histogram()
        self.tokens_per_s = Histogram(scale=1000.0)
        self.connect = Histogram()  # opening a connection: TCP (+ CONNECT through a proxy) (+ TLS)
        self.proxy_connect = Histogram()  # the CONNECT exchange with the proxy alone
        self.output_tokens = 0
        self.input_tokens = 0  # prompt tokens, as the server's usage reports them
        self.tokens_from_usage = 0  # successful requests whose token count came from the server's usage
        self.tokens_counted = 0  # … counted from content deltas (no usage given)
        self.started_at = float("inf")
        self.ended_at = 0.0
        self.last_start = 0.0  # seconds from the start: when the last request started (the drain follows)
        self.deferred = 0  # requests held back by a Retry-After before they started
        self.elapsed_before = 0.0  # wall time of earlier repeats merged into this one
        self.connections = 0
        self.event_loop = ""  # the loop the workers ran on: "uvloop" or "asyncio" (loop.loop_name)
        self.windows = TimeWindows(window_s)

    @property
    def elapsed(self) -> float:
        own = max(0.0, self.ended_at - self.started_at) if self.ok + self.failed else 0.0
        return self.elapsed_before + own

    def count_status(self, status: int | None) -> None:
        key = str(status) if status is not None else "none"
        self.status[key] = self.status.get(key, 0) + 1

    def count_error(self, code: str, example: dict[str, Any]) -> None:
        entry = self.errors.get(code)
        if entry is None:
            self.errors[code] = {"count": 1, **example}
        else:
            entry["count"] += 1
            if example.get("retry_after_s") is not None:
                entry["retry_after_s"] = max(entry.get("retry_after_s") or 0.0, example["retry_after_s"])

    def fill_from_windows(self) -> None:
        """A worker's latency and TTFT distributions, once its load is over: those of its windows together. A
        success is recorded once, in the window it ended in (TimeWindows.add), not a second time for the whole run:
        the same values, sorted into the same buckets."""
        for row in self.windows.rows.values():
            self.latency.merge(row[4])
            self.ttft.merge(row[5])

    def merge(self, other: SeriesStats) -> None:
        """Add another worker's figures of the same run."""
        self._add_counts(other)
        self.started_at = min(self.started_at, other.started_at)
        self.ended_at = max(self.ended_at, other.ended_at)
        self.last_start = max(self.last_start, other.last_start)
        self.windows.merge(other.windows)

    def add_repeat(self, other: SeriesStats) -> None:
        """Add a later repeat of the same series: its wall time (and its windows) follow this one's."""
        offset = self.elapsed
        self._add_counts(other)
        self.last_start = offset + other.last_start
        self.windows.merge(other.windows, offset)
        self.elapsed_before = offset + other.elapsed
        self.started_at = self.ended_at = 0.0

    def _add_counts(self, other: SeriesStats) -> None:
        for name in ("ok", "failed", "good", "late_starts", "deferred", "lateness_total", "output_tokens",
                     "input_tokens", "tokens_from_usage", "tokens_counted", "connections"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.lateness_max = max(self.lateness_max, other.lateness_max)
        self.event_loop = self.event_loop or other.event_loop
        for key, n in other.status.items():
            self.status[key] = self.status.get(key, 0) + n
        for code, entry in other.errors.items():
            mine = self.errors.get(code)
            if mine is None:
                self.errors[code] = dict(entry)
            else:
                mine["count"] += entry["count"]
                if entry.get("retry_after_s") is not None:
                    mine["retry_after_s"] = max(mine.get("retry_after_s") or 0.0, entry["retry_after_s"])
        for name in HISTOGRAMS:
            getattr(self, name).merge(getattr(other, name))

    def to_state(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in HISTOGRAMS and k != "windows"}
        state.update({name: getattr(self, name).to_state() for name in HISTOGRAMS})
        state["windows"] = self.windows.to_state()
        return state

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> SeriesStats:
        stats = cls()
        for key, value in state.items():
            if key in HISTOGRAMS:
                value = Histogram.from_state(value)
            elif key == "windows":
                value = TimeWindows.from_state(value)
            setattr(stats, key, value)
        return stats
