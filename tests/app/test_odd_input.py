"""No internal error on odd input (issue 22, item 6): a deleted working directory, HOME a regular file, a closed stdin
for --key-stdin, an error body nested thousands of levels deep (every command with closed and full streams, odd
arguments and odd environment values: tests/sweeps/test_sweep_fuzz_commands.py). Each ends in a specific
message and the documented exit code, never a traceback or "internal error".

Real parts: the real CLI in a subprocess (streams closed or pointed at /dev/full by the shell, as users do), a real
HTTP server on 127.0.0.1 (pytest-httpserver) for the deep body, a real temporary HOME.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, SENTINEL_KEY, flat, needs_posix


def shell(command: str, home: Path, cwd: Path | None = None, **extra: str) -> subprocess.CompletedProcess[str]:
    needs_posix("bash (its redirections: >&-, >/dev/full, <&-)")
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(home), "TAOTOKEN_API_KEY": SENTINEL_KEY,
           "TAOTOKEN_MODEL": "gpt-4o-mini", "TAOTOKEN_BASE_URL": "http://127.0.0.1:9/api", **extra}
    return subprocess.run(["bash", "-c", command.replace("TT", f"{sys.executable} -m taotoken_cli")], env=env,
                          cwd=cwd or home, capture_output=True, text=True, timeout=60)


def assert_no_internal_error(proc: subprocess.CompletedProcess[str]) -> None:
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text and "internal error" not in text, text
    assert SENTINEL_KEY not in text


def test_key_stdin_closed_home_a_file_and_a_deleted_cwd(home: Path, tmp_path: Path) -> None:
    closed = shell("TT init --key-stdin --yes --model m --base-url https://taotoken.net/api <&-", home)
    assert_no_internal_error(closed)
    assert closed.returncode == 2 and "--key-stdin was given but stdin was empty" in flat(closed.stderr)

    not_a_dir = tmp_path / "home-file"
    not_a_dir.write_text("")
    proc = shell("printf %s sk-abc0123456789abcdefXYZ | TT init --key-stdin --yes --model m "
                 "--base-url https://taotoken.net/api", not_a_dir, cwd=tmp_path)
    assert_no_internal_error(proc)
    assert proc.returncode == 3 and "a directory above it is a file" in flat(proc.stderr), proc.stderr

    gone = tmp_path / "gone"
    gone.mkdir()
    proc = shell(f"cd {gone} && rmdir {gone} && TT doctor --offline", home)
    assert_no_internal_error(proc)
    assert proc.returncode == 1 and "the current directory no longer exists" in flat(proc.stderr), proc.stderr
    gone.mkdir()
    proc = shell(f"cd {gone} && rmdir {gone} && TT doctor --offline --json", home)
    assert_no_internal_error(proc)
    error = json.loads(proc.stdout)  # under --json the error is a JSON object on stdout
    assert error["code"] == "input.no_cwd" and error["exit_code"] == proc.returncode == 1 and not error["ok"], error


def test_an_error_body_nested_five_thousand_levels(home: Path, httpserver) -> None:
    httpserver.expect_request("/api/v1/models").respond_with_data("[" * 5000 + "]" * 5000, status=401,
                                                                  content_type="application/json")
    for command in ("TT check", "TT check --json", "TT models"):
        proc = shell(command, home, TAOTOKEN_BASE_URL=httpserver.url_for("/api"))
        assert_no_internal_error(proc)
        assert proc.returncode == 8 and "nested too deeply" in flat(proc.stderr), (command, proc.stderr)
