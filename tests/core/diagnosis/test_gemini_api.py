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


def test_a_gateway_serving_the_gemini_api_answers_yes_and_the_key_goes_in_x_goog_api_key():
    with MockGateway(MockOptions(key=SENTINEL_KEY)) as mock:
        found = gemini_api.probe(mock.url, SENTINEL_KEY, MODEL, {})
        record = mock.requests[-1]
    assert found.served is True and found.status == 200
    assert found.url == f"{mock.url}/v1beta/models/{MODEL}:generateContent"
    assert (record.endpoint, record.auth_kind, record.key_masked, record.model) == (
        "gemini", "x-goog-api-key", mask_key(SENTINEL_KEY), MODEL)
    assert "authorization" not in record.headers and "key=" not in record.query


def test_a_gateway_without_it_answers_no_with_what_it_said():
    with MockGateway(MockOptions(key=SENTINEL_KEY, gemini_api=False)) as mock:
        found = gemini_api.probe(mock.url, SENTINEL_KEY, MODEL, {})
    assert found.served is False and found.status == 404
    assert "Invalid URL" in found.reason


def test_a_rejected_key_says_nothing_about_the_route():
    with MockGateway(MockOptions(key=SENTINEL_KEY)) as mock:
        found = gemini_api.probe(mock.url, "sk-someOtherKey0123456789abcdef", MODEL, {})
    assert found.served is None and found.diagnosis is not None
    assert found.diagnosis.code == "auth.invalid_key"


def test_a_200_that_is_no_gemini_answer_is_a_no(httpserver):
    httpserver.expect_request(f"/api/v1beta/models/{MODEL}:generateContent").respond_with_json(
        {"choices": [{"message": {"content": "OK"}}]})
    found = gemini_api.probe(httpserver.url_for("/api"), SENTINEL_KEY, MODEL, {})
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
