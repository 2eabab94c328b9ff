"""doctor's deadline is its own and it says so: a request that runs out of doctor's time (a gateway that never
answers: tests/rawserver.py's `stall`, on 127.0.0.1) is not reported as "the server said: DeadlineExceeded", and
the fixes rerun what timed out instead of a `check` of another request."""

from __future__ import annotations

import pytest

from taotoken_cli.cmd.doctor import probes
from taotoken_cli.cmd.doctor.context import DoctorContext
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
    ctx = DoctorContext(timeout=2.0)
    problem = probes.diagnose(ctx, probes.models(ctx), "models")
    assert problem is not None and problem.code == "net.refused"
    assert "server said" not in problem.message and "Connection refused" in problem.message
    assert SENTINEL_KEY not in problem.message
