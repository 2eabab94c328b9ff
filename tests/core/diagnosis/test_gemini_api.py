"""The Gemini API probe (core/diagnosis/gemini_api.py) against the real mock gateway on 127.0.0.1, serving the Gemini
API or answering it as an unknown route (as new-api does), and against pytest-httpserver for the answers that say
nothing about the route."""

from __future__ import annotations

import json

from taotoken_cli.cmd.mock import MockGateway, MockOptions
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.diagnosis import gemini_api
from tests.conftest import SENTINEL_KEY

MODEL = "gpt-4o-mini"


def test_a_gateway_serving_the_gemini_api_answers_yes_and_the_question_generates_nothing():
    """The probe is the Gemini API's model list (GET, free), the key in x-goog-api-key as Gemini CLI sends it."""
    with MockGateway(MockOptions(key=SENTINEL_KEY)) as mock:
        found = gemini_api.probe(mock.url, SENTINEL_KEY, {}, model=MODEL)
        records = list(mock.requests)
    assert found.served is True and found.status == 200 and "model list" in found.reason
    assert found.url == f"{mock.url}/v1beta/models"
    assert [(r.method, r.endpoint, r.auth_kind, r.key_masked) for r in records] == [
        ("GET", "gemini_models", "x-goog-api-key", mask_key(SENTINEL_KEY))]
    assert "authorization" not in records[0].headers and "key=" not in records[0].query


def test_a_model_the_list_lacks_is_said_but_the_api_is_served():
    with MockGateway(MockOptions(key=SENTINEL_KEY, models=("gemini-2.5-pro",))) as mock:
        found = gemini_api.probe(mock.url, SENTINEL_KEY, {}, model=MODEL)
    assert found.served is True and f"{MODEL} is not in it" in found.reason


def test_a_gateway_without_it_answers_no_with_what_it_said():
    with MockGateway(MockOptions(key=SENTINEL_KEY, gemini_api=False)) as mock:
        found = gemini_api.probe(mock.url, SENTINEL_KEY, {}, model=MODEL)
    assert found.served is False and found.status == 404 and found.code == gemini_api.CODE
    assert "Invalid URL" in found.reason


def test_a_rejected_key_says_nothing_about_the_route():
    with MockGateway(MockOptions(key=SENTINEL_KEY)) as mock:
        found = gemini_api.probe(mock.url, "sk-someOtherKey0123456789abcdef", {}, model=MODEL)
    assert found.served is None and found.diagnosis is not None
    assert found.code == "auth.invalid_key"


def test_a_200_that_is_no_gemini_model_list_is_a_no(httpserver):
    """An OpenAI-shaped list (a gateway that answers every /models path with its OpenAI list) is not the API."""
    httpserver.expect_request("/api/v1beta/models").respond_with_json({"object": "list", "data": [{"id": MODEL}]})
    found = gemini_api.probe(httpserver.url_for("/api"), SENTINEL_KEY, {}, model=MODEL)
    assert found.served is False and found.status == 200


