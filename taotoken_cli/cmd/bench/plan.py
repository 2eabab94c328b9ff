"""What a series is: the load every series of a run shares (Load), one model under it (SeriesPlan), how
its connections are split across worker processes (Share) and what those workers share (Tally)."""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass, field
from typing import Any

from taotoken_cli.cmd.bench.workload import Workload

ERROR_RATE_MIN_REQUESTS = 20  # --max-error-rate is judged once this many requests have started


@dataclass(kw_only=True)
class Load:
    """What every series of a run shares: the gateway, the requests and the load model."""

    root: str
    api_key: str | None
    workload: Workload = field(default_factory=Workload)
    stream: bool = False
    requests: int | None = 100
    duration: float | None = None
    concurrency: int = 10
    rate: float | None = None
    warmup: int = 0
    timeout: float = 60.0
    proxy: str | None = None
    proxy_label: str | None = None  # the proxy as shown (its password hidden)
    slo_limits: dict[str, float] = field(default_factory=dict)  # per-request limits (s) for goodput
    max_errors: int | None = None
    max_error_rate: float | None = 1.0  # abort once this share of requests failed (1.0: all of them)
    records_dir: str | None = None  # per-request lines, one file per worker (for --raw and --csv)
    extra_headers: dict[str, str] = field(default_factory=dict)

    @property
    def open_loop(self) -> bool:
        return bool(self.rate) or bool(self.workload.trace)

    @property
    def max_tokens(self) -> int:
        return self.workload.max_tokens


@dataclass(kw_only=True)
class SeriesPlan(Load):
    """One series: a model under the load, as the worker processes receive it."""

    model: str
    connect_timeout: float = 10.0
    workers: int = 1
    label: str = ""  # the series' file prefix in records_dir
    schedule: array | None = None  # open loop: start offsets (s), set by run_series

    @property
    def url(self) -> str:
        from taotoken_cli.core.net.gateway import Endpoints

        return Endpoints(self.root.rstrip("/")).chat

    def request_body(self, prompt: str | None = None, max_tokens: int | None = None) -> bytes:
        from taotoken_cli.core.net.gateway import chat_request_body

        body = chat_request_body(self.model, prompt=self.workload.prompt if prompt is None else prompt,
                                 max_tokens=max_tokens or self.workload.max_tokens, stream=self.stream)
        return json.dumps(body, ensure_ascii=False).encode()

    def headers(self) -> dict[str, str]:
        from taotoken_cli.core.net.gateway import USER_AGENT, Gateway

        headers = Gateway(self.root, self.api_key, extra_headers=self.extra_headers).headers()
        headers["User-Agent"] = USER_AGENT
        headers["Content-Type"] = "application/json"
        return headers

    @property
    def limit(self) -> int | None:
        """How many requests the series may start (None: until the duration ends)."""
        if self.schedule is not None:
            return len(self.schedule)
        return self.requests


class BodyTemplate:
    """The request body with holes for the prompt and max_tokens: the shared request shape
    (gateway.chat_request_body) is serialised once, and each request only splices its two values in."""

    _PROMPT, _TOKENS = "\x00", 1999999937

    def __init__(self, plan: SeriesPlan) -> None:
        text = plan.request_body(self._PROMPT, self._TOKENS).decode()
        prompt_at, tokens_at = text.index('"\\u0000"'), text.index(str(self._TOKENS))
        self.prompt_first = prompt_at < tokens_at
        first, second = sorted([(prompt_at, 8), (tokens_at, len(str(self._TOKENS)))])
        self.parts = (text[:first[0]], text[first[0] + first[1]:second[0]], text[second[0] + second[1]:])

    def body(self, prompt: str, max_tokens: int) -> bytes:
        a, b = json.dumps(prompt, ensure_ascii=False), str(max_tokens)
        if not self.prompt_first:
            a, b = b, a
        return (self.parts[0] + a + self.parts[1] + b + self.parts[2]).encode()


@dataclass
class Share:
    """One worker's part of the load."""

    index: int
    workers: int
    concurrency: int
    warmup: int
    first_user: int  # the global number of this worker's first user (closed-loop ramp-up)


