"""The secret-leak sweep (issue 8, part 1): every command and subcommand, with a sentinel key.

The command list comes from the Typer app itself, so a new command fails `test_every_command_has_
a_scenario` until it is given scenarios here. Each scenario runs in its plain form and with each of
`--json`, `-v`/`--verbose` and `--dry-run` the command has, against a working mock gateway, a server
that echoes the key back (as LiteLLM does, in the body and in a header), every failure the mock can
inject and every fault it knows. After each batch every file under HOME is inspected: no file name
holds the key, and every file holding it is one of the known secret files, mode 0600 (backups too).
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from werkzeug import Request, Response

from taotoken_cli.cmd.demo.steps import DEMO_KEY
from taotoken_cli.cmd.mock import FAULTS, NAMED_FAILURES, MockOptions
from tests.app_commands import command_paths
from tests.conftest import SENTINEL_KEY, Result, python_path

MODEL = "gpt-4o-mini"

# Command path -> scenarios (argument lists). "{url}" is replaced by the gateway under test.
# `network` scenarios are also run against every failure mode; the others once per target.
SCENARIOS: dict[str, dict[str, list[list[str]]]] = {
    "": {"local": [["--version"], ["--help"]]},
    "init": {"local": [
        ["init", "--key-stdin", "--model", MODEL, "--base-url", "{url}", "--all", "--yes"],
        ["init", "--key-stdin", "--model", MODEL, "--base-url", "{url}/v1?utm=x", "--all", "--dry-run"],
        ["init", "--key", SENTINEL_KEY, "--model", "other-model", "--base-url", "{url}", "--all", "--yes",
         "--codex-auth", "inline", "--allow-unlisted"],  # a model the mock does not list: written all the same
        ["init", "--key-stdin", "--model", MODEL, "--base-url", "{url}", "--target", "codex", "--yes",
         "--codex-auth", "auth-json"],
        ["init", "--key-stdin", "--model", MODEL, "--base-url", "{url}", "--target", "cline"],  # no --yes: refused
        ["init", "--undo"],
        ["init", "--undo", "--force"],
        ["init", "--key-stdin", "--model", MODEL, "--base-url", "not a url", "--yes"],
        ["init", "--key-stdin", "--model", MODEL, "--base-url", "{url}", "--target", "nope"],
    ]},
    "check": {"network": [["check"], ["check", "--chat"], ["check", "--stream"], ["check", "-q", "--chat"],
                          ["check", "--code", "--chat"]]},
    "models": {"network": [["models"], ["models", "gpt", "--json"], ["models", "no-such-model"]]},
    "explain": {"local": [["explain", "auth.invalid_key"], ["explain", "--list"], ["explain", "auth.invalid_kye"]]},
    "bench": {"network": [["bench", "-n", "2", "-c", "2", "--workers", "1", "-m", MODEL, "--timeout", "2"],
                          ["bench", "-n", "2", "--workers", "1", "--stream", "-m", MODEL, "--timeout", "2"]]},
    "mock": {"special": []},  # long-running: test_mock_log_never_holds_the_key
    "config": {"local": [["config"], ["config", "--help"]]},
    "config show": {"local": [["config", "show"], ["config", "show", "--origin"]]},
    "config path": {"local": [["config", "path"]]},
    # base_url first: the undo scenarios above may have taken the whole setup back, and `config set model` asks the
    # configured gateway's model list (the default one is the real gateway)
    "config set": {"local": [["config", "set", "base_url", "{url}"], ["config", "set", "api_key", "-"],
                             ["config", "set", "api_key", SENTINEL_KEY], ["config", "set", "model", MODEL],
                             ["config", "set", "api_key", "Bearer " + SENTINEL_KEY]]},
    "config profiles": {"local": [["config", "profiles"]]},
    "config sync": {"local": [["config", "sync"], ["config", "sync", "--yes"]]},
    "route": {"network": [["route", "--verify", "--all", "--samples", "1", "--timeout", "2"]],
              "local": [["route", "--task", "nothing"], ["route", "--export", "--device", "cpu"]]},
    "route devices": {"local": [["route", "devices"]]},
    "route set": {"local": [["route", "set", f"cpu={MODEL}", "code=other"], ["route", "set", "bad"]]},
    "route list": {"local": [["route", "list"]]},
    "demo": {"local": [["demo", "--fast", "--step", "check"]]},  # its own key (DEMO_KEY), its own mock
    "completion": {"local": [["completion", "bash"], ["completion", "--install", "fish", "man", "--yes"],
                             ["completion", "--uninstall", "fish", "man", "--yes"]]},
    "doctor": {"network": [["doctor", "--timeout", "3"], ["doctor", "--offline"]],
               "local": [["doctor", "--list"], ["doctor", "--fix", "--yes", "--offline"]]},
}
VARIANT_FLAGS = (("--json",), ("--verbose", "-v"), ("--dry-run",))


COMMANDS = command_paths()


def variants(path: str, args: list[str]) -> list[list[str]]:
    """The scenario as written plus one run per output/mode flag the command has."""
    options = {opt for param in getattr(COMMANDS[path], "params", []) for opt in getattr(param, "opts", [])}
    runs = [args]
    for names in VARIANT_FLAGS:
        flag = next((name for name in names if name in options), None)
        if flag and flag not in args:
            runs.append([*args, flag])
    return runs


def test_every_command_has_a_scenario():
    missing = sorted(set(COMMANDS) - set(SCENARIOS))
    assert not missing, f"commands without a secret-leak scenario in {__file__}: {missing}"
    for path, kinds in SCENARIOS.items():
        if path in COMMANDS:
            assert any(kinds.values()) or "special" in kinds, path


# ------------------------------------------------------------------------------------- running

def run_all(run, cli, kind: str, url: str, paths=None, exits_seen: dict | None = None) -> list[Result]:
    results = []
    for path, kinds in SCENARIOS.items():
        if path not in COMMANDS or (paths is not None and path not in paths):
            continue
        for scenario in kinds.get(kind, []):
            args = [a.replace("{url}", url) for a in scenario]
            for argv in variants(path, args):
                stdin = SENTINEL_KEY + "\n"
                # doctor may os._exit past its deadline, demo runs its own mock and steps: real subprocesses
                in_subprocess = path in ("doctor", "demo")
                result = cli(*argv, input=stdin, timeout=60) if in_subprocess else run(*argv, input=stdin)
                assert_no_leak(result)
                results.append(result)
                if exits_seen is not None:
                    exits_seen.setdefault(result.returncode, []).append(" ".join(argv))
    return results


def assert_no_leak(result: Result) -> None:
    text = result.output
    assert "Traceback" not in text, (result.args, text)
    assert SENTINEL_KEY not in text, (result.args, "the full key leaked", text)
    # also not split by a terminal-width wrap or JSON escaping
    assert SENTINEL_KEY not in re.sub(r"\s+", "", text), (result.args, text)
    assert SENTINEL_KEY not in json.dumps(text), result.args
    assert DEMO_KEY not in text, (result.args, "the demo's key leaked", text)


SECRET_FILES = (
    re.compile(r"\.config/taotoken/config\.toml$"),
    re.compile(r"\.config/taotoken/env\.(sh|fish)$"),
    re.compile(r"\.config/taotoken/cc-switch-import\.txt$"),
    re.compile(r"\.config/taotoken/backups/[^/]+/\d{3}-[^/]+$"),
    re.compile(r"\.claude/settings\.json$"),
    re.compile(r"\.codex/config\.toml$"),  # --codex-auth inline
    re.compile(r"\.codex/auth\.json$"),
    re.compile(r"\.cline/data/settings/providers\.json$"),
    re.compile(r"\.gemini/\.env$"),  # init --all against a gateway serving the Gemini API
    re.compile(r"\.openclaw/openclaw\.json$"),
    re.compile(r"\.cc-switch/config\.json$"),
    re.compile(r"\.local/share/opencode/auth\.json$"),
    re.compile(r"\.config/opencode/opencode\.jsonc?$"),  # only when the user keeps the key there (options.apiKey)
    re.compile(r"\.qwen/settings\.json$"),
)


def assert_files_safe(home: Path) -> list[str]:
    """No file name holds the key; each file holding it is a known secret file with mode 0600."""
    holding = []
    for path in home.rglob("*"):
        rel = str(path.relative_to(home))
        assert SENTINEL_KEY not in rel, f"the key is in a file name: {rel}"
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if SENTINEL_KEY.encode() not in data:
            continue
        holding.append(rel)
        assert any(p.search(rel) for p in SECRET_FILES), f"{rel} holds the key but is not a known secret file"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, f"{rel} holds the key with mode " \
            f"{oct(stat.S_IMODE(path.stat().st_mode))}"
    for backup in (home / ".config/taotoken/backups").rglob("*"):
        if backup.is_file():
            assert stat.S_IMODE(backup.stat().st_mode) == 0o600, backup
    return holding


def configured(run, url: str) -> None:
    """A machine set up by `init --all` (so every client file holds the key) with a routing table."""
    result = run("init", "--key-stdin", "--model", MODEL, "--base-url", url, "--all", "--yes", input=SENTINEL_KEY)
    assert result.returncode == 0, result.output
    assert run("route", "set", f"cpu={MODEL}").returncode == 0


# ------------------------------------------------------------------------------------- targets

@pytest.fixture
def echo_server(httpserver):
    """A gateway that quotes the key it received everywhere it can (LiteLLM does in its 401 body)."""

    def handler(request: Request) -> Response:
        received = request.headers.get("Authorization", "").removeprefix("Bearer ")
        body = {"error": {"message": f"Authentication Error, Invalid proxy server token passed. Received API "
                                     f"Key = {received}, Key Hash (Token) =d0c8", "type": "auth_error",
                          "param": "None", "code": "401"}}
        return Response(json.dumps(body), status=401, content_type="application/json",
                        headers={"X-Echo-Key": received, "WWW-Authenticate": f'Bearer realm="{received}"'})

    httpserver.expect_request(re.compile(".*")).respond_with_handler(handler)
    return httpserver.url_for("/api")


def test_every_command_against_a_working_gateway(run, cli, home, mock_gateway, monkeypatch):
    mock = mock_gateway()
    monkeypatch.setenv("TAOTOKEN_PROFILE", "default")
    configured(run, mock.url)
    exits: dict = {}
    results = run_all(run, cli, "local", mock.url, exits_seen=exits)
    configured(run, mock.url)  # the local scenarios end with undo/odd values: set up again
    results += run_all(run, cli, "network", mock.url, exits_seen=exits)
    assert 0 in exits and len(results) > 60, exits
    ok = [r for r in results if r.args[0] == "check" and r.returncode == 0]
    assert ok, "the working gateway must make check succeed"  # the sweep really reached the gateway
    holding = assert_files_safe(home)
    assert any("backups" in h for h in holding) and any("cc-switch-import" in h for h in holding), holding
    for record in mock.requests:  # the mock's own records of what arrived
        assert SENTINEL_KEY not in repr(record)


def test_every_network_command_against_a_server_echoing_the_key(run, cli, home, echo_server):
    configured(run, echo_server)
    results = run_all(run, cli, "network", echo_server)
    codes = {r.returncode for r in results}
    assert 4 in codes, codes  # auth.invalid_key: the echo body was read and classified, key masked
    assert any("sk-SE…WXYZ" in r.output for r in results)
    assert_files_safe(home)


FAILURES = [*[str(s) for s in (400, 401, 402, 403, 404, 413, 429, 500, 502, 503, 504, 529)], *NAMED_FAILURES]
STYLES = ("openai", "one-api", "new-api", "litellm", "openrouter", "anthropic")


@pytest.mark.parametrize("mode", [*[f"fail:{f}" for f in FAILURES], *[f"fault:{f}" for f in FAULTS if f != "stall"]])
def test_every_network_command_against_each_failure(mode, run, cli, home, mock_gateway, monkeypatch):
    kind, _, value = mode.partition(":")
    if kind == "fail":
        style = STYLES[FAILURES.index(value) % len(STYLES)]
        mock = mock_gateway(MockOptions(key=SENTINEL_KEY, fail=value, fail_style=style, retry_after=0.5))
    else:
        mock = mock_gateway(MockOptions(key=SENTINEL_KEY, fault=value))
    configured(run, mock.url)
    monkeypatch.setenv("TAOTOKEN_BASE_URL", mock.url)
    results = run_all(run, cli, "network", mock.url, paths={"check", "route", "bench"})
    assert any(record.injected for record in mock.requests), f"{mode} was never injected"
    if kind == "fail" or value in ("reset", "html", "no-choices"):
        assert any(r.returncode != 0 for r in results), mode
    assert_files_safe(home)
    for record in mock.requests:
        assert SENTINEL_KEY not in repr(record)


def test_stall_fault_with_short_limits(run, home, mock_gateway):
    """The stall fault separately: the same commands with the shortest time limits they accept."""
    mock = mock_gateway(MockOptions(key=SENTINEL_KEY))
    configured(run, mock.url)  # before the stall: init's own questions to a silent gateway wait ~14 s
    mock.update(fault="stall")
    for argv in (["check", "--timeout", "0.5"], ["check", "--chat", "--json", "--timeout", "0.5"],
                 ["route", "--verify", "--all", "--samples", "1", "--timeout", "0.5"],
                 ["route", "--verify", "--all", "--samples", "1", "--timeout", "0.5", "--json"],
                 ["bench", "-n", "1", "--workers", "1", "-m", MODEL, "--timeout", "0.5"],
                 ["bench", "-n", "1", "--workers", "1", "-m", MODEL, "--timeout", "0.5", "--stream", "--json"]):
        result = run(*argv)
        assert_no_leak(result)
        assert result.returncode == 7, result.output  # net.timeout
    assert_files_safe(home)


# ---------------------------------------------------------------------------------------- mock

@pytest.mark.parametrize("as_json", [False, True])
def test_mock_log_never_holds_the_key(home, as_json):
    """`taotoken mock` with the key on its command line, requests with right, wrong and mangled keys."""
    env = dict(os.environ, PYTHONPATH=python_path())
    args = [sys.executable, "-m", "taotoken_cli", "mock", "--port", "0", "--key", SENTINEL_KEY, "--fail-rate", "0.5",
            "--fail", "401", "--fail-style", "litellm", *(["--json"] if as_json else [])]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=home)
    try:
        first = proc.stdout.readline()
        port = json.loads(first)["port"] if as_json else int(re.search(r"port (\d+)", first).group(1))
        root = f"http://127.0.0.1:{port}/api"
        keys = [SENTINEL_KEY, f"Bearer {SENTINEL_KEY}", f" {SENTINEL_KEY}\n".strip() + " x", f'"{SENTINEL_KEY}"',
                SENTINEL_KEY + "-7", SENTINEL_KEY[:-1]]
        with httpx.Client(timeout=5) as client:
            for key in keys:
                for path in ("/v1/models", "/v1/chat/completions", "/v1/v1/chat/completions?key=" + SENTINEL_KEY):
                    client.post(root + path, headers={"Authorization": f"Bearer {key}"}, json={"model": MODEL,
                                "messages": [{"role": "user", "content": SENTINEL_KEY}]})
                client.post(root + "/v1/messages", headers={"x-api-key": key}, json={"model": MODEL})
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    log = first + out + err
    assert "Traceback" not in log
    assert out.count("\n") >= 20, log  # every request was logged
    # The prompt text is the user's own content and is not logged either.
    assert SENTINEL_KEY not in log, "the mock's log holds the full key"
