"""Render a real `bench --html` report in headless Chromium and save a screenshot (look at the PNG).

    python scripts/html_report_screenshot.py [--out report.png] [--html report.html] [--height 4200]

Runs the mock gateway in its own process (two models with fixed timing), a short streamed sweep with
SLOs against it, writes the HTML report, then has Chromium (Debian: apt-get install -y chromium)
load it from the file system with networking off — so a plot that needed a CDN would be blank — and
take a full-width screenshot. Prints the paths and the page's size.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

KEY = "sk-shot0000000000000000000000000000"


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return name
    raise SystemExit("no chromium found: apt-get install -y chromium")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    work = Path(tempfile.mkdtemp(prefix="bench-html-"))
    parser.add_argument("--out", default=str(work / "report.png"))
    parser.add_argument("--html", default=str(work / "report.html"))
    parser.add_argument("--height", type=int, default=4200)
    args = parser.parse_args()
    browser = chromium()

    from taotoken_cli.cmd.mock import MockOptions, MockProcess, ModelTiming

    timing = {"model-a": ModelTiming(60, 80, 24), "model-b": ModelTiming(30, 150, 24)}
    with MockProcess(MockOptions(key=KEY, model_timing=timing, keep_requests=1), log=False) as mock:
        env = dict(os.environ, PYTHONPATH=str(REPO), TAOTOKEN_API_KEY=KEY)
        cmd = [sys.executable, "-m", "taotoken_cli", "bench", "--base-url", mock.url, "-m", "model-a", "-m", "model-b",
               "--stream", "-n", "60", "--sweep", "c=1..16", "--slo", "ttft:p95<80ms", "--slo", "error-rate<1%",
               "--html", args.html]
        result = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if result.returncode not in (0, 1):  # 1: some step missed the SLOs, which the report shows
        raise SystemExit(f"bench failed ({result.returncode}):\n{result.stderr}")
    shot = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                           "--disable-extensions", "--proxy-server=127.0.0.1:9",  # any remote fetch would fail
                           # the page unpacks plotly.js after it loads: let that run before the shot
                           "--virtual-time-budget=20000",
                           f"--window-size=1280,{args.height}", f"--screenshot={args.out}",
                           Path(args.html).resolve().as_uri()], capture_output=True, text=True, timeout=120)
    if not Path(args.out).exists():
        raise SystemExit(f"chromium wrote no screenshot:\n{shot.stderr[-2000:]}")
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--proxy-server=127.0.0.1:9",
                          "--virtual-time-budget=20000", "--dump-dom", Path(args.html).resolve().as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    drawn = dom.count("plot-container plotly")  # what plotly puts inside each div it has drawn
    print(f"html: {args.html} ({Path(args.html).stat().st_size / 1e6:.1f} MB), {drawn} plots drawn")
    print(f"screenshot: {args.out}")


if __name__ == "__main__":
    main()
