"""What users of hey, oha and wrk type (issue 27, item 7), and bench saying each file it wrote (item 9), run
through the real CLI against the mock gateway."""

from __future__ import annotations

import json

import pytest

from taotoken_cli.cmd.bench.run import parse_count, parse_duration
from taotoken_cli.core.base.errors import InputError
from tests.conftest import SENTINEL_KEY


@pytest.mark.parametrize("text, seconds", [("1m30s", 90.0), ("1h", 3600.0), ("1h30m", 5400.0), ("500ms", 0.5),
                                           ("2m", 120.0), ("45", 45.0), ("1.5s", 1.5)])
def test_durations_as_go_writes_them(text, seconds) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["1x", "m30", "0s", "-1m", "1m30", "nan"])
def test_a_duration_that_is_not_one_is_refused_with_examples(text) -> None:
    with pytest.raises(InputError, match="is not a positive duration") as refused:
        parse_duration(text)
    assert "--duration 1m30s" in str(refused.value.fix)


@pytest.mark.parametrize("text, count", [("10k", 10_000), ("1.5k", 1500), ("2M", 2_000_000), ("10,000", 10_000),
                                         ("10_000", 10_000), ("200", 200)])
def test_counts_as_peers_write_them(text, count) -> None:
    assert parse_count(text, "-n") == count


def test_q_names_the_rate_option(run) -> None:
    result = run("bench", "-q", "10").assert_clean()
    assert result.returncode == 2
    text = " ".join(result.stderr.replace("│", " ").split())
    assert "bench has no -q" in text and "write: --rate 10" in text


def test_compound_durations_and_counts_reach_the_run(cli, mock_gateway) -> None:
    mock = mock_gateway()
    env = {"TAOTOKEN_API_KEY": SENTINEL_KEY}
    timed = cli("bench", "--base-url", mock.url, "-m", "m", "-z", "0m1s", "-c", "1", "--workers", "1", "--json",
                env=env).assert_clean()
    assert timed.returncode == 0 and json.loads(timed.stdout)["load"]["duration_s"] == 1.0
    counted = cli("bench", "--base-url", mock.url, "-m", "m", "-n", "0.02k", "-c", "2", "--workers", "1", "--json",
                  env=env).assert_clean()
    data = json.loads(counted.stdout)
    assert data["load"]["requests"] == 20 and data["series"][0]["requests"] == 20


def test_bench_names_every_file_it_wrote_on_stderr(cli, mock_gateway, tmp_path) -> None:
    mock = mock_gateway()
    paths = {"--raw": tmp_path / "r.jsonl", "--csv": tmp_path / "r.csv", "--html": tmp_path / "r.html"}
    result = cli("bench", "--base-url", mock.url, "-m", "m", "-n", "3", "--workers", "1", "--json",
                 *(part for option, path in paths.items() for part in (option, str(path))),
                 env={"TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean()
    assert result.returncode == 0
    json.loads(result.stdout)  # stdout stays the report alone
    written = [line for line in result.stderr.splitlines() if line.startswith("wrote ")]
    expected = [f"wrote {paths['--raw']} (--raw)", f"wrote {paths['--csv']} (--csv)",
                f"wrote {tmp_path / 'r.summary.csv'} (--csv)", f"wrote {paths['--html']} (--html)"]
    assert written == expected, result.stderr
    assert all(path.is_file() and path.stat().st_size for path in [*paths.values(), tmp_path / "r.summary.csv"])
