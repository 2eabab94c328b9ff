"""Network fault injection across every command that talks to the gateway (issue 8, part 2).

Each misbehaving server (tests/rawserver.py: real sockets on 127.0.0.1) is run against `check`,
`route --verify`, `bench` and `doctor`: every run must end within its time bound, name the right catalogue
code, exit with that code's status, print no traceback and never the whole key. `check`, `route` and
`bench --workers 1` run in-process (fast); `doctor` as the real subprocess, because it may end with os._exit
when a probe thread is stuck past its deadline.

The time bound is the command's --timeout plus a multiple of a reference measured in the same test
(tests/timing.py): the same command against a closed port, which fails at once and so costs only the command's
own work (parsing, classifying, rendering) at this moment's load; for doctor, starting the CLI.
"""

from __future__ import annotations

import pytest

from taotoken_cli.core.diagnosis.catalogue import CATALOGUE
from tests.conftest import SENTINEL_KEY, Result
from tests.rawserver import ENDLESS_SENT, REDIRECT_TO, RawServer, closed_port
from tests.timing import OVERHEAD_FACTOR, assert_within, fastest_s, judged, timed

MODEL = "gpt-4o-mini"
LIMIT_S = 1.0  # --timeout given to every command

# fault -> catalogue code, for a plain (non-stream) request. `refused` needs no server.
FAULTS = {
    "refused": "net.refused",
    "reset_mid_headers": "net.reset",
    "reset_mid_body": "net.reset",
    "stall": "net.timeout",
    "drip_headers": "net.timeout",
    "drip_body": "net.timeout",
    "endless_body": "server.error",
    "invalid_utf8": "auth.invalid_key",
    "invalid_json": "resp.not_json",
    "gzip_error": "quota.exhausted",
    "bad_gzip": "resp.not_json",
    "redirect": "url.redirect",
}
STREAM_FAULTS = {"stream_no_done": "stream.truncated", "truncated_stream": "stream.truncated"}



@pytest.fixture
def env(home, monkeypatch):
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("TAOTOKEN_MODEL", MODEL)
    return monkeypatch


class Fault:
    """The server for one fault (None for `refused`), plus the second host a redirect points at."""

    def __init__(self, mode: str, httpserver) -> None:
        self.mode = mode
        self.server = None if mode == "refused" else RawServer(mode)
        self.other = httpserver
        if mode == "redirect":
            REDIRECT_TO["location"] = httpserver.url_for("/api/v1/models")

    def __enter__(self) -> str:
        if self.server is None:
            return f"http://127.0.0.1:{closed_port()}/api"
        return self.server.__enter__().url + "/api"

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.__exit__(*exc)

    def check_side_effects(self) -> None:
        if self.mode == "redirect":  # the key never followed the redirect to the other host
            assert not any(req.headers.get("Authorization") for req, _ in self.other.log), self.other.log
            assert not self.other.log
        if self.mode == "endless_body":  # stopped after its 1 MiB bound (+ kernel socket buffers)
            assert 0 < ENDLESS_SENT[self.server.port] < 64 << 20, ENDLESS_SENT


def assert_ends_right(result: Result, code: str, elapsed: float, budget: float, reference: float) -> None:
    result.assert_clean()
    assert result.returncode == int(CATALOGUE[code].exit), result.output
    assert code in result.output, result.output
    assert_within(elapsed, budget, reference)


@pytest.mark.parametrize("mode", list(FAULTS))
def test_check(mode, env, run, httpserver):
    fault = Fault(mode, httpserver)
    with fault as base:
        result, elapsed, reference = judged(run, lambda url: ["check", "--base-url", url, "--timeout", str(LIMIT_S)],
                                            base)
    assert_ends_right(result, FAULTS[mode], elapsed, LIMIT_S, reference)
    fault.check_side_effects()


@pytest.mark.parametrize("mode", list(STREAM_FAULTS))
def test_check_stream(mode, env, run, httpserver):
    with Fault(mode, httpserver) as base:
        result, elapsed, reference = judged(
            run, lambda url: ["check", "--stream", "--base-url", url, "--timeout", str(LIMIT_S)], base)
    assert_ends_right(result, STREAM_FAULTS[mode], elapsed, LIMIT_S, reference)
    assert "2 content chunks" in result.stderr


