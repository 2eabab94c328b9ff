"""A bounded, mergeable log-linear histogram (HdrHistogram-style) for percentiles.

Values are scaled to integers (e.g. seconds -> microseconds). Below 128 every integer has its own
bucket; above, each power of two is split into 64 linear buckets, so a bucket is at most 1/64 of
its value wide and the reported midpoint is within ~0.8 % of any value in it. The number of buckets
is bounded by ~64 per power of two whatever the number of samples, so memory does not grow with
`-n`, and histograms from several worker processes merge by adding counts.
"""

from __future__ import annotations

from typing import Any

_SUB_BITS = 7  # 2**7 = 128: values below are exact, above 64 buckets per power of two
_EXACT = 1 << _SUB_BITS
assert (_SUB_BITS, _EXACT) == (7, 128), "Histogram.record spells these out"


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
    __slots__ = ("scale", "counts", "count", "total", "min", "max")

    def __init__(self, scale: float = 1e6) -> None:
        self.scale = scale  # integer units per value unit (1e6: seconds recorded as microseconds)
        self.counts: dict[int, int] = {}
        self.count = 0
        self.total = 0.0
        self.min = float("inf")
        self.max = float("-inf")

    def record(self, value: float) -> None:
        if value < 0:
            value = 0.0
        self.count += 1
        self.total += value
        if value < self.min:
            self.min = value
        if value > self.max:
            self.max = value
        v = int(value * self.scale + 0.5)
        if v >= 128:  # _index, inline (its constants too: _EXACT, _SUB_BITS, _SUB_BITS - 1): several per request
            shift = v.bit_length() - 7
            v = (shift << 6) + (v >> shift)
        counts = self.counts
        counts[v] = counts.get(v, 0) + 1

    def merge(self, other: Histogram) -> None:
        if other.scale != self.scale:
            raise ValueError("cannot merge histograms of different scales")
        for index, n in other.counts.items():
            self.counts[index] = self.counts.get(index, 0) + n
        self.count += other.count
        self.total += other.total
        self.min = min(self.min, other.min)
        self.max = max(self.max, other.max)

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
        hist.counts = dict(state["counts"])
        hist.count = state["count"]
        hist.total = state["total"]
        hist.min = state["min"]
        hist.max = state["max"]
        return hist
