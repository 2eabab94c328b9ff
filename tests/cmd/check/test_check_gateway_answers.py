"""`taotoken check` against answers a new-api, OpenRouter or a misconfigured port really gives (issue 23):
each served on 127.0.0.1 (pytest-httpserver, http.server), each judged by its body and message, not only by
the status or the gateway's headers."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.cmd.check.test_check import CHAT_PATH, MODEL, MODELS_OK, MODELS_PATH, assert_failure
from tests.conftest import SENTINEL_KEY, in_users_shell


@pytest.fixture
def env(home, monkeypatch):
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("TAOTOKEN_MODEL", MODEL)

    def point_at(base: str) -> str:
        monkeypatch.setenv("TAOTOKEN_BASE_URL", base)
        return base

    return point_at

RID = " (request id: 20260101123456789012345)"
NEW_API = {"X-New-Api-Version": "v0.9.0", "X-Oneapi-Request-Id": "20260101123456789012345"}


def test_upstream_401_passed_through_by_new_api_is_the_gateways_credential(env, run, httpserver):
    # new-api's RelayErrorHandler copies the upstream's error object whole (type, code), then appends its request
    # id: the models list accepted our key; the chat's 401 is the channel's OpenAI key.
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK, headers=NEW_API)
    body = {"error": {"message": "Incorrect API key provided: sk-proj-********************abcd. You can find your "
                                 "API key at https://platform.openai.com/account/api-keys." + RID,
                      "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}
    httpserver.expect_request(CHAT_PATH).respond_with_json(body, status=401, headers=NEW_API)
    env(httpserver.url_for("/api"))
    result = run("check", "--chat")
    assert_failure(result, "auth.upstream_credential")
    assert "copy the key again" not in result.output
    assert "report it to the gateway operator with request id 20260101123456789012345" in result.output


def test_new_api_own_invalid_token_is_still_the_users_key(env, run, httpserver):
    body = {"error": {"message": "无效的令牌" + RID, "type": "new_api_error"}}
    httpserver.expect_request(MODELS_PATH).respond_with_json(body, status=401, headers=NEW_API)
    env(httpserver.url_for("/api"))
    assert_failure(run("check"), "auth.invalid_key")


def test_redirect_fix_names_the_location_with_its_port_and_path(env, run, httpserver):
    httpserver.expect_request(MODELS_PATH).respond_with_data(
        "", status=308, headers={"Location": "https://gw.example:8443/relay/api/v1/models"})
    env(httpserver.url_for("/api"))
    result = run("check")
    assert_failure(result, "url.redirect")
    assert "taotoken config set base_url https://gw.example:8443/relay/api" not in result.output  # env-configured
    assert in_users_shell("export TAOTOKEN_BASE_URL=https://gw.example:8443/relay/api") in result.output
    assert f"https://{httpserver.host}/api" not in result.output


def test_relative_redirect_is_resolved_against_the_url_called(env, run, httpserver):
    httpserver.expect_request(MODELS_PATH).respond_with_data("", status=302, headers={"Location": "/new/v1/models"})
    base = env(httpserver.url_for("/api"))
    result = run("check")
    assert_failure(result, "url.redirect")
    assert in_users_shell(f"export TAOTOKEN_BASE_URL={base.removesuffix('/api')}/new") in result.output


def test_model_list_over_one_mebibyte_parses(env, run, httpserver):
    models = [{"id": f"provider-{i:05d}/some-rather-long-model-name-{i:05d}", "object": "model",
               "owned_by": "x" * 40} for i in range(12000)] + [{"id": MODEL, "object": "model"}]
    payload = json.dumps({"object": "list", "data": models})
    assert len(payload) > 1 << 20
    httpserver.expect_request(MODELS_PATH).respond_with_data(payload, content_type="application/json")
    env(httpserver.url_for("/api"))
    result = run("check", "--json")
    assert result.returncode == 0, result.output
    assert json.loads(result.stdout)["ok"] is True


def test_error_bodies_keep_their_own_smaller_cap(env, run, httpserver):
    # An error page is read for diagnosis only: a huge one is cut (and still diagnosed), not read whole.
    httpserver.expect_request(MODELS_PATH).respond_with_data("x" * (3 << 20), status=500)
    env(httpserver.url_for("/api"))
    assert_failure(run("check"), "server.error")


@pytest.fixture
def plain_http_port():
    class Quiet(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_https_to_a_plain_http_port_says_so_first(env, run, plain_http_port):
    env(f"https://127.0.0.1:{plain_http_port}/api")
    result = run("check")
    assert_failure(result, "url.tls_to_plain_http")
    assert in_users_shell(f"export TAOTOKEN_BASE_URL=http://127.0.0.1:{plain_http_port}/api") in result.output
    assert "certificate" not in result.output.split("fix:")[0]


def test_407_with_no_proxy_configured_does_not_ask_for_the_proxy_url(env, run, httpserver):
    httpserver.expect_request(MODELS_PATH).respond_with_data("", status=407,
                                                             headers={"Proxy-Authenticate": 'Basic realm="corp"'})
    env(httpserver.url_for("/api"))
    result = run("check")
    result.assert_clean()
    assert result.returncode == 7 and "proxy.auth_required:" in result.output, result.output
    assert "put the credentials in the proxy URL" not in result.output
    assert "no proxy is configured here" in result.output


def test_openrouter_no_allowed_providers_is_a_routing_choice_not_a_wait(env, run, httpserver):
    httpserver.expect_request("/api/v1/models").respond_with_json(MODELS_OK)
    body = {"error": {"code": 503, "message": "No allowed providers are available for the selected model."}}
    httpserver.expect_request(CHAT_PATH).respond_with_json(body, status=503)
    env(httpserver.url_for("/api"))
    result = run("check", "--chat")
    assert_failure(result, "model.no_channel")
    assert "openrouter.ai/settings" in result.output
    assert "wait" not in result.output.lower()


def test_no_sentinel_key_in_any_of_these_outputs(env, run, httpserver):
    httpserver.expect_request(MODELS_PATH).respond_with_data("", status=308, headers={"Location": "/x/v1/models"})
    env(httpserver.url_for("/api"))
    assert SENTINEL_KEY not in run("check", "--json").output
