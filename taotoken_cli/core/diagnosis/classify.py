"""Map an Observation (status, headers, body, exception, URL) to a catalogue entry.

Reads the error shapes of OpenAI, one-api/new-api (Chinese messages included), LiteLLM,
OpenRouter and Anthropic (shared/reference/gateway-errors.md). `classify` returns None when the
observation is a success for the kind of call it was.

The knowledge lives in tables (`BODY_RULES`, `EXCEPTION_RULES`, `STATUS_FALLBACK`): marker -> code.
The functions below only normalise what was observed and walk those tables in order.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from taotoken_cli.core.base.fix import Fix, texts, unique
from taotoken_cli.core.base.i18n import N_, _, current, ngettext
from taotoken_cli.core.base.oserrors import os_error_text
from taotoken_cli.core.diagnosis import proxy_answer
from taotoken_cli.core.diagnosis.body import SERVER_MESSAGE_LIMIT, ErrorBody, parse_body
from taotoken_cli.core.diagnosis.catalogue import CONDITIONS, Entry, Step, get
from taotoken_cli.core.diagnosis.context import DiagnosisContext, context_for, root_of
from taotoken_cli.core.diagnosis.evidence import named_model, parse_retry_after, request_id
from taotoken_cli.core.net.gateway import Observation
from taotoken_cli.core.platform.shells import in_shell_fix


@dataclass
class Diagnosis:
    """One failure: its catalogue entry plus what this occurrence showed.

    `context` fills the entry's placeholders; a value in it means the situation has that value
    (`proxy`, `request_id`, `retry_after` decide which conditional fixes apply). `generic` is for
    `explain`: no situation, so every conditional fix is shown with its condition.

    `title`, `causes()` and `fixes()` are in the user's language (translated here, when produced; `details`
    and `first_fix` come translated from whoever adds them); --json runs in English, so `to_dict()` is English
    there."""

    code: str
    entry: Entry
    server_message: str | None = None  # what the server said, trimmed, key masked by the output layer
    retry_after_s: float | None = None
    details: list[str] = field(default_factory=list)
    context: DiagnosisContext = field(default_factory=DiagnosisContext)
    first_fix: Fix | str | None = None  # a fix specific to this occurrence, shown before the entry's own
    request_id: str | None = None  # the id the gateway gave this request (header or body), if any
    model: str | None = None  # the model the server's message names (for close matches), if any
    generic: bool = False

    @property
    def title(self) -> str:
        return _(self.entry.title)

    def fixes(self) -> list[Fix]:
        out: list[Fix | str] = [self.first_fix] if self.first_fix else []
        for step in self.entry.fixes:
            if step.when is None:
                out.append(self._fix(step))
            elif self.generic:
                yes, no = CONDITIONS[step.when]
                # i18n: a fix that applies only in some situations, as `explain` lists it: (when …) fix
                out.append(Fix.of(_("({condition}) {fix}"), condition=_(yes), fix=self._fix(step)))
                if step.otherwise:
                    out.append(Fix.of(_("({condition}) {fix}"), condition=_(no), fix=self._fix(step.otherwise)))
            elif self.context.has(step.when):
                out.append(self._fix(step))
            elif step.otherwise:
                out.append(self._fix(step.otherwise))
        at_source = [Fix.coerce(fix).replace_commands(self.context.at_source) for fix in out]
        if self.context.shell:  # the catalogue's `export X=…` as the user's shell writes it
            at_source = [in_shell_fix(fix, self.context.shell) for fix in at_source]
        return unique(at_source)  # the situation's own fix may repeat a catalogue line

    def causes(self) -> list[str]:
        return [self._filled(cause) for cause in self.entry.causes]

    def _fix(self, step: Step) -> Fix:
        """A catalogue step in the user's language, its placeholders filled from the situation, its commands
        commands."""
        commands = {name: self.context.filled(command) for name, command in step.commands}
        return Fix.fill(_(step.text), lambda name: commands[name] if name in commands else self.context.value(name))

    def _filled(self, text: str) -> str:
        """A catalogue text in the user's language, its placeholders filled from the situation."""
        return str(Fix.fill(_(text), self.context.value))

    def to_dict(self) -> dict[str, Any]:
        fixes = self.fixes()
        return {"code": self.code, "title": self.title, "exit_code": int(self.entry.exit),
                "retry": self.entry.retry, "server_message": self.server_message,
                "retry_after_s": self.retry_after_s, "causes": self.causes(),
                "fixes": texts(fixes), "fix_steps": [fix.to_dict() for fix in fixes], "details": self.details,
                "request_id": self.request_id, "model": self.model}


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BodyRule:
    """`code` applies when any of `markers` occurs in the normalised error text (lower case:
    type, code, message without the request id, metadata), all of `also` occur too, the status is
    in `statuses` (empty = any) and the body shape is not in `not_shapes`. `note` is added to the
    details when the rule decides."""

    code: str
    markers: tuple[str, ...]
    statuses: tuple[int, ...] = ()
    also: tuple[str, ...] = ()
    not_shapes: tuple[str, ...] = ()
    not_hosts: tuple[str, ...] = ()
    note: str = ""  # an English msgid (N_), translated when it is added


