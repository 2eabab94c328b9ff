"""`taotoken check` / `explain` against real local servers: every catalogue entry reproduced.

pytest-httpserver plays each gateway style (one-api, new-api, LiteLLM, OpenRouter, Anthropic,
OpenAI, FastAPI, Cloudflare pages); tests/rawserver.py does resets, stalls and broken streams;
a local HTTPS server with a self-signed certificate (made with the openssl CLI) does TLS. Most
cases run the real CLI entry point in-process (fast); the output contracts (quiet, --code,
--json, start-up imports) run it as a subprocess exactly as a shell would.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from werkzeug import Request, Response

from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.diagnosis.catalogue import CATALOGUE
from tests.conftest import SENTINEL_KEY, Result, in_users_shell, python_path
from tests.rawserver import FullBacklog, RawServer, closed_port
from tests.timing import assert_within, judged

MODEL = "gpt-4o-mini"
MODELS_OK = {"object": "list", "data": [{"id": MODEL, "object": "model"}, {"id": "qwen-max", "object": "model"},
                                        {"id": "gpt-4o", "object": "model"}], "success": True}
MODELS_PATH = "/api/v1/models"
CHAT_PATH = "/api/v1/chat/completions"
RID = " (request id: 2025022112345678901)"
CHAT_OK = {"id": "chatcmpl-1", "object": "chat.completion", "model": MODEL,
           "choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}, "finish_reason": "length"}],
           "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}}


def oa(message: str, type_: str | None = "invalid_request_error", code=None) -> dict:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def sse(*events: str) -> str:
    return "".join(f"data: {e}\n\n" for e in events)


ROLE_CHUNK = json.dumps({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant"}}]})
CONTENT_CHUNK = json.dumps({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "OK"}}]})
STOP_CHUNK = json.dumps({"object": "chat.completion.chunk",
                         "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
USAGE_CHUNK = json.dumps({"object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": 10}})
PAGE = "<!DOCTYPE html><html><head><title>New API</title></head><body><div id=root></div></body></html>"
CF_524 = "<!DOCTYPE html><html><head><title>taotoken.net | 524: A timeout occurred</title></head></html>"
ECHO = object()  # placeholder: the server echoes the Authorization header it received into the body
HTTP_DATE_IN_60S = object()


# Each case: id, models reply, chat reply (None: not requested), extra args, expected code.
# A reply is (status, body, headers). The exit status comes from the catalogue entry, and is
# also spelled out for the classes in EXPECTED_EXIT below to pin the contract.
CASES = [
    # --- 401 -----------------------------------------------------------------------------------
    ("oneapi-401", (401, {"error": {"message": "无效的令牌" + RID, "type": "one_api_error"}}, {}), None, [],
     "auth.invalid_key"),
    ("newapi-401-en", (401, oa("Invalid token" + RID, "new_api_error", ""), {"X-New-Api-Version": "v0.9.0"}),
     None, [], "auth.invalid_key"),
    ("litellm-401-echoes-key", (401, ECHO, {}), None, [], "auth.invalid_key"),
    ("openrouter-401", (401, {"error": {"code": 401, "message": "No auth credentials found"}}, {}), None, [],
     "auth.invalid_key"),
    ("openai-401-upstream", (401, oa("Incorrect API key provided: sk-proj-***abcd. You can find your API key at "
                                     "https://platform.openai.com/account/api-keys.", code="invalid_api_key"), {}),
     None, [], "auth.upstream_credential"),
    ("anthropic-401-upstream", (401, {"type": "error", "error": {"type": "authentication_error",
                                                                 "message": "invalid x-api-key"},
                                      "request_id": "req_011"}, {}), None, [], "auth.upstream_credential"),
    ("oneapi-401-no-token", (401, {"error": {"message": "未提供令牌" + RID, "type": "one_api_error"}}, {}), None, [],
     "auth.key_not_received"),
    ("oneapi-401-expired", (401, {"error": {"message": "该令牌已过期" + RID, "type": "one_api_error"}}, {}), None, [],
     "auth.expired_key"),
    ("oneapi-401-disabled", (401, {"error": {"message": "该令牌状态不可用" + RID, "type": "one_api_error"}}, {}), None,
     [], "auth.key_disabled"),
    ("oneapi-401-key-quota", (401, {"error": {"message": "令牌 dev（#12）额度已用尽" + RID, "type": "one_api_error"}},
                              {}), None, [], "quota.key_exhausted"),
    # --- 403 -----------------------------------------------------------------------------------
    ("oneapi-403-banned", (403, {"error": {"message": "用户已被封禁", "type": "one_api_error"}}, {}), None, [],
     "auth.account_banned"),
    ("oneapi-403-ip", (403, {"error": {"message": "该令牌只能在指定网段使用：10.0.0.0/8，当前 ip：203.0.113.9",
                                       "type": "one_api_error"}}, {}), None, [], "auth.ip_not_allowed"),
    ("newapi-403-ip", (403, oa("您的 IP 不在令牌允许访问的列表中", "new_api_error", "access_denied"), {}), None, [],
     "auth.ip_not_allowed"),
    ("oneapi-403-channel", (403, {"error": {"message": "普通用户不支持指定渠道", "type": "one_api_error"}}, {}), None,
     [], "auth.key_suffix"),
    ("newapi-403-group", (403, oa("无权访问 vip 分组", "new_api_error", ""), {}), None, [], "auth.forbidden_group"),
    ("anthropic-403", (403, {"type": "error", "error": {"type": "permission_error",
                                                        "message": "Your API key does not have permission"}}, {}),
     None, [], "auth.forbidden"),
    ("openrouter-403", (403, {"error": {"code": 403, "message": "Your chosen model requires moderation",
                                        "metadata": {"reasons": ["x"]}}}, {}), None, [], "auth.forbidden"),
    ("litellm-403-model", (200, MODELS_OK, {}),
     (401, oa("key not allowed to access model. This key can only access models=['qwen-max']. Tried to access "
              "gpt-4o-mini", "key_model_access_denied", "401"), {}), ["--chat"], "auth.forbidden_model"),
    ("oneapi-403-model", (200, MODELS_OK, {}),
     (403, {"error": {"message": "该令牌无权使用模型：gpt-4o-mini", "type": "one_api_error"}}, {}), ["--chat"],
     "auth.forbidden_model"),
    ("newapi-403-balance", (200, MODELS_OK, {}),
     (403, oa("用户额度不足, 剩余额度: ＄0.000000", "new_api_error", "insufficient_user_quota"), {}), ["--chat"],
     "quota.exhausted"),
    # --- 404 / URL -------------------------------------------------------------------------------
    ("openai-404-doubled", (404, oa("Invalid URL (GET /v1/v1/models)", code=""), {}), None, [], "url.doubled_v1"),
    ("oneapi-404-endpoint", (404, oa("Invalid URL (GET /v1/chat/completions/v1/models)" + RID, code=""), {}), None,
     [], "url.endpoint_in_base"),
    ("oneapi-404-query", (404, oa("Invalid URL (GET /api?utm_source=x/v1/models)" + RID, code=""), {}), None, [],
     "url.query_string"),
    ("fastapi-404", (404, {"detail": "Not Found"}, {}), None, [], "url.not_found"),
    ("openrouter-404", (404, {"error": {"code": 404, "message": "Not Found"}}, {}), None, [], "url.not_found"),
    ("html-200", (200, PAGE, {"Content-Type": "text/html; charset=utf-8"}), None, [], "url.html_page"),
    ("dashboard-200-success-false", (200, {"success": False, "message": "无权进行此操作，未登录且未提供 access token"},
                                     {}), None, [], "url.dashboard_api"),
    ("redirect-301", (301, "", {"Location": "https://gw.example/api/v1/models"}), None, [], "url.redirect"),
    ("oneapi-501", (501, oa("API not implemented", "one_api_error", "api_not_implemented"), {}), None, [],
     "url.not_implemented"),
    ("anthropic-404-model", (200, MODELS_OK, {}),
     (404, {"type": "error", "error": {"type": "not_found_error", "message": "model: gpt-4o-mini"}}, {}), ["--chat"],
     "model.not_found"),
    ("openai-404-model", (200, MODELS_OK, {}),
     (404, oa("The model `gpt-4o-mini` does not exist or you do not have access to it.", code="model_not_found"),
      {}), ["--chat"], "model.not_found"),
    ("model-not-listed", (200, MODELS_OK, {}), None, ["--model", "gpt-4o-mni"], "model.not_found"),
    ("oneapi-503-no-channel", (200, MODELS_OK, {}),
     (503, oa("当前分组 default 下对于模型 gpt-4o-mini 无可用渠道" + RID, "one_api_error"), {}), ["--chat"],
     "model.no_channel"),
    ("newapi-400-no-model", (200, MODELS_OK, {}),
     (400, oa("未指定模型名称，模型名称不能为空", "new_api_error", ""), {}), ["--chat"], "model.missing"),
    # --- 429 / quota -----------------------------------------------------------------------------
    ("openai-429-rate", (429, oa("Rate limit reached for gpt-4o-mini in organization org-x on requests per min "
                                 "(RPM): Limit 3, Used 3, Requested 1.", "requests", "rate_limit_exceeded"),
                         {"Retry-After": "20"}), None, [], "rate.limited"),
    ("anthropic-429-date", (429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
                            {"Retry-After": HTTP_DATE_IN_60S}), None, [], "rate.limited"),
    ("litellm-429-float", (429, oa("LiteLLM Rate Limit Handler for rate limit type = key. Crossed TPM / RPM / Max "
                                   "Parallel Request Limit. current rpm: 10, rpm limit: 10", "None", "429"),
                           {"Retry-After": "37.41"}), None, [], "rate.limited"),
    ("openrouter-429", (429, {"error": {"code": 429, "message": "Rate limit exceeded: free-models-per-min"}}, {}),
     None, [], "rate.limited"),
    ("oneapi-429-empty", (429, "", {}), None, [], "rate.limited"),
    ("newapi-429-concurrency", (429, oa("您已达到并发请求限制：最多同时进行 2 个请求，请等待已有请求完成",
                                        "new_api_error", "token_concurrency_limit_reached"), {}), None, [],
     "rate.concurrency"),
    ("oneapi-429-saturated", (429, oa("当前分组上游负载已饱和，请稍后再试" + RID, "one_api_error"), {}), None, [],
     "upstream.saturated"),
    ("openai-429-quota", (429, oa("You exceeded your current quota, please check your plan and billing details.",
                                  "insufficient_quota", "insufficient_quota"), {"Retry-After": "20"}), None, [],
     "quota.exhausted"),
    ("openrouter-402", (402, {"error": {"code": 402, "message": "Insufficient credits",
                                        "metadata": {"limit_source": "openrouter_credits"}}}, {}), None, [],
     "quota.exhausted"),
    # --- 5xx -------------------------------------------------------------------------------------
    ("oneapi-500", (500, oa("do request failed: dial tcp: i/o timeout", "one_api_error", "do_request_failed"), {}),
     None, [], "server.error"),
    ("cloudflare-524", (524, CF_524, {"Content-Type": "text/html"}), None, [], "server.timeout"),
    ("anthropic-529", (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, {}),
     None, [], "upstream.saturated"),
    # --- 2xx that is not an answer, other 4xx -------------------------------------------------------
    ("text-200", (200, "hello", {"Content-Type": "text/plain"}), None, [], "resp.not_json"),
    ("json-200-no-data", (200, {"object": "list"}, {}), None, [], "resp.no_models"),
    ("json-200-error", (200, oa("upstream returned garbage", "upstream_error"), {}), None, [], "resp.error_body"),
    ("chat-200-no-choices", (200, MODELS_OK, {}), (200, {"id": "x", "object": "chat.completion"}, {}), ["--chat"],
     "resp.no_choices"),
    ("chat-400", (200, MODELS_OK, {}), (400, oa("max_tokens must be at least 1", code="invalid_value"), {}),
     ["--chat"], "request.invalid"),
    ("newapi-413", (413, oa("read request body failed", "new_api_error", "read_request_body_failed"), {}), None, [],
     "request.too_large"),
    # --- streams ---------------------------------------------------------------------------------
    ("sse-error-event", (200, MODELS_OK, {}),
     (200, sse(ROLE_CHUNK) + 'event: error\ndata: {"error":{"message":"upstream overloaded","type":"server_error"}}'
      "\n\n", {"Content-Type": "text/event-stream"}), ["--stream"], "stream.error_event"),
    ("sse-anthropic-error", (200, MODELS_OK, {}),
     (200, 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
      {"Content-Type": "text/event-stream"}), ["--stream"], "stream.error_event"),
    ("sse-empty", (200, MODELS_OK, {}),
     (200, ": OPENROUTER PROCESSING\n\n" + sse(ROLE_CHUNK, STOP_CHUNK, "[DONE]"),
      {"Content-Type": "text/event-stream"}), ["--stream"], "stream.empty"),
    ("sse-no-done", (200, MODELS_OK, {}), (200, sse(ROLE_CHUNK, CONTENT_CHUNK), {"Content-Type": "text/event-stream"}),
     ["--stream"], "stream.truncated"),
    ("sse-json-instead", (200, MODELS_OK, {}), (200, CHAT_OK, {}), ["--stream"], "stream.not_sse"),
]

EXPECTED_EXIT = {"auth.": Exit.AUTH, "quota.": Exit.RATE_QUOTA, "rate.": Exit.RATE_QUOTA, "url.": Exit.NOT_FOUND,
                 "net.": Exit.NETWORK, "proxy.": Exit.NETWORK, "resp.": Exit.BAD_RESPONSE,
                 "stream.": Exit.BAD_RESPONSE, "server.": Exit.SERVER, "config.": Exit.CONFIG}
EXIT_EXCEPTIONS = {"auth.missing_key": Exit.CONFIG, "auth.upstream_credential": Exit.SERVER,
                   "model.missing": Exit.CONFIG, "url.plain_http": Exit.CONFIG}


def expected_exit(code: str) -> int:
    if code in EXIT_EXCEPTIONS:
        return EXIT_EXCEPTIONS[code]
    for prefix, exit_code in EXPECTED_EXIT.items():
        if code.startswith(prefix):
            return exit_code
    return CATALOGUE[code].exit


@pytest.fixture
def env(home, monkeypatch):
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("TAOTOKEN_MODEL", MODEL)

    def point_at(base: str) -> str:
        monkeypatch.setenv("TAOTOKEN_BASE_URL", base)
        return base

    return point_at


def _respond(reply):
    status, body, headers = reply
    headers = dict(headers)
    if headers.get("Retry-After") is HTTP_DATE_IN_60S:
        headers["Retry-After"] = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=60), usegmt=True)

    def handler(request: Request) -> Response:
        payload = body
        if payload is ECHO:  # LiteLLM quotes the key it received
            received = request.headers.get("Authorization", "").removeprefix("Bearer ")
            payload = oa(f"Authentication Error, Invalid proxy server token passed. Received API Key = {received}, "
                         "Key Hash (Token) =d0c8", "token_not_found_in_db", "401")
        if isinstance(payload, (dict, list)):
            data, ctype = json.dumps(payload, ensure_ascii=False), "application/json"
        else:
            data, ctype = payload, "text/plain"
        hdrs = {"Content-Type": ctype, **headers}
        return Response(data, status=status, headers=hdrs)

    return handler


def assert_failure(result: Result, code: str, exit_code: int | None = None) -> None:
    result.assert_clean()
    assert result.returncode == (expected_exit(code) if exit_code is None else exit_code), result.output
    assert result.returncode == int(CATALOGUE[code].exit)
    assert f"{code}:" in result.output, result.output
    assert "fix:" in result.output, result.output
    # The catalogue's `taotoken config set …` becomes the export that really supplies the value (these cases
    # configure through TAOTOKEN_* variables): compare the text before it, or, where the fix is that command,
    # the export itself.
    first = CATALOGUE[code].fixes[0]
    before = first.text.split("{")[0]  # the prose before the first field of the (English) template
    command = dict(first.commands).get("command")
    if before or command is None or command.sets is None:
        if command is not None and command.installs:  # shown for the installer taotoken runs under
            from taotoken_cli.core.platform.installer import add_package

            command = add_package(command.installs)
        first_fix = (before or (command.line if command else ""))[:25]
        assert first_fix.strip(), code
        assert first_fix in result.output or code in ("auth.missing_key", "config.missing", "config.invalid",
                                                      "config.unparsable", "model.not_found"), result.output
    else:
        value = command.value.replace("{base}", "").replace("{host}", "")
        assert "fix: " + in_users_shell(f"export TAOTOKEN_{command.sets.upper()}={value}") in result.output, \
            result.output
        assert "   (it is set in this shell" in result.output, result.output


@pytest.mark.parametrize("case_id,models,chat,args,code", CASES, ids=[c[0] for c in CASES])
def test_gateway_replies(httpserver, env, run, case_id, models, chat, args, code):
    httpserver.expect_request(MODELS_PATH, method="GET").respond_with_handler(_respond(models))
    if chat is not None:
        httpserver.expect_request(CHAT_PATH, method="POST").respond_with_handler(_respond(chat))
    env(httpserver.url_for("/api"))
    result = run("check", *args)
    assert_failure(result, code)
    # the key went out as a Bearer header, and nowhere else
    first = httpserver.log[0][0]
    assert first.headers["Authorization"] == f"Bearer {SENTINEL_KEY}"
    assert first.headers["User-Agent"].startswith("taotoken-cli/")


def test_server_words_are_quoted_and_request_id_kept(httpserver, env, run):
    httpserver.expect_request(MODELS_PATH).respond_with_json(
        {"error": {"message": "无效的令牌" + RID, "type": "one_api_error"}}, status=401)
    env(httpserver.url_for("/api"))
    result = run("check")
    assert "server said: 无效的令牌 (request id: 2025022112345678901)" in result.stderr


def test_echoed_key_is_masked(httpserver, env, run):
    httpserver.expect_request(MODELS_PATH).respond_with_handler(_respond((401, ECHO, {})))
    env(httpserver.url_for("/api"))
    for args in ([], ["-q"], ["--json"]):
        result = run("check", *args).assert_clean()
        assert "Received API Key = sk-SE…WXYZ" in result.output


def test_retry_after_seconds_date_and_float(httpserver, env, run):
    env(httpserver.url_for("/api"))
    rate = oa("Rate limit reached", "requests", "rate_limit_exceeded")
    for header, low, high in (("20", 20, 20), ("37.41", 37.41, 37.41), (HTTP_DATE_IN_60S, 50, 61)):
        httpserver.clear()
        httpserver.expect_request(MODELS_PATH).respond_with_handler(_respond((429, rate, {"Retry-After": header})))
        data = json.loads(run("check", "--json").stdout)
        assert low <= data["error"]["retry_after_s"] <= high
        assert data["error"]["retry"] is True


def test_quota_429_never_says_retry(httpserver, env, run):
    httpserver.expect_request(MODELS_PATH).respond_with_json(
        oa("You exceeded your current quota", "insufficient_quota", "insufficient_quota"), status=429,
        headers={"Retry-After": "20"})
    env(httpserver.url_for("/api"))
    result = run("check")
    assert "quota.exhausted" in result.stderr and "retry after" not in result.stderr
    data = json.loads(run("check", "--json").stdout)
    assert data["error"]["retry"] is False and data["error"]["retry_after_s"] is None


def test_model_not_listed_shows_close_matches(httpserver, env, run):
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK)
    env(httpserver.url_for("/api"))
    result = run("check", "--model", "GPT-4o-mini")
    assert result.returncode == Exit.NOT_FOUND
    assert "close matches: gpt-4o-mini" in result.stderr
    assert "fix: pass --model gpt-4o-mini" in result.stderr  # the model came from --model: fixed there


def test_configured_model_not_listed_fails_in_every_mode(httpserver, env, run, monkeypatch):
    """The most common mistake must not be silent in .bashrc: -q and --code fail too (issue 13)."""
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK)
    env(httpserver.url_for("/api"))
    monkeypatch.setenv("TAOTOKEN_MODEL", "qwen-mx")
    result = run("check").assert_clean()
    assert result.returncode == Exit.NOT_FOUND and result.stdout == ""
    assert "model.not_found" in result.stderr and "close matches: qwen-max" in result.stderr
    assert "fix: " + in_users_shell("export TAOTOKEN_MODEL=qwen-max") in result.stderr  # where the model comes from
    quiet = run("check", "-q").assert_clean()
    assert quiet.returncode == Exit.NOT_FOUND and quiet.stdout == ""
    assert quiet.stderr.startswith("taotoken: model.not_found:") and "fix: " + in_users_shell(
        "export TAOTOKEN_MODEL=qwen-max") in quiet.stderr and len(quiet.stderr.splitlines()) == 1
    code = run("check", "--code").assert_clean()
    assert code.returncode == Exit.NOT_FOUND and code.stdout == "200\n"
    data = json.loads(run("check", "--json").stdout)
    assert data["code"] == "model.not_found" and data["model_listed"] is False
    assert data["close_matches"] == ["qwen-max"] and data["exit_code"] == Exit.NOT_FOUND


def test_allow_unlisted_makes_an_unlisted_model_a_note(httpserver, env, run, monkeypatch):
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK)
    httpserver.expect_request(CHAT_PATH, method="POST").respond_with_json(CHAT_OK)
    env(httpserver.url_for("/api"))
    monkeypatch.setenv("TAOTOKEN_MODEL", "qwen-mx")
    result = run("check", "--allow-unlisted").assert_clean()
    assert result.returncode == 0
    assert "model qwen-mx NOT listed (close: qwen-max) (allowed: --allow-unlisted)" in result.stdout
    assert run("check", "-q", "--allow-unlisted").returncode == 0
    for args in (["--chat", "--allow-unlisted"], ["--chat"]):  # with --chat the chat decides: this one answers
        chat = run("check", *args, "--json").assert_clean()
        data = json.loads(chat.stdout)
        assert chat.returncode == 0 and data["ok"] is True and data["model_listed"] is False
        assert data["chat"]["status"] == 200


def test_an_empty_list_names_the_way_out_for_gateways_that_hide_models(httpserver, env, run, monkeypatch):
    httpserver.expect_request(MODELS_PATH).respond_with_json({"object": "list", "data": []})
    env(httpserver.url_for("/api"))
    monkeypatch.setenv("TAOTOKEN_MODEL", "hidden-model")
    result = run("check").assert_clean()
    assert result.returncode == Exit.NOT_FOUND
    assert "lists no models for this key" in result.stderr and "--allow-unlisted" in result.stderr
    assert "fix: see the models this key can use: taotoken models" in result.stderr


@pytest.mark.parametrize("given,note", [
    ("/api/v1/v1", "note: base URL: removed a repeated /v1 (2x)"),
    ("/api/v1/chat/completions", "note: base URL: removed the endpoint path /chat/completions"),
])
def test_text_mode_shows_what_was_cleaned_on_stderr(httpserver, env, run, given, note):
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK)
    base = env(httpserver.url_for("/api"))
    result = run("check", "--base-url", base.removesuffix("/api") + given).assert_clean()
    assert result.returncode == 0, result.output
    assert result.stdout.startswith("OK ") and len(result.stdout.splitlines()) == 1
    assert note in result.stderr
    assert run("check", "-q", "--base-url", base.removesuffix("/api") + given).output == ""


def test_success_line_chat_and_stream(httpserver, env, run):
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK)
    httpserver.expect_request(CHAT_PATH, method="POST").respond_with_json(CHAT_OK)
    base = env(httpserver.url_for("/api"))
    result = run("check", "--chat").assert_clean()
    assert result.returncode == 0 and result.stderr == ""
    line = result.stdout.strip()
    assert line.startswith(f"OK 200 GET {base}/v1/models ") and " ms · 3 models · model gpt-4o-mini listed" in line
    assert "· chat 200 " in line
    body = json.loads(httpserver.log[-1][0].get_data())
    assert body["max_tokens"] == 1 and body["model"] == MODEL
    httpserver.clear()
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK)
    httpserver.expect_request(CHAT_PATH, method="POST").respond_with_data(
        sse(ROLE_CHUNK, CONTENT_CHUNK, STOP_CHUNK, USAGE_CHUNK, "[DONE]"), content_type="text/event-stream")
    result = run("check", "--stream", "--json").assert_clean()
    data = json.loads(result.stdout)
    assert result.returncode == 0 and data["ok"] and data["chat"]["reply"] == "OK"


# --- misbehaving servers (tests/rawserver.py) -----------------------------------------------------

def test_slow_server_past_the_timeout(env, run):
    with RawServer("stall") as server:
        result, elapsed, reference = judged(run, lambda url: ["check", "--base-url", url, "--timeout", "0.6"],
                                            server.url + "/api")
    assert_failure(result, "net.timeout")
    assert_within(elapsed, 0.6, reference)


def test_slow_stream_is_bounded_by_the_total_timeout(env, run, httpserver):
    with RawServer("slow_stream") as server:
        result, elapsed, reference = judged(run, lambda url: ["check", "--stream", "--base-url", url, "--timeout", "1"],
                                            server.url + "/api")
    # the trickle never pauses longer than the read timeout: only the total budget stops it
    assert_failure(result, "net.timeout")
    assert re.search(r"\d+ content chunks? arrived", result.stderr)
    assert_within(elapsed, 1, reference)


def test_connection_reset_mid_response(env, run):
    with RawServer("reset_mid_body") as server:
        env(server.url + "/api")
        result = run("check")
    assert_failure(result, "net.reset")


def test_stream_cut_mid_way(env, run):
    with RawServer("truncated_stream") as server:
        env(server.url + "/api")
        result = run("check", "--stream")
    assert_failure(result, "stream.truncated")
    assert "2 content chunks" in result.stderr


def test_proxy_asking_for_credentials(env, run, monkeypatch):
    with RawServer("proxy_407") as proxy:
        env("http://gateway.test/api")
        monkeypatch.setenv("TAOTOKEN_ALLOW_HTTP", "1")  # plain http to a non-loopback name: opt in
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        result = run("check")
        assert proxy.requests and proxy.requests[0].startswith(b"GET http://gateway.test/api/v1/models")
    assert_failure(result, "proxy.auth_required")


def test_corrupt_body_encoding(env, run):
    with RawServer("bad_gzip") as server:
        env(server.url + "/api")
        result = run("check")
    assert_failure(result, "resp.not_json")  # the bytes arrived; their gzip encoding is corrupt


# --- network failures -----------------------------------------------------------------------------

def test_connection_refused(env, run):
    env(f"http://127.0.0.1:{closed_port()}/api")
    assert_failure(run("check"), "net.refused")


def test_proxy_variable_pointing_at_a_closed_port(env, run, monkeypatch, httpserver):
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK)
    from tests.proxyserver import GATEWAY_NAME

    # a loopback gateway never goes through a proxy: the gateway is named (plain http to a name needs the opt-in)
    env(httpserver.url_for("/api").replace("localhost", GATEWAY_NAME))
    monkeypatch.setenv("TAOTOKEN_ALLOW_HTTP", "1")
    proxy = f"http://127.0.0.1:{closed_port()}"
    monkeypatch.setenv("HTTP_PROXY", proxy)
    result = run("check")
    assert_failure(result, "proxy.unreachable")
    assert f"proxy: {proxy}" in result.stderr
    assert in_users_shell(f"export NO_PROXY={GATEWAY_NAME}") in result.stderr  # the gateway's host, filled in
    # --no-proxy goes direct and works (the same gateway by its loopback address: only the proxy knows the name)
    env(httpserver.url_for("/api"))
    ok = run("check", "--no-proxy").assert_clean()
    assert ok.returncode == 0 and ok.stdout.startswith("OK 200")


def test_socks_proxy_without_socksio(env, run, monkeypatch):
    pytest.importorskip  # noqa: B018 - documents intent: this test needs socksio to be absent
    try:
        import socksio  # noqa: F401
        pytest.skip("socksio is installed here; the missing-extra case cannot be reproduced")
    except ImportError:
        pass
    env("http://gateway.test/api")
    monkeypatch.setenv("TAOTOKEN_ALLOW_HTTP", "1")  # plain http to a non-loopback name: opt in
    monkeypatch.setenv("ALL_PROXY", f"socks5://127.0.0.1:{closed_port()}")
    result = run("check")
    assert_failure(result, "proxy.socks_unsupported")
    # the command for the installer taotoken runs under: this virtual environment's pip (core.platform.installer)
    assert f"{sys.executable} -m pip install 'httpx[socks]'" in result.stderr


def test_unresolvable_host(env, run, monkeypatch):
    env("http://taotoken-check-test.invalid/api")
    monkeypatch.setenv("TAOTOKEN_ALLOW_HTTP", "1")  # explicit opt-in: the request goes as far as DNS
    result = run("check", "--timeout", "3")
    assert_failure(result, "net.dns")
    assert "getent hosts taotoken-check-test.invalid" in result.stderr


def test_key_is_never_sent_over_plain_http_to_another_host(env, run, monkeypatch):
    """No connection is even attempted (a .invalid name: a regression could only reach DNS, which fails)."""
    env("http://taotoken-check-test.invalid/api")
    result = run("check", "--timeout", "3")
    assert_failure(result, "url.plain_http")
    assert in_users_shell("export TAOTOKEN_ALLOW_HTTP=1") in result.stderr
    assert "https://taotoken-check-test.invalid/api" in result.stderr


def test_connect_timeout(env, run):
    with FullBacklog() as server:
        result, elapsed, reference = judged(run, lambda url: ["check", "--base-url", url, "--timeout", "0.8"],
                                            f"http://127.0.0.1:{server.port}/api")
    assert_failure(result, "net.connect_timeout")
    assert_within(elapsed, 0.8, reference)


@pytest.fixture
def https_server(tmp_path: Path):
    """A local HTTPS server with a fresh self-signed certificate (not trusted by anyone)."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl CLI is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=30)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            body = json.dumps(MODELS_OK).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}", cert
    server.shutdown()
    server.server_close()


