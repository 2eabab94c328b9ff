"""Where bench's event loops and worker processes come from (uvloop when installed, the OS's process start), and how
the heap is kept out of the way of the load."""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager

from taotoken_cli.core.platform import system


def run_loop(coro):
    """asyncio.run, on uvloop when it is installed (the `fast` extra) unless TAOTOKEN_BENCH_LOOP=asyncio."""
    if os.environ.get("TAOTOKEN_BENCH_LOOP", "").lower() != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            loop = uvloop.new_event_loop()
            try:
                asyncio.set_event_loop(loop)
                return loop.run_until_complete(coro)
            finally:
                asyncio.set_event_loop(None)
                loop.close()
    return asyncio.run(coro)


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """The report's name for the loop a worker runs on: "uvloop" or "asyncio" (read from the loop itself)."""
    return "uvloop" if type(loop).__module__.split(".")[0] == "uvloop" else "asyncio"


def mp_context():
    import multiprocessing

    # fork is fast and needs no re-import; elsewhere (macOS, Windows) spawn is the safe choice
    return multiprocessing.get_context(system.current().mp_start)


@contextmanager
def frozen_heap() -> Iterator[None]:
    """While the load runs, the objects made before it (modules, the plan, the connections) are left out of the
    garbage collector's passes (gc.freeze): requests make short-lived objects, and each full pass the collector
    makes would walk the whole heap again (~1,200 instructions a request at zero delay, counted by
    benchmarks/bench_engine.py --callgrind)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