_AUTH_STATUSES = (200, 400, 401, 403)
_GATEWAY_SHAPES = ("one-api", "new-api", "litellm")

# First match wins: specific meanings before generic ones (e.g. a per-key quota message before
# "invalid token", no-channel before model_not_found because new-api uses that code for both).
BODY_RULES: tuple[BodyRule, ...] = (
    # new-api/one-api: the key's own quota (令牌额度不足: model/token.go's PreConsumeTokenQuota) before the user's
    BodyRule("quota.key_exhausted", ("额度已用尽", "令牌额度不足", "tokenstatusexhausted",
                                     "pre_consume_token_quota_failed", "openrouter_key_limit", "key limit exceeded",
                                     "budget has been exceeded! key=")),
    # LiteLLM 422 for a key's per-model budget: "LiteLLM Virtual Key: <hash>, … exceeded budget for model=m"
    BodyRule("quota.key_exhausted", ("litellm virtual key:",), also=("exceeded budget",)),
    BodyRule("quota.exhausted", ("insufficient_quota", "credit_balance_exhausted", "insufficient_user_quota",
                                 "user quota is not enough", "用户额度不足", "预扣费额度失败", "订阅额度不足",
                                 "余额不足", "额度不足", "请充值",
                                 "budget_exceeded", "budget has been exceeded", "credit balance is too low",
                                 "enforced_spend_limit_reached", "insufficient credits", "openrouter_credits",
                                 "no credits remaining", "exceeded your current quota")),
    BodyRule("rate.concurrency", ("并发请求限制", "token_concurrency_limit_reached", "token_concurrency_unavailable",
                                  "max parallel request limit reached", "concurrency limit")),
    BodyRule("upstream.saturated", ("上游负载已饱和", "upstream_saturated", "overloaded_error", "server_is_overloaded",
                                    "engine is currently overloaded", "system_cpu_overloaded",
                                    "system_memory_overloaded", "system_disk_overloaded",
                                    # LiteLLM's router: every deployment of the model is at its limit / cooling down
                                    "no deployments available", "all_deployments_in_cooldown")),
    # LiteLLM passing on the provider's 429 ("litellm.RateLimitError: … LiteLLM: model group 'm' failed …"):
    # the gateway's upstream account for this model is limited, not your key (that reads "rate limit exceeded
    # for api_key").
    BodyRule("upstream.saturated", ("litellm.ratelimiterror",), also=("model group",)),
    BodyRule("rate.limited", ("rate_limit_exceeded", "rate_limit_error", "rate limit", "请求数限制", "总请求数限制",
                              "过于频繁", "太频繁", "频率超限", "频率过高", "限流",  # 您的请求过于频繁，请稍后再试
                              "too many requests", "ratelimit")),
    BodyRule("auth.expired_key", ("已过期", "expired_key", "expired key"), _AUTH_STATUSES),
    BodyRule("auth.key_disabled", ("状态不可用", "令牌已被禁用", "key is disabled", "token is disabled"),
             _AUTH_STATUSES),
    BodyRule("auth.account_banned", ("已被封禁", "user is banned", "account is banned"), _AUTH_STATUSES),
    BodyRule("auth.ip_not_allowed", ("指定网段", "不在令牌允许访问", "ip not allowed", "ip is not allowed",
                                     "ip address is not allowed"), _AUTH_STATUSES),
    BodyRule("auth.key_suffix", ("不支持指定渠道",), _AUTH_STATUSES),
    BodyRule("auth.forbidden_model", ("无权使用模型", "无权访问模型", "无权访问任何模型", "has no access to model",
                                      "no access to model", "not allowed to access model",
                                      "key not allowed to access model", "not available for this api key",
                                      "key_model_access_denied", "team_model_access_denied"), _AUTH_STATUSES),
    # OpenRouter's 503 when the account's provider settings (allowed/ignored providers, data policy) leave no
    # provider for the model: a routing choice to change, not an outage to wait out.
    BodyRule("model.no_channel", ("no allowed providers",),
             note=N_("OpenRouter: your account's provider settings (allowed providers, data policy) exclude every "
                     "provider of this model; change them at openrouter.ai/settings or pick another model")),
    BodyRule("model.no_channel", ("无可用渠道", "可用渠道失败", "no available channel", "no healthy deployments",
                                  "no available model provider", "no endpoints found")),
    BodyRule("auth.forbidden_group", ("无权访问", "分组 ", "group is deprecated"), (401, 403)),
    # OpenAI/Anthropic's own "bad key" text, not wrapped by the gateway: the *gateway's* upstream key failed.
    BodyRule("auth.upstream_credential", ("incorrect api key provided", "invalid x-api-key"), (401, 403),
             not_shapes=_GATEWAY_SHAPES, not_hosts=("api.openai.com", "api.anthropic.com")),
    BodyRule("auth.key_not_received", ("未提供令牌", "no api key passed", "you didn't provide an api key",
                                       "missing authentication", "missing api key", "no api key provided"),
             _AUTH_STATUSES),
    BodyRule("auth.invalid_key", ("no_db_connection", "no connected db"), _AUTH_STATUSES,
             note=N_("this LiteLLM proxy has no key database: only its master key is accepted")),
    BodyRule("auth.invalid_key", ("无效的令牌", "invalid token", "token_not_found_in_db", "invalid proxy server token",
                                  "authentication_error", "invalid_api_key", "incorrect api key", "invalid api key",
                                  "virtual key expected", "auth_error", "invalid credentials", "unauthorized",
                                  "invalid authentication", "invalid x-api-key"), _AUTH_STATUSES),
    BodyRule("model.missing", ("未指定模型名称", "model name not specified", "you must provide a model parameter",
                               "model is required")),
    BodyRule("model.not_found", ("model_not_found", "invalid model name", "model not found", "模型不存在",
                                 "unknown model")),
    BodyRule("model.not_found", ("does not exist", "not_found_error"), also=("model",)),
    BodyRule("url.not_implemented", ("api_not_implemented", "api not implemented")),
    BodyRule("request.too_large", ("read_request_body_failed", "request_too_large", "request entity too large")),
    BodyRule("url.not_found", ("invalid url", "not found", "no route", "unknown path"), (404, 405)),
    BodyRule("server.timeout", ("cf_gateway_timeout", "response_time_exceeded", "a timeout occurred",
                                "gateway time-out", "gateway timeout")),
    BodyRule("server.error", ("do_request_failed", "请求上游地址失败", "bad_response_status_code",
                              "read_response_body_failed", "empty_response", "数据库错误", "database error",
                              "server_error", "internal server error", "internal_server_error")),
    BodyRule("auth.forbidden", ("permission_error", "permission denied", "forbidden"), (403,)),
)

