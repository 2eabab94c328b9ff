"""`taotoken bench` capacity search, workloads, failing fast and artifacts, end to end against the
mock gateway with known timing (its own process), plus the 80-column layout of every table and of
the live view."""

from __future__ import annotations

import base64
import csv
import gzip
import json
import re
import shutil
import statistics
import sys
from html.parser import HTMLParser

import pytest

from taotoken_cli.cmd.mock import MockGateway, MockOptions, ModelTiming
from taotoken_cli.core.term.layout import cell_width
from tests.conftest import SENTINEL_KEY

MOCK = MockOptions(key=SENTINEL_KEY, latency_ms=10, tokens=3,
                   model_timing={"fixed30": ModelTiming(30, 0, 4), "stream": ModelTiming(40, 100, 6),
                                 "slow": ModelTiming(200, 0, 1)},
                   model_fail={"rate-limited": 429, "unauthorized": 401}, retry_after=0.2)


@pytest.fixture(scope="module")
def server(module_mock_gateway):
    return module_mock_gateway(MOCK, process=True).url


@pytest.fixture
def bench(cli, server):
    def run(*args: str, env: dict[str, str] | None = None, base_url: str = server):
        result = cli("bench", "--base-url", base_url, *args, env={"TAOTOKEN_API_KEY": SENTINEL_KEY, **(env or {})},
                     timeout=120)
        result.assert_clean()
        return result

    return run


def as_json(result) -> dict:
    return json.loads(result.stdout)


# -- sweeps and SLOs ---------------------------------------------------------------------------
def test_sweep_meeting_the_slos_finds_the_knee(bench):
    result = bench("-m", "fixed30", "-n", "12", "--sweep", "c=1..4", "--slo", "latency:p95<150ms",
                   "--slo", "error-rate<1%", "--json")
    assert result.returncode == 0, result.output
    data = as_json(result)
    sweep = data["sweep"]
    assert sweep["parameter"] == "concurrency" and sweep["values"] == [1, 2, 4]
    model = sweep["models"][0]
    # the coarse steps, then c=3 to bisect between the knee (4, still climbing) and the step below it
    assert [s["load"] for s in model["steps"]] == [1, 2, 3, 4] and all(s["meets_slo"] for s in model["steps"])
    assert [s["probe"] for s in model["steps"]] == [False, False, True, False] and model["probes"] == 1
    assert [s["concurrency"] for s in data["series"]] == [1, 2, 4, 3]
    # the knee: the lowest load within 5 % of the best goodput (3 or 4: on a busy 2-core machine the client
    # itself may flatten the last step); the step that bounds it is the one below, short of that
    goodput = {s["load"]: s["goodput_per_s"] for s in model["steps"]}
    best = max(goodput.values())
    assert model["knee"] in (3, 4) and model["stopped_early"] is False
    assert goodput[model["knee"]] >= 0.95 * best and model["knee_goodput_per_s"] == goodput[model["knee"]]
    assert model["bounded_by"] == {"load": model["knee"] - 1, "goodput_per_s": goodput[model["knee"] - 1],
                                   "why": "unsaturated"} and goodput[model["knee"] - 1] < 0.95 * best
    # goodput: every request was within the limits; throughput grows with the users (30 ms each)
    for step in model["steps"]:
        assert step["goodput_per_s"] == pytest.approx(step["requests_per_s"], rel=0.05)
    assert model["steps"][2]["requests_per_s"] > 1.8 * model["steps"][0]["requests_per_s"]
    assert data["slo"][0] == {"target": "latency:p95<150ms", "metric": "latency", "stat": "p95", "limit": 150.0,
                              "unit": "ms", "inclusive": False, "default": False}
    assert data["series"][0]["slo"][0]["ok"] is True


