"""`taotoken demo`: runs to the end offline, touches nothing outside its temporary directory, cleans up.

The demo runs as a real subprocess. Its HOME is the `home` fixture, made to look like a developer's real
machine (own config pointing elsewhere, client configs, keys and proxies in the environment): the demo
must neither read those (its steps would fail against the dead URL/proxy) nor change a byte of them.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from taotoken_cli.cmd.demo.run import group_gateway_log
from taotoken_cli.cmd.demo.sandbox import Sandbox
from taotoken_cli.cmd.demo.steps import DEMO_KEY, STEP_NAMES
from taotoken_cli.core.platform import shells, system
from tests.conftest import SENTINEL_KEY, flat, python_path

DEAD = "http://127.0.0.1:9"  # the discard port: nothing listens there
REAL_CLAUDE = '{\n  "env": {"ANTHROPIC_BASE_URL": "https://real.example/api", "ANTHROPIC_AUTH_TOKEN": "%s"}\n}\n'
REAL_CONFIG = f'[profiles.default]\nbase_url = "{DEAD}/api"\napi_key = "{SENTINEL_KEY}"\nmodel = "real-model"\n'
# The key is piped in the user's shell (PowerShell on Windows: `$env:TAOTOKEN_KEY |`), and new shells load env.sh,
# new PowerShell windows env.ps1.
HEADERS = (f'$ {shells.piped_var("TAOTOKEN_KEY", shells.syntax(os.environ))} taotoken init --all --yes --base-url '
           "http://127.0.0.1:",
           "$ . ~/.config/taotoken/env.ps1" if system.current().windows else "$ . ~/.config/taotoken/env.sh",
           "$ taotoken check\n", "$ taotoken check --stream\n",
           "$ taotoken doctor\n", "$ taotoken route devices\n", "$ taotoken route set cuda=", "$ taotoken route\n",
           "$ taotoken route --verify --all --samples ",
           "$ taotoken bench -m gpu-a100-qwen25-72b-fp16 -m cpu-llama3-8b-int8 --stream -n ")


@pytest.fixture
def real_machine(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """HOME with the user's own setup, hostile environment variables, and a private TMPDIR to watch."""
    (home / ".claude").mkdir()
    (home / ".claude/settings.json").write_text(REAL_CLAUDE % SENTINEL_KEY)
    (home / ".config/taotoken").mkdir(parents=True)
    (home / ".config/taotoken/config.toml").write_text(REAL_CONFIG)
    (home / ".bashrc").write_text("export PATH=$HOME/bin:$PATH\n")
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    for name, value in {"TAOTOKEN_BASE_URL": DEAD + "/api", "TAOTOKEN_API_KEY": SENTINEL_KEY,
                        "TAOTOKEN_MODEL": "real-model", "OPENAI_BASE_URL": DEAD + "/v1",
                        "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY, "CODEX_HOME": str(home / "elsewhere"),
                        "HTTP_PROXY": DEAD, "HTTPS_PROXY": DEAD, "ALL_PROXY": DEAD, "http_proxy": DEAD,
                        "XDG_CONFIG_HOME": str(home / ".config"), "TMPDIR": str(tmpdir)}.items():
        monkeypatch.setenv(name, value)
    return {"home": home, "tmpdir": tmpdir}


