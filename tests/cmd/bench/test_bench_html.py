"""bench --html's plots say what was measured (issue 27 item 5): distribution bins never finer than the histogram
resolves (finer ones drew a comb of spikes and gaps), throughput over windows of at least 1 s (quarter-second
windows drew a 0 <-> 32 req/s sawtooth for a flat 21.8 req/s). The page itself (offline, ~2 MB, drawn in headless
Chromium) is checked by test_bench_capacity.test_csv_and_html_artifacts and scripts/html_report_screenshot.py."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("plotly")

from taotoken_cli.cmd.bench.histogram import Histogram  # noqa: E402
from taotoken_cli.cmd.bench.html_report import MIN_WINDOW_S, distribution_bins, throughput_windows  # noqa: E402


def test_latencies_in_a_narrow_band_get_no_bin_finer_than_the_histogram_bucket():
    """200-205 ms: the histogram's buckets there are 1/64 of the value wide (about 3 ms), so 40 bins of 0.13 ms
    would alternate between full and empty. Every bin drawn holds samples, and none is narrower than a bucket."""
    hist = Histogram()
    rng = random.Random(1)
    for _ in range(2000):
        hist.record(rng.uniform(0.200, 0.205))
    centres, counts = distribution_bins(hist)
    assert sum(counts) == 2000
    assert len(counts) >= 1 and all(counts)  # no gaps between spikes
    if len(centres) > 1:
        width_ms = centres[1] - centres[0]
        assert width_ms >= 205 / 64 * 0.99  # a bin is at least the histogram's bucket at the top of the range


def test_a_wide_spread_keeps_its_forty_bins():
    hist = Histogram()
    rng = random.Random(2)
    for _ in range(5000):
        hist.record(rng.uniform(0.1, 2.0))
    centres, counts = distribution_bins(hist)
    assert len(counts) == 40 and sum(counts) == 5000


def test_a_flat_rate_in_quarter_second_windows_is_drawn_flat_over_one_second_windows():
    """21.8 req/s answered in bursts (32 req/s in one quarter second, none in the next): the plot reads 21-22,
    not 0 and 32, and no window shorter than a second is drawn."""
    rows, done = [], 0
    for i in range(40):  # 10 s of 0.25 s windows
        due = round(21.8 * 0.25 * (i + 1))
        burst = (due - done) if i % 2 else 0  # the answers of two windows land in the second one
        if i % 2:
            done = due
        rows.append({"start_s": i * 0.25, "requests": burst, "output_tokens_per_s": burst * 16 / 0.25})
    width, merged = throughput_windows({"width_s": 0.25, "rows": rows})
    assert width >= MIN_WINDOW_S
    rates = [row["requests_per_s"] for row in merged]
    assert len(rates) == 10 and all(20.0 <= r <= 24.0 for r in rates), rates
    assert max(r["requests"] / 0.25 for r in rows) >= 32 and min(r["requests"] for r in rows) == 0  # the sawtooth


def test_a_last_partial_window_is_left_out():
    rows = [{"start_s": i * 0.25, "requests": 5, "output_tokens_per_s": 0.0} for i in range(6)]  # 1.5 s
    width, merged = throughput_windows({"width_s": 0.25, "rows": rows})
    assert width == 1.0 and [row["requests_per_s"] for row in merged] == [20.0]  # not a 10 req/s half window