def test_the_mock_streams_the_gemini_api_as_sse_and_reads_a_query_key():
    import httpx

    with MockGateway(MockOptions(key=SENTINEL_KEY, tokens=3)) as mock:
        url = f"{mock.url}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse&key={SENTINEL_KEY}"
        answer = httpx.post(url, json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
        record = mock.requests[-1]
        doubled = httpx.post(f"{mock.url}/v1/v1beta/models/{MODEL}:generateContent",
                             headers={"x-goog-api-key": SENTINEL_KEY}, json={"contents": []})
    chunks = [json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: ")]
    assert answer.status_code == 200 and len(chunks) == 3
    assert "".join(c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks) == "Hello from the"
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP" and "usageMetadata" in chunks[-1]
    assert (record.auth_kind, record.stream, record.key_masked) == ("query-key", True, mask_key(SENTINEL_KEY))
    assert doubled.status_code == 404 and "doubled-v1" in mock.requests[-1].flags


# --- the one rule (gemini_api.gate): init, config set/sync and doctor ask only when Gemini CLI is a target ---------

def asked(mock) -> int:
    """How often the gateway was asked for the Gemini API (served or not)."""
    return sum(1 for record in mock.requests if "/v1beta/" in record.path)


def init_args(mock, *targets: str) -> list[str]:
    return ["init", "--yes", "--base-url", mock.url, "--model", MODEL, "--key-stdin", "--codex-auth", "auth-json",
            *(arg for target in targets for arg in ("--target", target))]


def test_init_asks_only_when_gemini_cli_is_a_target_and_cc_switch_gets_the_gemini_link_only_then(
        run, home, mock_gateway):
    from taotoken_cli.core.clients import ccswitch

    mock = mock_gateway(MockOptions(key=SENTINEL_KEY))
    assert run(*init_args(mock, "cc-switch", "codex"), input=SENTINEL_KEY).assert_clean().returncode == 0
    links = (home / ".config" / "taotoken" / ccswitch.LINKS_FILE).read_text()
    assert asked(mock) == 0 and "app=gemini" not in links and "app=openclaw" in links
    (home / ".gemini").mkdir()  # Gemini CLI detected: now a target, so the gateway is asked, once
    assert run(*init_args(mock), input=SENTINEL_KEY).assert_clean().returncode == 0
    assert asked(mock) == 1 and (home / ".gemini" / ".env").exists()


def test_init_with_cc_switch_and_gemini_cli_hands_over_the_gemini_link_where_served(run, home, mock_gateway):
    from taotoken_cli.core.clients import ccswitch

    mock = mock_gateway(MockOptions(key=SENTINEL_KEY))
    result = run(*init_args(mock, "cc-switch", "gemini-cli"), input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 0 and asked(mock) == 1
    assert "app=gemini" in (home / ".config" / "taotoken" / ccswitch.LINKS_FILE).read_text()


def test_config_set_base_url_moves_gemini_cli_only_to_a_gateway_that_serves_it(run, home, mock_gateway):
    (home / ".gemini").mkdir()
    first = mock_gateway(MockOptions(key=SENTINEL_KEY))
    assert run(*init_args(first, "gemini-cli", "codex"), input=SENTINEL_KEY).assert_clean().returncode == 0
    env_file = home / ".gemini" / ".env"
    assert f"GOOGLE_GEMINI_BASE_URL={first.url}\n" in env_file.read_text()

    without = mock_gateway(MockOptions(key=SENTINEL_KEY, gemini_api=False))
    moved = run("config", "set", "base_url", without.url, "--yes").assert_clean()
    assert moved.returncode == 0 and asked(without) == 1
    assert "gemini-cli: not moved to" in " ".join(moved.output.split()) and "[url.no_gemini_api]" in moved.output
    assert f"GOOGLE_GEMINI_BASE_URL={first.url}\n" in env_file.read_text()  # kept: it still works there
    assert without.url + "/v1" in (home / ".codex" / "config.toml").read_text()  # the others moved

    served = mock_gateway(MockOptions(key=SENTINEL_KEY))
    assert run("config", "set", "base_url", served.url, "--yes").assert_clean().returncode == 0
    assert asked(served) == 1 and f"GOOGLE_GEMINI_BASE_URL={served.url}\n" in env_file.read_text()
    # the same root again (a model change, a sync): the recorded answer stands, nothing is asked
    assert run("config", "set", "model", "claude-sonnet-4-5", "--yes", "--allow-unlisted").returncode == 0
    assert run("config", "sync", "--yes").assert_clean().returncode == 0
    assert asked(served) == 1


def test_config_sync_asks_when_the_config_file_moved_the_base_url_by_hand(run, home, mock_gateway):
    from tests.conftest import own_config

    (home / ".gemini").mkdir()
    first = mock_gateway(MockOptions(key=SENTINEL_KEY))
    assert run(*init_args(first, "gemini-cli"), input=SENTINEL_KEY).assert_clean().returncode == 0
    without = mock_gateway(MockOptions(key=SENTINEL_KEY, gemini_api=False))
    own_config(home, without.url)
    result = run("config", "sync", "--yes").assert_clean()
    assert asked(without) == 1 and "[url.no_gemini_api]" in result.output
    assert first.url in (home / ".gemini" / ".env").read_text()


def test_a_stalled_probe_ends_at_the_run_deadline_not_after_its_own_timeout():
    """doctor hands its run deadline (ends_at) to the probe: a server that never answers is left at that deadline, not
    after the probe's own, much longer limit (the deadline is 0.5 s away, the limit 60 s)."""
    import time

    from tests.rawserver import RawServer

    with RawServer("stall") as server:
        started = time.monotonic()
        found = gemini_api.probe(server.url, SENTINEL_KEY, {}, model=MODEL, timeout_s=60.0, ends_at=started + 0.5)
        elapsed = time.monotonic() - started
    assert found.served is None and found.code == "net.timeout"
    assert elapsed < 30.0, f"the probe ran {elapsed:.1f} s, past half its own 60 s limit: the deadline was ignored"
