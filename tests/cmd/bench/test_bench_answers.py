"""bench judges a plain (non-stream) chat answer either by its shape, reading only its `usage` object (the compact
answers gateways send), or by parsing the whole body (everything else). Whichever way a body takes, the judgement
and the token counts are those of the full parse: checked here on answers as new-api, OpenAI and the product's mock
write them, on bodies built to look like a standard answer without being one, and on generated answers whose text
holds quotes, backslashes, `"usage":{` and `"error"` written inside strings."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taotoken_cli.cmd.bench.exchange import Exchange


def judged(body: bytes, full: bool) -> tuple[bool, dict | None]:
    ex = Exchange(False, 0.0)
    ex.on_body(body, 0.0)
    if full:  # the whole body through the JSON parser, as a body off the fast path
        try:
            text = ex.body.decode()
        except UnicodeDecodeError:
            return False, None
        return ex._parsed_answer(text), ex.usage
    return ex.answer(), ex.usage


def took_the_fast_path(body: bytes, monkeypatch: pytest.MonkeyPatch) -> bool:
    parsed: list[str] = []
    real = Exchange._parsed_answer
    monkeypatch.setattr(Exchange, "_parsed_answer", lambda self, text: parsed.append(text) or real(self, text))
    judged(body, full=False)
    monkeypatch.setattr(Exchange, "_parsed_answer", real)
    return not parsed


def compact(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


USAGE = {"prompt_tokens": 12, "completion_tokens": 34, "total_tokens": 46}
ANSWER = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1796446222, "model": "gpt-4o-mini",
          "choices": [{"index": 0, "message": {"role": "assistant", "content": "你好"}, "finish_reason": "stop"}],
          "usage": USAGE}
NEW_API = compact({**ANSWER, "usage": {**USAGE, "prompt_tokens_details": {"cached_tokens": 0},
                                       "completion_tokens_details": {"reasoning_tokens": 0}}})

FAST = {
    "new-api (Go, compact, usage details)": NEW_API,
    "the mock": compact(ANSWER),
    "a trailing newline": compact(ANSWER) + b"\n",
    "text that quotes JSON": compact({**ANSWER, "choices": [{"index": 0, "message": {
        "role": "assistant", "content": 'say "error" and "usage":{"completion_tokens":999} \\ ok'}}]}),
    "usage before choices": compact({"usage": USAGE, "choices": ANSWER["choices"], "id": "x"}),
}
FULL = {
    "OpenAI (pretty-printed)": json.dumps(ANSWER, indent=2).encode(),
    "no usage": compact({k: v for k, v in ANSWER.items() if k != "usage"}),
    "usage null": compact({**ANSWER, "usage": None}),
    "an error field": compact({**ANSWER, "error": {"message": "upstream failed", "type": "new_api_error"}}),
    "an empty error field": compact({**ANSWER, "error": None}),
    "no choices": compact({**ANSWER, "choices": []}),
    "an error object only": compact({"error": {"message": "当前分组上游负载已饱和", "code": "model_not_found"}}),
    "truncated": compact(ANSWER)[:-7],
    "not JSON": b"<html><body>502 Bad Gateway</body></html>",
    "a broken usage": compact(ANSWER)[:-2] + b",}}",
    "not UTF-8": compact(ANSWER).replace("你好".encode(), b"\xff\xfe"),
    "empty": b"",
    "a list": b"[" + compact(ANSWER) + b"]",
}


@pytest.mark.parametrize("name", list(FAST) + list(FULL))
def test_both_ways_judge_a_body_alike(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    body = {**FAST, **FULL}[name]
    assert judged(body, full=False) == judged(body, full=True)
    if name != "not UTF-8":  # (refused before either way: it is not text)
        assert took_the_fast_path(body, monkeypatch) == (name in FAST)


def test_the_judgements_themselves() -> None:
    assert judged(NEW_API, full=False) == (True, {**USAGE, "prompt_tokens_details": {"cached_tokens": 0},
                                                  "completion_tokens_details": {"reasoning_tokens": 0}})
    assert judged(FULL["OpenAI (pretty-printed)"], full=False) == (True, USAGE)
    assert judged(FULL["no usage"], full=False) == (True, None)
    for name in ("an error field", "no choices", "truncated", "not JSON", "not UTF-8", "a list", "a broken usage"):
        assert judged(FULL[name], full=False)[0] is False, name


TEXT = st.lists(st.sampled_from(list('ab "\\{}[]:,\n') + ["usage", "error", '"usage":{', '"error"', "你", "\u2028"]),
                max_size=20).map("".join)


@settings(max_examples=300, deadline=None)
@given(content=TEXT, extra=st.dictionaries(st.sampled_from(["id", "model", "system_fingerprint", "note"]), TEXT),
       usage=st.one_of(st.none(), st.fixed_dictionaries({"prompt_tokens": st.integers(0, 10**6),
                                                         "completion_tokens": st.integers(0, 10**6)})),
       usage_first=st.booleans(), newline=st.booleans())
def test_generated_answers_are_judged_alike(content, extra, usage, usage_first, newline) -> None:
    choices = [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]
    answer = {"usage": usage, **extra, "choices": choices} if usage_first else {**extra, "choices": choices,
                                                                                  "usage": usage}
    body = compact(answer) + (b"\n" if newline else b"")
    assert judged(body, full=False) == judged(body, full=True) == (True, usage)


def test_a_usage_object_read_before_is_not_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The usage objects read are kept by the answer's text from the object on (the same text reads the same), a
    bounded number of them, and a long tail is not kept at all."""
    from taotoken_cli.cmd.bench import exchange

    scanned: list[str] = []
    real = exchange._json_scan
    monkeypatch.setattr(exchange, "_json_scan", lambda text, at: scanned.append(text) or real(text, at))
    monkeypatch.setattr(exchange, "_USAGE_READ", {})
    usage = {"prompt_tokens": 7, "completion_tokens": 9, "total_tokens": 16}
    first, again = compact({**ANSWER, "id": "a", "usage": usage}), compact({**ANSWER, "id": "b", "usage": usage})
    assert judged(first, full=False) == judged(again, full=False) == (True, usage)
    assert len(scanned) == 1  # the second answer differs before its usage only
    # an answer ending with a kept tail is read from it: that is its last `"usage":{` (an object nested before it
    # holds one too)
    nested = compact({"id": "c", "meta": {"usage": {"completion_tokens": 1}}, "choices": ANSWER["choices"],
                      "usage": usage})
    assert b'"usage":{' in nested.split(b'"choices"')[0]
    assert judged(nested, full=False) == (True, usage)
    assert len(scanned) == 1
    assert judged(nested, full=True) == (True, usage)  # (the whole body through the scanner: counted from here)
    scanned.clear()
    other = {**usage, "completion_tokens": 10}
    assert judged(compact({**ANSWER, "usage": other}), full=False) == (True, other)
    assert len(scanned) == 1
    for n in range(exchange._USAGE_READ_MAX + 50):
        assert judged(compact({**ANSWER, "usage": {**usage, "total_tokens": n}}), full=False)[1]["total_tokens"] == n
    assert 0 < len(exchange._USAGE_READ) <= exchange._USAGE_READ_MAX
    long_tail = compact({**ANSWER, "usage": usage, "note": "x" * exchange._USAGE_TAIL_MAX})
    before = len(scanned)
    assert judged(long_tail, full=False) == judged(long_tail, full=False) == (True, usage)
    assert len(scanned) == before + 2  # read each time: too long to keep
