"""The Gemini API, as Gemini CLI (through @google/genai) calls it and as gateways that relay it answer:
`POST <root>/v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse` (Server-Sent Events, one
`data:` line per chunk) and `:countTokens`, and `GET <root>/v1beta/models` (the model list taotoken's probe asks
for); the key in `x-goog-api-key` (or `?key=`). Served unless the mock is
started with `--no-gemini-api` (then the route is unknown, answered the way new-api answers any unknown path).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from urllib.parse import parse_qs

from taotoken_cli.cmd.mock.api import Event, Generation

_PATH = re.compile(r"^(?P<prefix>.*)/(?P<version>v1beta|v1)/models/(?P<model>[^/:]+):(?P<method>generateContent|"
                   r"streamGenerateContent|countTokens)$")
_LIST = re.compile(r"^(?P<prefix>.*)/v1beta/models$")  # GET: the model list (new-api's shape: bare IDs as names)
GENERATION = "gemini"  # the record's endpoint for a generation
COUNT = "gemini_count"
LIST = "gemini_models"


@dataclass(frozen=True)
class Route:
    prefix: str  # what comes before /v1beta (the root's path)
    model: str
    method: str  # generateContent | streamGenerateContent | countTokens

    @property
    def endpoint(self) -> str:
        return {"countTokens": COUNT, "list": LIST}.get(self.method, GENERATION)

    @property
    def http_method(self) -> str:
        return "GET" if self.method == "list" else "POST"

    @property
    def stream(self) -> bool:
        return self.method == "streamGenerateContent"


def match(path: str) -> Route | None:
    found = _PATH.match(path.rstrip("/"))
    if found:
        return Route(found["prefix"], found["model"], found["method"])
    listed = _LIST.match(path.rstrip("/"))
    return Route(listed["prefix"], "", "list") if listed else None


def models_json(models: list[str]) -> bytes:
    """The model list as new-api answers GET /v1beta/models (controller.ListModels, Gemini shape)."""
    return json.dumps({"models": [{"name": m, "displayName": m} for m in models], "nextPageToken": None}).encode()


def query_key(query: str) -> str | None:
    values = parse_qs(query).get("key")
    return values[0] if values else None


def prefix_problem(prefix: str) -> str | None:
    """A /v1 before /v1beta: the client was given root + /v1 (the OpenAI form) instead of the bare root."""
    return "doubled-v1" if "v1" in [s for s in prefix.split("/") if s] else None


def prompt_tokens(body: dict) -> int:
    size = len(json.dumps(body.get("contents") or "", ensure_ascii=False))
    return max(1, (size + 3) // 4)


def max_output_tokens(body: dict) -> int | None:
    config = body.get("generationConfig")
    value = config.get("maxOutputTokens") if isinstance(config, dict) else None
    return value if isinstance(value, int) and value >= 0 else None


def _chunk(gen: Generation, text: str, *, last: bool) -> dict:
    candidate: dict = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
    if last:
        candidate["finishReason"] = "MAX_TOKENS" if gen.truncated_by_max else "STOP"
    chunk = {"candidates": [candidate], "modelVersion": gen.model, "responseId": gen.request_id}
    if last:
        chunk["usageMetadata"] = {"promptTokenCount": gen.prompt_tokens, "candidatesTokenCount": len(gen.tokens),
                                  "totalTokenCount": gen.prompt_tokens + len(gen.tokens)}
    return chunk


def generate_json(gen: Generation) -> bytes:
    return json.dumps(_chunk(gen, gen.text, last=True), ensure_ascii=False).encode()


def generate_stream(gen: Generation) -> list[Event]:
    """One SSE event per token, the last with finishReason and usage (as the Gemini API streams)."""
    tokens = gen.tokens or [""]
    return [(i, b"data: " + json.dumps(_chunk(gen, token, last=i == len(tokens) - 1), ensure_ascii=False,
                                       separators=(",", ":")).encode() + b"\r\n\r\n")
            for i, token in enumerate(tokens)]


def count_json(body: dict) -> bytes:
    return json.dumps({"totalTokens": prompt_tokens(body)}).encode()
