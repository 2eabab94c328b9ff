"""new-api's own answers (tests/fixtures/new_api: each built from the line of new-api's source its `source`
names) classified: straight into the classifier, then replayed by `taotoken mock --replay` on 127.0.0.1 and
met by taotoken's gateway client and by `taotoken check`, so the whole path sees exactly what new-api sends."""

from __future__ import annotations

import json
from typing import Any

import pytest

from taotoken_cli.cmd.mock import MockOptions
from taotoken_cli.cmd.mock.replay import load_recording
from taotoken_cli.core.diagnosis.catalogue import CATALOGUE
from taotoken_cli.core.diagnosis.classify import classify
from taotoken_cli.core.net.gateway import Gateway, Observation
from tests.conftest import REPO, SENTINEL_KEY

FIXTURES = REPO / "tests" / "fixtures" / "new_api"

# fixture -> the code it must be classified as
EXPECTED: dict[str, str] = {
    "upstream-401-passthrough": "auth.upstream_credential",  # the channel's key, not the user's
    "upstream-429-rewritten": "upstream.saturated",
    "upstream-502-not-json": "server.error",
    "do-request-failed": "server.error",
    "get-channel-failed": "server.error",
    "invalid-url-responses": "url.not_implemented",  # the root is right; this build has no /v1/responses
    "invalid-url-wrong-root": "url.not_found",  # every relay path unknown: the root is wrong
    "api-not-implemented": "url.not_implemented",
    "token-invalid": "auth.invalid_key",
    "token-exhausted": "quota.key_exhausted",
    "token-expired": "auth.expired_key",
    "token-disabled": "auth.key_disabled",
    "user-banned": "auth.account_banned",
    "channel-suffix": "auth.key_suffix",
    "model-forbidden": "auth.forbidden_model",
    "no-channel": "model.no_channel",
    "user-quota": "quota.exhausted",
    "token-quota-preconsume": "quota.key_exhausted",
}


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def expect_for(path: str) -> str:
    return "models" if path.endswith("/models") else "chat"


def test_every_fixture_has_an_expectation():
    assert {path.stem for path in FIXTURES.glob("*.json")} == set(EXPECTED)
    assert set(EXPECTED.values()) <= set(CATALOGUE)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_names_the_new_api_source_it_comes_from(name):
    fixture = load(name)
    source = fixture["source"]
    assert fixture["name"] == name and source["repo"] in ("Calcium-Ion/new-api", "QuantumNous/new-api")
    assert len(source["commit"]) == 40 and source["files"]
    assert all(":" in where and where.split(":")[0].endswith(".go") for where in source["files"])
    body = json.loads(fixture["response"]["body"])
    assert set(body) == {"error"} and isinstance(body["error"]["message"], str)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_is_classified(name):
    fixture = load(name)
    request, response = fixture["request"], fixture["response"]
    obs = Observation(request["method"], "http://127.0.0.1:3000" + request["path"], status=response["status"],
                      headers=response["headers"], body=response["body"].encode())
    diagnosis = classify(obs, expect=expect_for(request["path"]))
    assert diagnosis is not None and diagnosis.code == EXPECTED[name], diagnosis and diagnosis.to_dict()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_mock_replays_the_fixture_and_the_client_classifies_it(mock_gateway, name):
    # one mock per recording: several share the same request (POST /v1/chat/completions)
    replaying = mock_gateway(MockOptions(key=SENTINEL_KEY, replay=(load_recording(FIXTURES / f"{name}.json"),)))
    request, response = load(name)["request"], load(name)["response"]
    origin = replaying.url.removesuffix("/api")
    with Gateway(replaying.url, SENTINEL_KEY) as gateway:
        obs = gateway.request(request["method"], origin + request["path"],
                              json_body={"model": "gpt-4o-mini", "messages": []} if request["method"] == "POST"
                              else None)
    assert obs.status == response["status"] and json.loads(obs.body) == json.loads(response["body"])
    assert classify(obs, expect=expect_for(request["path"])).code == EXPECTED[name]


def test_check_meets_the_replayed_upstream_401(mock_gateway, run, monkeypatch):
    mock = mock_gateway(MockOptions(key=SENTINEL_KEY, replay=(
        load_recording(FIXTURES / "upstream-401-passthrough.json"),)))
    monkeypatch.setenv("TAOTOKEN_BASE_URL", mock.url)
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("TAOTOKEN_MODEL", "gpt-4o-mini")
    result = run("check", "--chat", "--json")
    data = json.loads(result.stdout)
    assert result.returncode == int(CATALOGUE["auth.upstream_credential"].exit)
    assert data["code"] == "auth.upstream_credential", data
    assert SENTINEL_KEY not in result.output


def test_mock_cli_replays_a_recording_file(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    result = cli("mock", "--replay", str(bad))
    assert result.returncode == 2 and "not a recorded answer" in result.output and "Traceback" not in result.output
