"""Cost of reading every MCP server definition (clients.mcp.scan) on a machine with a large ~/.claude.json,
compared with one parse of that file (what the Claude Code checks already pay).

Builds a temporary HOME whose ~/.claude.json has PROJECTS projects with some history each (about 5.6 KB per
project, as long-used installs have), plus a Codex config.toml and a Cline MCP file, then times, best of N,

    read_json(~/.claude.json)          the reference
    mcp.scan(machine, hosts)           every MCP file, parsed and classified (includes the git lookup)

(interleaved, a garbage collection before each) and prints both and their ratio. Target: ratio <= 1.5 (the
scan adds one parse, not a multiple).

    python benchmarks/mcp_scan.py [--projects 2000] [-n 5] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import string
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from taotoken_cli.core.clients import mcp  # noqa: E402
from taotoken_cli.core.clients.base import Machine, read_json  # noqa: E402
from taotoken_cli.core.clients.envvars import taotoken_hosts  # noqa: E402

ROOT = "https://taotoken.net/api"


def build(home: Path, projects: int) -> Path:
    rng = random.Random(7)

    def text(n: int) -> str:
        return "".join(rng.choice(string.ascii_letters) for _ in range(n))

    server = {"command": "npx", "env": {"OPENAI_BASE_URL": ROOT + "/v1", "OPENAI_API_KEY": "sk-" + text(32)}}
    data = {"numStartups": 500, "hasCompletedOnboarding": True, "mcpServers": {"tt": server},
            "projects": {f"/home/me/p{i}": {"allowedTools": [], "mcpServers": {"tt": server} if i % 50 == 0 else {},
                                            "history": [{"display": text(200), "pastedContents": {}}
                                                        for _ in range(20)]} for i in range(projects)}}
    path = home / ".claude.json"
    path.write_text(json.dumps(data, indent=2))
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(f'[mcp_servers.docs]\ncommand = "d"\nenv = {{ ANTHROPIC_BASE_URL = '
                                                  f'"{ROOT}" }}\n')
    cline = home / ".cline" / "data" / "settings" / "cline_mcp_settings.json"
    cline.parent.mkdir(parents=True)
    cline.write_text(json.dumps({"mcpServers": {"s": server}}))
    return path


def interleaved(first, second, n: int) -> tuple[float, float]:
    """Best of n for each, the runs alternating (the machine's load and the heap affect both alike)."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(n):
        for fn, into in ((first, times[0]), (second, times[1])):
            gc.collect()
            started = time.perf_counter()
            fn()
            into.append(time.perf_counter() - started)
    return min(times[0]), min(times[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=2000)
    parser.add_argument("-n", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = build(home, args.projects)
        machine = Machine.of({"HOME": str(home), "PATH": os.environ.get("PATH", "")}, home, home / ".config" / "t")
        hosts = taotoken_hosts(ROOT)
        reference, scan = interleaved(lambda: read_json(path), lambda: mcp.scan(machine, hosts), args.n)
        found = len(mcp.scan(machine, hosts).servers)
        size_mb = path.stat().st_size / 1e6
    result = {"claude_json_mb": round(size_mb, 1), "servers": found, "read_json_ms": round(reference * 1000, 1),
              "scan_ms": round(scan * 1000, 1), "ratio": round(scan / reference, 2)}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"~/.claude.json {result['claude_json_mb']} MB, {found} MCP servers found")
        print(f"read_json: {result['read_json_ms']} ms   mcp.scan: {result['scan_ms']} ms   ratio {result['ratio']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
