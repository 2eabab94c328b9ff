"""Real LiteLLM answers (tests/fixtures/litellm, recorded by scripts/record_litellm_fixtures.py) replayed:
first straight into the classifier as Observations, then served over HTTP on 127.0.0.1 so that
`taotoken check` runs its whole gateway path against them. LiteLLM itself is never needed here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from werkzeug import Request, Response

from taotoken_cli.core.base.fix import texts
from taotoken_cli.core.diagnosis.catalogue import CATALOGUE
from taotoken_cli.core.diagnosis.classify import classify
from taotoken_cli.core.diagnosis.model_ids import close_model_matches, model_ids
from taotoken_cli.core.net.gateway import Observation
from tests.conftest import REPO, SENTINEL_KEY

FIXTURES = REPO / "tests" / "fixtures" / "litellm"
ROOT = "http://127.0.0.1:4000"

# fixture -> the code it must be classified as (None: a success)
EXPECTED: dict[str, str | None] = {
    "models-ok": None,
    "restricted-models": None,
    "chat-ok": None,
    "bad-key": "auth.invalid_key",  # no database: only the master key is accepted
    "bad-key-models": "auth.invalid_key",
    "no-key": "auth.missing_key",
    "expired-key": "auth.expired_key",
    "forbidden-model": "auth.forbidden_model",
    "forbidden-model-typo": "auth.forbidden_model",
    "invalid-model": "model.not_found",
    "deployment-500": "server.error",
    "deployment-500-stream": "server.error",
    "upstream-429": "upstream.saturated",
    "model-rpm-no-deployments": "upstream.saturated",
    "cooldown-no-deployments": "upstream.saturated",
    "key-rpm-limit": "rate.limited",
    "budget-exceeded": "quota.key_exhausted",
    "unknown-path": "url.doubled_v1",
}


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def expect_for(fixture: dict[str, Any]) -> str:
    request = fixture["request"]
    if request["path"].endswith("/models"):
        return "models"
    return "stream" if (request.get("json") or {}).get("stream") else "chat"


def observation(name: str, *, drop_headers: tuple[str, ...] = (), proxy: str | None = None) -> Observation:
    fixture = load(name)
    request, response = fixture["request"], fixture["response"]
    headers = {k: v for k, v in response["headers"].items() if k not in drop_headers}
    return Observation(request["method"], ROOT + request["path"], status=response["status"], headers=headers,
                       body=response["body"].encode(), key_sent="Authorization" in request["headers"], proxy=proxy)


def diagnose(name: str, **kw: Any):
    return classify(observation(name, **kw), expect=expect_for(load(name)))


def test_every_fixture_has_an_expectation():
    assert {path.stem for path in FIXTURES.glob("*.json")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_is_a_recording_of_litellm(name):
    fixture = load(name)
    assert fixture["name"] == name and fixture["litellm_version"] and fixture["setup"] in ("master-key",
                                                                                            "virtual-keys")
    assert fixture["request"]["method"] in ("GET", "POST") and fixture["request"]["path"].startswith("/")
    assert isinstance(fixture["response"]["status"], int) and isinstance(fixture["response"]["body"], str)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_replayed_fixture_is_classified(name):
    diagnosis = diagnose(name)
    assert (diagnosis.code if diagnosis else None) == EXPECTED[name], diagnosis and diagnosis.to_dict()
    if diagnosis is None:
        return
    fixes = texts(diagnosis.fixes())
    assert fixes and all("{" not in fix and "<request_id>" not in fix and "<proxy>" not in fix for fix in fixes)
    # no proxy was in use: no fix may send the user to one
    assert not any("proxy" in fix for fix in fixes), fixes
    assert diagnosis.to_dict()["exit_code"] == int(CATALOGUE[diagnosis.code].exit)


def test_forbidden_model_points_at_the_models_the_key_can_use():
    diagnosis = diagnose("forbidden-model")
    assert diagnosis.model == "gpt-4o" and diagnosis.to_dict()["model"] == "gpt-4o"
    assert "list the models this key may use: taotoken models" in texts(diagnosis.fixes())
    assert diagnosis.code != "auth.forbidden" and "lacks a permission" not in " ".join(diagnosis.causes())
    # the key lists gpt-4o-mini only: that is a different model, never offered as a typo fix for gpt-4o
    listed = model_ids(json.loads(load("restricted-models")["response"]["body"]))
    assert listed == ["gpt-4o-mini"]
    assert close_model_matches("gpt-4o", listed) == []
    # the same 403 for a typo names the typed model, which is a near-miss of a listed one
    typo = diagnose("forbidden-model-typo")
    assert typo.model == "gpt-4o-mni" and close_model_matches(typo.model, listed) == ["gpt-4o-mini"]


def test_model_level_429_without_retry_after_says_so_and_suggests_another_model():
    diagnosis = diagnose("model-rpm-no-deployments")
    assert "retry-after" not in load("model-rpm-no-deployments")["response"]["headers"]
    assert diagnosis.retry_after_s is None
    text = " ".join(texts(diagnosis.fixes()))
    assert "the gateway gave no wait time" in text and "Retry-After" not in text
    assert "try another model (taotoken models lists them)" in text
    upstream = diagnose("upstream-429")  # the provider's 429, passed on: not the key's own limit
    assert upstream.retry_after_s is None and "the gateway gave no wait time" in " ".join(texts(upstream.fixes()))
    assert upstream.model == "busy-model"


def test_429_with_retry_after_shows_the_wait():
    cooldown = diagnose("cooldown-no-deployments")
    assert cooldown.retry_after_s == 60 and cooldown.model == "cooled-model"
    assert any(fix.startswith("wait 60 s (the gateway's Retry-After)") for fix in texts(cooldown.fixes()))
    key_limit = diagnose("key-rpm-limit")
    assert key_limit.retry_after_s == 60
    assert texts(key_limit.fixes())[0] == "wait 60 s (the gateway's Retry-After), then try again"


def test_500_shows_a_request_id_only_when_there_is_one():
    call_id = load("deployment-500")["response"]["headers"]["x-litellm-call-id"]
    diagnosis = diagnose("deployment-500")
    assert diagnosis.request_id == call_id and diagnosis.to_dict()["request_id"] == call_id
    assert f"request id: {call_id}" in diagnosis.details
    assert f"if it persists, report it to the gateway operator with request id {call_id}" in texts(diagnosis.fixes())
    assert diagnosis.model == "flaky-model"
    anonymous = diagnose("deployment-500", drop_headers=("x-litellm-call-id",))
    assert anonymous.request_id is None and anonymous.to_dict()["request_id"] is None
    text = " ".join(texts(anonymous.fixes()) + anonymous.details)
    assert "request id" not in text.replace("the gateway sent no request id", "")


def test_no_key_and_no_database():
    assert diagnose("no-key").code == "auth.missing_key"  # nothing was sent
    sent = observation("no-key")
    sent.key_sent = True  # a key was sent, but the gateway says none arrived (a proxy stripped it)
    assert classify(sent, expect="chat").code == "auth.key_not_received"
    assert "this LiteLLM proxy has no key database: only its master key is accepted" in diagnose("bad-key").details


def test_typo_and_budget():
    assert diagnose("invalid-model").model == "gpt-4o-mni"
    budget = diagnose("budget-exceeded")
    assert budget.entry.retry is False and budget.retry_after_s is None and budget.model == "gpt-4o-mini"


# --- the same answers over HTTP, through `taotoken check` -----------------------------------------

def _serve(fixture: dict[str, Any]):
    response = fixture["response"]
    headers = {k: v for k, v in response["headers"].items()
               if k not in ("content-length", "transfer-encoding", "connection")}

    def handler(request: Request) -> Response:
        return Response(response["body"], status=response["status"], headers=headers)

    return handler


CHAT_FIXTURES = sorted(name for name, code in EXPECTED.items()
                       if code and load(name)["request"]["path"] == "/v1/chat/completions" and name != "no-key")


@pytest.mark.parametrize("name", CHAT_FIXTURES)
def test_check_against_a_served_fixture(httpserver, run, monkeypatch, name):
    fixture = load(name)
    models = "restricted-models" if fixture["setup"] == "virtual-keys" else "models-ok"
    httpserver.expect_request("/v1/models", method="GET").respond_with_handler(_serve(load(models)))
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(_serve(fixture))
    monkeypatch.setenv("TAOTOKEN_BASE_URL", httpserver.url_for("/").rstrip("/"))
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    model = fixture["request"]["json"]["model"]
    args = ["check", "--stream" if fixture["request"]["json"].get("stream") else "--chat", "--model", model]
    result = run(*args, "--json").assert_clean()
    data = json.loads(result.stdout)
    code = EXPECTED[name]
    assert data["code"] == code and result.returncode == data["exit_code"] == int(CATALOGUE[code].exit)
    assert set(data["error"]) >= {"request_id", "model"}
    assert data["error"]["request_id"] == fixture["response"]["headers"].get("x-litellm-call-id")
    text = run(*args).assert_clean()
    assert f"{code}:" in text.stderr and "fix:" in text.stderr and "--no-proxy" not in text.stderr


def test_check_offers_no_other_model_as_a_typo_fix(httpserver, run, monkeypatch):
    httpserver.expect_request("/v1/models", method="GET").respond_with_handler(_serve(load("restricted-models")))
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(
        _serve(load("forbidden-model")))
    monkeypatch.setenv("TAOTOKEN_BASE_URL", httpserver.url_for("/").rstrip("/"))
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    data = json.loads(run("check", "--chat", "--model", "gpt-4o", "--json").stdout)
    assert data["code"] == "auth.forbidden_model" and data["close_matches"] == []
    assert data["error"]["model"] == "gpt-4o"
    assert "list the models this key may use: taotoken models" in data["error"]["fixes"]


def test_explain_shows_each_conditional_fix_with_its_condition(run):
    text = run("explain", "rate.limited").assert_clean().stdout
    assert "(when the gateway said how long to wait) wait <retry_after> s (the gateway's Retry-After)" in text
    assert "(when the gateway gave no wait time) wait about a minute, then try again" in text
    server = run("explain", "server.error").assert_clean().stdout
    assert "(when the gateway sent a request id) if it persists, report it to the gateway operator with request " \
           "id <request_id>" in server
    forbidden = run("explain", "auth.forbidden").assert_clean().stdout
    assert "(when a proxy is in use) try without the proxy <proxy>: taotoken check --no-proxy" in forbidden
