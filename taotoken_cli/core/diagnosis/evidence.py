"""What an answer says besides its failure code: how long to wait, its request id and the model it
names (whether the local proxy wrote it is diagnosis/proxy_answer.py's question).

Each helper reads headers (names lower-cased, as `Observation.headers` holds them) and/or the
server's message; none decides a code. Sources: shared/reference/gateway-errors.md and the LiteLLM
answers recorded in tests/fixtures/litellm.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_TRY_AGAIN_RE = re.compile(r"try again in\s+(\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?|m|min)\b", re.IGNORECASE)

# "(request id: …)" that one-api/new-api append to messages; matching ignores it, display keeps it.
REQUEST_ID_SUFFIX_RE = re.compile(r"\s*[(（]\s*request id:[^)）]*[)）]", re.IGNORECASE)
_REQUEST_ID_VALUE_RE = re.compile(r"[(（]\s*request id:\s*([^)）\s]+)\s*[)）]", re.IGNORECASE)
# Most specific first: the gateway's own id before an upstream's or a per-call id.
REQUEST_ID_HEADERS = ("x-oneapi-request-id", "x-request-id", "request-id", "x-litellm-call-id",
                      "x-upstream-request-id")

# The model a server's message names, in each gateway's words (one capture group: the model ID).
_MODEL_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in (
    r"requested model '([^']+)'",  # LiteLLM 403 "The requested model 'x' is not available for this API key"
    r"model group '([^']+)'",  # LiteLLM "LiteLLM: model group 'x' failed with the error above"
    r"model=([^\s,;'\"]+)",  # LiteLLM "Invalid model name passed in model=x." / "Passed model=x."
    r"对于模型\s*(\S+?)\s*无可用渠道",  # one-api "当前分组 g 下对于模型 m 无可用渠道"
    r"下模型\s*(\S+?)\s*(?:无可用渠道|的可用渠道失败)",  # new-api (zh)
    r"no available channel for model\s+(\S+)",  # new-api (en)
    r"无权(?:使用|访问)模型[：:\s]*(\S+)",  # one-api / new-api model allow-list
    r"has no access to model\s+(\S+)",
    r"the model `([^`]+)`",  # OpenAI "The model `x` does not exist or you do not have access to it."
    r"^model:\s*(\S+)$",  # Anthropic not_found_error "model: x"
))


def parse_retry_after(headers: Mapping[str, str], message: str | None = None) -> float | None:
    """Seconds to wait: `retry-after-ms`, `retry-after` (integer, float string or HTTP-date), or
    the "try again in 20s" hint in the message."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = (headers.get("retry-after") or "").strip()
    if raw:
        try:
            return max(0.0, float(raw))
        except ValueError:
            from email.utils import parsedate_to_datetime

            try:
                when = parsedate_to_datetime(raw)
            except (TypeError, ValueError, IndexError):
                when = None
            if when is not None:
                import datetime as _dt

                if when.tzinfo is None:
                    when = when.replace(tzinfo=_dt.timezone.utc)
                return max(0.0, round((when - _dt.datetime.now(_dt.timezone.utc)).total_seconds(), 1))
    if message:
        match = _TRY_AGAIN_RE.search(message)
        if match:
            value, unit = float(match.group(1)), match.group(2).lower()
            return value / 1000.0 if unit == "ms" else value * 60 if unit.startswith("m") else value
    return None


def request_id(headers: Mapping[str, str], message: str | None = None, data: Any = None) -> str | None:
    """The id a gateway operator can look the request up by, if the answer carries one."""
    if isinstance(data, dict) and isinstance(data.get("request_id"), str) and data["request_id"].strip():
        return data["request_id"].strip()  # Anthropic's body field
    match = _REQUEST_ID_VALUE_RE.search(message or "")
    if match:
        return match.group(1)
    for name in REQUEST_ID_HEADERS:
        value = (headers.get(name) or "").strip()
        if value:
            return value
    return None


def named_model(message: str | None) -> str | None:
    """The model ID the server's message is about (e.g. the one a no-channel 503 names)."""
    text = REQUEST_ID_SUFFIX_RE.sub("", message or "").strip()
    for pattern in _MODEL_PATTERNS:
        match = pattern.search(text)
        if match:
            model = match.group(1).strip().rstrip(".,;:。，（(")
            if model:
                return model
    return None


