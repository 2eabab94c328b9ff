"""A gateway of known capacity: `--slots N` (at most N generations served at once, the rest wait in a
FIFO queue, as an inference server's batch slots) and `--rate-limit R` (a token bucket of R requests
a second; over it the answer is 429 with Retry-After, as a gateway's per-key limit).

Both are exact for the mock's deterministic timing: a generation's service time is known when it
arrives (latency + the time of its last token), so FIFO slots are a heap of the times each slot
frees up, with no queue of waiting requests to keep."""

from __future__ import annotations

import heapq


class Slots:
    """N servers, first come first served: `admit(arrival, service)` is when the request starts service."""

    def __init__(self, count: int) -> None:
        self.free_at = [0.0] * count  # a heap: when each slot is next free (loop time)

    def admit(self, arrival: float, service_s: float) -> float:
        start = max(arrival, heapq.heappop(self.free_at))
        heapq.heappush(self.free_at, start + service_s)
        return start


class TokenBucket:
    """`rate` requests a second, at most `burst` at once (default: one second's worth, at least 1)."""

    def __init__(self, rate: float, burst: float | None = None) -> None:
        self.rate = rate
        self.burst = max(1.0, burst if burst is not None else rate)
        self.tokens = self.burst
        self.at: float | None = None

    def take(self, now: float) -> bool:
        if self.at is not None:
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False
