"""A bounded, mergeable log-linear histogram (HdrHistogram-style) for percentiles.

Values are scaled to integers (e.g. seconds -> microseconds). Below 128 every integer has its own
bucket; above, each power of two is split into 64 linear buckets, so a bucket is at most 1/64 of
its value wide and the reported midpoint is within ~0.8 % of any value in it. The number of buckets
is bounded by ~64 per power of two whatever the number of samples, so memory does not grow with
`-n`, and histograms from several worker processes merge by adding counts.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any

_SUB_BITS = 7  # 2**7 = 128: values below are exact, above 64 buckets per power of two
_EXACT = 1 << _SUB_BITS
_BATCH = 1024  # values recorded before they are sorted into buckets


def _index(v: int) -> int:
    if v < (1 << _SUB_BITS):
        return v
    shift = v.bit_length() - _SUB_BITS
    return (shift << (_SUB_BITS - 1)) + (v >> shift)


def _bounds(index: int) -> tuple[int, int]:
    """The [low, high] integer range of bucket `index` (inverse of _index)."""
    if index < (1 << _SUB_BITS):
        return index, index
    shift = (index >> (_SUB_BITS - 1)) - 1
    mantissa = index - (shift << (_SUB_BITS - 1))
    low = mantissa << shift
    return low, low + (1 << shift) - 1


class Histogram:
    """Values are taken as they come (`record`: one append) and sorted into the buckets a batch at a time (`fold`):
    sorting a batch and finding each bucket's end in it by bisection is C's work, where sorting each value as it
    came took a Python line per step, three times per request. Whatever reads the histogram folds what is pending
    first: its figures are those of every value recorded."""

    __slots__ = ("scale", "_counts", "_count", "_total", "_min", "_max", "_pending")

    def __init__(self, scale: float = 1e6) -> None:
        self.scale = scale  # integer units per value unit (1e6: seconds recorded as microseconds)
        self._counts: dict[int, int] = {}  # bucket index -> values in it
        self._count = 0
        self._total = 0.0
        self._min = float("inf")
        self._max = float("-inf")
        self._pending: list[float] = []  # recorded, not yet in the figures above (at most _BATCH)

    def record(self, value: float) -> None:
        pending = self._pending
        pending.append(value)
        if len(pending) >= _BATCH:
            self.fold()

    def fold(self) -> None:
        """Sort the values recorded since the last fold into the buckets (every reading does it first)."""
        pending = self._pending
        if not pending:
            return
        self._pending = []
        low, high = min(pending), max(pending)
        if low < 0:  # (a clock step back): counted as 0
            pending = [v if v > 0 else 0.0 for v in pending]
            low, high = 0.0, max(high, 0.0)
        if low < self._min:
            self._min = low
        if high > self._max:
            self._max = high
        self._count += len(pending)
        self._total = sum(pending, self._total)  # (in the order recorded)
        scale = self.scale
        values = sorted(pending)
        counts = self._counts
        i, n = 0, len(values)
        while i < n:  # one step per bucket the batch fills
            v = int(values[i] * scale + 0.5)
            if v < _EXACT:
                index, last = v, v
            else:  # (_index and _bounds in one)
                shift = v.bit_length() - _SUB_BITS
                mantissa = v >> shift
                index, last = (shift << (_SUB_BITS - 1)) + mantissa, ((mantissa + 1) << shift) - 1
            # the bucket's end, by bisection on the values as they are (none converted): the bound is a rounding
            # away from exact. Past the end, the values before it step back (duplicates at once); short of it,
            # the next step finds the rest of this bucket
            j = bisect_right(values, (last + 0.5) / scale, i + 1)
            while j > i + 1 and int(values[j - 1] * scale + 0.5) > last:
                j = bisect_left(values, values[j - 1], i + 1)
            counts[index] = counts.get(index, 0) + j - i
            i = j

    @property
    def counts(self) -> dict[int, int]:
        self.fold()
        return self._counts

    @property
    def count(self) -> int:
        self.fold()
        return self._count

    @property
    def total(self) -> float:
        self.fold()
        return self._total

    @property
    def min(self) -> float:
        self.fold()
        return self._min

    @property
    def max(self) -> float:
        self.fold()
        return self._max

    def merge(self, other: Histogram) -> None:
        if other.scale != self.scale:
            raise ValueError("cannot merge histograms of different scales")
        self.fold()
        counts = self._counts
        for index, n in other.counts.items():
            counts[index] = counts.get(index, 0) + n
        self._count += other.count
        self._total += other.total
        self._min = min(self._min, other.min)
        self._max = max(self._max, other.max)

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None

    def percentile(self, p: float) -> float | None:
        """The value below which `p` percent of the samples fall (bucket midpoint, clamped to min/max)."""
        if not self.count:
            return None
        rank = max(1, min(self.count, int(round(p / 100.0 * self.count + 0.4999999))))
        seen = 0
        for index in sorted(self.counts):
            seen += self.counts[index]
            if seen >= rank:
                low, high = _bounds(index)
                value = (low + high) / 2.0 / self.scale
                return min(max(value, self.min), self.max)
        return self.max

    def buckets(self, bins: int = 10, high: float | None = None) -> list[tuple[float, float, int]]:
        """`bins` equal-width (low, high, count) ranges from min to `high` (default: max); samples above
        `high` count in the last range."""
        if not self.count:
            return []
        low = self.min
        high = self.max if high is None else high
        if high <= low:
            return [(low, high, self.count)]
        width = (high - low) / bins
        out = [[low + i * width, low + (i + 1) * width, 0] for i in range(bins)]
        for index, n in self.counts.items():
            b_low, b_high = _bounds(index)
            mid = min(max((b_low + b_high) / 2.0 / self.scale, low), high)
            slot = min(bins - 1, int((mid - low) / width))
            out[slot][2] += n
        return [(a, b, c) for a, b, c in out]

    # -- transport between processes (plain data, stable across versions) -------------------
    def to_state(self) -> dict[str, Any]:
        return {"scale": self.scale, "counts": self.counts, "count": self.count, "total": self.total,
                "min": self.min, "max": self.max}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Histogram:
        hist = cls(state["scale"])
        hist._counts = dict(state["counts"])
        hist._count = state["count"]
        hist._total = state["total"]
        hist._min = state["min"]
        hist._max = state["max"]
        return hist
