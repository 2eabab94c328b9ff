"""The load engine: worker processes, each with its own event loop and its own connections.

The parent splits the connections across `workers` processes; each runs on its own asyncio loop
with its own keep-alive connections (http1.Pool), so no pool or GIL is shared between workers.
What they do share is a Tally in shared memory: the next request number (so `-n` is handed out
request by request and a slow worker leaves no tail while the others idle), the finished and
failed counts (the live view, and the abort rules: `--max-errors`, `--max-error-rate`) and the
abort flag. Workers do their warm-up, meet at a barrier, run, and send back bounded statistics.

Load models
- closed loop (`-n` / `-z` with `-c`): `c` users send back-to-back, latency from each send; with a
  ramp-up the users start one after another across it.
- open loop (`--rate R`, or a trace): request k is scheduled at the k-th time of a schedule
  computed before the run (workload.schedule); latency and TTFT are measured from the scheduled
  start, so a slow server cannot hide its queueing (no coordinated omission). At most `c` requests
  are in flight; a request that cannot start on time starts late and is counted.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from taotoken_cli.cmd.bench import http1
from taotoken_cli.cmd.bench.advice import in_english
from taotoken_cli.cmd.bench.exchange import Exchange, as_httpx_error, decoded
from taotoken_cli.cmd.bench.loop import frozen_heap, loop_name, mp_context, run_loop
from taotoken_cli.cmd.bench.plan import ACTIVE, BodyTemplate, SeriesPlan, Share, Tally, prepare, running, split
from taotoken_cli.cmd.bench.stats import SeriesStats, window_width
from taotoken_cli.core.base.i18n import _, current, use
from taotoken_cli.core.diagnosis.context import context_for

_perf = time.perf_counter
_STATUS_KEYS: dict[int | None, str] = {}  # a status as SeriesStats.status counts it ("200", "none"), made once
LATE_TOLERANCE_S = 0.005  # an open-loop start later than this past its schedule counts as late
# load a gateway sheds with a retry hint: the user waits as asked (never longer than this) and tries again
RETRY_CODES = ("rate.limited", "rate.concurrency", "upstream.saturated")
MAX_RETRY_WAIT_S = 60.0

# How often a worker whose users are still ramping in looks whether the budget (-n) is spent elsewhere
_RAMP_WATCH_S = 0.05


class Runner:
    """Runs one worker's share on the current event loop."""

    def __init__(self, plan: SeriesPlan, share: Share, tally: Tally, records=None) -> None:
        self.plan = plan
        self.share = share
        self.tally = tally
        ssl_context = http1.default_ssl_context() if plan.url.startswith("https") else None
        self.target = http1.Target(plan.url, plan.headers(), plan.request_body(), ssl_context=ssl_context,
                                   proxy=plan.proxy)
        self.template = None if plan.workload.fixed else BodyTemplate(plan)
        if self.template is not None:
            plan.workload.request(0)  # builds the word pool and imports what drawing needs, before any timing
        self.pool = http1.Pool(self.target, share.concurrency, min(plan.connect_timeout, plan.timeout))
        self.stats = SeriesStats(window_width(plan.duration))
        self.records = records
        self.measuring = False
        self.hold_until = 0.0  # open loop: no start before this (a Retry-After)
        self.seq = 0
        self.context = context_for(base=plan.root, model=plan.model)
        self.timeout = plan.timeout
        self.stream, self.slo_limits = plan.stream, plan.slo_limits
        self.timed_out = self._timed_out  # (bound once: handed to Pool.watch with every request)
        self.loop = asyncio.get_running_loop()

    def start(self, g: int, t_ref: float, then: Callable[[float | None], None],
              fail: Callable[[BaseException], None], scheduled: float | None = None) -> None:
        """Send request number `g`; `t_ref` is where latency is measured from (the scheduled start in open loop).
        Once it is over and recorded, `then(hint)`: the seconds the gateway asked to wait (Retry-After of a rate
        limit), or None; `fail(error)` instead when recording it raised (a bug: the run must not hang on it).

        Callbacks, not a coroutine per request: on a warm connection the response's last bytes are parsed, the
        request recorded and the next one written in the same data_received, as a raw asyncio client does; a
        task and a future per request cost about as much CPU as reading the answer."""
        plan = self.plan
        if self.template is None:
            data, max_tokens = self.target.request_bytes, plan.workload.max_tokens
        else:
            prompt, max_tokens = plan.workload.request(g)
            data = self.target.build(self.template.body(prompt, max_tokens))
        _Request(self, g, t_ref, scheduled, data, max_tokens, then, fail).go()

    async def request(self, g: int, t_ref: float, scheduled: float | None = None) -> float | None:
        """`start` as a coroutine (warm-up, open loop): returns the Retry-After hint or None."""
        future = self.loop.create_future()

        def settle(hint: float | None) -> None:
            if not future.done():  # not when a second Ctrl-C cancelled the wait (the request was abandoned)
                future.set_result(hint)

        def fail(exc: BaseException) -> None:
            if not future.done():
                future.set_exception(exc)

        self.start(g, t_ref, settle, fail, scheduled)
        return await future

    def _timed_out(self) -> TimeoutError:
        return TimeoutError(f"no complete response within {self.plan.timeout:g} s")

    def record(self, g: int, ex: Exchange, error: BaseException | None, connecting: bool, t_ref: float, end: float,
               late: float, open_loop: bool, max_tokens: int) -> float | None:
        stats = self.stats
        started_at = stats.started_at
        start_s = t_ref + late - started_at
        if start_s > stats.last_start:
            stats.last_start = start_s
        status = ex.status
        key = _STATUS_KEYS.get(status)  # (SeriesStats.count_status, inline: per request)
        if key is None:
            key = _STATUS_KEYS[status] = str(status) if status is not None else "none"
        stats.status[key] = stats.status.get(key, 0) + 1
        latency = end - t_ref
        if open_loop and late > LATE_TOLERANCE_S:
            stats.late_starts += 1
            stats.lateness_total += late
            stats.lateness_max = max(stats.lateness_max, late)
        ok = False
        tokens: int | None
        source: str | None
        ttft: float | None
        prompt_tokens: int | None
        tokens = source = ttft = prompt_tokens = usable = None
        if error is None and status is not None and 200 <= status < 300:
            if self.stream:
                usable = ex.streamed()
                if usable is not None:
                    ok, tokens, source, ttft = usable
            elif not ex.truncated and ex.answer():  # a usable plain answer: a clean success
                usage = ex.usage
                if usage:
                    tokens, prompt_tokens = usage.get("completion_tokens"), usage.get("prompt_tokens")
                    if isinstance(tokens, int):
                        source = "usage"
                    else:
                        tokens = None
                    if not isinstance(prompt_tokens, int):
                        prompt_tokens = None
                ok = True
        code = None
        hint = None
        if not ok:
            code, hint = self.classify(ex, error, connecting, latency)
            if code is None:  # the shared classifier accepts it (e.g. no [DONE] but a finish_reason): it is the
                ok = True  # authority on what counts as a failure
                if usable is not None:
                    tokens, source, ttft = usable[1:]
        tpot = (latency - ttft) / (tokens - 1) if ok and ttft is not None and tokens is not None and tokens > 1 \
            else None
        good = False
        if ok:  # a success (its latency and TTFT: in the window it ended in, see SeriesStats.fill_from_windows)
            stats.ok += 1
            if tokens is not None:
                stats.output_tokens += tokens
                if source == "usage":
                    stats.tokens_from_usage += 1
                else:
                    stats.tokens_counted += 1
                if latency > 0:
                    stats.tokens_per_s.record(tokens / latency)
            if ttft is not None:
                for gap in ex.gaps:  # inter-token gaps: the first token is not among them
                    stats.itl.record(gap)
                if tpot is not None:
                    stats.tpot.record(tpot)
            good = not self.slo_limits or self.within_slo(latency, ttft, tpot, ex.gaps)
            if good:
                stats.good += 1
            if prompt_tokens is None:
                prompt_tokens = ex.prompt_tokens()
            if prompt_tokens:
                stats.input_tokens += prompt_tokens
        else:
            stats.failed += 1
        if end > stats.ended_at:
            stats.ended_at = end
        stats.windows.add(end - started_at, ok, latency, ttft, tokens, good, start_s)
        self.tally.finish(not ok, hint is not None, g)
        if self.records is not None:
            self.seq += 1
            line = {"model": self.plan.model, "worker": self.share.index, "seq": self.seq, "index": g,
                    "start_s": round(t_ref - stats.started_at, 6), "end_s": round(end - stats.started_at, 6),
                    "latency_ms": round(latency * 1000, 3), "status": ex.status, "ok": ok, "error": code,
                    "ttft_ms": round(ttft * 1000, 3) if ttft is not None else None,
                    "tpot_ms": round(tpot * 1000, 3) if tpot is not None else None,
                    "output_tokens": tokens, "tokens_source": source, "input_tokens": prompt_tokens,
                    "max_tokens": max_tokens, "good": good}
            if open_loop:
                line["late_ms"] = round(late * 1000, 3)
            self.records.write(json.dumps(line).encode() + b"\n")
        return hint

    def within_slo(self, latency: float, ttft: float | None, tpot: float | None, gaps: list[float]) -> bool:
        """A success within the per-request SLO limits (goodput)."""
        measured = {"latency": latency, "ttft": ttft, "tpot": tpot, "itl": sum(gaps) / len(gaps) if gaps else None}
        return not any(measured[name] is not None and measured[name] > limit for name, limit in self.slo_limits.items())

    def classify(self, ex: Exchange, error: BaseException | None, connecting: bool,
                 latency: float) -> tuple[str | None, float | None]:
        """Ask the shared classifier; count the failure under its catalogue code (None: it sees a success).
        Also: the wait a rate limit asked for (its Retry-After), which the load then honours."""
        from taotoken_cli.core.net.gateway import Observation

        plan = self.plan
        obs = Observation("POST", self.target.url, status=ex.status, headers=ex.headers, body=decoded(ex),
                          body_truncated=ex.truncated, elapsed_s=latency, stream=ex.summary,
                          key_sent=bool(plan.api_key), proxy=plan.proxy_label or plan.proxy)
        if error is not None:
            obs.error = as_httpx_error(error, connecting)
        from taotoken_cli.core.diagnosis.classify import classify

        diagnosis = classify(obs, expect="stream" if plan.stream else "chat", context=replace(self.context))
        if diagnosis is None:
            return None, None
        example: dict[str, Any] = {"status": ex.status, "retry_after_s": diagnosis.retry_after_s}
        if diagnosis.code not in self.stats.errors:
            # the fixes twice: in English for the report's data, in the run's language for the text report
            example.update(title=diagnosis.entry.title, fixes=in_english(diagnosis.fixes),
                           shown_fixes=diagnosis.fixes(), server_message=diagnosis.server_message,
                           retry=diagnosis.entry.retry)
        self.stats.count_error(diagnosis.code, example)
        hint = diagnosis.retry_after_s if diagnosis.code in RETRY_CODES else None
        return diagnosis.code, (min(hint, MAX_RETRY_WAIT_S) if hint is not None and hint > 0 else None)

    # -- load models -----------------------------------------------------------------------
    async def warm(self, count: int) -> None:
        """Warm-up requests (not measured): they open the connections and wake the gateway."""
        numbers = iter(range(count))

        async def user() -> None:
            for g in numbers:
                await self.request(g, _perf())

        await asyncio.gather(*(user() for _ in range(max(1, min(self.share.concurrency, count)))))

    async def closed(self, t0: float) -> None:
        """`c` users, each sending its next request as soon as its last one is recorded (callbacks: see start)."""
        plan, share, tally, loop = self.plan, self.share, self.tally, self.loop
        deadline = t0 + plan.duration if plan.duration is not None else None
        ramp = plan.workload.ramp_up or 0.0
        over = loop.create_future()
        users = [max(1, share.concurrency)]

        def fail(exc: BaseException) -> None:
            if not over.done():
                over.set_exception(exc)

        def leave() -> None:
            users[0] -= 1
            if users[0] == 0 and not over.done():
                over.set_result(None)

        def send(g: int) -> None:
            if tally.aborted or (deadline is not None and _perf() >= deadline):
                leave()
                return
            self.start(g, _perf(), after, fail)

        def after(wait: float | None) -> None:
            """A user's last request is over: claim the next one, after the Retry-After it was given (not past
            the end)."""
            if deadline is not None and _perf() >= deadline:
                leave()
                return
            g = tally.claim()
            if g is None:
                leave()
                release_waiting()
            elif wait:
                self.stats.deferred += 1
                loop.call_later(wait if deadline is None else max(0.0, min(wait, deadline - _perf())),
                                guarded, send, g)
            else:
                self.start(g, _perf(), after, fail)

        def guarded(step: Callable[..., None], *args: object) -> None:
            try:
                step(*args)
            except BaseException as exc:  # a bug in a timer callback: end the run with it instead of hanging
                fail(exc)

        waiting: dict[int, asyncio.TimerHandle] = {}  # users whose ramp-up slot has not come yet

        def arrive(i: int) -> None:
            waiting.pop(i, None)
            after(None)

        def release_waiting() -> None:
            """The budget (-n) is spent, here or by another worker: users not ramped in yet never start, and the
            run does not wait out their slots."""
            for handle in waiting.values():
                handle.cancel()
                leave()
            waiting.clear()

        def watch() -> None:
            if tally.spent:
                release_waiting()
            elif waiting:
                loop.call_later(_RAMP_WATCH_S, guarded, watch)

        for i in range(users[0]):
            if ramp:
                waiting[i] = loop.call_at(
                    loop.time() + max(0.0, t0 + (share.first_user + i) * ramp / plan.concurrency - _perf()),
                    guarded, arrive, i)
            else:
                after(None)
        if waiting:  # an abort or a spent budget elsewhere also ends the wait
            watch()
        await over

    async def open(self, t0: float) -> None:
        schedule, tally = self.plan.schedule, self.tally
        assert schedule is not None
        loop = asyncio.get_running_loop()
        slots = asyncio.Semaphore(self.share.concurrency)
        tasks: set[asyncio.Task] = set()

        async def one(g: int, scheduled: float) -> None:
            try:
                wait = await self.request(g, scheduled, scheduled=scheduled)
                if wait:  # Retry-After: later starts wait until then (and count as late)
                    self.hold_until = max(self.hold_until, _perf() + wait)
            finally:
                slots.release()

        try:
            while True:
                await slots.acquire()  # at most c in flight: a request that waits here starts late
                g = tally.claim()  # the next start of the shared schedule, whichever worker is free
                if g is None:
                    slots.release()
                    break
                scheduled = t0 + schedule[g]
                if self.hold_until > scheduled:
                    self.stats.deferred += 1
                delay = max(scheduled, self.hold_until) - _perf()
                if delay > 0:
                    await asyncio.sleep(delay)
                if tally.aborted:
                    slots.release()
                    break
                task = loop.create_task(one(g, scheduled))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            if tasks:
                await asyncio.gather(*tasks)
        except asyncio.CancelledError:  # abandoned (a second Ctrl-C): the requests in flight are not waited for
            for task in list(tasks):
                task.cancel()
            raise


