"""The load engine: worker processes, each with its own event loop and its own connections.

The parent splits the load (connections, request counts, the open-loop schedule) across
`workers` processes; each runs its share on its own asyncio loop with its own keep-alive
connections (http1.Pool), so no lock, pool or GIL is shared between workers. Workers do their
warm-up, meet at a barrier, run, and send back bounded statistics (stats.SeriesStats).

Load models
- closed loop (`-n` / `-z` with `-c`): `c` users send back-to-back, latency from each send.
- open loop (`--rate R`): request k is scheduled at k/R seconds; latency and TTFT are measured from
  the scheduled start, so a slow server cannot hide its queueing (no coordinated omission). At most
  `c` requests are in flight; a request that cannot start on time starts late and is counted.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from taotoken_cli.bench import http1
from taotoken_cli.bench.stats import SeriesStats

_perf = time.perf_counter
LATE_TOLERANCE_S = 0.005  # an open-loop start later than this past its schedule counts as late
BODY_LIMIT = 1 << 20  # non-stream bodies are kept only until the request is judged (same bound as gateway)


@dataclass(kw_only=True)
class Load:
    """What every series of a run shares: the gateway, the request and the load model."""

    root: str
    api_key: str | None
    prompt: str = "Say OK."
    max_tokens: int = 16
    stream: bool = False
    requests: int | None = 100
    duration: float | None = None
    concurrency: int = 10
    rate: float | None = None
    warmup: int = 0
    timeout: float = 60.0
    raw_path: str | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True)
class Plan(Load):
    """One series: a model under the load, as the worker processes receive it."""

    model: str
    connect_timeout: float = 10.0
    workers: int = 1

    @property
    def url(self) -> str:
        from taotoken_cli.gateway import Endpoints

        return Endpoints(self.root.rstrip("/")).chat

    def request_body(self) -> bytes:
        from taotoken_cli.gateway import chat_request_body

        body = chat_request_body(self.model, prompt=self.prompt, max_tokens=self.max_tokens, stream=self.stream)
        return json.dumps(body, ensure_ascii=False).encode()

    def headers(self) -> dict[str, str]:
        from taotoken_cli.gateway import USER_AGENT, Gateway

        headers = Gateway(self.root, self.api_key, extra_headers=self.extra_headers).headers()
        headers["User-Agent"] = USER_AGENT
        headers["Content-Type"] = "application/json"
        return headers


@dataclass
class Share:
    """One worker's part of the load."""

    index: int
    workers: int
    concurrency: int
    requests: int | None  # closed loop with -n
    warmup: int