def test_sweep_missing_the_slos_stops_early_and_exits_1(bench):
    result = bench("-m", "slow", "-n", "4", "--sweep", "c=1,2,4,8", "--slo", "latency:p50<100ms",
                   env={"COLUMNS": "80"})
    assert result.returncode == 1, result.output
    out = result.stdout
    assert "sweep over concurrency" in out and "knee: none" in out
    assert "stopped early: a step missed the SLOs with no more goodput" in out
    assert "c=4" not in out  # the third and fourth steps never ran
    assert all(len(line) <= 80 for line in out.splitlines())


def test_rate_sweep_is_open_loop(bench):
    data = as_json(bench("-m", "fixed30", "-z", "0.5s", "-c", "8", "--sweep", "rate=10,20", "--arrival", "poisson",
                         "--json"))
    assert data["load"]["mode"] == "open" and data["load"]["arrival"] == "poisson"
    assert [s["rate"] for s in data["series"]] == [10, 20]
    low, high = data["series"]
    assert 2 <= low["requests"] <= 14 and high["requests"] > low["requests"]


def test_single_run_slo_and_goodput(bench):
    result = bench("-m", "stream", "-n", "8", "-c", "2", "--stream", "--slo", "ttft:p50<5ms", "--json")
    assert result.returncode == 1  # missed: TTFT is 40 ms
    s = as_json(result)["series"][0]
    assert s["meets_slo"] is False and s["good"] == 0 and s["goodput_per_s"] == 0
    assert s["slo"][0]["value"] >= 39.5
    result = bench("-m", "stream", "-n", "8", "-c", "2", "--stream", "--slo", "ttft:p50<500ms", "--json")
    s = as_json(result)["series"][0]
    assert s["meets_slo"] is True and s["good"] == 8


def test_repeats_report_their_spread(bench):
    s = as_json(bench("-m", "fixed30", "-n", "6", "-c", "2", "--repeat", "3", "--json"))["series"][0]
    assert s["requests"] == 18 and s["repeats"]["count"] == 3
    rps = s["repeats"]["requests_per_s"]
    values = rps["values"]
    assert len(values) == 3 and all(v > 0 for v in values)
    assert rps["min"] == min(values) and rps["max"] == max(values)
    assert rps["mean"] == pytest.approx(statistics.fmean(values), abs=1e-3)
    assert rps["stdev"] == pytest.approx(statistics.stdev(values), abs=1e-3)
    assert rps["cv"] == pytest.approx(statistics.stdev(values) / statistics.fmean(values), abs=1e-3)
    # all 18 requests over the repeats' own time (6 each): the harmonic mean of the repeats' rates, whatever the
    # load made each repeat take (the arithmetic mean differs from it as soon as the repeats differ)
    assert s["requests_per_s"] == pytest.approx(statistics.harmonic_mean(values), rel=2e-3, abs=0.01)


# -- failing fast and fixes that fit ---------------------------------------------------------------
def test_a_model_that_fails_everything_is_stopped(bench):
    data = as_json(bench("-m", "unauthorized", "-m", "fixed30", "-n", "300", "-c", "2", "--json"))
    failing, healthy = data["series"]
    assert failing["aborted"]["reason"] == "all-failed" and 20 <= failing["requests"] <= 24
    assert healthy["aborted"] is None and healthy["ok"] == 300
    data = as_json(bench("-m", "rate-limited", "-n", "300", "-c", "2", "--max-errors", "5", "--json"))
    s = data["series"][0]
    assert s["aborted"] == {"reason": "max-errors", "after_requests": s["requests"], "failed": s["failed"]}
    assert 5 <= s["requests"] <= 7
    out = bench("-m", "rate-limited", "-n", "300", "-c", "2", "--max-errors", "5").stdout
    assert "stopped      after" in out and "--max-errors reached" in out


