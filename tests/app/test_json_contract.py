"""Every command's --json (docs/json.md): one object on stdout that starts with `schema` (an integer, the version
of that command's shape) and `exit_code` (the status the process exits with, equal to it), in success and in
failure alike; mock's --json log is JSON Lines, each line with `schema`, the last (the summary) with `exit_code`.

The table below is checked against the app: a command that gains --json and is not run here fails the test.
"""

from __future__ import annotations

import json
import signal

import httpx
import pytest
import typer.main

from taotoken_cli.app import app
from tests.cmd.mock.test_mock_cli import start_mock, stop
from tests.conftest import SENTINEL_KEY, own_config

# What each command with --json is run with (several variants where the shape differs); "PORT" is the mock's.
INVOCATIONS: dict[str, list[list[str]]] = {
    "check": [["check", "--json"], ["check", "--json", "--chat"], ["check", "--json", "--model", "nosuch-model"],
              ["check", "--json", "--client", "codex"]],
    "models": [["models", "--json"], ["models", "--json", "gpt"]],
    "explain": [["explain", "auth.invalid_key", "--json"], ["explain", "401", "--json"],
                ["explain", "无效的令牌", "--json"], ["explain", "--list", "--json"], ["explain", "nosuch", "--json"]],
    "config show": [["config", "show", "--json"]],
    "config profiles": [["config", "profiles", "--json"]],
    "route": [["route", "--json"], ["route", "--verify", "--json"]],
    "route devices": [["route", "devices", "--json", "--timeout", "20"]],
    "route list": [["route", "list", "--json"]],
    "doctor": [["doctor", "--json", "--offline"], ["doctor", "--list", "--json"]],
    "bench": [["bench", "--json", "-n", "2", "-c", "1", "--workers", "1"],
              ["bench", "--json", "-n", "2", "--model", "nosuch-model", "--workers", "1"]],
    "mock": [],  # a server: its JSON Lines log is tested below
}


def _commands_with_json() -> set[str]:
    found: set[str] = set()

    def walk(command, path: list[str]) -> None:
        if any("--json" in getattr(p, "opts", ()) for p in command.params):
            found.add(" ".join(path))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def test_every_command_with_json_is_in_the_table() -> None:
    assert _commands_with_json() == set(INVOCATIONS), "add the command's --json runs to INVOCATIONS"


def _assert_envelope(data: object, returncode: int, args: list[str]) -> None:
    assert isinstance(data, dict), (args, data)
    assert list(data)[:2] == ["schema", "exit_code"], (args, list(data))
    assert isinstance(data["schema"], int) and data["schema"] >= 1, (args, data["schema"])
    assert data["exit_code"] == returncode, (args, data["exit_code"], returncode)


@pytest.mark.parametrize("args", [args for runs in INVOCATIONS.values() for args in runs], ids=" ".join)
def test_json_starts_with_schema_and_the_exit_code(args, cli, home, module_mock_gateway) -> None:
    mock = module_mock_gateway()
    own_config(home, mock.url)
    result = cli(*args, env={"CUDA_VISIBLE_DEVICES": ""}).assert_clean()
    _assert_envelope(json.loads(result.stdout), result.returncode, args)


def test_failures_have_the_envelope_too(cli, home) -> None:
    """No config at all (check exits 3) and a closed port (exit 7): the same two keys first."""
    missing = cli("check", "--json").assert_clean()
    assert missing.returncode == 3
    _assert_envelope(json.loads(missing.stdout), 3, ["check"])
    own_config(home, "http://127.0.0.1:9/api")
    refused = cli("models", "--json").assert_clean()
    assert refused.returncode == 7
    _assert_envelope(json.loads(refused.stdout), 7, ["models"])


def test_mock_json_lines_carry_schema_and_the_summary_the_exit_code(home) -> None:
    proc, first = start_mock(home, "--json")
    listening = json.loads(first)
    assert (listening["schema"], listening["event"]) == (1, "listening")
    httpx.get(f"{listening['root']}/v1/models", headers={"Authorization": f"Bearer {SENTINEL_KEY}"})
    out, _err = stop(proc, signal.SIGINT)
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert [line["event"] for line in lines] == ["request", "summary"]
    assert all(line["schema"] == 1 for line in lines)
    assert lines[-1]["exit_code"] == proc.returncode == 0
    assert "exit_code" not in lines[0]  # a request line is a record, not the command's result
