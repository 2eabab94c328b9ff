"""Per-series figures gathered by a worker process; merged across workers by the parent.

Everything here is bounded: counters, small dicts keyed by status or error code, and histograms
with a bounded number of buckets. No response bodies are kept.
"""

from __future__ import annotations

from typing import Any

from taotoken_cli.bench.histogram import Histogram

HISTOGRAMS = ("latency", "ttft", "itl", "tpot", "tokens_per_s")


class SeriesStats:
    def __init__(self) -> None:
        self.ok = 0
        self.failed = 0
        self.late_starts = 0
        self.lateness_total = 0.0
        self.lateness_max = 0.0
        self.status: dict[str, int] = {}  # "200", "429", … "none" (no response)
        self.errors: dict[str, dict[str, Any]] = {}  # catalogue code -> count + first example
        self.latency = Histogram()  # seconds, successful requests, from the (scheduled) start to the last byte
        self.ttft = Histogram()
        self.itl = Histogram()
        self.tpot = Histogram()
        self.tokens_per_s = Histogram(scale=1000.0)
        self.output_tokens = 0
        self.tokens_from_usage = 0  # successful requests whose token count came from the server's usage
        self.tokens_counted = 0  # … counted from content deltas (no usage given)
        self.started_at = float("inf")
        self.ended_at = 0.0
        self.connections = 0

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

    def merge(self, other: SeriesStats) -> None:
        self.ok += other.ok
        self.failed += other.failed
        self.late_starts += other.late_starts
        self.lateness_total += other.lateness_total
        self.lateness_max = max(self.lateness_max, other.lateness_max)
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
        self.output_tokens += other.output_tokens
        self.tokens_from_usage += other.tokens_from_usage
        self.tokens_counted += other.tokens_counted
        self.started_at = min(self.started_at, other.started_at)
        self.ended_at = max(self.ended_at, other.ended_at)
        self.connections += other.connections

    def to_state(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in HISTOGRAMS}
        state.update({name: getattr(self, name).to_state() for name in HISTOGRAMS})
        return state

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> SeriesStats:
        stats = cls()
        for key, value in state.items():
            setattr(stats, key, Histogram.from_state(value) if key in HISTOGRAMS else value)
        return stats
