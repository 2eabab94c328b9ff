"""Start-up cost of `taotoken check -q` compared with a bare httpx request.

Starts a local HTTP server answering /api/v1/models, then times, interleaved, N runs each of

    taotoken check -q                       (the installed console script if on PATH, else
                                             python -m taotoken_cli)
    python -c "import httpx; httpx.get(URL)"

and prints both medians and their ratio. Target: ratio <= 1.3 (`check` runs in .bashrc).

    python benchmarks/check_startup.py [-n 20] [--lang zh] [--json]

`--lang zh` runs `check` in Chinese (TAOTOKEN_LANG=zh: the compiled catalogue is loaded at start-up).

Both commands run with a scrubbed environment (temporary HOME, no proxy variables, NO_COLOR), so
the figure does not depend on the developer's config; PYTHONDONTWRITEBYTECODE is dropped so
the package runs from bytecode as it does when installed (httpx's is precompiled by pip). The
machine's load affects both sides equally because the runs alternate; the ratio is the figure
to watch, not the absolute times.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODELS = json.dumps({"object": "list", "data": [{"id": "gpt-4o-mini", "object": "model"}]}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(MODELS)))
        self.end_headers()
        self.wfile.write(MODELS)

    def log_message(self, *args: object) -> None:
        pass


def taotoken_command() -> tuple[list[str], str]:
    """The installed console script next to this interpreter (or on PATH), else `python -m`."""
    beside = Path(sys.executable).with_name("taotoken")
    script = str(beside) if beside.exists() else shutil.which("taotoken")
    if script:
        return [script, "check", "-q"], script
    return [sys.executable, "-m", "taotoken_cli", "check", "-q"], f"{sys.executable} -m taotoken_cli"


def time_once(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, timeout=60)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=20, help="runs of each command (default 20)")
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="the language check runs in")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/api"

    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items()
               if not k.upper().endswith("_PROXY") and not k.startswith(("TAOTOKEN_", "OPENAI_", "ANTHROPIC_"))
               and k != "PYTHONDONTWRITEBYTECODE"}  # installed packages have bytecode; so should the worktree
        env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"), NO_COLOR="1",
                   TAOTOKEN_BASE_URL=base, TAOTOKEN_API_KEY="sk-benchmark0123456789abcdef",
                   TAOTOKEN_MODEL="gpt-4o-mini", TAOTOKEN_LANG=args.lang,
                   PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""))
        check_cmd, check_label = taotoken_command()
        httpx_cmd = [sys.executable, "-c", f"import httpx; httpx.get({base + '/v1/models'!r})"]
        for cmd in (check_cmd, httpx_cmd):  # warm the OS file cache; not counted
            time_once(cmd, env)
        check_times, httpx_times = [], []
        for _ in range(args.runs):
            check_times.append(time_once(check_cmd, env))
            httpx_times.append(time_once(httpx_cmd, env))
    server.shutdown()

    check_median, httpx_median = statistics.median(check_times), statistics.median(httpx_times)
    ratio = check_median / httpx_median
    figures = {"runs": args.runs, "lang": args.lang, "check_cmd": check_label,
               "check_median_ms": round(check_median * 1000, 1),
               "httpx_median_ms": round(httpx_median * 1000, 1), "ratio": round(ratio, 3), "target": 1.3,
               "load_avg": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"taotoken check -q   median {figures['check_median_ms']:7.1f} ms   ({check_label})")
        print(f"httpx.get (bare)    median {figures['httpx_median_ms']:7.1f} ms")
        print(f"ratio {ratio:.2f}  (target <= 1.30, {args.runs} interleaved runs each, TAOTOKEN_LANG={args.lang}, "
              f"load average {figures['load_avg']:.2f})")
    sys.exit(0 if ratio <= 1.3 else 1)


if __name__ == "__main__":
    main()
