"""Normalising an (error) body, whatever shape it came in: who answered, and its message/type/code.

Reads the shapes of OpenAI, one-api/new-api, LiteLLM, OpenRouter, Anthropic, FastAPI servers and
web pages (shared/reference/gateway-errors.md §1).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from taotoken_cli.core.diagnosis.evidence import REQUEST_ID_SUFFIX_RE
from taotoken_cli.core.net.gateway import Observation

SERVER_MESSAGE_LIMIT = 240
_TITLE_RE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


@dataclass
class ErrorBody:
    """What an (error) body says, whatever shape it came in."""

    shape: str  # openai|one-api|new-api|litellm|openrouter|anthropic|fastapi|success_false|error_string|
    #             message|html|empty|text|json
    is_error: bool
    message: str | None = None  # for display: request id kept
    type: str | None = None
    code: str | None = None
    metadata: dict[str, Any] | None = None
    data: Any = None  # the parsed JSON, when it was JSON

    @property
    def haystack(self) -> str:
        parts = [self.type or "", self.code or "", REQUEST_ID_SUFFIX_RE.sub("", self.message or "")]
        if self.metadata:
            parts.append(json.dumps(self.metadata, ensure_ascii=False, default=str))
        return " ".join(parts).lower()


def _is_html(obs: Observation) -> bool:
    if obs.content_type in ("text/html", "application/xhtml+xml"):
        return True
    head = obs.body[:200].lstrip().lower()
    return head.startswith((b"<!doctype", b"<html", b"<head", b"<body", b"<?xml", b"<!--"))


def parse_body(obs: Observation) -> ErrorBody:
    """Recognise who answered and pull out message/type/code (reference §1 parser rule)."""
    if not obs.body.strip():
        return ErrorBody("empty", is_error=False)
    if _is_html(obs):
        match = _TITLE_RE.search(obs.body[:20000].decode("utf-8", errors="replace"))
        title = " ".join(match.group(1).split()) if match else None
        return ErrorBody("html", is_error=True, message=title)
    data = obs.json()
    if data is None:
        return ErrorBody("text", is_error=False, message=obs.text(SERVER_MESSAGE_LIMIT))
    if not isinstance(data, dict):
        return ErrorBody("json", is_error=False, data=data)
    headers = obs.headers
    error = data.get("error")
    if isinstance(error, str) and error:
        return ErrorBody("error_string", True, error, data=data)
    if isinstance(error, dict) and error:
        raw_code = error.get("code")
        code = None if raw_code is None else str(raw_code)
        err_type = error.get("type")
        err_type = None if err_type in (None, "None") else str(err_type)
        message = error.get("message")
        message = message if isinstance(message, str) else (json.dumps(message, ensure_ascii=False)
                                                             if message is not None else None)
        if data.get("type") == "error":
            shape = "anthropic"
        elif err_type == "one_api_error":
            shape = "one-api"
        elif err_type == "new_api_error" or ("x-new-api-version" in headers and err_type is None):
            # new-api's own errors say new_api_error; an upstream error it passes through keeps the upstream's
            # type (service/error.go RelayErrorHandler copies the whole error object), so the header alone
            # does not make the body new-api's: judged by the body, that is the upstream speaking.
            shape = "new-api"
        elif isinstance(raw_code, int):
            shape = "openrouter"
        elif isinstance(raw_code, str) and raw_code.isdigit():
            shape = "litellm"
        else:
            shape = "openai"
        metadata = error.get("metadata") if isinstance(error.get("metadata"), dict) else None
        return ErrorBody(shape, True, message, err_type, code, metadata, data)
    if "detail" in data and not data.get("choices"):
        detail = data["detail"]
        text = detail if isinstance(detail, str) else json.dumps(detail, ensure_ascii=False, default=str)
        return ErrorBody("fastapi", True, text, data=data)
    if data.get("success") is False:
        return ErrorBody("success_false", True, str(data.get("message") or data.get("msg") or ""), data=data)
    for key in ("message", "msg"):
        if isinstance(data.get(key), str) and not data.get("choices") and not data.get("data"):
            # a bare {"message": …} is an error only when the status says so (decided by the caller)
            return ErrorBody("message", False, data[key], data=data)
    return ErrorBody("json", False, data=data)
