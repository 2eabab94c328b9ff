"""Table-driven unit tests of the classifier over the body shapes in reference/gateway-errors.md.

These build Observations directly (what the gateway client would have recorded); the same
shapes are also served over real HTTP in tests/cmd/check/test_check.py.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import texts
from taotoken_cli.core.diagnosis.catalogue import CATALOGUE, close_codes
from taotoken_cli.core.diagnosis.classify import classify, parse_body, refine_url_code
from taotoken_cli.core.diagnosis.context import DiagnosisContext, context_for
from taotoken_cli.core.diagnosis.evidence import parse_retry_after
from taotoken_cli.core.net.gateway import Observation, StreamSummary

URL = "http://gw.test/api/v1/models"
CHAT = "http://gw.test/api/v1/chat/completions"


def obs(status: int, body, *, url: str = URL, headers: dict[str, str] | None = None, ctype: str | None = None,
        key_sent: bool = True) -> Observation:
    if isinstance(body, (dict, list)):
        raw = json.dumps(body, ensure_ascii=False).encode()
        ctype = ctype or "application/json"
    else:
        raw = body.encode() if isinstance(body, str) else body
    hdrs = {"content-type": ctype or "text/plain"}
    hdrs.update(headers or {})
    return Observation("GET", url, status=status, headers=hdrs, body=raw, key_sent=key_sent)


def oa(message: str, type_: str | None = "invalid_request_error", code=None, **extra) -> dict:
    return {"error": {"message": message, "type": type_, "param": None, "code": code, **extra}}


ONEAPI_RID = " (request id: 2025022112345678)"

# (id, status, body, expected code)
CASES = [
    # OpenAI
    ("openai-401", 401, oa("Incorrect API key provided: sk-abc***xyz.", code="invalid_api_key"),
     "auth.upstream_credential"),
    ("openai-401-no-key", 401, oa("You didn't provide an API key. You need to provide your API key…"),
     "auth.key_not_received"),
    ("openai-404-model", 404, oa("The model `gpt-9` does not exist or you do not have access to it.",
                                 code="model_not_found"), "model.not_found"),
    ("openai-429-rate", 429, oa("Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): "
                                "Limit 3, Used 3, Requested 1. Please try again in 20s.", "requests",
                                "rate_limit_exceeded"), "rate.limited"),
    ("openai-429-quota", 429, oa("You exceeded your current quota, please check your plan and billing details.",
                                 "insufficient_quota", "insufficient_quota"), "quota.exhausted"),
    ("openai-429-credits", 429, oa("You have no credits remaining.", "insufficient_quota",
                                   "credit_balance_exhausted"), "quota.exhausted"),
    ("openai-500", 500, oa("The server had an error while processing your request.", "server_error"),
     "server.error"),
    ("openai-503-overloaded", 503, oa("The engine is currently overloaded, please try again later",
                                      "service_unavailable_error", "server_is_overloaded"), "upstream.saturated"),
    ("openai-404-invalid-url", 404, oa("Invalid URL (GET /v1/v1/models)", code=""), "url.doubled_v1"),
    # one-api (Chinese, request id suffix, no code on auth errors)
    ("oneapi-401", 401, {"error": {"message": "无效的令牌" + ONEAPI_RID, "type": "one_api_error"}},
     "auth.invalid_key"),
    ("oneapi-401-expired", 401, {"error": {"message": "该令牌已过期" + ONEAPI_RID, "type": "one_api_error"}},
     "auth.expired_key"),
    ("oneapi-401-key-quota", 401, {"error": {"message": "令牌 test（#3）额度已用尽" + ONEAPI_RID,
                                             "type": "one_api_error"}}, "quota.key_exhausted"),
    ("oneapi-401-disabled", 401, {"error": {"message": "该令牌状态不可用", "type": "one_api_error"}},
     "auth.key_disabled"),
    ("oneapi-401-no-token", 401, {"error": {"message": "未提供令牌", "type": "one_api_error"}},
     "auth.key_not_received"),
    ("oneapi-403-ip", 403, {"error": {"message": "该令牌只能在指定网段使用：10.0.0.0/8，当前 ip：1.2.3.4",
                                      "type": "one_api_error"}}, "auth.ip_not_allowed"),
    ("oneapi-403-banned", 403, {"error": {"message": "用户已被封禁", "type": "one_api_error"}},
     "auth.account_banned"),
    ("oneapi-403-channel", 403, {"error": {"message": "普通用户不支持指定渠道", "type": "one_api_error"}},
     "auth.key_suffix"),
    ("oneapi-403-model", 403, {"error": {"message": "该令牌无权使用模型：gpt-4", "type": "one_api_error"}},
     "auth.forbidden_model"),
    ("oneapi-403-quota", 403, oa("user quota is not enough", "one_api_error", "insufficient_user_quota"),
     "quota.exhausted"),
    ("oneapi-403-prequota", 403, oa("pre-consume token quota failed", "one_api_error",
                                    "pre_consume_token_quota_failed"), "quota.key_exhausted"),
    ("oneapi-503-nochannel", 503, oa("当前分组 default 下对于模型 gpt-9 无可用渠道" + ONEAPI_RID, "one_api_error"),
     "model.no_channel"),
    ("oneapi-429-saturated", 429, oa("当前分组上游负载已饱和，请稍后再试" + ONEAPI_RID, "one_api_error"),
     "upstream.saturated"),
    ("oneapi-429-empty", 429, "", "rate.limited"),
    ("oneapi-404-invalid-url", 404, oa("Invalid URL (GET /api/v1/models)" + ONEAPI_RID, code=""), "url.not_found"),
    ("oneapi-500-upstream", 500, oa("do request failed", "one_api_error", "do_request_failed"), "server.error"),
    ("oneapi-501", 501, oa("API not implemented", "one_api_error", "api_not_implemented"), "url.not_implemented"),
    # new-api
    ("newapi-401-en", 401, oa("Invalid token (request id: 20250301)", "new_api_error", ""), "auth.invalid_key"),
    ("newapi-403-ip", 403, oa("您的 IP 不在令牌允许访问的列表中", "new_api_error", "access_denied"),
     "auth.ip_not_allowed"),
    ("newapi-403-model", 403, oa("This token has no access to model gpt-9", "new_api_error", ""),
     "auth.forbidden_model"),
    ("newapi-403-group", 403, oa("无权访问 vip 分组", "new_api_error", ""), "auth.forbidden_group"),
    ("newapi-403-balance", 403, oa("用户额度不足, 剩余额度: ＄0.000000", "new_api_error", "insufficient_user_quota"),
     "quota.exhausted"),
    ("newapi-503-nochannel", 503, oa("No available channel for model gpt-9 under group default (distributor)",
                                     "new_api_error", "model_not_found"), "model.no_channel"),
    ("newapi-429-rpm", 429, oa("您已达到请求数限制：1分钟内最多请求60次", "new_api_error", ""), "rate.limited"),
    ("zh-429-frequent", 429, oa("您的请求过于频繁，请稍后再试", "new_api_error", ""), "rate.limited"),
    ("newapi-token-quota", 403, oa("令牌额度不足", "new_api_error", ""), "quota.key_exhausted"),
    ("newapi-429-concurrency", 429, oa("您已达到并发请求限制：最多同时进行 2 个请求，请等待已有请求完成",
                                       "new_api_error", ""), "rate.concurrency"),
    ("newapi-400-nomodel", 400, oa("未指定模型名称，模型名称不能为空", "new_api_error", ""), "model.missing"),
    ("newapi-500-db", 500, oa("数据库错误，请稍后重试", "new_api_error", ""), "server.error"),
    ("newapi-413", 413, oa("read request body failed", "new_api_error", "read_request_body_failed"),
     "request.too_large"),
    # LiteLLM (string digit codes, type "None")
    ("litellm-401", 401, oa("Authentication Error, Invalid proxy server token passed. Received API Key = sk-...xyz, "
                            "Key Hash (Token) =abc", "token_not_found_in_db", "401"), "auth.invalid_key"),
    ("litellm-401-expired", 401, oa("Authentication Error - Expired Key. Key Expiry time 2024-01-01",
                                    "expired_key", "401"), "auth.expired_key"),
    ("litellm-401-nokey", 401, oa("Authentication Error, No api key passed in.", "auth_error", "401"),
     "auth.key_not_received"),
    ("litellm-400-model", 400, oa("/chat/completions: Invalid model name passed in model=gpt-9. Call `/v1/models` "
                                  "to view available models for your key.", "None", "400"), "model.not_found"),
    ("litellm-429-rate", 429, oa("LiteLLM Rate Limit Handler for rate limit type = key. Crossed TPM / RPM / Max "
                                 "Parallel Request Limit. current rpm: 10, rpm limit: 10", "None", "429"),
     "rate.limited"),
    ("litellm-429-budget", 429, oa("Budget has been exceeded! Current cost: 5.1, Max budget: 5.0",
                                   "budget_exceeded", "429"), "quota.exhausted"),
    ("litellm-404-detail", 404, {"detail": "Not Found"}, "url.not_found"),
    # OpenRouter (int codes, metadata)
    ("openrouter-401", 401, {"error": {"code": 401, "message": "No auth credentials found"}}, "auth.invalid_key"),
    ("openrouter-402", 402, {"error": {"code": 402, "message": "Insufficient credits",
                                       "metadata": {"limit_source": "openrouter_credits"}}}, "quota.exhausted"),
    ("openrouter-402-keylimit", 402, {"error": {"code": 402, "message": "Key limit exceeded",
                                                "metadata": {"limit_source": "openrouter_key_limit"}}},
     "quota.key_exhausted"),
    ("openrouter-429", 429, {"error": {"code": 429, "message": "Rate limit exceeded: free-models-per-min"}},
     "rate.limited"),
    ("openrouter-503", 503, {"error": {"code": 503, "message": "No available model provider that meets your "
                                                              "routing requirements"}}, "model.no_channel"),
    # Anthropic
    ("anthropic-401", 401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"},
                            "request_id": "req_1"}, "auth.upstream_credential"),
    ("anthropic-403", 403, {"type": "error", "error": {"type": "permission_error", "message": "not allowed"}},
     "auth.forbidden"),
    ("anthropic-404-model", 404, {"type": "error", "error": {"type": "not_found_error", "message": "model: x-9"}},
     "model.not_found"),
    ("anthropic-429", 429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
     "rate.limited"),
    ("anthropic-429-spend", 429, {"type": "error", "error": {"type": "rate_limit_error",
                                                             "message": "enforced_spend_limit_reached"}},
     "quota.exhausted"),
    ("anthropic-400-credit", 400, {"type": "error", "error": {"type": "invalid_request_error", "message":
                                   "Your credit balance is too low to access the Anthropic API."}},
     "quota.exhausted"),
    ("anthropic-529", 529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
     "upstream.saturated"),
    # Others
    ("plain-error-string", 401, {"error": "Unauthorized"}, "auth.invalid_key"),
    ("bare-403", 403, "", "auth.forbidden"),
    ("bare-404", 404, "", "url.not_found"),
    ("bare-502", 502, "Bad Gateway", "server.error"),
    ("bare-400", 400, {"message": "bad"}, "request.invalid"),
]


@pytest.mark.parametrize("case_id,status,body,expected", CASES, ids=[c[0] for c in CASES])
def test_body_shapes(case_id, status, body, expected):
    diagnosis = classify(obs(status, body))
    assert diagnosis is not None
    assert diagnosis.code == expected, (case_id, diagnosis.to_dict())
    assert texts(diagnosis.fixes()), "every diagnosis carries a fix"
    assert diagnosis.entry.exit != Exit.OK


def test_request_id_kept_for_display_but_not_for_matching():
    diagnosis = classify(obs(401, {"error": {"message": "无效的令牌 (request id: abc123)", "type": "one_api_error"}}))
    assert diagnosis.code == "auth.invalid_key"
    assert "request id: abc123" in diagnosis.server_message
    assert "request id" not in parse_body(obs(401, {"error": {"message": "x (request id: 1)"}})).haystack


def test_body_shape_detection():
    assert parse_body(obs(401, {"error": {"message": "m", "type": "one_api_error"}})).shape == "one-api"
    assert parse_body(obs(401, oa("m", "new_api_error", ""))).shape == "new-api"
    # new-api's header with no type of its own: new-api's envelope
    assert parse_body(obs(401, oa("m", None, ""), headers={"x-new-api-version": "v0.9"})).shape == "new-api"
    # ... but an upstream's own type under that header is the upstream's body, passed through (RelayErrorHandler)
    assert parse_body(obs(401, oa("m", code=None), headers={"x-new-api-version": "v0.9"})).shape == "openai"
    assert parse_body(obs(401, oa("m", "None", "401"))).shape == "litellm"
    assert parse_body(obs(401, {"error": {"code": 401, "message": "m"}})).shape == "openrouter"
    assert parse_body(obs(401, {"type": "error", "error": {"type": "x", "message": "m"}})).shape == "anthropic"
    assert parse_body(obs(404, {"detail": "Not Found"})).shape == "fastapi"
    assert parse_body(obs(200, {"success": False, "message": "m"})).shape == "success_false"
    assert parse_body(obs(200, "<!DOCTYPE html><html><title>New API</title></html>", ctype="text/html")).shape == \
        "html"
    assert parse_body(obs(429, "")).shape == "empty"


def test_gateway_wrapped_openai_key_error_is_the_users_key():
    # one-api's own envelope: the user's key is the problem, not the upstream's.
    body = {"error": {"message": "Incorrect API key provided", "type": "one_api_error"}}
    assert classify(obs(401, body)).code == "auth.invalid_key"
    # Talking to OpenAI directly, the text means the user's key.
    direct = obs(401, oa("Incorrect API key provided: sk-a…", code="invalid_api_key"),
                 url="https://api.openai.com/v1/models")
    assert classify(direct).code == "auth.invalid_key"


def test_missing_key_when_none_was_sent():
    assert classify(obs(401, {"error": {"message": "未提供令牌"}}, key_sent=False)).code == "auth.missing_key"
    assert classify(obs(401, "", key_sent=False)).code == "auth.missing_key"


def test_quota_is_never_retry():
    for code, entry in CATALOGUE.items():
        if code.startswith("quota."):
            assert entry.retry is False
            assert entry.exit == Exit.RATE_QUOTA
    diagnosis = classify(obs(429, oa("You exceeded your current quota", "insufficient_quota", "insufficient_quota"),
                             headers={"retry-after": "20"}))
    assert diagnosis.code == "quota.exhausted" and diagnosis.retry_after_s is None
    assert "retry" not in " ".join(texts(diagnosis.fixes())).replace("retrying will not help", "")


@pytest.mark.parametrize("headers,message,expected", [
    ({"retry-after": "20"}, None, 20.0),
    ({"retry-after": "37.41"}, None, 37.41),
    ({"retry-after-ms": "1500"}, None, 1.5),
    ({}, "Please try again in 20s.", 20.0),
    ({}, "Please try again in 120ms.", 0.12),
    ({"retry-after": "soon"}, None, None),
    ({}, None, None),
])
def test_retry_after(headers, message, expected):
    assert parse_retry_after(headers, message) == expected


def test_retry_after_http_date():
    when = datetime.now(timezone.utc) + timedelta(seconds=90)
    value = parse_retry_after({"retry-after": format_datetime(when, usegmt=True)})
    assert 85 <= value <= 91
    past = format_datetime(datetime.now(timezone.utc) - timedelta(seconds=30), usegmt=True)
    assert parse_retry_after({"retry-after": past}) == 0.0


@pytest.mark.parametrize("expect,body,expected", [
    ("models", {"object": "list", "data": [{"id": "m"}]}, None),
    ("models", {"object": "list", "data": [], "success": True}, None),
    ("models", {"foo": 1}, "resp.no_models"),
    ("chat", {"choices": [{"message": {"content": "OK"}}]}, None),
    ("chat", {"id": "x", "object": "chat.completion"}, "resp.no_choices"),
    ("chat", {"choices": []}, "resp.no_choices"),
    ("chat", {"object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": 3}}, None),
    ("chat", {"error": {"message": "upstream error", "type": "upstream_error"}}, "resp.error_body"),
    ("chat", {"error": {"message": "model not found", "code": "model_not_found"}}, "model.not_found"),
    ("models", {"success": False, "message": "无权进行此操作，未登录且未提供 access token"}, "url.dashboard_api"),
    ("messages", {"type": "message", "content": [{"type": "text", "text": "OK"}]}, None),
    ("messages", {"type": "message"}, "resp.no_choices"),
    ("responses", {"object": "response", "output": []}, None),
    ("json", {"anything": True}, None),
])
def test_success_shapes_and_200_errors(expect, body, expected):
    diagnosis = classify(obs(200, body, url=CHAT), expect=expect)
    assert (diagnosis.code if diagnosis else None) == expected


def test_200_html_and_text():
    page = "<!DOCTYPE html><html><head><title>New API</title></head><body>app</body></html>"
    diagnosis = classify(obs(200, page, ctype="text/html"), expect="models")
    assert diagnosis.code == "url.html_page" and diagnosis.server_message == "New API"
    assert classify(obs(200, "hello", ctype="text/plain"), expect="models").code == "resp.not_json"
    cf = "<html><head><title>taotoken.net | 524: A timeout occurred</title></head></html>"
    assert classify(obs(524, cf, ctype="text/html")).code == "server.timeout"
    assert classify(obs(502, "<html><title>502 Bad Gateway</title></html>", ctype="text/html")).code == \
        "server.error"


def test_redirect_and_proxy_auth():
    diagnosis = classify(obs(301, "", headers={"location": "https://gw.test/api/v1/models"}))
    assert diagnosis.code == "url.redirect" and "https://gw.test" in diagnosis.details[0]
    assert classify(obs(407, "")).code == "proxy.auth_required"


@pytest.mark.parametrize("url,message,expected", [
    ("http://h/api/v1/v1/models", None, "url.doubled_v1"),
    ("http://h/api/v1/models", "Invalid URL (POST /v1/v1/chat/completions)", "url.doubled_v1"),
    ("http://h/v1/chat/completions/chat/completions", None, "url.endpoint_in_base"),
    ("http://h/api?utm_source=x/v1/models", None, "url.query_string"),
    ("http://h/api/v1/models", None, "url.not_found"),
])
def test_url_refinement(url, message, expected):
    assert refine_url_code(url, message) == expected


def test_url_context_and_placeholders():
    called = context_for(url="https://taotoken.net/api/v1/models")
    assert (called.base, called.openai_base, called.host) == (
        "https://taotoken.net/api", "https://taotoken.net/api/v1", "taotoken.net")
    diagnosis = classify(obs(404, "", url="http://h:8080/x/v1/v1/models"), context=context_for(model="gpt-x"))
    assert diagnosis.code == "url.doubled_v1"
    assert any("http://h:8080/x" in fix and "{" not in fix for fix in texts(diagnosis.fixes()))
    forbidden = classify(obs(403, {"error": {"message": "该令牌无权使用模型：gpt-x"}}),
                         context=context_for(model="gpt-x"))
    assert any("gpt-x" in fix for fix in texts(forbidden.fixes()))
    # no value for a placeholder: it stays readable instead of raising
    assert any("<model>" in fix for fix in classify(obs(403, {"error": {"message": "无权使用模型"}})).fixes())


def _stream(**kw) -> Observation:
    observation = Observation("POST", CHAT, status=200, headers={"content-type": "text/event-stream"})
    observation.stream = StreamSummary(**kw)
    return observation


def test_streams():
    assert classify(_stream(events=3, content_deltas=2, text="OK", done=True), expect="stream") is None
    assert classify(_stream(events=2, content_deltas=1, finish_reason="stop"), expect="stream") is None
    err = classify(_stream(events=1, error_event={"type": "overloaded_error", "message": "Overloaded"}),
                   expect="stream")
    assert err.code == "stream.error_event" and err.server_message == "Overloaded"
    assert any("upstream.saturated" in d for d in err.details)
    assert classify(_stream(events=2, done=True), expect="stream").code == "stream.empty"
    assert classify(_stream(events=2, content_deltas=2), expect="stream").code == "stream.truncated"
    json_instead = obs(200, {"choices": [{"message": {"content": "x"}}]}, url=CHAT)
    assert classify(json_instead, expect="stream").code == "stream.not_sse"


def test_exceptions():
    import httpx

    def with_error(exc: BaseException, proxy: str | None = None) -> str:
        return classify(Observation("GET", URL, error=exc, proxy=proxy)).code

    assert with_error(httpx.ConnectError("[Errno -2] Name or service not known")) == "net.dns"
    assert with_error(httpx.ConnectError("[Errno 111] Connection refused")) == "net.refused"
    assert with_error(httpx.ConnectError("[Errno 111] Connection refused"), "http://127.0.0.1:9") == \
        "proxy.unreachable"
    assert with_error(httpx.ConnectTimeout("timed out")) == "net.connect_timeout"
    assert with_error(httpx.ReadTimeout("timed out")) == "net.timeout"
    assert with_error(httpx.RemoteProtocolError("Server disconnected without sending a response.")) == "net.reset"
    assert with_error(httpx.ReadError("[Errno 104] Connection reset by peer")) == "net.reset"
    assert with_error(httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")) == "net.tls"
    assert with_error(ImportError("Using SOCKS proxy, but the 'socksio' package is not installed."),
                      "socks5://127.0.0.1:7890") == "proxy.socks_unsupported"
    assert with_error(RuntimeError("something odd")) == "net.error"


def test_every_entry_is_complete():
    for code, entry in CATALOGUE.items():
        assert entry.code == code and entry.title and entry.causes and entry.fixes
        assert isinstance(entry.exit, Exit) and entry.exit != Exit.OK, code  # a failure never exits 0


def test_close_codes():
    assert "auth.invalid_key" in close_codes("auth.invalid")
    assert "net.dns" in close_codes("net.dn")


# --- fixes that fit the situation ------------------------------------------------------------------

def test_first_fix_of_every_entry_applies_in_every_situation():
    from taotoken_cli.core.diagnosis.catalogue import Step

    for code, entry in CATALOGUE.items():
        first = entry.fixes[0]
        assert first.when is None or first.otherwise, code
    with pytest.raises(ValueError):
        Step("x", when="weather")


def test_proxy_fixes_only_when_a_proxy_was_in_use():
    body = {"error": {"message": "forbidden", "type": "permission_error"}}
    direct = classify(obs(403, body))
    assert direct.code == "auth.forbidden" and not any("proxy" in fix for fix in texts(direct.fixes()))
    proxied = Observation("GET", URL, status=403, headers={"content-type": "application/json"},
                          body=json.dumps(body).encode(), proxy="http://127.0.0.1:7890")
    assert "try without the proxy http://127.0.0.1:7890: taotoken check --no-proxy" in texts(classify(proxied).fixes())
    # doctor passes the proxy in the context ("" when none): an empty value is no proxy
    no_proxy = classify(obs(403, body), context=DiagnosisContext(proxy=""))
    assert not any("proxy" in fix for fix in texts(no_proxy.fixes()))


def test_ip_allow_list_fix_without_a_proxy_talks_about_a_vpn():
    fixes = texts(classify(obs(403, oa("您的 IP 不在令牌允许访问的列表中", "new_api_error", "access_denied"))).fixes())
    assert any("VPN" in fix for fix in fixes) and not any("--no-proxy" in fix for fix in fixes)


@pytest.mark.parametrize("headers,wait_fix", [
    ({"retry-after": "20"}, "wait 20 s (the gateway's Retry-After), then try again"),
    ({}, "wait about a minute, then try again (the gateway gave no wait time; limits are usually per minute)"),
])
def test_rate_limit_fix_says_whether_a_wait_time_is_known(headers, wait_fix):
    diagnosis = classify(obs(429, oa("您已达到请求数限制：1分钟内最多请求60次", "new_api_error", ""), headers=headers))
    assert diagnosis.code == "rate.limited" and texts(diagnosis.fixes())[0] == wait_fix


def test_request_id_from_headers_and_bodies():
    def rid(status, body, headers=None):
        return classify(obs(status, body, headers=headers)).request_id

    assert rid(500, oa("do request failed" + ONEAPI_RID, "one_api_error", "do_request_failed")) == "2025022112345678"
    assert rid(500, oa("x", "server_error"), {"x-request-id": "req_abc"}) == "req_abc"
    assert rid(500, {"type": "error", "error": {"type": "api_error", "message": "boom"}, "request_id": "req_01"}) == \
        "req_01"
    assert rid(429, "", {"x-oneapi-request-id": "2025"}) == "2025"
    assert rid(500, oa("x", "server_error")) is None
    plain = classify(obs(500, oa("x", "server_error")))
    plain_text = " ".join(texts(plain.fixes()) + plain.details)
    assert "request id" not in plain_text.replace("the gateway sent no request id", "")
    shown = classify(obs(500, oa("x (request id: 77)", "server_error")))
    assert not any(d.startswith("request id") for d in shown.details)  # already in the server's words


@pytest.mark.parametrize("status,body,code,model", [
    (503, oa("当前分组 default 下对于模型 gpt-4o-mnii 无可用渠道" + ONEAPI_RID, "one_api_error"), "model.no_channel",
     "gpt-4o-mnii"),
    (503, oa("分组 default 下模型 gpt-4o-mnii 无可用渠道（distributor）", "new_api_error", "model_not_found"),
     "model.no_channel", "gpt-4o-mnii"),
    (503, oa("获取分组 auto(vip) 下模型 qwen-mx 的可用渠道失败（distributor）：redis down", "new_api_error",
             "model_not_found"), "model.no_channel", "qwen-mx"),
    (503, oa("No available channel for model gpt-4o-mnii under group default (distributor) (request id: 9)",
             "new_api_error", "model_not_found"), "model.no_channel", "gpt-4o-mnii"),
    (403, {"error": {"message": "该令牌无权使用模型：gpt-4", "type": "one_api_error"}}, "auth.forbidden_model",
     "gpt-4"),
    (403, oa("This token has no access to model gpt-9", "new_api_error", ""), "auth.forbidden_model", "gpt-9"),
    (404, oa("The model `gpt-9` does not exist or you do not have access to it.", code="model_not_found"),
     "model.not_found", "gpt-9"),
    (404, {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-x"}}, "model.not_found",
     "claude-x"),
    (400, oa("/chat/completions: Invalid model name passed in model=qwen2.5-72b. Call `/v1/models` to view "
             "available models for your key.", "invalid_request_error", "400"), "model.not_found", "qwen2.5-72b"),
    (401, oa("Invalid token", "new_api_error", ""), "auth.invalid_key", None),
])
def test_the_model_a_message_names(status, body, code, model):
    diagnosis = classify(obs(status, body))
    assert diagnosis.code == code and diagnosis.model == model
    assert diagnosis.to_dict()["model"] == model
    if model:  # no configured model in the context: the fixes name the one the server named
        assert any(model in fix for fix in texts(diagnosis.fixes()))


def test_no_channel_for_a_typo_offers_the_near_miss():
    from taotoken_cli.core.diagnosis.model_ids import close_model_matches

    diagnosis = classify(obs(503, oa("分组 default 下模型 gpt-4o-mnii 无可用渠道（distributor）", "new_api_error",
                                     "model_not_found")), context=context_for(model="gpt-4o-mnii"))
    assert close_model_matches(diagnosis.model, ["gpt-4o-mini", "gpt-4o", "claude-3-haiku"]) == ["gpt-4o-mini"]
    assert "pick a listed model: taotoken models gpt-4o-mnii" in texts(diagnosis.fixes())[0]


def test_litellm_key_budget_is_the_keys_own_quota():
    body = oa("Budget has been exceeded! Key=team-a (sk-...a1b2) Current cost: 5.1, Max budget: 5.0",
              "budget_exceeded", "400")
    assert classify(obs(400, body)).code == "quota.key_exhausted"
    user = oa("Budget has been exceeded! User=u1 in Team=t1 Current cost: 9, Max budget: 8", "budget_exceeded", "400")
    assert classify(obs(400, user)).code == "quota.exhausted"


# --- "did you mean": near-misses only --------------------------------------------------------------

LISTED = ["gpt-4o-mini", "gpt-4o", "gpt-4", "claude-3-haiku", "claude-3-5-sonnet", "deepseek-chat", "qwen-max",
          "qwen2.5-72b-instruct", "openai/gpt-4.1", "text-embedding-3-small"]


@pytest.mark.parametrize("wanted,expected", [
    ("gpt-4o", []),  # listed: no typo to fix
    ("GPT-4o", ["gpt-4o"]),  # case
    ("gpt4o-mini", ["gpt-4o-mini"]),  # separators
    ("gpt-4o-mni", ["gpt-4o-mini"]),  # a missing letter
    ("gpt-4o-mnii", ["gpt-4o-mini"]),  # two letters swapped
    ("claude-3-hiaku", ["claude-3-haiku"]),
    ("deepseek-chta", ["deepseek-chat"]),
    ("qwen-mx", ["qwen-max"]),
    ("gpt-4.1", ["openai/gpt-4.1"]),  # provider prefix
    ("text-embeding-3-small", ["text-embedding-3-small"]),
    # different models, not typos
    ("gpt-4o-nano", []),
    ("claude-3-5-haiku", []),  # another version
    ("qwen2.5-7b-instruct", []),  # another size
    ("gpt-40", []),
    ("deepseek-coder", []),
    ("qwen-plus", []),
    ("o1", []),
    ("gpt-4o-mini-2024-07-18", []),  # a dated snapshot is another listed ID, not this one misspelled
])
def test_close_model_matches(wanted, expected):
    from taotoken_cli.core.diagnosis.model_ids import close_model_matches

    assert close_model_matches(wanted, LISTED) == expected