def test_rate_limit_fixes_fit_the_load(bench):
    at_one = as_json(bench("-m", "rate-limited", "-n", "2", "-c", "1", "--json"))["series"][0]["top_error_fix"]
    assert "-c 1" in at_one and "--rate" in at_one and "even one request at a time" in at_one
    at_four = as_json(bench("-m", "rate-limited", "-n", "4", "-c", "4", "--json"))["series"][0]["top_error_fix"]
    assert "taotoken bench -c 2" in at_four and "(this run: -c 4)" in at_four
    at_rate = as_json(bench("-m", "rate-limited", "-n", "2", "--rate", "8", "--json"))["series"][0]["top_error_fix"]
    assert "--rate 4" in at_rate


# -- workloads -------------------------------------------------------------------------------
def test_dataset_prompts_and_drawn_output_lengths_reach_the_gateway(cli, tmp_path):
    dataset = tmp_path / "prompts.jsonl"
    dataset.write_text("\n".join(json.dumps({"prompt": f"question {i}"}) for i in range(3)) + "\n")
    with MockGateway(MockOptions(key=SENTINEL_KEY, latency_ms=1, tokens=500, keep_requests=100)) as mock:
        result = cli("bench", "--base-url", mock.url, "-m", "m", "-n", "6", "-c", "1", "--workers", "1",
                     "--dataset", str(dataset), "--output-tokens", "5..9", "--seed", "3", "--json",
                     env={"TAOTOKEN_API_KEY": SENTINEL_KEY})
        assert result.returncode == 0, result.output
        bodies = [r.body for r in mock.requests if r.endpoint == "chat"]
    assert [b["messages"][0]["content"] for b in bodies] == [f"question {i % 3}" for i in range(6)]
    assert all(5 <= b["max_tokens"] <= 9 for b in bodies) and len({b["max_tokens"] for b in bodies}) > 1
    s = json.loads(result.stdout)["series"][0]
    assert s["output_tokens"] == sum(b["max_tokens"] for b in bodies)  # the mock answers max_tokens tokens
    assert s["input_tokens"] > 0


def test_trace_replay_keeps_the_traces_timing(cli, tmp_path):
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps({"timestamp": t, "input_length": 20, "output_length": 2}) + "\n"
                             for t in (0, 100, 300, 600)))
    with MockGateway(MockOptions(key=SENTINEL_KEY, latency_ms=1, keep_requests=100)) as mock:
        result = cli("bench", "--base-url", mock.url, "-m", "m", "--trace", str(trace), "--json",
                     env={"TAOTOKEN_API_KEY": SENTINEL_KEY})
        assert result.returncode == 0, result.output
        arrivals = [r.received_at for r in mock.requests if r.endpoint == "chat"]
    data = json.loads(result.stdout)
    assert data["load"]["mode"] == "open" and data["load"]["trace_size"] == 4 and data["series"][0]["ok"] == 4
    # Each arrival minus its place in the trace is the moment the replay started, shifted by how late that one
    # request went out: the spread of those shifts is the replay's error. Bench measures its own lateness against
    # its schedule (a loaded machine wakes timers late, and bench reports it); beyond that only the transport's
    # jitter may show (the first request also opens its connection). Sending all at once would spread 600 ms.
    shifts = [(t - arrivals[0]) * 1000 - want for t, want in zip(arrivals, (0, 100, 300, 600), strict=True)]
    lateness = data["series"][0]["lateness_max_ms"] or 0.0
    assert max(shifts) - min(shifts) <= 40 + lateness, (shifts, lateness)


def test_n_is_shared_between_workers(bench, tmp_path):
    raw = tmp_path / "raw.jsonl"
    data = as_json(bench("-m", "fixed30", "-n", "10", "-c", "3", "--workers", "3", "--raw", str(raw), "--json"))
    assert data["load"]["workers"] == 3 and data["series"][0]["requests"] == 10
    lines = [json.loads(line) for line in raw.read_text().splitlines()]
    assert sorted(line["index"] for line in lines) == list(range(10))  # each request number once, in any worker