def test_tls_untrusted_certificate(env, run, https_server, monkeypatch):
    url, cert = https_server
    env(url + "/api")
    result = run("check")
    assert_failure(result, "net.tls")
    assert "CERTIFICATE_VERIFY_FAILED" in result.stderr, result.stderr  # the TLS library's own words, as they came
    # the printed fix works: trusting that certificate makes the check pass
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    ok = run("check").assert_clean()
    assert ok.returncode == 0, ok.output


# --- configuration problems (no request is made) --------------------------------------------------

def test_missing_key(run, home):
    result = run("check")
    assert_failure(result, "auth.missing_key", Exit.CONFIG)
    assert "taotoken init" in result.stderr


def test_chat_without_model(run, env, monkeypatch):
    env("http://127.0.0.1:9/api")
    monkeypatch.delenv("TAOTOKEN_MODEL")
    assert_failure(run("check", "--chat"), "config.missing", Exit.CONFIG)


def test_unusable_base_url(run, env):
    env("ftp://taotoken.net/api")
    result = run("check")
    assert_failure(result, "config.invalid", Exit.CONFIG)
    # The fix sets the value where it comes from (here the variable), to TaoToken's own URL: no placeholder.
    assert in_users_shell("export TAOTOKEN_BASE_URL=https://taotoken.net/api") in result.stderr
    assert "<base>" not in result.stderr


