"""From one parsed HTTP request to the reply the mock gateway gives, plus its RequestRecord.

Order of checks follows one-api/new-api: route (any prefix ending in /v1; doubled or missing
/v1 answered the way those gateways answer it), then the key (TokenAuth), then the model
(distributor), then injected failures, then the answer.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from taotoken_cli import __version__
from taotoken_cli.cmd.mock import api, gemini
from taotoken_cli.cmd.mock.capacity import TokenBucket
from taotoken_cli.cmd.mock.error_bodies import HTML_PAGE, ErrorContext, error_reply, kind_for_status
from taotoken_cli.cmd.mock.options import GENERATION_FAULTS, STREAM_FAULTS, MockOptions, Timing
from taotoken_cli.cmd.mock.records import RequestRecord
from taotoken_cli.core.base.masking import mask_key

# Endpoint suffixes, longest first so /messages/count_tokens wins over /messages.
_ENDPOINTS = (("/chat/completions", "chat", "POST"), ("/messages/count_tokens", "count_tokens", "POST"),
              ("/responses", "responses", "POST"), ("/messages", "messages", "POST"), ("/models", "models", "GET"))
_MODEL_PATH = re.compile(r"^(?P<prefix>.*)/models/(?P<model>[^/]+)$")
_GENERATION = ("chat", "responses", "messages")
_WHITESPACE = re.compile(r"\s")


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]  # lower-case names
    body: bytes = b""


@dataclass
class Reply:
    status: int
    body: bytes = b""
    content_type: str | None = "application/json"
    headers: list[tuple[str, str]] = field(default_factory=list)
    events: list[api.Event] | None = None  # an SSE stream, paced by token index
    end: str = "normal"  # normal | reset (RST after a partial answer) | close (clean end, then close) | stall
    head_only: bool = False
    timing: Timing | None = None  # when the headers and each token are due (set by Router.handle)


@dataclass
class _Auth:
    kind: str
    key: str | None  # what the client presented (after the Bearer scheme)


class Router:
    def __init__(self, options: MockOptions) -> None:
        self.options = options
        self.seq = 0
        self._eligible = 0  # requests that could receive an injected failure
        self._id_prefix = time.strftime("%Y%m%d%H%M%S")
        self.bucket = TokenBucket(options.rate_limit) if options.rate_limit else None

    # -- helpers ------------------------------------------------------------------------------
    def _identity_headers(self, request_id: str) -> list[tuple[str, str]]:
        style = self.options.fail_style
        if style in ("one-api", "new-api"):
            headers = [("X-Oneapi-Request-Id", request_id)]
            if style == "new-api":
                headers.append(("X-New-Api-Version", f"v0.mock-{__version__}"))
            return headers
        if style == "openai":
            return [("x-request-id", f"req_{request_id}"), ("openai-processing-ms", "1")]
        if style == "anthropic":
            return [("request-id", f"req_{request_id}")]
        if style == "litellm":
            return [("x-litellm-call-id", request_id)]
        return []

    def _should_inject(self) -> bool:
        """Deterministic fraction: request n fails when floor(n*p) steps up (p=0.25 -> every 4th)."""
        self._eligible += 1
        n, p = self._eligible, self.options.fail_rate
        return int(n * p + 1e-9) > int((n - 1) * p + 1e-9)

    def _error(self, kind: str, record: RequestRecord, *, status: int | None = None,
               anthropic_endpoint: bool = False) -> Reply:
        style = self.options.fail_style
        ctx = ErrorContext(record.request_id, model=record.model or "", method=record.method, path=record.path,
                           lang=self.options.lang, key_masked=record.key_masked, status=status)
        code, body, headers = error_reply(style, kind, ctx)
        # new-api answers relay errors on /v1/messages in Claude's shape; auth errors stay OpenAI-shaped.
        if style == "new-api" and anthropic_endpoint and kind not in ("missing_key", "invalid_key"):
            message = json.loads(body)["error"]["message"]
            body = json.dumps({"type": "error", "error": {"type": "new_api_error", "message": message}},
                              ensure_ascii=False).encode()
        return Reply(code, body, headers=headers)

    # -- the pipeline -------------------------------------------------------------------------
    def handle(self, req: Request, received_at: float) -> tuple[Reply, RequestRecord]:
        self.seq += 1
        request_id = f"{self._id_prefix}{self.seq:08d}mock"
        path, _, query = req.target.partition("?")
        auth = _read_auth(req.headers)
        record = RequestRecord(
            seq=self.seq, method=req.method, path=path, query=query, endpoint="unknown", auth_kind=auth.kind,
            key_masked=mask_key(auth.key) if auth.key else "", model=None, response_model=None, stream=False,
            request_id=request_id, headers=_masked_headers(req.headers), received_at=received_at)
        reply = self._route(req, record, auth)
        if reply.timing is None:
            reply.timing = self.options.timing_for(record.model)
        reply.headers[:0] = self._identity_headers(request_id)
        if req.method == "HEAD":
            reply.head_only = True
        record.status = reply.status
        return reply, record

    def _route(self, req: Request, record: RequestRecord, auth: _Auth) -> Reply:
        opts = self.options
        path = record.path
        endpoint, prefix, method, model_id = _match_endpoint(path)
        if record.query and re.search(r"/(chat/completions|responses|messages|models)\b", record.query):
            record.flags.append("query-in-base")
        body = _json_object(req.body) if req.body else None
        if body is not None:  # logged even when the path is wrong
            model = body.get("model")
            record.model = model if isinstance(model, str) else (None if model is None else str(model))
            record.stream = body.get("stream") is True
            record.body = body
        for recording in opts.replay:
            if recording.answers(req.method, path):
                record.endpoint = endpoint or "replay"
                record.flags.append("replayed")
                return Reply(recording.status, recording.body, content_type=recording.content_type,
                             headers=list(recording.headers))
        gemini_route = gemini.match(path) if opts.gemini_api else None
        if gemini_route is not None and req.method in (gemini_route.http_method, "HEAD"):
            return self._gemini(gemini_route, body, record, auth)
        auth_ok = False
        if endpoint is not None:
            record.endpoint = endpoint
            auth_ok = self._auth_ok(record, auth)  # key mistakes are flagged whatever the path
            problem = _prefix_problem(prefix)
            if problem:
                record.flags.append(problem)
                if not opts.lenient_paths:
                    return self._wrong_path(record)
        if endpoint is None or req.method not in (method, "HEAD" if method == "GET" else method):
            if path in ("/api/status", "/status") and req.method in ("GET", "HEAD"):
                record.endpoint = "status"
                return Reply(200, json.dumps({"success": True, "message": "", "data": {
                    "version": f"mock-{__version__}", "system_name": "TaoToken (taotoken mock)",
                    "quota_per_unit": 500000}}).encode())
            return self._wrong_path(record)

        if not auth_ok:
            kind = "missing_key" if not auth.key else "invalid_key"
            return self._error(kind, record)

        if endpoint == "models":
            anthropic_list = "x-api-key" in req.headers and "anthropic-version" in req.headers
            reply = Reply(200, api.models_json(opts.listed_models, anthropic_list))
            return self._inject(record, reply, generation=False)
        if endpoint == "model":
            record.model = model_id
            if not opts.serves(model_id) or opts.no_channel_for(model_id):
                return self._error("model_not_found", record)
            return self._inject(record, Reply(200, api.model_json(model_id)), generation=False)

        anthropic_endpoint = endpoint in ("messages", "count_tokens")
        if body is None:
            return self._error("bad_request", record, anthropic_endpoint=anthropic_endpoint)
        if not record.model:
            return self._error("empty_model", record, anthropic_endpoint=anthropic_endpoint)
        if opts.no_channel_for(record.model):
            return self._error("no_channel", record, anthropic_endpoint=anthropic_endpoint)
        if not opts.serves(record.model):
            record.flags.append("unknown-model")
            return self._error("model_not_found", record, anthropic_endpoint=anthropic_endpoint)
        record.response_model = opts.aliases.get(record.model, record.model)
        if endpoint == "count_tokens":
            return Reply(200, json.dumps({"input_tokens": api.estimate_prompt_tokens(body)}).encode())
        return self._generate(endpoint, body, record, anthropic_endpoint)

    def _gemini(self, route: gemini.Route, body: dict[str, Any] | None, record: RequestRecord, auth: _Auth) -> Reply:
        """The Gemini API (mock/gemini.py): the same checks in the same order, its own paths and bodies."""
        opts = self.options
        record.endpoint, record.model, record.stream = route.endpoint, route.model or None, route.stream
        if auth.key is None and (key := gemini.query_key(record.query)):  # ?key= is the API's other way
            auth = _Auth("query-key", key)
            record.auth_kind, record.key_masked = auth.kind, mask_key(key)
        auth_ok = self._auth_ok(record, auth)
        problem = gemini.prefix_problem(route.prefix)
        if problem:
            record.flags.append(problem)
            if not opts.lenient_paths:
                return self._wrong_path(record)
        if not auth_ok:
            return self._error("missing_key" if not auth.key else "invalid_key", record)
        if route.endpoint == gemini.LIST:
            return self._inject(record, Reply(200, gemini.models_json(list(opts.listed_models))), generation=False)
        if body is None:
            return self._error("bad_request", record)
        if opts.no_channel_for(route.model):
            return self._error("no_channel", record)
        if not opts.serves(route.model):
            record.flags.append("unknown-model")
            return self._error("model_not_found", record)
        record.response_model = opts.aliases.get(route.model, route.model)
        if route.endpoint == gemini.COUNT:
            return Reply(200, gemini.count_json(body))
        if self.bucket is not None and not self.bucket.take(record.received_at):
            return self._limited(record, False)
        timing = opts.timing_for(record.model)
        limit = gemini.max_output_tokens(body)
        truncated = limit is not None and limit < timing.tokens
        gen = api.Generation(request_id=record.request_id, model=record.response_model,
                             tokens=api.output_tokens(limit if truncated and limit is not None else timing.tokens),
                             prompt_tokens=gemini.prompt_tokens(body), truncated_by_max=truncated,
                             style=opts.fail_style, lang=opts.lang)
        if route.stream:
            reply = Reply(200, content_type="text/event-stream", headers=[("Cache-Control", "no-cache")],
                          events=gemini.generate_stream(gen), timing=timing)
        else:
            reply = Reply(200, gemini.generate_json(gen), timing=timing)
        return self._inject(record, reply, generation=True)

    def _wrong_path(self, record: RequestRecord) -> Reply:
        """What one-api/new-api answer for an unknown path: JSON under /v1 and /api, the SPA page elsewhere."""
        path = record.path
        if path.startswith(("/v1/", "/api/")) or path in ("/v1", "/api"):
            return self._error("invalid_url", record)
        record.endpoint = "page" if record.endpoint == "unknown" else record.endpoint
        return Reply(200, HTML_PAGE, content_type="text/html; charset=utf-8")

    def _auth_ok(self, record: RequestRecord, auth: _Auth) -> bool:
        key = auth.key
        if not key or not key.strip():
            record.flags.append("no-key")
            return False
        rest = key
        bearer = re.match(r"(?is)^\s*bearer\s+(.*)$", key)
        if bearer:
            record.flags.append("bearer-in-key")
            rest = bearer.group(1)
        if _WHITESPACE.search(rest):
            record.flags.append("key-whitespace")
        cleaned = "".join(rest.split())
        if cleaned[:1] in ("'", '"') or cleaned[-1:] in ("'", '"'):
            record.flags.append("key-quoted")
            cleaned = cleaned.strip("'\"")
        if self.options.any_key or key == self.options.key:
            return True
        record.flags.append("wrong-key")
        if cleaned == self.options.key:
            record.flags.append("key-ok-when-cleaned")
        return False

    def _inject(self, record: RequestRecord, reply: Reply, *, generation: bool,
                anthropic_endpoint: bool = False) -> Reply:
        opts = self.options
        fail, fault, own = opts.failure_for(record.model)
        if fail is None and (fault is None or (fault in GENERATION_FAULTS and not generation)):
            return reply
        if not own and not self._should_inject():
            return reply
        if fail is not None:
            record.injected = f"fail:{fail}"
            if isinstance(fail, int):
                failed = self._error(kind_for_status(fail), record, status=fail,
                                     anthropic_endpoint=anthropic_endpoint)
            else:
                failed = self._error(fail, record, anthropic_endpoint=anthropic_endpoint)
            if opts.retry_after is not None and failed.status in (429, 503, 529):  # never on a 401 or 403
                value = opts.retry_after
                failed.headers.append(("Retry-After", str(int(value)) if value == int(value) else f"{value:.2f}"))
            return failed
        record.injected = f"fault:{fault}"
        if fault == "stall":
            return Reply(0, end="stall")
        if fault == "html":
            return Reply(200, HTML_PAGE, content_type="text/html; charset=utf-8")
        if fault == "reset":
            reply.end = "reset"
            return reply
        if fault == "no-choices":  # one-api passes an upstream 200 + {"error": …} through as-is
            ctx = ErrorContext(record.request_id, model=record.model or "", lang=opts.lang)
            return Reply(200, json.dumps(api.stream_error_payload(opts.fail_style, ctx), ensure_ascii=False)
                         .encode())
        return reply  # stream faults were applied when the stream was built

    def _generate(self, endpoint: str, body: dict[str, Any], record: RequestRecord, anthropic_endpoint: bool) -> Reply:
        opts = self.options
        if self.bucket is not None and not self.bucket.take(record.received_at):
            return self._limited(record, anthropic_endpoint)
        timing = opts.timing_for(record.model)
        limit_field = "max_output_tokens" if endpoint == "responses" else "max_tokens"
        limit = body.get(limit_field) or body.get("max_completion_tokens")
        n = timing.tokens
        truncated = isinstance(limit, int) and limit >= 0 and limit < n
        if truncated:
            n = limit
        stream_opts = body.get("stream_options")
        gen = api.Generation(
            request_id=record.request_id, model=record.response_model or record.model or "",
            tokens=api.output_tokens(n),
            prompt_tokens=api.estimate_prompt_tokens(body), truncated_by_max=truncated,
            include_usage=isinstance(stream_opts, dict) and stream_opts.get("include_usage") is True,
            style=opts.fail_style, lang=opts.lang)
        # Decide a stream fault before building the stream (it changes the events themselves).
        _, fault, own = opts.failure_for(record.model)
        if record.stream and fault in STREAM_FAULTS:
            if own or self._should_inject():
                record.injected = f"fault:{fault}"
                if fault == "no-usage":  # a channel that ignores stream_options: no usage chunk even when asked
                    gen.include_usage = False
                else:
                    gen.outcome = {"stream-error": "error", "empty-stream": "empty", "truncated-stream": "truncated"}[
                        fault]
                if gen.outcome == "truncated":
                    record.outcome = "truncated"
            reply = Reply(200, content_type="text/event-stream", headers=[("Cache-Control", "no-cache")],
                          events=self._events(endpoint, gen), timing=timing)
            if gen.outcome == "truncated":
                reply.end = "close"
            return reply
        if record.stream:
            reply = Reply(200, content_type="text/event-stream", headers=[("Cache-Control", "no-cache")],
                          events=self._events(endpoint, gen), timing=timing)
        else:
            builder = {"chat": api.chat_json, "responses": api.responses_json, "messages": api.messages_json}
            reply = Reply(200, builder[endpoint](gen), timing=timing)
        if fault in STREAM_FAULTS:
            return reply  # a plain request is answered normally under a stream-only fault
        return self._inject(record, reply, generation=True, anthropic_endpoint=anthropic_endpoint)

    def _limited(self, record: RequestRecord, anthropic_endpoint: bool) -> Reply:
        """Over --rate-limit: the style's 429, with Retry-After (--retry-after, else 1 s)."""
        record.injected = "rate-limit"
        reply = self._error("rate_limited", record, status=429, anthropic_endpoint=anthropic_endpoint)
        value = self.options.retry_after if self.options.retry_after is not None else 1.0
        reply.headers.append(("Retry-After", str(int(value)) if value == int(value) else f"{value:.2f}"))
        return reply

    @staticmethod
    def _events(endpoint: str, gen: api.Generation) -> list[api.Event]:
        return {"chat": api.chat_stream, "responses": api.responses_stream, "messages": api.messages_stream}[
            endpoint](gen)