# When no body rule matched: the status alone decides.
STATUS_FALLBACK: dict[int, str] = {
    400: "request.invalid", 401: "auth.invalid_key", 402: "quota.exhausted", 403: "auth.forbidden",
    404: "url.not_found", 405: "url.not_found", 407: "proxy.auth_required", 408: "net.timeout",
    410: "url.not_found", 413: "request.too_large", 422: "request.invalid", 429: "rate.limited",
    501: "url.not_implemented", 503: "upstream.saturated", 504: "server.timeout", 522: "server.timeout",
    524: "server.timeout", 529: "upstream.saturated",
}


@dataclass(frozen=True)
class ExceptionRule:
    """`code` applies when an exception in the chain has one of `classes` (by name) or its text
    contains one of `markers`; `proxy_only` rows apply only when a proxy was in use."""

    code: str
    classes: tuple[str, ...] = ()
    markers: tuple[str, ...] = ()
    proxy_only: bool = False
    direct_only: bool = False  # through a proxy the same text can be the proxy's doing


EXCEPTION_RULES: tuple[ExceptionRule, ...] = (
    ExceptionRule("url.plain_http", ("InsecureTransport",)),
    # The bytes arrived but their Content-Encoding (gzip, …) is corrupt: an answer problem, not the network.
    ExceptionRule("resp.not_json", ("DecodingError",)),
    ExceptionRule("proxy.socks_unsupported", markers=("socksio", "using socks proxy")),
    ExceptionRule("proxy.auth_required", markers=("407 proxy authentication", "proxy authentication required")),
    # httpx raises ProxyError when the proxy answers CONNECT (https) with its own non-2xx status.
    ExceptionRule("proxy.refused", ("ProxyError",)),
    ExceptionRule("proxy.unreachable", markers=("unknown scheme for proxy", "proxy url")),
    # The TLS ClientHello was answered with plain http ("HTTP/1.1 400…" read as a TLS record): an http port.
    ExceptionRule("url.tls_to_plain_http", markers=("wrong_version_number", "wrong version number",
                                                    "record layer failure", "packet length too long"),
                  direct_only=True),
    ExceptionRule("net.tls", ("SSLError", "SSLCertVerificationError", "SSLZeroReturnError", "SSLEOFError"),
                  ("certificate_verify_failed", "certificate verify failed", "wrong_version_number",
                   "wrong version number", "tlsv1 alert", "sslv3 alert", "ssl:")),
    ExceptionRule("proxy.unreachable", ("ConnectError", "ConnectTimeout", "ConnectionRefusedError"),
                  proxy_only=True),
    ExceptionRule("net.dns", ("gaierror",), ("name or service not known", "nodename nor servname",
                                             "temporary failure in name resolution", "getaddrinfo failed",
                                             "no address associated", "failed to resolve", "name resolution")),
    ExceptionRule("net.refused", ("ConnectionRefusedError",), ("connection refused", "errno 111", "econnrefused",
                                                               "actively refused")),
    ExceptionRule("net.connect_timeout", ("ConnectTimeout",)),
    ExceptionRule("net.timeout", ("ReadTimeout", "WriteTimeout", "PoolTimeout", "TimeoutException", "TimeoutError",
                                  "DeadlineExceeded"), ("timed out", "timeout")),
    ExceptionRule("net.reset", ("RemoteProtocolError", "ReadError", "WriteError", "ConnectionResetError",
                                "BrokenPipeError", "ConnectionAbortedError", "IncompleteRead"),
                  ("connection reset", "server disconnected", "peer closed", "incomplete", "broken pipe")),
    ExceptionRule("net.refused", ("ConnectError",)),
)