def test_unusable_base_url_flag(run, env):
    env("https://taotoken.net/api")
    result = run("check", "--base-url", "ftp://x")
    assert_failure(result, "config.invalid", Exit.CONFIG)
    assert "pass --base-url https://taotoken.net/api" in result.stderr and "<base>" not in result.stderr


def test_unusable_base_url_in_the_config_file(run, home):
    config = home / ".config" / "taotoken" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[profiles.default]\nbase_url = "ftp://x"\napi_key = "sk-abcdefghijklmnop1234"\n')
    result = run("check")
    assert_failure(result, "config.invalid", Exit.CONFIG)
    assert "taotoken config set base_url https://taotoken.net/api" in result.stderr and "<base>" not in result.stderr


def test_unparsable_config_file(run, home, monkeypatch):
    config = home / ".config" / "taotoken" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[profiles.default]\napi_key = "sk-unclosed\n')
    result = run("check", "-q")
    assert_failure(result, "config.unparsable", Exit.CONFIG)
    assert "config.toml:2:" in result.stderr


def test_explain_unknown_code(run, home):
    result = run("explain", "auth.invalid")
    result.assert_clean()
    assert result.returncode == Exit.USAGE
    assert "did you mean: auth.invalid_key" in result.stderr and "[input.invalid]" in result.stderr
    assert "fix:" in result.stderr


