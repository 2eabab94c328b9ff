"""Success bodies and SSE event sequences for the three wire formats, as the real APIs send them.

Streams are built as a list of `(token_index, bytes)` pairs: an event tagged `i` is due when the
i-th output token is (at `i / token_rate` seconds after the headers), so the server can pace
tokens exactly without knowing the format. Stream outcomes other than "complete" reproduce the
failures in reference/gateway-errors.md section 5: an error event after HTTP 200, a stream with
no content, a stream cut before its terminal event.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from taotoken_cli.cmd.mock.error_bodies import ErrorContext, stream_error_payload

_WORDS = ("Hello", " from", " the", " taotoken", " mock", " gateway", ":", " this", " is", " token", " text",
          ",", " streamed", " at", " a", " steady", " rate", ".")

Event = tuple[int, bytes]  # (index of the token this event waits for, wire bytes)


def output_tokens(n: int) -> list[str]:
    return [_WORDS[i % len(_WORDS)] for i in range(n)]


def estimate_prompt_tokens(body: dict) -> int:
    """About four characters per token over every string in the request: good enough for usage."""
    size = 0
    stack: list[object] = [body.get("messages"), body.get("input"), body.get("system"), body.get("instructions")]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += len(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return max(1, (size + 3) // 4)


@dataclass
class Generation:
    """One answer: what the request asked for and what the mock will say."""

    request_id: str
    model: str  # the `model` written in the answer (after aliasing)
    tokens: list[str]
    prompt_tokens: int
    truncated_by_max: bool  # max_tokens cut the answer short
    include_usage: bool = False
    outcome: str = "complete"  # complete | error | truncated | empty
    style: str = "new-api"
    lang: str = "en"

    @property
    def text(self) -> str:
        return "".join(self.tokens)

    @property
    def cut(self) -> int:
        """How many tokens are sent before a failure outcome strikes."""
        return max(1, len(self.tokens) // 2) if self.tokens else 0

    def error_payload(self) -> dict:
        return stream_error_payload(self.style, ErrorContext(self.request_id, model=self.model, lang=self.lang))


def _dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _data(obj: object) -> bytes:
    return b"data: " + _dumps(obj).encode() + b"\n\n"


def _named(name: str, obj: object) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + _dumps(obj).encode() + b"\n\n"


# -- OpenAI chat completions -----------------------------------------------------------------
def chat_json(gen: Generation) -> bytes:
    n = len(gen.tokens)
    return _dumps({
        "id": f"chatcmpl-{gen.request_id}", "object": "chat.completion", "created": int(time.time()),
        "model": gen.model, "system_fingerprint": "fp_mock",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": gen.text, "refusal": None},
                     "logprobs": None, "finish_reason": "length" if gen.truncated_by_max else "stop"}],
        "usage": {"prompt_tokens": gen.prompt_tokens, "completion_tokens": n,
                  "total_tokens": gen.prompt_tokens + n},
    }).encode()


def chat_stream(gen: Generation) -> list[Event]:
    created = int(time.time())
    head = (f'{{"id":"chatcmpl-{gen.request_id}","object":"chat.completion.chunk","created":{created},'
            f'"model":{_dumps(gen.model)},"system_fingerprint":"fp_mock","choices":[')
    tail = ',"usage":null}' if gen.include_usage else "}"

    def chunk(delta: str, finish: str | None = None) -> bytes:
        choice = f'{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{_dumps(finish)}}}'
        return b"data: " + (head + choice + "]" + tail).encode() + b"\n\n"

    events: list[Event] = [(0, chunk('{"role":"assistant","content":"","refusal":null}'))]
    if gen.outcome == "empty":  # one-api drops upstream error chunks and appends [DONE]: zero content
        return events + [(0, b"data: [DONE]\n\n")]
    sent = gen.cut if gen.outcome in ("error", "truncated") else len(gen.tokens)
    for i, token in enumerate(gen.tokens[:sent]):
        events.append((i, chunk('{"content":' + _dumps(token) + "}")))
    last = max(sent - 1, 0)
    if gen.outcome == "error":
        return events + [(last, _data(gen.error_payload()))]
    if gen.outcome == "truncated":
        return events
    events.append((last, chunk("{}", "length" if gen.truncated_by_max else "stop")))
    if gen.include_usage:
        n = len(gen.tokens)
        usage = {"prompt_tokens": gen.prompt_tokens, "completion_tokens": n, "total_tokens": gen.prompt_tokens + n}
        events.append((last, b"data: " + (head + "]," + f'"usage":{_dumps(usage)}' + "}").encode() + b"\n\n"))
    events.append((last, b"data: [DONE]\n\n"))
    return events


# -- OpenAI Responses API --------------------------------------------------------------------
def _response_object(gen: Generation, status: str, output: list, with_usage: bool) -> dict:
    n = len(gen.tokens)
    obj = {
        "id": f"resp_{gen.request_id}", "object": "response", "created_at": int(time.time()), "status": status,
        "error": None, "incomplete_details": None, "instructions": None, "max_output_tokens": None,
        "model": gen.model, "output": output, "parallel_tool_calls": True, "previous_response_id": None,
        "store": False, "temperature": 1.0, "tool_choice": "auto", "tools": [], "top_p": 1.0, "truncation": "disabled",
        "usage": None,
    }
    if status == "incomplete":
        obj["incomplete_details"] = {"reason": "max_output_tokens"}
    if with_usage:
        obj["usage"] = {"input_tokens": gen.prompt_tokens, "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": n, "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": gen.prompt_tokens + n}
    return obj


def _message_item(gen: Generation, status: str, text: str | None) -> dict:
    content = [] if text is None else [{"type": "output_text", "text": text, "annotations": []}]
    return {"id": f"msg_{gen.request_id}", "type": "message", "status": status, "role": "assistant",
            "content": content}


def responses_json(gen: Generation) -> bytes:
    status = "incomplete" if gen.truncated_by_max else "completed"
    return _dumps(_response_object(gen, status, [_message_item(gen, "completed", gen.text)], True)).encode()


def responses_stream(gen: Generation) -> list[Event]:
    seq = 0

    def ev(obj: dict) -> bytes:
        nonlocal seq
        obj["sequence_number"] = seq
        seq += 1
        return _named(obj["type"], obj)

    item_id = f"msg_{gen.request_id}"
    part = {"item_id": item_id, "output_index": 0, "content_index": 0}
    events: list[Event] = [
        (0, ev({"type": "response.created", "response": _response_object(gen, "in_progress", [], False)})),
        (0, ev({"type": "response.in_progress", "response": _response_object(gen, "in_progress", [], False)})),
    ]
    if gen.outcome == "empty":
        return events + [(0, ev({"type": "response.completed",
                                 "response": _response_object(gen, "completed", [], True)}))]
    events += [
        (0, ev({"type": "response.output_item.added", "output_index": 0,
                "item": _message_item(gen, "in_progress", None)})),
        (0, ev({"type": "response.content_part.added", **part,
                "part": {"type": "output_text", "text": "", "annotations": []}})),
    ]
    sent = gen.cut if gen.outcome in ("error", "truncated") else len(gen.tokens)
    for i, token in enumerate(gen.tokens[:sent]):
        events.append((i, ev({"type": "response.output_text.delta", **part, "delta": token})))
    last = max(sent - 1, 0)
    if gen.outcome == "error":
        failed = _response_object(gen, "failed", [], False)
        failed["error"] = {"code": "server_error", "message": "The upstream stream was interrupted (mock)."}
        return events + [(last, ev({"type": "response.failed", "response": failed}))]
    if gen.outcome == "truncated":
        return events
    status = "incomplete" if gen.truncated_by_max else "completed"
    item = _message_item(gen, "completed", gen.text)
    events += [
        (last, ev({"type": "response.output_text.done", **part, "text": gen.text})),
        (last, ev({"type": "response.content_part.done", **part,
                   "part": {"type": "output_text", "text": gen.text, "annotations": []}})),
        (last, ev({"type": "response.output_item.done", "output_index": 0, "item": item})),
        (last, ev({"type": f"response.{status}", "response": _response_object(gen, status, [item], True)})),
    ]
    return events


# -- Anthropic Messages ----------------------------------------------------------------------
def messages_json(gen: Generation) -> bytes:
    return _dumps({
        "id": f"msg_{gen.request_id}", "type": "message", "role": "assistant", "model": gen.model,
        "content": [{"type": "text", "text": gen.text}],
        "stop_reason": "max_tokens" if gen.truncated_by_max else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": gen.prompt_tokens, "output_tokens": len(gen.tokens)},
    }).encode()


def messages_stream(gen: Generation) -> list[Event]:
    start = {"type": "message_start", "message": {
        "id": f"msg_{gen.request_id}", "type": "message", "role": "assistant", "model": gen.model, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": gen.prompt_tokens, "output_tokens": 1}}}
    events: list[Event] = [(0, _named("message_start", start))]
    if gen.outcome == "empty":
        return events + [
            (0, _named("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                                            "stop_sequence": None},
                                         "usage": {"output_tokens": 0}})),
            (0, _named("message_stop", {"type": "message_stop"})),
        ]
    events += [
        (0, _named("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": ""}})),
        (0, _named("ping", {"type": "ping"})),
    ]
    sent = gen.cut if gen.outcome in ("error", "truncated") else len(gen.tokens)
    for i, token in enumerate(gen.tokens[:sent]):
        events.append((i, _named("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                         "delta": {"type": "text_delta", "text": token}})))
    last = max(sent - 1, 0)
    if gen.outcome == "error":
        return events + [(last, _named("error", {"type": "error", "error": {"type": "overloaded_error",
                                                                            "message": "Overloaded"}}))]
    if gen.outcome == "truncated":
        return events
    return events + [
        (last, _named("content_block_stop", {"type": "content_block_stop", "index": 0})),
        (last, _named("message_delta", {"type": "message_delta",
                                        "delta": {"stop_reason": "max_tokens" if gen.truncated_by_max else "end_turn",
                                                  "stop_sequence": None},
                                        "usage": {"output_tokens": len(gen.tokens)}})),
        (last, _named("message_stop", {"type": "message_stop"})),
    ]


# -- models list -----------------------------------------------------------------------------
def models_json(models: tuple[str, ...], anthropic_format: bool) -> bytes:
    if anthropic_format:  # new-api answers Anthropic's list shape when x-api-key + anthropic-version are sent
        data = [{"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"} for m in models]
        return _dumps({"data": data, "has_more": False, "first_id": models[0] if models else None,
                       "last_id": models[-1] if models else None}).encode()
    data = [{"id": m, "object": "model", "created": 1735689600, "owned_by": _owner(m)} for m in models]
    # new-api adds "success": true next to "object": "list" (a family fingerprint).
    return _dumps({"data": data, "object": "list", "success": True}).encode()


def model_json(model: str) -> bytes:
    return _dumps({"id": model, "object": "model", "created": 1735689600, "owned_by": _owner(model)}).encode()


def _owner(model: str) -> str:
    if model.startswith("claude"):
        return "anthropic"
    if model.startswith(("gpt", "o1", "o3", "o4")):
        return "openai"
    return "custom"
