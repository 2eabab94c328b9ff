"""Error bodies as each real gateway family writes them (reference/gateway-errors.md sections 1-2, 5).

`error_reply(style, kind, ctx)` returns the status, JSON body and extra headers that gateway
would send for one failure kind. Messages are quoted from the sources the reference cites, so
the tool's classifier is tested against the real shapes: one-api/new-api envelopes with
`type: one_api_error/new_api_error` and a `(request id: …)` suffix, LiteLLM's digit-string
`code`, OpenRouter's integer `code`, Anthropic's `{"type":"error", …}`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

# Failure kinds the router and the injector use.
KINDS = ("missing_key", "invalid_key", "invalid_url", "no_channel", "model_not_found", "empty_model",
         "bad_request", "forbidden", "quota", "rate_limited", "concurrency", "server_error", "bad_gateway",
         "unavailable", "gateway_timeout", "overloaded", "too_large", "generic")

STATUS_KINDS = {400: "bad_request", 401: "invalid_key", 402: "quota", 403: "forbidden", 404: "model_not_found",
                413: "too_large", 429: "rate_limited", 500: "server_error", 502: "bad_gateway", 503: "unavailable",
                504: "gateway_timeout", 529: "overloaded"}

REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden",
           404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout", 413: "Payload Too Large",
           429: "Too Many Requests", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
           501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
           524: "A Timeout Occurred", 529: "Site is overloaded"}


@dataclass
class ErrorContext:
    request_id: str
    model: str = ""
    method: str = "POST"
    path: str = "/"
    lang: str = "en"
    key_masked: str = ""  # LiteLLM echoes the (masked) key it received
    status: int | None = None  # the status asked for by --fail (kinds map to a default otherwise)


def kind_for_status(status: int) -> str:
    return STATUS_KINDS.get(status, "generic")


def _dump(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def error_reply(style: str, kind: str, ctx: ErrorContext) -> tuple[int, bytes, list[tuple[str, str]]]:
    handler = _STYLES[style]
    status, body = handler(kind, ctx)
    if ctx.status is not None:
        status = ctx.status  # an injected `--fail STATUS` wins over the style's usual status
    return status, _dump(body), []


# -- OpenAI ----------------------------------------------------------------------------------
def _openai(kind: str, ctx: ErrorContext) -> tuple[int, dict]:
    def env(message: str, type_: str, code: str | None, param: str | None = None) -> dict:
        return {"error": {"message": message, "type": type_, "param": param, "code": code}}

    m = ctx.model
    table = {
        "missing_key": (401, env("You didn't provide an API key. You need to provide your API key in an "
                                 "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
                                 "invalid_request_error", None)),
        "invalid_key": (401, env(f"Incorrect API key provided: {ctx.key_masked}. You can find your API key at "
                                 "https://platform.openai.com/account/api-keys.", "invalid_request_error",
                                 "invalid_api_key")),
        "invalid_url": (404, env(f"Invalid URL ({ctx.method} {ctx.path})", "invalid_request_error", "")),
        "no_channel": (404, env(f"The model `{m}` does not exist or you do not have access to it.",
                                "invalid_request_error", "model_not_found")),
        "model_not_found": (404, env(f"The model `{m}` does not exist or you do not have access to it.",
                                     "invalid_request_error", "model_not_found")),
        "empty_model": (400, env("you must provide a model parameter", "invalid_request_error", None)),
        "bad_request": (400, env("We could not parse the JSON body of your request.", "invalid_request_error",
                                 None)),
        "forbidden": (403, env(f"Project does not have access to model `{m}`.", "invalid_request_error",
                               "model_not_found")),
        "quota": (429, env("You exceeded your current quota, please check your plan and billing details.",
                           "insufficient_quota", "insufficient_quota")),
        "rate_limited": (429, env(f"Rate limit reached for {m} in organization org-mock on requests per min (RPM): "
                                  "Limit 3, Used 3, Requested 1. Please try again in 20s.", "requests",
                                  "rate_limit_exceeded")),
        "concurrency": (429, env(f"Rate limit reached for {m} in organization org-mock on requests per min (RPM): "
                                 "Limit 3, Used 3, Requested 1. Please try again in 20s.", "requests",
                                 "rate_limit_exceeded")),
        "server_error": (500, env("The server had an error while processing your request. Sorry about that!",
                                  "server_error", None)),
        "bad_gateway": (502, env("Bad gateway.", "server_error", None)),
        "unavailable": (503, env("The engine is currently overloaded, please try again later", "server_error",
                                 "server_is_overloaded")),
        "gateway_timeout": (504, env("Gateway timeout.", "server_error", None)),
        "overloaded": (529, env("The engine is currently overloaded, please try again later", "server_error",
                                "server_is_overloaded")),
        "too_large": (413, env("Request too large.", "invalid_request_error", None)),
    }
    return table.get(kind) or (ctx.status or 500, env(f"mock injected HTTP {ctx.status}", "server_error", None))


# -- one-api / new-api ------------------------------------------------------------------------
def _oneapi_family(new: bool):
    type_ = "new_api_error" if new else "one_api_error"

    def handler(kind: str, ctx: ErrorContext) -> tuple[int, dict]:
        en = new and ctx.lang == "en"
        m = ctx.model
        suffix = f" (request id: {ctx.request_id})"

        def env(message: str, code: str | None = "", with_code: bool = True) -> dict:
            error: dict = {"message": message + suffix, "type": type_}
            if new:  # new-api always has `code` (often ""); one-api's auth-layer errors have none
                error["code"] = code or ""
            elif with_code:
                error["param"] = ""
                error["code"] = code
            return {"error": error}

        table: dict[str, tuple[int, dict]] = {
            "missing_key": (401, env("Invalid token" if en else ("无效的令牌" if new else "未提供令牌"),
                                     with_code=False)),
            "invalid_key": (401, env("Invalid token" if en else "无效的令牌", with_code=False)),
            "invalid_url": (404, {"error": {"message": f"Invalid URL ({ctx.method} {ctx.path})",
                                            "type": "invalid_request_error", "param": "", "code": ""}}),
            "no_channel": (503, env(f"No available channel for model {m} under group default (distributor)" if en
                                    else (f"分组 default 下模型 {m} 无可用渠道（distributor）" if new
                                          else f"当前分组 default 下对于模型 {m} 无可用渠道"),
                                    "model_not_found", with_code=False)),
            "empty_model": (400, env("Model name not specified, model name cannot be empty" if en
                                     else "未指定模型名称，模型名称不能为空", "", with_code=False)),
            "bad_request": (400, env("Invalid request: the body is not valid JSON" if en else "无效的请求",
                                     "invalid_request")),
            "forbidden": (403, env(f"This token has no access to model {m}" if en
                                   else (f"该令牌无权访问模型 {m}" if new else f"该令牌无权使用模型：{m}"),
                                   "access_denied" if new else None, with_code=False)),
            "quota": (403, env("Insufficient user quota, remaining quota: ＄0.000000" if en
                               else ("用户额度不足, 剩余额度: ＄0.000000" if new else "user quota is not enough"),
                               "insufficient_user_quota")),
            "rate_limited": (429, env("You have reached the request limit: at most 60 requests in 1 minute" if en
                                      else ("您已达到请求数限制：1分钟内最多请求60次" if new
                                            else "当前分组上游负载已饱和，请稍后再试"),
                                      "" if new else None)),
            "concurrency": (429, env("You have reached the concurrency limit: at most 10 requests at the same "
                                     "time, please wait for running requests to finish" if en
                                     else "您已达到并发请求限制：最多同时进行 10 个请求，请等待已有请求完成",
                                     "token_concurrency_limit_reached" if new else None)),
            "server_error": (500, env("do_request_failed: Post \"https://upstream.example/v1/chat/completions\": "
                                      "EOF", "do_request_failed")),
            "bad_gateway": (502, env("bad response status code 502", "bad_response_status_code")),
            "unavailable": (503, env("upstream load is saturated, please try again later" if en
                                     else "当前分组上游负载已饱和，请稍后再试", "")),
            "gateway_timeout": (504, env("channel:response_time_exceeded", "channel:response_time_exceeded")),
            "overloaded": (503, env("system_cpu_overloaded" if new else "当前分组上游负载已饱和，请稍后再试",
                                    "system_cpu_overloaded" if new else None)),
            "too_large": (413, env("read_request_body_failed", "read_request_body_failed")),
        }
        table["model_not_found"] = table["no_channel"]  # unknown model == no channel on these gateways
        return table.get(kind) or (ctx.status or 500, env(f"mock injected HTTP {ctx.status}", ""))

    return handler


# -- LiteLLM ---------------------------------------------------------------------------------
def _litellm(kind: str, ctx: ErrorContext) -> tuple[int, dict]:
    def env(status: int, message: str, type_: str) -> tuple[int, dict]:
        return status, {"error": {"message": message, "type": type_, "param": "None", "code": str(status)}}

    m = ctx.model
    table = {
        "missing_key": env(401, "Authentication Error, No api key passed in.", "auth_error"),
        "invalid_key": env(401, "Authentication Error, Invalid proxy server token passed. Received API Key = "
                           f"{ctx.key_masked}, Key Hash (Token) =e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934c. "
                           "Unable to find token in cache or `LiteLLM_VerificationTokenTable`",
                           "token_not_found_in_db"),
        "no_channel": env(400, f"/chat/completions: Invalid model name passed in model={m}. Call `/v1/models` to "
                          "view available models for your key.", "None"),
        "empty_model": env(400, "Invalid model name passed in model=None", "None"),
        "bad_request": env(400, "Invalid JSON payload", "None"),
        "forbidden": env(401, f"key not allowed to access model. This key can only access models=['other']. "
                         f"Tried to access {m}", "key_model_access_denied"),
        "quota": env(429, "Budget has been exceeded! Current cost: 10.02, Max budget: 10.0", "budget_exceeded"),
        "rate_limited": env(429, "LiteLLM Rate Limit Handler for rate limit type = key. Crossed TPM / RPM / Max "
                            "Parallel Request Limit. current rpm: 61, rpm limit: 60", "None"),
        "concurrency": env(429, "Max parallel request limit reached.", "None"),
        "server_error": env(500, f"litellm.InternalServerError: OpenAIException - Connection error. Received "
                            f"Model Group={m}", "None"),
        "unavailable": env(503, f"litellm.ServiceUnavailableError: There are no healthy deployments for "
                           f"model={m}", "None"),
    }
    table["model_not_found"] = table["no_channel"]
    table["invalid_url"] = (404, {"detail": "Not Found"})
    return table.get(kind) or env(ctx.status or 500, f"mock injected HTTP {ctx.status}", "None")


# -- OpenRouter ------------------------------------------------------------------------------
def _openrouter(kind: str, ctx: ErrorContext) -> tuple[int, dict]:
    def env(status: int, message: str, metadata: dict | None = None) -> tuple[int, dict]:
        error: dict = {"code": status, "message": message}
        if metadata:
            error["metadata"] = metadata
        return status, {"error": error}

    m = ctx.model
    table = {
        "missing_key": env(401, "No auth credentials found"),
        "invalid_key": env(401, "User not found."),
        "no_channel": env(503, "No allowed providers are available for the selected model."),
        "model_not_found": env(400, f"{m} is not a valid model ID"),
        "empty_model": env(400, "No models provided"),
        "bad_request": env(400, "Invalid JSON"),
        "forbidden": env(403, "This model is not available in your region."),
        "quota": env(402, "Insufficient credits. Add more using https://openrouter.ai/settings/credits",
                     {"limit_source": "openrouter_credits"}),
        "rate_limited": env(429, "Rate limit exceeded: free-models-per-min.",
                            {"provider_name": None, "raw": "Rate limit exceeded"}),
        "concurrency": env(429, "Rate limit exceeded: limit_rpm/…", {"provider_name": None}),
        "server_error": env(500, "Internal Server Error"),
        "bad_gateway": env(502, "Provider returned error", {"provider_name": "Mock", "raw": "upstream failed"}),
        "unavailable": env(503, "No available model provider that meets your routing requirements"),
    }
    table["invalid_url"] = (404, {"error": {"code": 404, "message": "Not Found"}})
    return table.get(kind) or env(ctx.status or 500, f"mock injected HTTP {ctx.status}")


# -- Anthropic -------------------------------------------------------------------------------
def _anthropic(kind: str, ctx: ErrorContext) -> tuple[int, dict]:
    def env(status: int, type_: str, message: str) -> tuple[int, dict]:
        return status, {"type": "error", "error": {"type": type_, "message": message},
                        "request_id": f"req_{ctx.request_id}"}

    table = {
        "missing_key": env(401, "authentication_error", "x-api-key header is required"),
        "invalid_key": env(401, "authentication_error", "invalid x-api-key"),
        "invalid_url": env(404, "not_found_error", "Not Found"),
        "no_channel": env(404, "not_found_error", f"model: {ctx.model}"),
        "model_not_found": env(404, "not_found_error", f"model: {ctx.model}"),
        "empty_model": env(400, "invalid_request_error", "model: Field required"),
        "bad_request": env(400, "invalid_request_error", "The request body is not valid JSON."),
        "forbidden": env(403, "permission_error", "Your API key does not have permission to use the specified "
                         "resource."),
        "quota": env(400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. "
                     "Please go to Plans & Billing to upgrade or purchase credits."),
        "rate_limited": env(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate "
                            "limit. Please try again later."),
        "concurrency": env(429, "rate_limit_error", "Number of concurrent connections has exceeded your rate "
                           "limit. Please try again later."),
        "server_error": env(500, "api_error", "Internal server error"),
        "unavailable": env(529, "overloaded_error", "Overloaded"),
        "overloaded": env(529, "overloaded_error", "Overloaded"),
        "too_large": env(413, "request_too_large", "Request exceeds the maximum allowed number of bytes."),
    }
    return table.get(kind) or env(ctx.status or 500, "api_error", f"mock injected HTTP {ctx.status}")


_STYLES = {"openai": _openai, "one-api": _oneapi_family(False), "new-api": _oneapi_family(True),
           "litellm": _litellm, "openrouter": _openrouter, "anthropic": _anthropic}


def stream_error_payload(style: str, ctx: ErrorContext) -> dict:
    """The JSON of an error that arrives inside an OpenAI-format stream after HTTP 200."""
    if style == "anthropic":
        return {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    _, body = _STYLES[style]("server_error", ctx)
    return body


HTML_PAGE = (b"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>TaoToken</title>"
             b"<script type=\"module\" src=\"/assets/index.js\"></script></head><body><div id=\"root\"></div>"
             b"<noscript>You need to enable JavaScript to run this app.</noscript></body></html>")
