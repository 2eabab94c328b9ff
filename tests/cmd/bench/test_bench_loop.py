"""Which event loop bench's workers run on (cmd/bench/loop.py): uvloop when it is installed (the `fast` extra; the
`test` extra installs it too, except on Windows, where uvloop does not exist), asyncio when
TAOTOKEN_BENCH_LOOP=asyncio. The JSON's `load.event_loop` is read by each worker from the loop it runs on
(loop.loop_name of the running loop), so it says what really ran, not what was configured."""

from __future__ import annotations

import json

import pytest

from taotoken_cli.cmd.mock import MockOptions
from tests.conftest import SENTINEL_KEY


@pytest.fixture(scope="module")
def server(module_mock_gateway):
    return module_mock_gateway(MockOptions(key=SENTINEL_KEY, latency_ms=5, tokens=3), process=True).url


def bench_json(cli, server: str, workers: str, loop: str | None) -> dict:
    result = cli("bench", "--base-url", server, "-m", "m", "-n", "20", "-c", "4", "--workers", workers, "--json",
                 env={"TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_BENCH_LOOP": loop}, timeout=60)
    result.assert_clean()
    assert result.returncode == 0, result.output
    data = json.loads(result.stdout)
    assert data["series"][0]["ok"] == 20, data["series"][0]["errors"]
    return data


# "1": the series runs in bench's own process; "2": in two worker processes (forked or spawned)
@pytest.mark.parametrize("workers", ["1", "2"])
def test_uvloop_runs_the_load_when_it_is_installed(cli, server, workers):
    pytest.importorskip("uvloop", reason="uvloop is not installed (Windows, or no `fast`/`test` extra)")
    data = bench_json(cli, server, workers, loop=None)  # the variable unset: the default choice
    assert data["load"]["event_loop"] == "uvloop"
    assert data["load"]["workers"] == int(workers)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_taotoken_bench_loop_asyncio_picks_asyncio(cli, server, workers):
    data = bench_json(cli, server, workers, loop="asyncio")
    assert data["load"]["event_loop"] == "asyncio"


def test_the_heap_is_frozen_while_the_load_runs_and_only_then():
    """loop.frozen_heap keeps the objects made before the load out of the collector's passes (gc.freeze), and gives
    them back after it, also when the load ends with an error."""
    import gc

    from taotoken_cli.cmd.bench.loop import frozen_heap

    assert gc.get_freeze_count() == 0
    kept = object.__new__(type("Kept", (), {}))  # a tracked object made before the load
    with frozen_heap():
        assert gc.get_freeze_count() > 0
        assert not any(o is kept for o in gc.get_objects())  # out of every generation the collector walks
    assert gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError), frozen_heap():
        raise RuntimeError("the load failed")
    assert gc.get_freeze_count() == 0
    assert any(o is kept for o in gc.get_objects())


def test_a_run_freezes_the_heap_while_it_measures(server, monkeypatch):
    """A series run in this process (one worker, as `bench` runs one): the requests are recorded with the heap frozen,
    and it is unfrozen after."""
    import gc

    from taotoken_cli.cmd.bench import engine
    from taotoken_cli.cmd.bench.plan import SeriesPlan

    seen: list[int] = []
    record = engine.Runner.record

    def recording(self, *args):
        seen.append(gc.get_freeze_count())
        return record(self, *args)

    monkeypatch.setattr(engine.Runner, "record", recording)
    plan = SeriesPlan(root=server + "/api", api_key=SENTINEL_KEY, model="m", requests=20, concurrency=4)
    result = engine.run_series(plan)
    assert result.stats.ok == 20 and result.workers == 1
    assert len(seen) == 20 and min(seen) > 0
    assert gc.get_freeze_count() == 0