def test_explain_names_the_commands_of_its_fixes_under_json(cli, home):
    """--json: an unknown code's fix (an InputError) and a code's fixes list their commands, not only the text."""
    unknown = cli("explain", "nosuch", "--json").assert_clean()
    data = json.loads(unknown.stdout)
    assert unknown.returncode == data["exit_code"] == Exit.USAGE
    assert data["fix_step"] == {"text": data["fix"], "where": None,
                                "commands": [{"line": "taotoken explain --list",
                                              "argv": ["taotoken", "explain", "--list"]}]}
    codes = {c["code"]: c for c in json.loads(cli("explain", "config.unparsable", "--json").stdout)["codes"]}
    assert [c["line"] for s in codes["config.unparsable"]["fix_steps"] for c in s["commands"]] == ["taotoken init"]
    not_found = json.loads(cli("explain", "model.not_found", "--json").stdout)["codes"][0]["fix_steps"][0]
    assert [c["line"].split()[:3] for c in not_found["commands"]] == [["taotoken", "config", "set"],
                                                                      ["taotoken", "models", "<model>"]]


def test_explain_every_code(run, env):
    env("https://gw.example/api")
    listing = run("explain", "--list").stdout.splitlines()
    assert len(listing) == len(CATALOGUE)
    for code, entry in CATALOGUE.items():
        result = run("explain", code).assert_clean()
        assert result.returncode == 0
        assert result.stdout.startswith(f"{code} — {entry.title}")
        assert f"exit status: {int(entry.exit)}" in result.stdout
        assert "{base}" not in result.stdout and "{model}" not in result.stdout
    doubled = run("explain", "url.doubled_v1").stdout
    assert "taotoken config set base_url https://gw.example/api" in doubled
    assert "https://gw.example/api/v1" in doubled
    data = json.loads(run("explain", "quota.exhausted", "--json").stdout)
    assert data["codes"][0]["retry"] is False and data["codes"][0]["exit_code"] == 6