class _Request(Exchange):
    """One request in flight, driven by callbacks (Runner.start): an idle connection or a new one, the send, one
    retry on a fresh connection when a kept-alive one turns out closed, the record. It is its response's Exchange
    too (one object per request, not two)."""

    __slots__ = ("runner", "g", "scheduled", "data", "max_tokens", "then", "fail", "sent", "conn", "retried")

    def __init__(self, runner: Runner, g: int, t_ref: float, scheduled: float | None, data: bytes, max_tokens: int,
                 then: Callable[[float | None], None], fail: Callable[[BaseException], None]) -> None:
        Exchange.__init__(self, runner.plan.stream, t_ref)
        self.runner, self.g, self.scheduled = runner, g, scheduled
        self.data, self.max_tokens, self.then, self.fail = data, max_tokens, then, fail
        self.sent = t_ref if scheduled is None else _perf()  # when it was written (_open stamps it again)
        self.conn: http1.Connection | None = None
        self.retried = False

    def go(self) -> None:
        conn = self.runner.pool.idle()
        if conn is None:
            self.runner.loop.create_task(self._open())
        else:
            self._send(conn)

    async def _open(self) -> None:
        runner = self.runner
        try:
            conn = await runner.pool.open()
        except _FAILURES as exc:
            self._end(exc, True)
            return
        except BaseException as exc:  # a bug: end the run with it
            self.fail(exc)
            return
        if runner.measuring:
            runner.stats.connect.record(conn.connect_s)
            if conn.proxy_s is not None:
                runner.stats.proxy_connect.record(conn.proxy_s)
        if not self.retried:
            self.sent = _perf()  # (on a kept-alive connection it is written at once: sent as __init__ stamped it)
        self._send(conn)

    def _send(self, conn: http1.Connection) -> None:
        self.conn = conn
        conn.send(self.data, self, self._answered)
        runner = self.runner
        runner.pool.watch(conn, self.sent + runner.timeout, runner.timed_out)

    def _answered(self, error: BaseException | None) -> None:
        conn = self.conn
        assert conn is not None
        if error is not None:
            if not isinstance(error, _FAILURES):  # a bug in reading the answer: end the run with it, not hang
                conn.closed = True
                self.fail(error)
                return
            conn.closed = True
            conn.deadline = None
            # a keep-alive connection the server closed while idle: retry once on a fresh one
            if not self.retried and not conn.fresh and self.status is None and isinstance(error, ConnectionError):
                self.retried = True
                self.conn = None
                self.go()
                return
        self._end(error, False)

    def _end(self, error: BaseException | None, connecting: bool) -> None:
        runner, conn, ex = self.runner, self.conn, self
        try:
            end = conn.end_time if (error is None and conn is not None) else _perf()
            if conn is not None:
                runner.pool.put(conn)
            if error is None and ex.sse:
                ex.finish_stream(end)
            hint = None
            if runner.measuring:
                scheduled = self.scheduled
                late = max(0.0, self.sent - scheduled) if scheduled is not None else 0.0
                hint = runner.record(self.g, ex, error, connecting, self.t_ref, end, late, scheduled is not None,
                                     self.max_tokens)
            self.then(hint)
        except BaseException as exc:  # a bug in recording or in what follows: end the run with it
            self.fail(exc)