# What a proxy's own error page looks like; a JSON error envelope is the gateway's, passed on.



def match_body_rule(body: ErrorBody, status: int | None, host: str) -> BodyRule | None:
    haystack = body.haystack
    for rule in BODY_RULES:
        if rule.statuses and status not in rule.statuses:
            continue
        if body.shape in rule.not_shapes or host in rule.not_hosts:
            continue
        if any(marker in haystack for marker in rule.markers) and all(extra in haystack for extra in rule.also):
            return rule
    return None


def codes_for_message(text: str, status: int | None = None) -> list[str]:
    """Every code a server's message (Chinese or English) reads as, by the same body rules the classifier uses,
    first match first; with `status`, only the rules that apply to it (for `taotoken explain "无效的令牌"`)."""
    body = ErrorBody("text", True, text)
    found = [rule.code for rule in BODY_RULES if (status is None or not rule.statuses or status in rule.statuses)
             and any(marker in body.haystack for marker in rule.markers)
             and all(extra in body.haystack for extra in rule.also)]
    return list(dict.fromkeys(found))


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------

def _exception_chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    while exc is not None and exc not in chain and len(chain) < 10:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return chain


def classify_exception(exc: BaseException, proxy: str | None) -> str:
    chain = _exception_chain(exc)
    classes = {cls.__name__ for item in chain for cls in type(item).__mro__}
    text = " | ".join(f"{type(item).__name__}: {item}" for item in chain).lower()
    for rule in EXCEPTION_RULES:
        if (rule.proxy_only and not proxy) or (rule.direct_only and proxy):
            continue
        if classes.intersection(rule.classes) or any(marker in text for marker in rule.markers):
            return rule.code
    return "net.error"