def split(plan: Plan) -> list[Share]:
    workers = max(1, min(plan.workers, plan.concurrency))
    if plan.requests is not None:
        workers = max(1, min(workers, plan.requests))
    conc = [plan.concurrency // workers + (1 if i < plan.concurrency % workers else 0) for i in range(workers)]

    def portion(total: int) -> list[int]:
        parts = [total * c // plan.concurrency for c in conc]
        for i in range(total - sum(parts)):
            parts[i % workers] += 1
        return parts

    reqs = portion(plan.requests) if plan.requests is not None else [None] * workers
    warm = portion(plan.warmup)
    return [Share(i, workers, conc[i], reqs[i], warm[i]) for i in range(workers)]


# -- one request ------------------------------------------------------------------------------
class Exchange:
    """The sink for one response: stamps and parses bytes as they arrive, keeps no stream text."""

    __slots__ = ("stream", "t_ref", "status", "headers", "body", "sse", "parser", "summary", "last", "gaps",
                 "head_t", "truncated")

    def __init__(self, stream: bool, t_ref: float) -> None:
        self.stream = stream
        self.t_ref = t_ref
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.sse = False
        self.parser = None
        self.summary = None
        self.last: float | None = None
        self.gaps: list[float] = []
        self.head_t = 0.0
        self.truncated = False

    def on_head(self, status: int, headers: dict[str, str], t: float) -> None:
        self.status, self.headers, self.head_t = status, headers, t
        if self.stream and 200 <= status < 300 and headers.get("content-type", "").startswith("text/event-stream"):
            from taotoken_cli.gateway import StreamSummary
            from taotoken_cli.sse import SSEParser

            self.sse = True
            self.parser = SSEParser()
            self.summary = StreamSummary()

    def on_body(self, data: bytes, t: float) -> None:
        if self.sse:
            self._events(self.parser.feed(data), t)
        elif len(self.body) < BODY_LIMIT:
            self.body += data[:BODY_LIMIT - len(self.body)]
        else:
            self.truncated = True

    def finish_stream(self, t: float) -> None:
        if self.sse:
            self._events(self.parser.close(), t)

    def _events(self, events: list, t: float) -> None:
        from taotoken_cli.gateway import absorb_event

        summary = self.summary
        for event in events:
            before = summary.content_deltas
            absorb_event(summary, event, t - self.t_ref)
            summary.text = ""  # bench keeps no response text
            if summary.content_deltas != before:
                if self.last is not None:
                    self.gaps.append(t - self.last)
                self.last = t


def _decoded(ex: Exchange) -> bytes:
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


def _as_httpx_error(exc: BaseException, connecting: bool) -> BaseException:
    """The exception httpx would have raised, so classify() reads bench's failures like the gateway client's."""
    import socket
    import ssl

    import httpx

    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        cls = httpx.ConnectTimeout if connecting else httpx.ReadTimeout
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


class Runner:
    """Runs one worker's share on the current event loop."""

    def __init__(self, plan: Plan, share: Share, progress=None, raw=None) -> None:
        self.plan = plan
        self.share = share
        ssl_context = http1.default_ssl_context() if plan.url.startswith("https") else None
        self.target = http1.Target(plan.url, plan.headers(), plan.request_body(), ssl_context=ssl_context)
        self.pool = http1.Pool(self.target, share.concurrency, min(plan.connect_timeout, plan.timeout))
        self.stats = SeriesStats()
        self.progress = progress  # shared array of completed counts, one slot per worker
        self.raw = raw
        self.measuring = False
        self.seq = 0
        self.context = {"base": plan.root, "openai_base": plan.root.rstrip("/") + "/v1", "model": plan.model,
                        "host": self.target.host}

    async def request(self, t_ref: float, scheduled: float | None = None) -> None:
        """One request; `t_ref` is where latency is measured from (the scheduled start in open loop)."""
        plan = self.plan
        loop = asyncio.get_running_loop()
        ex = Exchange(plan.stream, t_ref)
        error: BaseException | None = None
        connecting = True
        conn = None
        sent = _perf()
        for attempt in (0, 1):
            connecting = True
            try:
                reused = bool(self.pool._idle)
                conn = await self.pool.get()
                connecting = False
                if attempt == 0:
                    sent = _perf()
                future = conn.send(self.target.request_bytes, ex)
                timer = loop.call_at(loop.time() + max(0.0, plan.timeout - (_perf() - sent)), conn.abort,
                                     TimeoutError(f"no complete response within {plan.timeout:g} s"))
                try:
                    await future
                finally:
                    timer.cancel()
                error = None
                break
            except (OSError, TimeoutError, asyncio.TimeoutError, http1.ProtocolError) as exc:
                error = exc
                if conn is not None:
                    conn.closed = True
                # a keep-alive connection the server closed while idle: retry once on a fresh one
                if not (attempt == 0 and reused and ex.status is None and isinstance(exc, ConnectionError)):
                    break
                conn = None
        end = conn.end_time if (error is None and conn is not None) else _perf()
        if conn is not None:
            self.pool.put(conn)
        if error is None:
            ex.finish_stream(end)
        if self.measuring:
            late = 0.0
            if scheduled is not None:
                late = max(0.0, sent - scheduled)
            self.record(ex, error, connecting, t_ref, end, late, scheduled is not None)

    def record(self, ex: Exchange, error: BaseException | None, connecting: bool, t_ref: float, end: float,
               late: float, open_loop: bool) -> None:
        stats = self.stats
        plan = self.plan
        stats.count_status(ex.status)
        latency = end - t_ref
        if open_loop and late > LATE_TOLERANCE_S:
            stats.late_starts += 1
            stats.lateness_total += late
            stats.lateness_max = max(stats.lateness_max, late)
        ok, tokens, source, ttft = False, None, None, None
        usable = self.usable(ex) if error is None and ex.status is not None and 200 <= ex.status < 300 else None
        if usable is not None:
            ok, tokens, source, ttft = usable
        code = None
        if not ok:
            code = self.classify(ex, error, connecting, latency)
            if code is None:  # the shared classifier accepts it (e.g. no [DONE] but a finish_reason): it is the
                ok = True  # authority on what counts as a failure
                if usable is not None:
                    tokens, source, ttft = usable[1:]
        if ok:
            self.count_success(latency, tokens, source, ttft, ex.gaps)
        else:
            stats.failed += 1
        stats.ended_at = max(stats.ended_at, end)
        if self.progress is not None:
            self.progress[self.share.index] += 1
        if self.raw is not None:
            self.seq += 1
            line = {"model": plan.model, "worker": self.share.index, "seq": self.seq,
                    "start_s": round(t_ref - stats.started_at, 6), "latency_ms": round(latency * 1000, 3),
                    "status": ex.status, "ok": ok, "error": code,
                    "ttft_ms": round(ttft * 1000, 3) if ttft is not None else None,
                    "output_tokens": tokens, "tokens_source": source}
            if open_loop:
                line["late_ms"] = round(late * 1000, 3)
            self.raw.write(json.dumps(line).encode() + b"\n")

    def usable(self, ex: Exchange) -> tuple[bool, int | None, str | None, float | None] | None:
        """For a 2xx answer: (clean success?, output tokens, where the count came from, TTFT) or None when
        there is nothing usable. `clean` is the fast path; anything else goes to the shared classifier."""
        if self.plan.stream:
            summary = ex.summary
            if summary is None or not summary.content_deltas or summary.first_content_s is None:
                return None
            usage_tokens = (summary.usage or {}).get("completion_tokens")
            tokens, source = ((usage_tokens, "usage") if isinstance(usage_tokens, int)
                              else (summary.content_deltas, "counted"))
            clean = summary.error_event is None and summary.done
            return clean, tokens, source, summary.first_content_s
        try:
            payload = json.loads(ex.body) if not ex.truncated else None
        except ValueError:
            return None
        if not isinstance(payload, dict) or payload.get("error") or not payload.get("choices"):
            return None
        usage = payload.get("usage")
        usage_tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
        if isinstance(usage_tokens, int):
            return True, usage_tokens, "usage", None
        return True, None, None, None

    def count_success(self, latency: float, tokens: int | None, source: str | None, ttft: float | None,
                      gaps: list[float]) -> None:
        stats = self.stats
        stats.ok += 1
        stats.latency.record(latency)
        if tokens is not None:
            stats.output_tokens += tokens
            if source == "usage":
                stats.tokens_from_usage += 1
            else:
                stats.tokens_counted += 1
            if latency > 0:
                stats.tokens_per_s.record(tokens / latency)
        if ttft is not None:
            stats.ttft.record(ttft)
            for gap in gaps:  # inter-token gaps: the first token is not among them
                stats.itl.record(gap)
            if tokens is not None and tokens > 1:
                stats.tpot.record((latency - ttft) / (tokens - 1))

    def classify(self, ex: Exchange, error: BaseException | None, connecting: bool, latency: float) -> str | None:
        """Ask the shared classifier; count the failure under its catalogue code (None: it sees a success)."""
        from taotoken_cli.gateway import Observation

        plan = self.plan
        obs = Observation("POST", self.target.url, status=ex.status, headers=ex.headers, body=_decoded(ex),
                          body_truncated=ex.truncated, elapsed_s=latency, stream=ex.summary,
                          key_sent=bool(plan.api_key))
        if error is not None:
            obs.error = _as_httpx_error(error, connecting)
        from taotoken_cli.diagnosis.classify import classify

        diagnosis = classify(obs, expect="stream" if plan.stream else "chat", context=dict(self.context))
        if diagnosis is None:
            return None
        example: dict[str, Any] = {"status": ex.status, "retry_after_s": diagnosis.retry_after_s}
        if diagnosis.code not in self.stats.errors:
            example.update(title=diagnosis.entry.title, fixes=diagnosis.fixes(),
                           server_message=diagnosis.server_message, retry=diagnosis.entry.retry)
        self.stats.count_error(diagnosis.code, example)
        return diagnosis.code

    # -- load models -----------------------------------------------------------------------
    async def closed(self, count: int | None, deadline: float | None, users: int) -> None:
        remaining = [count]

        async def user() -> None:
            while True:
                if count is not None:
                    if remaining[0] <= 0:
                        return
                    remaining[0] -= 1
                elif _perf() >= deadline:
                    return
                await self.request(_perf())

        await asyncio.gather(*(user() for _ in range(max(1, users))))

    async def open(self, t0: float) -> None:
        plan, share = self.plan, self.share
        loop = asyncio.get_running_loop()
        slots = asyncio.Semaphore(share.concurrency)
        tasks: set[asyncio.Task] = set()
        interval = 1.0 / plan.rate
        k = 0
        while True:
            g = share.index + k * share.workers  # this worker's k-th request in the global schedule
            if plan.requests is not None and g >= plan.requests:
                break
            scheduled = t0 + g * interval
            if plan.duration is not None and scheduled >= t0 + plan.duration:
                break
            k += 1
            delay = scheduled - _perf()
            if delay > 0:
                await asyncio.sleep(delay)
            await slots.acquire()  # at most c in flight: a request that waits here starts late

            async def one(s: float = scheduled) -> None:
                try:
                    await self.request(s, scheduled=s)
                finally:
                    slots.release()

            task = loop.create_task(one())
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.gather(*tasks)


async def run_worker(plan: Plan, share: Share, barrier=None, progress=None) -> dict[str, Any]:
    raw = open(plan.raw_path, "ab", buffering=1 << 16) if plan.raw_path else None  # noqa: SIM115
    runner = Runner(plan, share, progress, raw)
    try:
        if share.warmup:
            await runner.closed(share.warmup, None, min(share.concurrency, share.warmup))
        if barrier is not None:
            barrier.wait(timeout=max(30.0, plan.timeout * 2))  # all workers start measuring together
        runner.measuring = True
        t0 = _perf()
        runner.stats.started_at = t0
        if plan.rate:
            await runner.open(t0)
        else:
            deadline = t0 + plan.duration if plan.duration is not None else None
            await runner.closed(share.requests, deadline, share.concurrency)
        runner.stats.ended_at = max(runner.stats.ended_at, t0)
        runner.stats.connections = runner.pool.opened
    finally:
        runner.pool.close()
        if raw is not None:
            raw.close()
    return runner.stats.to_state()


def _worker_main(plan: Plan, share: Share, pipe, barrier, progress) -> None:
    try:
        state = asyncio.run(run_worker(plan, share, barrier, progress))
        pipe.send(("ok", state))
    except KeyboardInterrupt:
        pipe.send(("error", "interrupted"))
    except BaseException as exc:  # reported by the parent as a clear error
        pipe.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        pipe.close()


def _mp_context():
    import multiprocessing

    # fork is fast and needs no re-import; elsewhere (macOS, Windows) spawn is the safe choice
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


def run_series(plan: Plan, on_progress=None) -> SeriesStats:
    """Run one series across worker processes and return the merged statistics.

    `on_progress(done, total_or_None, elapsed_s)` is called about 10 times a second while running.
    """
    shares = split(plan)
    if plan.raw_path:
        os.makedirs(os.path.dirname(os.path.abspath(plan.raw_path)), exist_ok=True)
    if len(shares) == 1 and on_progress is None:
        return SeriesStats.from_state(asyncio.run(run_worker(plan, shares[0])))
    ctx = _mp_context()
    progress = ctx.RawArray("q", len(shares))
    barrier = ctx.Barrier(len(shares))
    procs, pipes = [], []
    for share in shares:
        parent_end, child_end = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker_main, args=(plan, share, child_end, barrier, progress), daemon=True)
        proc.start()
        child_end.close()
        procs.append(proc)
        pipes.append(parent_end)
    results: list[tuple[str, Any] | None] = [None] * len(shares)
    total = plan.requests if (plan.requests is not None) else None
    started = None
    try:
        while any(r is None for r in results):
            for i, pipe in enumerate(pipes):
                if results[i] is None and pipe.poll(0.1 / len(pipes)):
                    try:
                        results[i] = pipe.recv()
                    except EOFError:
                        results[i] = ("error", f"worker {i} exited with code {procs[i].exitcode}")
                    if results[i][0] == "error":
                        barrier.abort()
                elif results[i] is None and not procs[i].is_alive() and not pipe.poll(0):
                    results[i] = ("error", f"worker {i} exited with code {procs[i].exitcode}")
                    barrier.abort()
            done = sum(progress)
            if done and started is None:
                started = _perf()
            if on_progress is not None:
                on_progress(done, total, (_perf() - started) if started else 0.0)
    finally:
        for proc in procs:
            if proc.is_alive() and any(r is None for r in results):
                proc.terminate()
        for proc in procs:
            proc.join(timeout=5)
    errors = [r[1] for r in results if r and r[0] == "error"]
    errors.sort(key=lambda text: "BrokenBarrierError" in text)  # the cause first, not its echo in other workers
    if errors:
        from taotoken_cli.errors import TaotokenError

        raise TaotokenError(f"a bench worker failed: {errors[0]}",
                            fix="run again with --workers 1 and TAOTOKEN_DEBUG=1 to see where")
    merged = SeriesStats()
    for _, state in results:
        merged.merge(SeriesStats.from_state(state))
    return merged
