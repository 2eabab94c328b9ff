"""doctor's deadline is its own and it says so: a request that runs out of doctor's time (a gateway that never
answers: tests/rawserver.py's `stall`, on 127.0.0.1) is not reported as "the server said: DeadlineExceeded", and
the fixes rerun what timed out instead of a `check` of another request."""

from __future__ import annotations

import threading
import time

import pytest

from taotoken_cli.cmd.doctor import probes
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Check, Result
from taotoken_cli.cmd.doctor.runner import run_checks
from tests.conftest import SENTINEL_KEY, own_config
from tests.rawserver import RawServer, closed_port


@pytest.mark.parametrize("path,expect,rerun", [
    ("/api/v1/models", "models", "taotoken check --timeout 30"),
    ("/api/v1/chat/completions", "chat", "taotoken check --chat --timeout 30"),
    ("/api/v1/chat/completions", "stream", "taotoken check --stream --timeout 30"),
    ("/api/v1/messages", "messages", None),  # no check sends it: doctor itself, with more time
])
def test_a_request_that_ran_out_of_doctors_time(home, path, expect, rerun):
    with RawServer("stall") as server:
        own_config(home, server.url + "/api")
        ctx = DoctorContext(timeout=1.0)
        with probes._gateway(ctx) as gateway:
            obs = gateway.request("POST" if expect != "models" else "GET", server.url + path)
    problem = probes.diagnose(ctx, obs, expect)
    assert problem is not None and problem.code == "net.timeout"
    method = "GET" if expect == "models" else "POST"
    assert f"doctor's own time limit (1 s, --timeout) ran out before {method} {path} answered" in problem.message
    assert "server said" not in problem.message and "DeadlineExceeded" not in problem.message
    fixes = [str(fix) for fix in problem.fixes]
    assert fixes[0] == "allow longer: taotoken doctor --timeout 30"
    assert (fixes[1] == f"or test just that request: {rerun}") if rerun else \
        not any("taotoken check" in fix and "--timeout" in fix for fix in fixes)
    assert not any("--timeout 15" in fix for fix in fixes)


def test_a_network_error_is_not_what_the_server_said(home):
    own_config(home, f"http://127.0.0.1:{closed_port()}/api")
    ctx = DoctorContext(timeout=60.0)  # refused at once; a loaded machine may take seconds to build the client
    problem = probes.diagnose(ctx, probes.models(ctx), "models")
    assert problem is not None and problem.code == "net.refused"
    assert "server said" not in problem.message and "Connection refused" in problem.message
    assert SENTINEL_KEY not in problem.message


# -- the deadline decides, not a race -----------------------------------------------------------------------------

def test_a_probe_started_after_the_deadline_is_a_timeout_not_a_request(home):
    """The probe's limit is the run's deadline itself, not a duration from whenever its client was built (on a
    loaded machine that took a second and carried the probe past the deadline): a probe that starts once the
    deadline has passed sends nothing and is doctor's own timeout."""
    with RawServer("stall") as server:
        own_config(home, server.url + "/api")
        ctx = DoctorContext(timeout=1.0)
        ctx.deadline = time.monotonic() - 0.01  # as if starting the probe's thread had taken the whole budget
        obs = probes.models(ctx)
        assert not server.requests  # nothing was sent
    problem = probes.diagnose(ctx, obs, "models")
    assert problem is not None and problem.code == "net.timeout"
    assert "doctor's own time limit (1 s, --timeout) ran out" in problem.message


def test_checks_the_deadline_cuts_report_the_timeout_with_its_code(home):
    """A check still running at the deadline, and one waiting on the probe that check runs, are cut by the runner;
    each network check says net.timeout (as its probe would have) and the fixes rerun it with more time."""
    release = threading.Event()

    def stuck(ctx: DoctorContext) -> Result:
        return ctx.memo("slow-probe", lambda: release.wait(30) and Result.ok("late"))

    checks = [Check("gateway.stuck", "Gateway", "stuck", stuck, network=True),
              Check("gateway.waiting", "Gateway", "waiting", stuck, network=True),
              Check("config.stuck", "Configuration", "stuck", stuck)]
    try:
        findings = run_checks(DoctorContext(timeout=0.5), checks)
    finally:
        release.set()
    assert [f.result.timed_out for f in findings] == [True, True, True]
    assert [f.result.code for f in findings] == ["net.timeout", "net.timeout", None]
    network = findings[0].result.message
    assert network.startswith("The gateway did not answer in time: doctor's own time limit (0.5 s, --timeout)")
    assert findings[2].result.message.startswith("doctor's own time limit (0.5 s, --timeout) ran out")
    assert [str(f) for f in findings[0].result.fixes] == ["allow longer: taotoken doctor --timeout 30"]