# --- every catalogue entry is reproduced above ------------------------------------------------------

COVERED_ELSEWHERE = {"net.timeout", "net.reset", "stream.truncated", "proxy.auth_required", "net.error",
                     "net.refused", "proxy.unreachable", "proxy.socks_unsupported", "proxy.refused", "net.dns",
                     "net.connect_timeout", "net.tls", "auth.missing_key", "config.missing", "config.invalid",
                     "config.unparsable", "input.invalid", "url.plain_http",
                     "url.tls_to_plain_http", "url.no_gemini_api"}  # proxy.refused: test_proxy_answers.py;
# url.tls_to_plain_http: test_check_gateway_answers.py; url.no_gemini_api (init and doctor's Gemini API probe, not
# check's): tests/core/diagnosis/test_gemini_api.py


def test_every_catalogue_entry_is_reproduced():
    covered = {case[-1] for case in CASES} | COVERED_ELSEWHERE
    assert set(CATALOGUE) - covered == set()
    assert covered - set(CATALOGUE) == set()


# --- output contracts, as a shell sees them (subprocess) -------------------------------------------

@pytest.fixture
def served(httpserver):
    httpserver.expect_request(MODELS_PATH).respond_with_json(MODELS_OK)
    return {"TAOTOKEN_BASE_URL": httpserver.url_for("/api"), "TAOTOKEN_API_KEY": SENTINEL_KEY,
            "TAOTOKEN_MODEL": MODEL}