def _match_endpoint(path: str) -> tuple[str | None, str, str, str | None]:
    """(endpoint, prefix before it, required method, model id for /models/<id>)."""
    trimmed = path.rstrip("/") or "/"
    for suffix, name, method in _ENDPOINTS:
        if trimmed.endswith(suffix):
            return name, trimmed[: -len(suffix)], method, None
    match = _MODEL_PATH.match(trimmed)
    if match:
        return "model", match.group("prefix"), "GET", match.group("model")
    return None, "", "", None


def _prefix_problem(prefix: str) -> str | None:
    """None when the prefix ends in exactly one /v1 (e.g. /api/v1, /v1, /anything/v1)."""
    segments = [s for s in prefix.split("/") if s]
    if any(s in ("completions", "responses", "messages") for s in segments):
        return "endpoint-in-base"
    count = segments.count("v1")
    if count >= 2:
        return "doubled-v1"
    if count == 0 or segments[-1] != "v1":
        return "missing-v1"
    return None


def _read_auth(headers: dict[str, str]) -> _Auth:
    authorization = headers.get("authorization")
    x_api_key = headers.get("x-api-key")
    if authorization is not None:
        kind = "bearer" if re.match(r"(?i)bearer( |$)", authorization) else "authorization"
        key = authorization[7:] if kind == "bearer" else authorization
        if x_api_key is not None:
            kind = "bearer+x-api-key"
        return _Auth(kind, key)
    if x_api_key is not None:
        return _Auth("x-api-key", x_api_key)
    if headers.get("x-goog-api-key") is not None:  # the Gemini API's header
        return _Auth("x-goog-api-key", headers["x-goog-api-key"])
    return _Auth("none", None)


def _masked_headers(headers: dict[str, str]) -> dict[str, str]:
    masked = dict(headers)
    for name in ("authorization", "x-api-key", "api-key", "x-goog-api-key"):
        if name in masked:
            value = masked[name]
            scheme, sep, rest = value.partition(" ")
            masked[name] = f"{scheme} {mask_key(rest)}" if sep and scheme.lower() == "bearer" else mask_key(value)
    return masked


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