def split(plan: SeriesPlan) -> list[Share]:
    workers = max(1, min(plan.workers, plan.concurrency))
    if plan.limit is not None:
        workers = max(1, min(workers, plan.limit))
    conc = [plan.concurrency // workers + (1 if i < plan.concurrency % workers else 0) for i in range(workers)]
    warm = [plan.warmup * c // plan.concurrency for c in conc]
    for i in range(plan.warmup - sum(warm)):
        warm[i % workers] += 1
    return [Share(i, workers, conc[i], warm[i], sum(conc[:i])) for i in range(workers)]


class _Value:
    value = 0.0


class Tally:
    """The figures a series' workers share: here, a series run in one process (plain values, no lock: nothing else
    runs beside its event loop, and the signal handler makes single stores); SharedTally for worker processes."""

    # JUDGED: failures the error-rate limits count (no retry hint); FIRST_DONE, FIRST_FAILED: of the first
    # ERROR_RATE_MIN_REQUESTS requests started, those finished and those failed (no retry hint)
    NEXT, DONE, FAILED, ABORT, JUDGED, FIRST_DONE, FIRST_FAILED = range(7)
    # 3: interrupted, the requests in flight settled; 4: interrupted again, those in flight abandoned
    ABORT_REASONS = {1: "max-errors", 2: "error-rate", 3: "interrupted", 4: "interrupted"}

    def __init__(self, plan: SeriesPlan) -> None:
        self.limit = plan.limit
        self.max_errors = plan.max_errors
        self.max_error_rate = plan.max_error_rate
        self.values: Any = [0] * 7
        self.start: Any = _Value()

    def claim(self) -> int | None:
        """The next request number, or None when the series is complete or aborted."""
        v = self.values
        g = v[0]
        if v[3] or (self.limit is not None and g >= self.limit):
            return None
        v[0] = g + 1
        return g

    @property
    def spent(self) -> bool:
        """No request is left to claim (the budget is used up, or the series aborted): read without the lock, as a
        hint for a worker whose users have not started yet (claim() stays the one that decides)."""
        v = self.values
        return bool(v[3]) or (self.limit is not None and v[0] >= self.limit)

    def finish(self, failed: bool, hinted: bool = False, index: int | None = None) -> None:
        """Request number `index` ended. The error limits are judged on the requests started, not on the first
        to finish (fast failures come back first, while slow successes are still under way): the default
        rule stops a series when the first ERROR_RATE_MIN_REQUESTS requests it started all failed;
        --max-error-rate compares the failures with the requests started so far. A rate limit that says
        when to retry is load being shed, left out of both; --max-errors N counts every failure."""
        v = self.values
        v[1] += 1
        first = index is not None and index < ERROR_RATE_MIN_REQUESTS
        if first:
            v[5] += 1
        if failed:
            v[2] += 1
            if not hinted:
                v[4] += 1
                if first:
                    v[6] += 1
            if not v[3]:
                rate = self.max_error_rate
                if self.max_errors is not None and v[2] >= self.max_errors:
                    v[3] = 1
                elif rate is not None and rate >= 1.0:
                    if v[6] >= ERROR_RATE_MIN_REQUESTS:
                        v[3] = 2
                elif rate is not None and v[0] >= ERROR_RATE_MIN_REQUESTS and v[4] >= rate * v[0]:
                    v[3] = 2

    def interrupt(self) -> None:
        """SIGINT/SIGTERM: no new request starts; those in flight finish. A single store, no lock: it is
        called from a signal handler, which may run while this very thread holds the lock."""
        self.values[3] = 3

    def abandon(self) -> None:
        """A second SIGINT/SIGTERM: the requests in flight are not waited for (nor counted); the workers return
        what they measured so far. A single store, as interrupt()."""
        self.values[3] = 4

    @property
    def abandoned(self) -> bool:
        return self.values[3] == 4

    @property
    def aborted(self) -> bool:
        return bool(self.values[3])

    def counts(self) -> tuple[int, int, str | None]:
        v = self.values
        if v[3] == 2 and self.max_error_rate is not None and self.max_error_rate >= 1.0:
            return v[1], v[2], "all-failed"  # the default rule, not a --max-error-rate given
        return v[1], v[2], self.ABORT_REASONS.get(v[3])


class SharedTally(Tally):
    """A Tally in shared memory for a series' worker processes: claim and finish under one lock across them."""

    def __init__(self, plan: SeriesPlan, ctx) -> None:
        super().__init__(plan)
        self.values = ctx.RawArray("q", 7)
        self.lock = ctx.Lock()
        self.start = ctx.RawValue("d", 0.0)  # the common t0 of every worker (perf_counter is system-wide)

    def claim(self) -> int | None:
        with self.lock:
            return super().claim()

    def finish(self, failed: bool, hinted: bool = False, index: int | None = None) -> None:
        with self.lock:
            super().finish(failed, hinted, index)


ACTIVE: list[Tally] = []  # the series running now (the parent's signal handler stops them)
HALT = [0]  # 0: run; 1: interrupted (no new request); 2: and the requests in flight abandoned


def halt(level: int) -> None:
    """From the signal handler: stop the series running now, and any started after (a signal between two)."""
    HALT[0] = max(HALT[0], level)
    for tally in list(ACTIVE):
        _apply_halt(tally)


def running(tally: Tally) -> Tally:
    """A series starts: listed in ACTIVE (engine.run_series removes it), stopped at once if the run was."""
    ACTIVE.append(tally)
    _apply_halt(tally)
    return tally


def _apply_halt(tally: Tally) -> None:
    if HALT[0] >= 2:
        tally.abandon()
    elif HALT[0] == 1:
        tally.interrupt()


def prepare(plan: SeriesPlan) -> SeriesPlan:
    """Compute the open-loop schedule (once, before any worker starts)."""
    from taotoken_cli.cmd.bench.workload import schedule

    workload = plan.workload
    if workload.trace:
        times = array("d", (entry.at for entry in workload.trace))
        if plan.duration is not None:
            times = array("d", (t for t in times if t < plan.duration))
        if plan.requests is not None:
            times = times[:plan.requests]
        plan.schedule = times
    elif plan.rate:
        plan.schedule = schedule(plan.rate, workload.arrival, seed=workload.seed, requests=plan.requests,
                                 duration=plan.duration, ramp_up=workload.ramp_up)
    return plan