def test_quiet_is_silent_on_success(cli, served):
    result = cli("check", "-q", env=served).assert_clean()
    assert result.returncode == 0 and result.output == ""


def test_quiet_failure_is_one_line(cli, served, httpserver):
    httpserver.clear()
    httpserver.expect_request(MODELS_PATH).respond_with_json(
        {"error": {"message": "无效的令牌" + RID, "type": "one_api_error"}}, status=401)
    result = cli("check", "-q", env=served).assert_clean()
    assert result.returncode == Exit.AUTH and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("taotoken: auth.invalid_key: The gateway rejected the key (server: 无效的令牌")
    assert " — fix: copy the key again" in lines[0]


def test_code_mode(cli, served, httpserver):
    assert cli("check", "--code", env=served).stdout == "200\n"
    httpserver.clear()
    httpserver.expect_request(MODELS_PATH).respond_with_data("", status=429)
    result = cli("check", "--code", env=served)
    assert (result.stdout, result.returncode) == ("429\n", Exit.RATE_QUOTA)
    refused = cli("check", "--code", env={**served, "TAOTOKEN_BASE_URL": f"http://127.0.0.1:{closed_port()}"})
    assert (refused.stdout, refused.returncode, refused.stderr) == ("000\n", Exit.NETWORK, "")