_FAILURES = (OSError, TimeoutError, asyncio.TimeoutError, http1.ProtocolError, http1.ProxyError)


async def run_worker(plan: SeriesPlan, share: Share, tally: Tally, barrier=None) -> dict[str, Any]:
    records = None
    if plan.records_dir:
        path = os.path.join(plan.records_dir, f"{plan.label}w{share.index}.jsonl")
        records = open(path, "wb", buffering=1 << 16)  # noqa: SIM115
    runner = Runner(plan, share, tally, records)
    runner.stats.event_loop = loop_name(runner.loop)
    try:
        if share.warmup:
            await _unless_abandoned(runner.warm(share.warmup), tally)
        t0 = _perf()
        if barrier is not None:  # all workers start measuring together, from one t0 (one schedule)
            if barrier.wait(timeout=max(30.0, plan.timeout * 2)) == 0:
                tally.start.value = _perf() + 0.005
            barrier.wait(timeout=30.0)
            t0 = tally.start.value
            await asyncio.sleep(max(0.0, t0 - _perf()))
        runner.measuring = not tally.abandoned
        runner.stats.started_at = t0
        if runner.measuring:
            with frozen_heap():
                await _unless_abandoned(runner.open(t0) if plan.schedule is not None else runner.closed(t0), tally)
        runner.measuring = False  # an abandoned request that still ends is not recorded
        runner.stats.ended_at = max(runner.stats.ended_at, t0)
        runner.stats.connections = runner.pool.opened
    finally:
        runner.pool.close()
        if records is not None:
            records.close()
    runner.stats.fill_from_windows()
    return runner.stats.to_state()