@pytest.mark.parametrize(("args", "message"), [
    (("--slo", "ttft:p95<1s"), "needs --stream"),
    (("--arrival", "poisson"), "--arrival needs an open loop"),
    (("--trace", "t.jsonl", "--rate", "5"), "--trace and --rate both given"),
    (("--output-tokens", "5..9", "--max-tokens", "4"), "--output-tokens and --max-tokens both given"),
    (("--sweep", "c=1,2", "-c", "4"), "--sweep and -c both given"),
    (("--sweep", "c=1..x"), "not a list or a range"),
    (("--max-error-rate", "150"), "not a percentage"),
    (("--repeat", "0"), "--repeat must be between"),
    (("--prompt", "x", "--dataset", "d.jsonl"), "--prompt and --dataset both given"),
    (("--ramp-up", "soon"), "--ramp-up 'soon' is not a positive duration"),
    (("--csv", "/nonexistent-dir/x.csv"), "cannot write in"),
])
def test_bad_capacity_and_workload_options(run, server, monkeypatch, args, message):
    # in-process: these stop before any request (tests/app/test_parse.py: the parse-only seam)
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    result = run("bench", "--base-url", server, "-m", "fixed30", *args).assert_clean()
    assert result.returncode == 2, result.output
    assert message in result.stderr and "fix:" in result.stderr


def test_html_without_plotly_names_the_extra(bench, tmp_path):
    shim = tmp_path / "shim" / "plotly"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('No module named plotly')\n")
    from tests.conftest import REPO

    result = bench("-m", "fixed30", "--html", str(tmp_path / "r.html"),
                   env={"PYTHONPATH": f"{shim.parent}:{REPO}"})
    # the command for the installer taotoken runs under (here: this virtual environment's pip)
    assert result.returncode == 2 and "-m pip install 'taotoken[html]'" in result.stderr
    assert not (tmp_path / "r.html").exists()


# -- artifacts ----------------------------------------------------------------------------------
class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.external: list[str] = []
        self.plots: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href") and value and re.match(r"(https?:)?//", value):
                self.external.append(value)
            if name == "id" and value and value.startswith("plot"):
                self.plots.append(value)
        self._in_script = tag == "script"

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def test_csv_and_html_artifacts(bench, tmp_path):
    csv_path, html_path = tmp_path / "run.csv", tmp_path / "run.html"
    result = bench("-m", "stream", "-n", "8", "--stream", "--sweep", "c=1,2", "--csv", str(csv_path),
                   "--html", str(html_path), "--json")
    assert result.returncode == 0, result.output
    rows = list(csv.DictReader(csv_path.open()))
    assert len(rows) == 16 and {r["concurrency"] for r in rows} == {"1", "2"}
    assert all(r["ok"] == "true" and float(r["ttft_ms"]) >= 39.5 for r in rows)
    summary = list(csv.DictReader((tmp_path / "run.summary.csv").open()))
    assert [r["concurrency"] for r in summary] == ["1", "2"] and float(summary[0]["ttft_p50_ms"]) >= 39.5
    page_text = html_path.read_text(encoding="utf-8")
    assert SENTINEL_KEY not in page_text and SENTINEL_KEY not in csv_path.read_text()
    page = _Page()
    page.feed(page_text)
    assert page.external == []  # opens offline: no CDN, no remote stylesheet
    # plotly.js itself is inlined, gzip-compressed (the page unpacks it): about 2 MB where it was 5
    packed = re.search(r'<script type="application/octet-stream" id="packed-plotly-js">([A-Za-z0-9+/=]+)</script>',
                       page_text).group(1)
    assert b"Plotly" in gzip.decompress(base64.b64decode(packed))[:100_000]
    assert len(page_text.encode()) < 2.5e6
    assert len(page.plots) >= 6  # 3 distributions, 2 over time, 2 sweep curves
    embedded = json.loads(next(s for s in page.scripts if s.lstrip().startswith('{"schema"')))
    assert embedded["sweep"]["models"][0]["steps"][0]["load"] == 1
    # the plots carry the run's own figures: the latency histogram counts every request of each step
    figure_calls = [s for s in page.scripts if "Plotly.newPlot" in s]
    assert '"mode":"markers"' in figure_calls[0]  # the sweep first: its steps as markers, not joined by lines
    first = next(s for s in figure_calls if '"opacity":0.75' in s)  # then the latency distribution
    counts = json.loads(re.search(r'"y":(\[[0-9,]+\])', first).group(1))
    assert sum(counts) == 8
    # over time, one series at a time (a selector), never every step on one axis
    over_time = [s for s in figure_calls if "updatemenus" in s]
    assert len(over_time) == 2 and all('"visible":false' in s for s in over_time)