@pytest.mark.parametrize("mode", list(FAULTS))
def test_route_verify(mode, env, run, httpserver):
    fault = Fault(mode, httpserver)
    with fault as base:
        result, elapsed, reference = judged(run, lambda url: ["route", "--verify", "--all", "--samples", "2",
                                                              "--base-url", url, "--timeout", str(LIMIT_S)], base)
    # two samples, each bounded on its own
    assert_ends_right(result, FAULTS[mode], elapsed, 2 * LIMIT_S, reference)
    fault.check_side_effects()


@pytest.mark.parametrize("mode", [*FAULTS, *STREAM_FAULTS])
def test_bench(mode, env, run, httpserver):
    fault = Fault(mode, httpserver)
    stream = ["--stream"] if mode in STREAM_FAULTS else []
    with fault as base:  # --workers 1: bench runs in this process (no worker processes to start)
        result, elapsed, reference = judged(run, lambda url: ["bench", "--base-url", url, "-m", MODEL, "-n", "1",
                                                              "--workers", "1", "--timeout", str(LIMIT_S), *stream],
                                            base)
    code = {**FAULTS, **STREAM_FAULTS}[mode]
    assert_ends_right(result, code, elapsed, LIMIT_S, reference)
    fault.check_side_effects()


@pytest.mark.parametrize("mode", list(FAULTS))
def test_doctor(mode, cli, home, httpserver):
    """doctor's verdict is exit 1 for any failed check; the failing check names the catalogue code. A server that
    never answers in full meets doctor's deadline (2 s: net.timeout, whoever wins the race between the probe and
    the runner); one that answers is given a deadline its answer can meet on this machine now (a loaded machine
    can spend 2 s starting doctor's threads and importing httpx, and that run would rightly say net.timeout).
    The network and gateway checks are the ones a faulty server concerns (the rest read files and probe devices)."""
    import json

    fault = Fault(mode, httpserver)
    env = {"TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_MODEL": MODEL}
    with fault as base:
        def doctor(url: str, timeout: float) -> list[str]:
            return ["doctor", "--json", "--check", "net", "--check", "gateway", "--base-url", url,
                    "--timeout", f"{timeout:.1f}"]

        # the reference: the same doctor against a closed port (tests/timing.py)
        reference = fastest_s(lambda: cli(*doctor(f"http://127.0.0.1:{closed_port()}/api", 2), env=env))
        budget = 2.0 if FAULTS[mode] == "net.timeout" else 2.0 + OVERHEAD_FACTOR * reference
        result, elapsed = timed(cli, *doctor(base, budget), env=env)
    result.assert_clean()
    assert result.returncode == 1, result.output
    failed = [c for c in json.loads(result.stdout)["checks"] if c["status"] == "fail"]
    if mode == "refused":  # found before any HTTP request: the TCP check says it in words
        assert any("Connection refused" in c["message"] for c in failed), failed
    else:
        assert failed and failed[0]["code"] == FAULTS[mode], failed
    assert_within(elapsed, budget, reference)
    fault.check_side_effects()


def test_no_command_sends_the_key_over_plain_http_to_another_host(cli, home):
    """route --verify, bench and doctor refuse like check does (test_check covers check). The host is a
    .invalid name, so even a regression could not reach any address: DNS would fail first."""
    env = {"TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_BASE_URL": "http://gw.invalid/api",
           "TAOTOKEN_MODEL": "gpt-4o-mini"}
    cli("route", "set", "cpu=gpt-4o-mini", env=env).assert_clean()
    verify = cli("route", "--verify", "-d", "cpu", "--samples", "1", env=env).assert_clean()
    assert "url.plain_http" in verify.output and verify.returncode != 0
    bench = cli("bench", "-n", "1", env=env).assert_clean()
    assert "url.plain_http" in bench.output and bench.returncode == 3
    doctor = cli("doctor", "--check", "gateway", "-v", env=env).assert_clean()
    assert "url.plain_http" in doctor.output and doctor.returncode == 1
    assert "export TAOTOKEN_ALLOW_HTTP=1" in doctor.output