def test_json_keys_are_static(cli, served, httpserver):
    ok = json.loads(cli("check", "--json", env=served).assert_clean().stdout)
    httpserver.clear()
    httpserver.expect_request(MODELS_PATH).respond_with_data("", status=404)
    failed_run = cli("check", "--json", env=served).assert_clean()
    failed = json.loads(failed_run.stdout)
    missing = json.loads(cli("check", "--json", env={"TAOTOKEN_API_KEY": None}).stdout)
    assert set(ok) == set(failed) == set(missing)
    assert ok["ok"] is True and ok["exit_code"] == 0 and ok["models_count"] == 3 and ok["model_listed"] is True
    assert ok["key"] == "sk-SE…WXYZ"
    assert failed["code"] == "url.not_found" and failed_run.returncode == failed["exit_code"] == 5
    assert missing["code"] == "auth.missing_key" and missing["exit_code"] == 3 and missing["status"] is None
    assert set(failed["error"]) == {"code", "title", "exit_code", "retry", "server_message", "retry_after_s",
                                    "causes", "fixes", "fix_steps", "details", "request_id", "model"}
    # each fix twice: as the line it always was, and structured (the same text, its commands apart)
    steps = failed["error"]["fix_steps"]
    assert [step["text"] for step in steps] == failed["error"]["fixes"]
    assert all(command["line"] in step["text"] for step in steps for command in step["commands"])
    assert any(step["commands"] for step in steps)