# -- layout ---------------------------------------------------------------------------------------
def test_every_line_fits_80_columns(bench):
    result = bench("-m", "stream", "-m", "a-rather-long-model-name-for-the-side-by-side-table", "-m", "rate-limited",
                   "-n", "4", "-c", "2", "--stream", "--repeat", "2", "--max-tokens", "8", env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    header = next(line for line in lines if line.strip().startswith("min"))
    row = next(line for line in lines if line.strip().startswith("latency") and "ms" not in line)
    assert len(header) == len(row)  # the header sits over its numbers
    assert "A = stream" in result.stdout  # names too long for a column are lettered, never cut


def test_a_model_id_longer_than_the_terminal_folds_in_headings_and_the_legend(bench):
    long_id = "accounts/fireworks/models/llama-v3p1-405b-instruct-long-variant-name-2026-01-01-preview"
    result = bench("-m", long_id, "-m", "stream", "-n", "4", "-c", "2", "--stream", "--max-tokens", "8",
                   env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    assert all(cell_width(line) <= 80 for line in lines), [line for line in lines if cell_width(line) > 80]
    heading = lines.index(next(line for line in lines if line.startswith("model accounts/")))
    assert (lines[heading] + lines[heading + 1].strip()) == f"model {long_id}"  # broken after a '-', whole
    legend = next(i for i, line in enumerate(lines) if line.startswith("  A = "))
    assert (lines[legend] + lines[legend + 1].strip()) == f"  A = {long_id}"


def live_view_lines(models: list[str]) -> list[str]:
    """The live view on an 80-column console, the first model at step c=16 of 7, repeat 2 of 3, 12000 of 20000
    requests done with 3 failures after 124 s, the others waiting."""
    import io

    from rich.console import Console

    from taotoken_cli.cmd.bench.plan import SeriesPlan
    from taotoken_cli.cmd.bench.progress import LiveView
    from taotoken_cli.cmd.bench.sweep import parse_sweep

    buffer = io.StringIO()
    console = Console(file=buffer, width=80, force_terminal=True, color_system=None)
    view = LiveView(console, models, parse_sweep("c=1..64"), 3)
    on_progress = view.series_started(SeriesPlan(root="http://x", api_key=None, model=models[0]), "c=16", 1)
    on_progress(12000, 3, 20000, 124.2)
    view.progress.refresh()
    view.close()
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buffer.getvalue())
    return [line for line in screen.splitlines() if line.strip()]


def test_live_view_fits_80_columns():
    lines = live_view_lines(["deepseek-ai/DeepSeek-V3.1-Terminus", "gpt-4o-mini", "x" * 90])
    assert all(len(line) <= 80 for line in lines)
    assert any(line.startswith("deepseek-ai/DeepSeek-V3.1-Terminus c=16 5/7 #2") for line in lines)
    assert any("12000/20000" in line and "3 err" in line for line in lines)
    assert any(line.startswith("x" * 20) and "…" in line for line in lines)  # too long: cut, with an ellipsis


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (a real terminal)")
def test_in_a_real_80_column_terminal_the_view_leaves_no_stale_line(server, home, tmp_path):
    """tmux gives bench a real terminal of 80 x 30: the live view draws on it while the run lasts, then
    only the report is left on the screen."""
    import os
    import subprocess
    import time

    from tests.conftest import REPO

    session = f"bench{os.getpid()}"
    done = tmp_path / "done"
    script = tmp_path / "run.sh"
    script.write_text(f"cd {home}; PYTHONPATH={REPO} TAOTOKEN_API_KEY={SENTINEL_KEY} {sys.executable} -m taotoken_cli "
                      f"bench --base-url {server} -m fixed30 -m slow -n 16 -c 2 > /dev/null; "
                      f"echo $? > {done}; sleep 30\n")
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "30", f"bash {script}"],
                   check=True, env={**os.environ, "TERM": "xterm-256color"})
    try:
        seen_bar, widest = False, 0
        deadline = time.monotonic() + 60
        while not done.exists() and time.monotonic() < deadline:
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True,
                                    text=True).stdout
            seen_bar = seen_bar or ("━" in screen and "slow" in screen)
            # the live line leaves the last columns free (a line that fills them makes some terminals wrap)
            widest = max(widest, *(len(line.rstrip()) for line in screen.splitlines() if "━" in line), 0)
            time.sleep(0.1)
        final = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True).stdout
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    assert done.read_text().strip() == "0"
    assert seen_bar  # the live view was drawn: one line per model
    assert widest == 77  # the last column and room for the terminal's "^C" left free
    assert "━" not in final and final.strip() == ""  # and it is gone (stdout went to /dev/null)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (a real terminal)")