async def _unless_abandoned(coro, tally: Tally) -> None:
    """Run `coro` to its end, or until a second Ctrl-C abandons the requests in flight (Tally.abandon: set by the
    parent's signal handler, in another process or between two callbacks of this loop), checked 20 times a
    second while waiting."""
    task = asyncio.ensure_future(coro)
    while not task.done():
        if tally.abandoned:
            task.cancel()
            break
        await asyncio.wait({task}, timeout=0.05)
    try:
        await task
    except asyncio.CancelledError:
        if not tally.abandoned:
            raise


def _worker_main(plan: SeriesPlan, share: Share, tally: Tally, pipe, barrier, lang: str = "en") -> None:
    use(lang)  # a spawned worker (macOS, Windows) starts in English: the catalogue's fixes in the run's language
    import signal

    # Ctrl-C reaches the whole process group: the parent decides (it stops the load through the tally, and
    # the worker settles what is in flight and sends its figures back)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        state = run_loop(run_worker(plan, share, tally, barrier))
        pipe.send(("ok", state))
    except KeyboardInterrupt:
        pipe.send(("error", "interrupted"))
    except BaseException as exc:  # reported by the parent as a clear error
        pipe.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        pipe.close()


@dataclass
class SeriesResult:
    stats: SeriesStats
    aborted: str | None  # "max-errors" / "error-rate" when the abort rules stopped the series
    workers: int  # the worker processes it ran on