def snapshot(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every entry under root: content hash, mode and mtime (directories too)."""
    state = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        state[path.relative_to(root).as_posix()] = (digest, info.st_mode, info.st_mtime_ns)
    return state


def offline_prefix() -> list[str]:
    """A command prefix that runs in a network namespace holding only loopback, when this machine allows it."""
    prefix = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
    if not (shutil.which("unshare") and shutil.which("ip")):
        return []
    try:
        probe = subprocess.run([*prefix, sys.executable, "-c", "import socket; socket.create_connection("
                                "('192.0.2.1', 80), timeout=1)"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return prefix if "Network is unreachable" in probe.stderr else []


def run_demo(*args: str, timeout: float = 120, prefix: list[str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=python_path())
    return subprocess.run([*(prefix or []), sys.executable, "-m", "taotoken_cli", "demo", *args],
                          capture_output=True, text=True, env=env, timeout=timeout)


def test_demo_runs_to_the_end_offline_and_touches_nothing_else(real_machine):
    home, tmpdir = real_machine["home"], real_machine["tmpdir"]
    before = snapshot(home)
    # Where possible the demo runs with no network but loopback, so "offline" is proven, not assumed.
    proc = run_demo("--fast", prefix=offline_prefix())
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "Traceback" not in output
    for secret in (DEMO_KEY, SENTINEL_KEY):
        assert secret not in output
    for header in HEADERS:
        assert "\n" + header in output, f"missing step header {header!r}\n{output}"
    # Each command worked against the mock, in the temporary HOME (shown as ~), not the real one.
    assert output.count("[exit 0;") == 10, output
    assert "model gpt-4o-mini listed" in output and "real-model" not in output and "real.example" not in output
    assert "all 3 route(s) answered with the model asked for" in output
    assert output.count("100.0 % success") == 2
    assert "GET /api/v1/models bearer sk-de…DEMO model=- stream=no -> 200" in output
    assert str(home) not in output.replace(str(tmpdir), "")  # the real HOME is never used
    assert re.search(r"done in \d+\.\d s: \d+ command\(s\), all worked", output)
    assert "what next, for your real setup:" in output and "$ taotoken init\n" in output
    assert "removed the temporary directory" in output
    assert list(tmpdir.iterdir()) == []  # the temporary directory is gone
    assert snapshot(home) == before  # not a byte, mode or mtime changed in the real HOME


def test_keep_leaves_the_directory_and_step_runs_one_step(real_machine):
    tmpdir = real_machine["tmpdir"]
    proc = run_demo("--keep", "--step", "bench", "--fast")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "prepared quietly first: init" in output
    assert "1/1 bench: " in output and "$ taotoken bench " in output
    assert "\n$ taotoken check" not in output and "\n$ taotoken route" not in output
    assert "\n$ printf" not in output  # the prerequisite ran quietly
    kept = [p for p in tmpdir.iterdir()]
    assert len(kept) == 1 and f"kept {kept[0]}" in flat(output)  # a path longer than the line moves under it
    config = (kept[0] / "home/.config/taotoken/config.toml").read_text()
    assert "base_url = \"http://127.0.0.1:" in config and DEAD not in config
    assert f"rm -rf {kept[0]}" in output


def test_unknown_step_is_a_usage_error(real_machine):
    proc = run_demo("--step", "deploy")
    assert proc.returncode == 2
    assert "unknown demo step 'deploy'" in proc.stderr and ", ".join(STEP_NAMES) in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(real_machine["tmpdir"].iterdir()) == []


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT are POSIX")
def test_ctrl_c_cleans_up(real_machine):
    """Ctrl-C reaches the whole foreground process group (the demo and its current step)."""
    tmpdir = real_machine["tmpdir"]
    env = dict(os.environ, PYTHONPATH=python_path())
    proc = subprocess.Popen([sys.executable, "-m", "taotoken_cli", "demo"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    seen = []
    try:
        for line in proc.stdout:
            seen.append(line)
            if line.startswith("$ taotoken check"):  # init is done; the check step is running now
                os.killpg(proc.pid, signal.SIGINT)
                break
        rest = proc.stdout.read()
        code = proc.wait(30)
    finally:
        watchdog.cancel()
    output = "".join(seen) + rest
    assert code == 130, output
    assert "interrupted after" in output and "Traceback" not in output
    assert "what next" not in output
    assert list(tmpdir.iterdir()) == []


def test_sandbox_env_points_only_into_the_temporary_directory(tmp_path):
    box = Sandbox.create(tmp_path)
    base = {"PATH": "/usr/bin", "HOME": "/home/real", "TAOTOKEN_API_KEY": "k", "OPENAI_BASE_URL": "u",
            "ANTHROPIC_AUTH_TOKEN": "a", "CLAUDE_CONFIG_DIR": "/c", "CODEX_HOME": "/x", "CLINE_DIR": "/y",
            "HTTPS_PROXY": "p", "https_proxy": "p", "ALL_PROXY": "p", "XDG_RUNTIME_DIR": "/run/user/1",
            "XDG_CONFIG_HOME": "/home/real/.config", "LANG": "C.UTF-8"}
    env = box.env(base)
    assert env["HOME"] == str(box.home) and env["TMPDIR"] == str(box.tmp)
    for name in ("TAOTOKEN_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CONFIG_DIR", "CODEX_HOME",
                 "CLINE_DIR", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "XDG_RUNTIME_DIR"):
        assert name not in env, name
    for name, value in env.items():
        if name.startswith("XDG_"):
            assert value.startswith(str(box.home)), (name, value)
    assert env["PATH"] == "/usr/bin" and env["LANG"] == "C.UTF-8"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    box.remove()
    assert not box.root.exists()


def test_gateway_log_groups_equal_requests(mock_gateway):
    import httpx

    mock = mock_gateway()
    with httpx.Client(trust_env=False, timeout=5) as http:
        for _ in range(3):
            http.get(mock.url + "/v1/models", headers={"Authorization": f"Bearer {SENTINEL_KEY}"})
        http.get(mock.url + "/v1/v1/models", headers={"Authorization": f"Bearer {SENTINEL_KEY}"})
    lines = group_gateway_log(mock.requests)
    assert [(g.text, g.count) for g in lines] == [
        ("GET /api/v1/models bearer sk-SE…WXYZ model=- stream=no -> 200", 3),
        ("GET /api/v1/v1/models bearer sk-SE…WXYZ model=- stream=no -> 404  !! doubled-v1", 1),
    ]