def test_ctrl_c_in_a_real_terminal_clears_the_live_line_and_prints_the_partial_report(server, home):
    """Ctrl-C in tmux at 80 columns: the terminal echoes "^C" after the live line, which must still fit on it (or
    it wraps, and the line it pushed up is never erased); the partial report follows, marked, exit 130."""
    from tests.conftest import REPO
    from tests.tmux import Tmux

    env = {"HOME": str(home), "TERM": "xterm-256color", "PS1": "$ ", "PYTHONPATH": str(REPO),
           "TAOTOKEN_API_KEY": SENTINEL_KEY}
    drawn = home / "drawn.bin"
    with Tmux(["bash", "--norc", "--noprofile"], width=80, height=60, cwd=home, env=env) as term:
        term.record(drawn)
        term.type(f"{sys.executable} -m taotoken_cli bench --base-url {server} -m slow -n 400 -c 2; echo EXIT=$?")
        term.send("Enter")
        term.wait_for(lambda screen: "━" in screen, timeout=60)
        term.send("C-c")
        screen = term.wait_for(lambda text: re.search(r"EXIT=\d", text), timeout=60, history=True)
    assert "EXIT=130" in screen and "interrupted (SIGINT)" in screen, screen
    assert "━" not in screen, screen  # the live line is gone, "^C" and all
    assert "Traceback" not in screen, screen
    data = drawn.read_bytes()
    hidden = data.rfind(b"\x1b[?25l")
    assert hidden >= 0 and data.find(b"\x1b[?25h", hidden) > hidden  # the cursor the live view hid is back


def test_a_spent_request_budget_ends_the_run_without_waiting_out_the_ramp_up(bench):
    """-n 2 with 8 users ramped up over 30 s: the first user spends the budget at once, so the users still waiting
    for their start are not waited for (before, the run lasted until the last one's slot, ~26 s). Judged against the
    same run without a ramp-up, timed beside it."""
    from tests.timing import assert_within, timed

    _reference, reference_s = timed(bench, "-m", "fixed30", "-n", "2", "-c", "8", "--json")
    result, elapsed_s = timed(bench, "-m", "fixed30", "-n", "2", "-c", "8", "--ramp-up", "30", "--json")
    assert result.returncode == 0, result.output
    data = as_json(result)
    assert data["series"][0]["requests"] == 2 and data["series"][0]["ok"] == 2, data["series"][0]
    assert_within(elapsed_s, 0, reference_s)