def exception_message(exc: BaseException) -> str:
    """The most specific text in the chain (the OS error, not httpx's wrapper); in Chinese the OS error by its
    errno (`ConnectError: 连接被拒绝（ECONNREFUSED）`), in English as the OS said it."""
    chain = _exception_chain(exc)
    os_error = next((item for item in reversed(chain) if isinstance(item, OSError) and item.errno is not None), None)
    if os_error is not None and current() != "en":
        return _trim(f"{type(exc).__name__}: {os_error_text(os_error)}")
    texts = [str(item).strip() for item in chain if str(item).strip()]
    text = texts[-1] if texts else type(exc).__name__
    if texts and texts[0] != text and len(texts[0]) < 120:
        text = f"{texts[0]} ({text})" if text not in texts[0] else texts[0]
    return _trim(f"{type(exc).__name__}: {text}")


def _trim(text: str | None, limit: int = SERVER_MESSAGE_LIMIT) -> str | None:
    if text is None:
        return None
    from taotoken_cli.core.base.masking import mask_unknown_keys

    text = mask_unknown_keys(" ".join(str(text).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def refine_url_code(url: str, message: str | None) -> str:
    """A 404/HTML answer: name the URL mistake when the URL (or the server's echo of it) shows one."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    text = (parts.path + " " + (message or "")).lower()
    if "/v1/v1" in text:
        return "url.doubled_v1"
    # An endpoint path followed by more path: the endpoint was pasted into the base URL.
    if re.search(r"/(chat/completions|completions|responses|messages)/", text) or \
            re.search(r"/models/(v1|chat|completions|responses|messages|models)\b", text):
        return "url.endpoint_in_base"
    if parts.query or "?" in (message or ""):
        return "url.query_string"
    return "url.not_found"


_INVALID_URL = re.compile(r"invalid url \((?:get|post|put|delete|patch) (/v1/(?:responses|messages)(?:/[^)\s]*)?)\)",
                          re.IGNORECASE)


def _unserved_endpoint(message: str | None) -> str | None:
    """The endpoint path when the server's 404 says it routes /v1 but not this endpoint (new-api's RelayNotFound,
    controller/relay.go: "Invalid URL (POST /v1/responses)")."""
    match = _INVALID_URL.search(message or "")
    return match.group(1) if match else None


def _success_shape(expect: str, data: Any) -> str | None:
    """None when `data` is a usable answer for `expect`, else the code to report."""
    if expect == "json":
        return None
    if not isinstance(data, dict):
        return "resp.no_models" if expect == "models" else "resp.no_choices"
    if expect == "models":
        return None if isinstance(data.get("data"), list) else "resp.no_models"
    if expect == "chat":
        choices = data.get("choices")
        if isinstance(choices, list) and choices:
            return None
        # The usage-only final chunk of a stream (stream_options.include_usage) is legitimate.
        if choices == [] and data.get("usage") and data.get("object") == "chat.completion.chunk":
            return None
        return "resp.no_choices"
    if expect == "messages":
        return None if isinstance(data.get("content"), list) and data.get("type", "message") == "message" \
            else "resp.no_choices"
    if expect == "responses":
        return None if isinstance(data.get("output"), list) or data.get("output_text") else "resp.no_choices"
    return None


# ---------------------------------------------------------------------------------------------
# The classifier
# ---------------------------------------------------------------------------------------------

def classify(obs: Observation, *, expect: str = "json",
             context: DiagnosisContext | None = None) -> Diagnosis | None:
    """`expect`: "models" (a model list), "chat" (choices), "messages", "responses", "stream", "json".

    Returns None for a success; otherwise a Diagnosis naming the catalogue entry, the server's
    own words (trimmed, unknown keys masked) and the wait hint for rate limits.
    """
    ctx = (context or DiagnosisContext()).over(context_for(url=obs.url, proxy=obs.proxy))
    code, message, details = _decide(obs, expect, ctx)
    if code is None:
        return None
    if code == "url.tls_to_plain_http":
        ctx.http_base = "http://" + ctx.base.split("://", 1)[-1]
    diagnosis = Diagnosis(code, get(code), _trim(message), None, details, ctx)
    if code.startswith(("rate.", "upstream.")) or obs.status in (429, 503, 529):
        diagnosis.retry_after_s = parse_retry_after(obs.headers, message)
    if not diagnosis.entry.retry and code.startswith("quota."):
        diagnosis.retry_after_s = None  # never suggest waiting out a quota problem
    if diagnosis.retry_after_s is not None:
        ctx.retry_after = f"{diagnosis.retry_after_s:g}"
    if obs.error is None and obs.status is not None:
        _add_answer_evidence(diagnosis, obs, message)
    return diagnosis


def _add_answer_evidence(diagnosis: Diagnosis, obs: Observation, message: str | None) -> None:
    """The request id and the model the answer names, into the diagnosis and its fix context."""
    diagnosis.request_id = _trim(request_id(obs.headers, message, obs.json()), 120)
    if diagnosis.request_id:
        diagnosis.context.request_id = diagnosis.request_id
        if diagnosis.request_id not in (diagnosis.server_message or ""):
            diagnosis.details.append(_("request id: {request_id}").format(request_id=diagnosis.request_id))
    if diagnosis.code != "proxy.refused":
        diagnosis.model = named_model(message)
    if diagnosis.model and not diagnosis.context.model:
        diagnosis.context.model = diagnosis.model


def _decide(obs: Observation, expect: str, ctx: DiagnosisContext) -> tuple[str | None, str | None, list[str]]:
    details: list[str] = []
    if obs.error is not None:
        marks = proxy_answer.evidence(obs)  # e.g. the proxy refused the CONNECT with its own status
        if marks:
            # i18n: "; " joins the pieces of evidence (and the numbered causes in check's `likely:` line)
            details.append(_("the proxy {proxy} answered itself, not the gateway: {evidence}").format(
                proxy=obs.proxy, evidence=_("; ").join(marks)))
            return proxy_answer.CODE, exception_message(obs.error), details
        code = classify_exception(obs.error, obs.proxy)
        chunks = obs.stream.content_deltas if obs.stream is not None else 0
        if chunks and code == "net.reset":
            details.append(ngettext("{count} content chunk arrived before the connection ended",
                                    "{count} content chunks arrived before the connection ended", chunks).format(
                count=chunks))
            return "stream.truncated", exception_message(obs.error), details
        if chunks:
            details.append(ngettext("{count} content chunk arrived before that",
                                    "{count} content chunks arrived before that", chunks).format(count=chunks))
        if obs.proxy and code.startswith("proxy."):
            details.append(_("proxy in use: {proxy}").format(proxy=obs.proxy))
        return code, exception_message(obs.error), details

    status = obs.status or 0
    if status == 407:
        return "proxy.auth_required", None, details
    if 300 <= status < 400:
        location = obs.headers.get("location")
        if location:
            from urllib.parse import urljoin

            target = urljoin(obs.url, location)  # a relative Location is relative to the URL called
            details.append(_("redirects to {location}").format(location=target))
            # The root the target implies, port and path kept: the fix must name where the server points.
            ctx.redirect_base = root_of(target)
        return "url.redirect", location, details

    if obs.stream is not None and 200 <= status < 300:
        return _decide_stream(obs, details)

    body = parse_body(obs)
    host = ctx.host
    marks = proxy_answer.evidence(obs)
    if marks:
        details.append(_("HTTP {status} from the proxy {proxy}, not from the gateway: {evidence}").format(
            status=status, proxy=obs.proxy, evidence=_("; ").join(marks)))
        return proxy_answer.CODE, body.message or _("HTTP {status} from the proxy").format(status=status), details
    if body.shape == "html":
        if 200 <= status < 300 or status in (404, 405):
            return "url.html_page", body.message, details
        return _status_code(status, body, host, details), body.message, details

    if 200 <= status < 300:
        if body.is_error:
            if body.shape == "success_false":
                return "url.dashboard_api", body.message, details
            rule = match_body_rule(body, status, host)
            code = rule.code if rule else "resp.error_body"
            details.append(_("HTTP {status} carried an error body ({shape} format)").format(status=status,
                                                                                            shape=body.shape))
            return code, body.message, details
        if expect == "stream":
            if body.shape in ("empty", "text"):
                return "resp.not_json", body.message, details
            return "stream.not_sse", None, details
        if body.shape in ("empty", "text"):
            if expect == "json" and body.shape == "empty":
                return None, None, details
            return "resp.not_json", body.message, details
        code = _success_shape(expect, body.data)
        if code == "resp.no_models":
            details.append(_("the JSON has no 'data' list of models"))
        elif code:
            details.append(_("the JSON has no 'choices'") if expect == "chat" else _("the JSON has no content/output"))
        return code, None, details

    if status == 429 and body.shape == "empty":
        details.append(_("empty 429: the gateway's per-IP limiter (also counts wrong-URL probes)"))
    code = _status_code(status, body, host, details)
    if code.startswith("url.") and code != "url.not_implemented":
        code = refine_url_code(obs.url, body.message)
    unserved = _unserved_endpoint(body.message) if code == "url.not_found" else None
    if unserved:
        # new-api's NoRoute answer echoes the path it saw: exactly /v1/<endpoint> means its relay root is the one
        # called (a reverse proxy's prefix already stripped) and only this endpoint is missing.
        details.append(_("the gateway answered 'Invalid URL' for {path}: it has no such route").format(path=unserved))
        code = "url.not_implemented"
    if code == "quota.exhausted" and body.shape == "openai" and "x-oneapi-request-id" in obs.headers:
        details.append(_("OpenAI's quota error passed through the gateway: the gateway's upstream account may be "
                         "the one that is empty; ask the operator if your balance is fine"))
    if code in ("auth.key_not_received", "auth.invalid_key") and not obs.key_sent:
        code = "auth.missing_key"
    message = body.message if body.shape != "empty" else None
    return code, message, details


def _status_code(status: int, body: ErrorBody, host: str, details: list[str]) -> str:
    rule = match_body_rule(body, status, host) if body.is_error or body.message else None
    if rule:
        if rule.note:
            details.append(_(rule.note))
        return rule.code
    if status in STATUS_FALLBACK:
        return STATUS_FALLBACK[status]
    if status >= 500:
        return "server.error"
    if status >= 400:
        return "request.invalid"
    return "resp.error_body"


def _decide_stream(obs: Observation, details: list[str]) -> tuple[str | None, str | None, list[str]]:
    stream = obs.stream
    assert stream is not None
    if stream.error_event is not None:
        error = stream.error_event
        if isinstance(error, dict):
            body = ErrorBody("stream", True, str(error.get("message") or json.dumps(error, ensure_ascii=False)),
                             str(error.get("type") or "") or None,
                             None if error.get("code") is None else str(error.get("code")))
        else:
            body = ErrorBody("stream", True, str(error))
        rule = match_body_rule(body, obs.status, "")
        if rule:
            details.append(_("the error reads as {code} (see: taotoken explain {code})").format(code=rule.code))
        return "stream.error_event", body.message, details
    if stream.content_deltas == 0:
        if stream.finish_reason:
            details.append(ngettext("{count} event, no content, finish_reason={reason}",
                                    "{count} events, no content, finish_reason={reason}", stream.events).format(
                count=stream.events, reason=stream.finish_reason))
        else:
            details.append(ngettext("{count} event, no content", "{count} events, no content",
                                    stream.events).format(count=stream.events))
        return "stream.empty", None, details
    if not stream.done and stream.finish_reason is None:
        details.append(ngettext("{count} content chunk, then the connection closed without [DONE]",
                                "{count} content chunks, then the connection closed without [DONE]",
                                stream.content_deltas).format(count=stream.content_deltas))
        return "stream.truncated", None, details
    return None, None, details