def run_series(plan: SeriesPlan, on_progress=None) -> SeriesResult:
    """Run one series across worker processes and return the merged statistics.

    `on_progress(done, failed, total_or_None, elapsed_s)` is called about 10 times a second while running.
    """
    prepare(plan)
    shares = split(plan)
    if len(shares) == 1 and on_progress is None:
        tally = running(Tally(plan))
        try:
            stats = SeriesStats.from_state(run_loop(run_worker(plan, shares[0], tally)))
        finally:
            ACTIVE.remove(tally)
        return SeriesResult(stats, tally.counts()[2], 1)
    from taotoken_cli.cmd.bench.plan import SharedTally  # (the workers' shared memory: only with worker processes)

    ctx = mp_context()
    tally = running(SharedTally(plan, ctx))
    barrier = ctx.Barrier(len(shares))
    procs, pipes = [], []
    for share in shares:
        parent_end, child_end = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker_main, args=(plan, share, tally, child_end, barrier, current()),
                           daemon=True)
        proc.start()
        child_end.close()
        procs.append(proc)
        pipes.append(parent_end)
    results: list[tuple[str, Any] | None] = [None] * len(shares)
    total = plan.limit
    started = None
    try:
        while any(r is None for r in results):
            for i, pipe in enumerate(pipes):
                if results[i] is None and pipe.poll(0.1 / len(pipes)):
                    try:
                        results[i] = pipe.recv()
                    except EOFError:
                        results[i] = ("error", _("worker {n} exited with code {code}").format(
                            n=i, code=procs[i].exitcode))
                    if results[i][0] == "error":
                        barrier.abort()
                elif results[i] is None and not procs[i].is_alive() and not pipe.poll(0):
                    results[i] = ("error", _("worker {n} exited with code {code}").format(n=i, code=procs[i].exitcode))
                    barrier.abort()
            done, failed, _aborted = tally.counts()
            if started is None and tally.values[0]:  # the first measured request has started
                started = _perf()
            if on_progress is not None:
                on_progress(done, failed, total, (_perf() - started) if started else 0.0)
    finally:
        ACTIVE.remove(tally)
        for proc in procs:
            if proc.is_alive() and any(r is None for r in results):
                proc.kill()  # workers ignore SIGTERM (see _worker_main)
        for proc in procs:
            proc.join(timeout=5)
    errors = [r[1] for r in results if r and r[0] == "error"]
    errors.sort(key=lambda text: "BrokenBarrierError" in text)  # the cause first, not its echo in other workers
    if errors:
        from taotoken_cli.core.base.errors import TaotokenError

        raise TaotokenError(_("a bench worker failed: {error}").format(error=errors[0]),
                            fix=_("run again with --workers 1 and TAOTOKEN_DEBUG=1 to see where"))
    merged = SeriesStats(window_width(plan.duration))
    for _status, state in results:
        merged.merge(SeriesStats.from_state(state))
    return SeriesResult(merged, tally.counts()[2], len(shares))
