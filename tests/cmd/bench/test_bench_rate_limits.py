"""A server of known capacity and a rate-limited one (taotoken mock --slots / --rate-limit), and how bench
lives with them: FIFO slots cap the throughput, a token bucket answers 429 with Retry-After, bench honours
it (the load stays bounded, nothing is aborted), reports "rate-limited at ≈ R req/s" and never counts a
429 as goodput. Figures are compared with the server's own settings as ratios (a busy 2-core machine)."""

from __future__ import annotations

import json

import pytest

from taotoken_cli.cmd.mock import MockGateway, MockOptions, ModelTiming
from taotoken_cli.cmd.mock.capacity import Slots, TokenBucket
from taotoken_cli.core.base.errors import InputError
from tests.conftest import SENTINEL_KEY


def test_slots_serve_first_come_first_served():
    slots = Slots(2)
    assert [slots.admit(0.0, 1.0) for _ in range(5)] == [0.0, 0.0, 1.0, 1.0, 2.0]
    assert slots.admit(10.0, 1.0) == 10.0  # idle slots: served at once


def test_token_bucket_allows_its_rate_and_a_burst_of_one_second():
    bucket = TokenBucket(10)
    assert sum(bucket.take(0.0) for _ in range(15)) == 10  # the burst
    assert sum(bucket.take(0.5) for _ in range(15)) == 5  # half a second refills 5
    assert sum(bucket.take(0.5 + i / 100) for i in range(101)) == 10  # then 10 a second (0.5 to 1.5 s)


@pytest.mark.parametrize("changes, message", [({"slots": 0}, "--slots must be at least 1"),
                                              ({"rate_limit": 0.0}, "--rate-limit must be a positive"),
                                              ({"keep_requests": 0}, "--keep must be at least 1")])
def test_bad_capacity_options(changes, message):
    with pytest.raises(InputError, match=message):
        MockOptions(key=SENTINEL_KEY, **changes).validate()


def test_keep_bounds_the_records(cli):
    with MockGateway(MockOptions(key=SENTINEL_KEY, keep_requests=5)) as mock:
        result = cli("bench", "--base-url", mock.url, "-m", "m", "-n", "30", "-c", "3", "--json",
                     env={"TAOTOKEN_API_KEY": SENTINEL_KEY})
        assert result.returncode == 0, result.output
        assert len(mock.requests) == 5 and mock.requests[-1].seq == 30  # the newest kept, the rest dropped
    assert MockOptions().keep_requests == 10_000  # bounded by default


def bench_json(cli, url: str, *args: str) -> dict:
    result = cli("bench", "--base-url", url, *args, "--json", env={"TAOTOKEN_API_KEY": SENTINEL_KEY}, timeout=120)
    result.assert_clean()
    return json.loads(result.stdout)


def test_slots_cap_the_throughput(cli, module_mock_gateway):
    mock = module_mock_gateway(MockOptions(key=SENTINEL_KEY, slots=2, model_timing={"m": ModelTiming(100, 0, 2)}),
                               process=True)
    two = bench_json(cli, mock.url, "-m", "m", "-n", "12", "-c", "2")["series"][0]
    six = bench_json(cli, mock.url, "-m", "m", "-n", "12", "-c", "6")["series"][0]
    # 2 slots: 6 users queue; the rate stays that of 2 users, and the queue shows in the latency
    assert six["requests_per_s"] <= 1.25 * two["requests_per_s"]
    assert six["latency_ms"]["p50"] >= 2 * two["latency_ms"]["p50"]


def test_a_rate_limit_is_load_not_a_crash(cli, module_mock_gateway):
    mock = module_mock_gateway(MockOptions(key=SENTINEL_KEY, rate_limit=10, retry_after=0.5,
                                           model_timing={"m": ModelTiming(200, 0, 2)}), process=True)
    data = bench_json(cli, mock.url, "-m", "m", "-z", "3s", "-c", "8")
    s = data["series"][0]
    assert s["aborted"] is None  # 429s with a retry hint never stop the run
    assert s["status_codes"].get("429", 0) > 0 and s["deferred"] > 0  # Retry-After honoured
    # bounded: 8 users that wait as asked send about (8 / 0.2 s busy) at most, not thousands of 429s a second
    assert s["requests"] < 3 * 8 / 0.2 * 3
    assert s["good"] == s["ok"] and s["goodput_per_s"] <= s["requests_per_s"]
    finding = s["rate_limited"]
    assert finding["retry_after_s"] == 0.5 and finding["responses"] == s["status_codes"]["429"]
    assert 0.5 * 10 <= finding["at_per_s"] <= 1.5 * 10 + 10 / 3  # ≈ the bucket's rate (plus its burst)
    text = " ".join(cli("bench", "--base-url", mock.url, "-m", "m", "-z", "2s", "-c", "8",
                        env={"TAOTOKEN_API_KEY": SENTINEL_KEY, "COLUMNS": "80"}).stdout.split())  # wrapped lines
    assert "rate-limited at ≈" in text and "Retry-After 0.5 s honoured" in text


def test_a_sweep_against_a_rate_limit_names_the_finding(cli, module_mock_gateway):
    mock = module_mock_gateway(MockOptions(key=SENTINEL_KEY, rate_limit=15, retry_after=0.3,
                                           model_timing={"m": ModelTiming(100, 0, 2)}), process=True)
    result = cli("bench", "--base-url", mock.url, "-m", "m", "-z", "1.5s", "--sweep", "c=1,8",
                 "--resolution", "off", env={"TAOTOKEN_API_KEY": SENTINEL_KEY, "COLUMNS": "80"}, timeout=120)
    out = " ".join(result.stdout.split())  # the wrapped lines joined
    assert "error-rate<1% (default)" in out  # the default target: c=8 (80 req/s asked of 15) misses it
    assert "knee: c=1" in out and "finding: rate-limited at ≈" in out and "taotoken bench --rate" in out
    assert result.returncode == 0 and all(len(line) <= 80 for line in result.stdout.splitlines())