def test_no_colour_without_tty_even_when_asked_by_term(cli, served):
    result = cli("check", env={**served, "NO_COLOR": None, "TERM": "xterm-256color"})
    assert "\033[" not in result.output and result.stdout.startswith("OK 200")


def test_success_path_imports_only_what_check_needs(served, home):
    """rich, tomlkit and platformdirs stay out of `check` (they cost start-up time)."""
    env = {**os.environ, **served, "PYTHONPATH": python_path()}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "taotoken_cli", "check", "-q"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert {"rich", "tomlkit", "platformdirs", "pygments"} & imported == set()


# --- the Typer-free fast path falls back to Typer for anything it does not know ---------------------

def test_fast_path_parser():
    from taotoken_cli.cmd.check.fastpath import parse_fast

    assert parse_fast(["-q"]) == {"timeout_s": 5.0, "mode": "quiet"}
    assert parse_fast(["--model=x", "-t", "2", "--json"]) == {"timeout_s": 2.0, "model": "x", "mode": "json"}
    assert parse_fast(["-q", "--code"])["mode"] == "code"  # the most machine-readable mode wins, as in Typer
    assert parse_fast([]) == {"timeout_s": 5.0, "mode": "line"}
    assert parse_fast(["-q", "--allow-unlisted"]) == {"timeout_s": 5.0, "mode": "quiet", "allow_unlisted": True}
    for argv in (["--help"], ["-h"], ["--bogus"], ["--timeout", "abc"], ["--timeout", "0"], ["--model"],
                 ["-qt", "2"], ["extra"]):
        assert parse_fast(argv) is None, argv


def test_typer_handles_help_and_usage_errors(cli, served):
    helped = cli("check", "--help", env=served).assert_clean()
    assert helped.returncode == 0 and "--quiet" in helped.stdout and "--code" in helped.stdout
    bad = cli("check", "--timeout", "abc", env=served).assert_clean()
    assert bad.returncode == Exit.USAGE
    typo = cli("check", "--qiuet", env=served).assert_clean()
    assert typo.returncode == Exit.USAGE and "qiuet" in typo.stderr


def test_fast_path_knows_exactly_the_options_of_the_typer_command():
    """The two parsers of `check` must not drift apart: every option has the same name and kind."""
    import typer.main

    from taotoken_cli.app import app
    from taotoken_cli.cmd.check.fastpath import _FLAGS, _VALUED

    command = typer.main.get_command(app).commands["check"]
    flags, valued = set(), set()
    for param in command.params:
        names = set(param.opts) | set(param.secondary_opts)
        (flags if param.is_flag else valued).update(names)
    assert flags == set(_FLAGS)
    assert valued == set(_VALUED)
