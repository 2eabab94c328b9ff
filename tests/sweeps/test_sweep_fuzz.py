"""Property tests (Hypothesis) for the parts every command trusts (issue 8, part 4): input hygiene,
the classifier, the SSE parser and the JSON/TOML editors. Example counts are modest: the whole
module runs in a few seconds."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.fix import Fix
from taotoken_cli.core.clients import codex
from taotoken_cli.core.clients.base import Machine, PlanOptions, Triple
from taotoken_cli.core.diagnosis.catalogue import CATALOGUE
from taotoken_cli.core.diagnosis.classify import classify
from taotoken_cli.core.formats.jsonedit import dumps_like, edit_json
from taotoken_cli.core.net import hygiene
from taotoken_cli.core.net.gateway import Observation, StreamSummary
from taotoken_cli.core.net.sse import SSEParser
from taotoken_cli.core.settings import tomllib
from taotoken_cli.core.settings.edit import render_config_update

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.function_scoped_fixture])

# ------------------------------------------------------------------------------------ hygiene

SEGMENTS = st.sampled_from(["api", "v1", "V1", "chat", "completions", "chat/completions", "models", "responses",
                            "messages", "", "x", "openai", "%20", "v1beta"])
URLS = st.builds(
    lambda pre, scheme, host, segs, slash, query, frag, post: (
        f"{pre}{scheme}{host}{'/' if segs else ''}{'/'.join(segs)}{'/' if slash else ''}{query}{frag}{post}"),
    st.sampled_from(["", " ", "\n", "'", '"', "“"]),
    st.sampled_from(["https://", "http://", "HTTPS://", "ftp://", "", "https:/", "//"]),
    st.sampled_from(["taotoken.net", "127.0.0.1:3000", "localhost", "[::1]:8080", "Example.COM", "", "[::1",
                     "u:p@host", "host:99999", "a b"]),
    st.lists(SEGMENTS, max_size=5),
    st.booleans(),
    st.sampled_from(["", "?utm_source=x", "?", "?a=/v1"]),
    st.sampled_from(["", "#frag", "#"]),
    st.sampled_from(["", " ", "\r\n", "'"]),
)


def clean_or_none(func, raw: str):
    try:
        return func(raw)
    except InputError:
        return None


@FAST
@given(st.one_of(URLS, st.text(max_size=60)))
def test_base_url_cleaning_is_idempotent_and_never_crashes(raw: str) -> None:
    cleaned = clean_or_none(hygiene.clean_base_url, raw)
    if cleaned is None:
        return
    value = cleaned.value
    assert "?" not in value and "#" not in value, value
    path = urlsplit(value).path  # the path, not the string: a host may be called "v1" (https://v1)
    assert not path.lower().endswith("/v1") and not path.endswith("/"), value
    assert value.split("://", 1)[0] in ("http", "https")
    again = hygiene.clean_base_url(value)
    assert again.value == value and not again.changes, (raw, value, again)


@FAST
@given(st.one_of(st.text(max_size=80), st.builds(lambda pre, key, post: pre + key + post,
                                                  st.sampled_from(["", " ", "'", '"', "\t", "Bearer ", "“"]),
                                                  st.from_regex(r"sk-[A-Za-z0-9_\-]{0,40}", fullmatch=True),
                                                  st.sampled_from(["", "\n", "\r\n", " ", "'", "”"]))))
def test_key_cleaning_is_idempotent_and_never_crashes(raw: str) -> None:
    cleaned = clean_or_none(hygiene.clean_key, raw)
    if cleaned is None:
        return
    value = cleaned.value
    assert value and not any(ch.isspace() for ch in value) and value.isascii()
    assert value[0] not in "\"'`" and value[-1] not in "\"'`"
    again = hygiene.clean_key(value)
    assert again.value == value and not again.changes


@FAST
@given(st.text(max_size=40))
def test_model_cleaning_is_idempotent(raw: str) -> None:
    cleaned = clean_or_none(hygiene.clean_model, raw)
    if cleaned is not None:
        assert hygiene.clean_model(cleaned.value).value == cleaned.value


# ---------------------------------------------------------------------------------- classifier

JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                       lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                           st.sampled_from(["error", "message", "type", "code", "choices", "data", "detail", "success",
                                            "object", "content", "output", "usage", "msg", "metadata"]) | st.text(
                               max_size=8), inner, max_size=5), max_leaves=15)
BODIES = st.one_of(st.binary(max_size=300), JSONISH.map(lambda d: json.dumps(d).encode()),
                   st.sampled_from([b"", b"<!DOCTYPE html><title>x</title>", b"\xff\xfe{", b'{"error":"x"}']))
HEADERS = st.dictionaries(st.sampled_from(["content-type", "retry-after", "retry-after-ms", "location",
                                           "x-new-api-version", "x-oneapi-request-id"]),
                          st.one_of(st.sampled_from(["application/json", "text/html; charset=utf-8",
                                                     "text/event-stream", "1.5", "Wed, 21 Oct 2015 07:28:00 GMT",
                                                     "-3", "nan", "inf", "1e400"]), st.text(max_size=20)),
                          max_size=4)
ERRORS = st.one_of(st.none(), st.sampled_from([ConnectionResetError(104, "reset"), TimeoutError("timed out"),
                                               OSError("weird"), RuntimeError(""), ValueError("x" * 500)]))
STREAMS = st.one_of(st.none(), st.builds(StreamSummary, events=st.integers(0, 5), content_deltas=st.integers(0, 5),
                                         done=st.booleans(), error_event=st.one_of(st.none(), st.text(max_size=10),
                                                                                   JSONISH.filter(
                                                                                       lambda d: isinstance(d, dict))),
                                         finish_reason=st.one_of(st.none(), st.just("stop"))))


@FAST
@given(status=st.one_of(st.none(), st.integers(100, 599)), headers=HEADERS, body=BODIES, error=ERRORS,
       stream=STREAMS, expect=st.sampled_from(["json", "models", "chat", "messages", "responses", "stream"]),
       url=st.sampled_from(["http://h/api/v1/models", "https://h/v1/v1/chat/completions?x=1", "http://h", "weird"]))
def test_classifier_never_crashes_and_names_a_catalogue_code(status, headers, body, error, stream, expect, url):
    obs = Observation("GET", url, status=status if error is None else None, headers=headers, body=body, error=error,
                      stream=stream)
    if obs.status is None and error is None:
        obs.error = ConnectionResetError("no status")
    diagnosis = classify(obs, expect=expect)
    if diagnosis is None:
        assert obs.error is None and obs.status is not None and 200 <= obs.status < 300
        return
    assert diagnosis.code in CATALOGUE
    # every diagnosis tells the user what to do: at least one fix, each a filled-in text (no "{placeholder}" left)
    assert all(isinstance(fix, Fix) for fix in diagnosis.fixes())
    fixes = [str(fix) for fix in diagnosis.fixes()]
    assert fixes and all(fix.strip() and not re.search(r"\{[a-z_]+\}", fix) for fix in fixes), fixes
    shown = json.loads(json.dumps(diagnosis.to_dict()))
    assert shown["code"] == diagnosis.code and shown["exit_code"] == int(CATALOGUE[diagnosis.code].exit)
    assert [str(fix) for fix in shown["fixes"]] == fixes
    if diagnosis.retry_after_s is not None:
        assert diagnosis.retry_after_s >= 0 and diagnosis.retry_after_s == diagnosis.retry_after_s  # not nan


# ----------------------------------------------------------------------------------------- SSE

LINE_CHARS = st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"])  # Cs: not encodable
LINE_ENDS = st.sampled_from(["\n", "\r\n", "\r"])
SSE_LINES = st.lists(st.one_of(
    st.builds(lambda v: f"data: {v}", st.text(alphabet=LINE_CHARS, max_size=12)),
    st.sampled_from(["data: [DONE]", "event: error", "event: message_stop", ": keep-alive", "id: 7", "", "",
                     "data:", "retry: 10", "data: ü€😀"])), max_size=14)


def parse(chunks: list[bytes]) -> list:
    parser = SSEParser()
    events = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    return events + parser.close()


@FAST
@given(lines=SSE_LINES, ends=st.lists(LINE_ENDS, min_size=1, max_size=3), cuts=st.lists(st.integers(0, 400),
                                                                                       max_size=8))
def test_sse_any_chunking_gives_the_same_events(lines, ends, cuts):
    stream = "".join(line + ends[i % len(ends)] for i, line in enumerate(lines)).encode()
    whole = parse([stream])
    points = sorted(min(c, len(stream)) for c in cuts)
    chunks, last = [], 0
    for point in points:
        chunks.append(stream[last:point])  # repeated cut points give empty chunks: a read can return b""
        last = point
    chunks.append(stream[last:])
    assert parse(chunks) == whole
    assert parse([bytes([b]) for b in stream]) == whole  # one byte at a time, multi-byte characters split


# ------------------------------------------------------------------------------------- editors

KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-", min_size=1, max_size=8)
SCALARS = st.one_of(st.text(max_size=15), st.integers(-10**6, 10**6), st.booleans())
JSON_DOCS = st.recursive(SCALARS | st.none(), lambda inner: st.lists(inner, max_size=3) |
                         st.dictionaries(KEYS, inner, max_size=4), max_leaves=12)


@FAST
@given(doc=st.dictionaries(KEYS, JSON_DOCS, max_size=6), indent=st.sampled_from([None, 2, 4, "\t"]),
       ascii_=st.booleans(), key=KEYS, value=JSON_DOCS, newline=st.booleans())
def test_json_rewrite_round_trips_and_keeps_the_rest(doc, indent, ascii_, key, value, newline):
    original = json.dumps(doc, indent=indent, ensure_ascii=ascii_) + ("\n" if newline else "")
    edited = dict(doc)
    edited[key] = value
    text = dumps_like(edited, original)
    assert json.loads(text) == edited
    assert text.endswith("\n") == newline
    assert dumps_like(doc, original) == original or indent is None  # unchanged data: byte-identical file


@FAST
@given(doc=st.dictionaries(KEYS, JSON_DOCS, max_size=6), indent=st.sampled_from([None, 2, 4, "\t"]),
       ascii_=st.booleans(), key=KEYS, value=JSON_DOCS, drop=st.one_of(st.none(), KEYS), newline=st.booleans())
def test_json_edit_of_a_serialised_file_is_what_a_rewrite_gives(doc, indent, ascii_, key, value, drop, newline):
    """On a file a standard serialiser wrote, the splicing editor gives exactly the full rewrite's bytes (so it
    copies indentation, separators and escapes right); it never rewrites what did not change."""
    original = json.dumps(doc, indent=indent, ensure_ascii=ascii_) + ("\n" if newline else "")
    edited = dict(doc)
    edited[key] = value
    edited.pop(drop, None)
    text = edit_json(original, edited)
    assert json.loads(text) == edited
    if doc and (not ascii_ or "\\u" in original or original.isascii() and text.isascii()):
        assert text == dumps_like(edited, original), (original, text)
    assert edit_json(original, doc) == original


TOML_SCALARS = st.one_of(st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), max_size=12),
                         st.integers(-1000, 1000), st.booleans())
TOML_TABLES = st.dictionaries(KEYS, TOML_SCALARS, max_size=3)


def toml_lines(table: dict) -> str:
    """key = value lines; a JSON string/int/bool literal is also a TOML one (non-ASCII kept as is)."""
    return "".join(f"{k} = {json.dumps(v, ensure_ascii=False)}\n" for k, v in table.items())


def toml_text(top: dict, tables: dict, comment: bool) -> str:
    import tomlkit

    doc = tomlkit.document()
    if comment:
        doc.add(tomlkit.comment("hand-written"))
    for k, v in top.items():
        doc[k] = v
    for name, table in tables.items():
        t = tomlkit.table()
        for k, v in table.items():
            t[k] = v
        doc[name] = t
    return tomlkit.dumps(doc)


@SLOW
@given(top=st.dictionaries(KEYS, TOML_SCALARS, max_size=4), tables=st.dictionaries(KEYS, TOML_TABLES, max_size=3),
       providers=st.dictionaries(KEYS, TOML_TABLES, max_size=2), comment=st.booleans(),
       mode=st.sampled_from(codex.AUTH_MODES), model=st.from_regex(r"[a-z0-9][a-z0-9.\-/]{0,20}", fullmatch=True))
@example(top={}, tables={"profile": {}}, providers={}, comment=False, mode="env", model="0")  # found by CI
@example(top={"profile": "a"}, tables={"profiles": {"a": 1}}, providers={}, comment=True, mode="env", model="m")
def test_codex_edit_sets_the_provider_and_keeps_everything_else(top, tables, providers, comment, mode, model):
    assume("model_providers" not in tables and "model_providers" not in top)
    tables = {**tables, "model_providers": {}} if providers else tables
    text = toml_text(top, {k: v for k, v in tables.items() if k != "model_providers"}, comment)
    for name, table in providers.items():
        text += f"\n[model_providers.{name}]\n" + toml_lines(table)
    before = tomllib.loads(text)
    with tempfile.TemporaryDirectory() as home:
        config = Path(home) / "config.toml"
        config.write_text(text)
        triple = Triple("https://taotoken.net/api", "sk-FUZZkey0123456789abcdefWXYZ", model)
        plan = codex.plan(triple, Machine.of({"CODEX_HOME": home, "HOME": home}), PlanOptions(codex_auth=mode))
    after = tomllib.loads(plan.changes[0].after.decode())
    assert after["model"] == model and after["model_provider"] == codex.PROVIDER_ID
    provider = after["model_providers"][codex.PROVIDER_ID]
    assert provider["base_url"] == "https://taotoken.net/api/v1" and provider["wire_api"] == "responses"
    for key, value in before.items():
        if key in ("profile", "profiles"):
            # Codex 0.134+ refuses to start with these: init moves them out, or says Codex will not start.
            assert key not in after or plan.broken, key
        elif key not in ("model", "model_provider", "model_providers"):
            assert after[key] == value, key
    for name, table in before.get("model_providers", {}).items():
        if name != codex.PROVIDER_ID:
            assert after["model_providers"][name] == table
    if comment:
        assert "# hand-written" in plan.changes[0].after.decode()


PROFILE = st.from_regex(r"[a-z][a-z0-9_\-]{0,8}", fullmatch=True)
VALUES = st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=20)


@SLOW
@given(existing=st.dictionaries(PROFILE, st.dictionaries(st.sampled_from(["base_url", "api_key", "model"]), VALUES,
                                                         max_size=3), max_size=3),
       profile=PROFILE, updates=st.dictionaries(st.sampled_from(["base_url", "api_key", "model"]),
                                                st.one_of(st.none(), VALUES), min_size=1, max_size=3),
       routes=st.one_of(st.none(), st.dictionaries(KEYS, st.one_of(st.none(), VALUES), max_size=3)),
       comment=st.booleans())
def test_config_update_round_trips_and_leaves_other_profiles(existing, profile, updates, routes, comment):
    text = ("# my own notes\n" if comment else "") + "".join(
        f"[profiles.{name}]\n" + toml_lines(values) + "\n"
        for name, values in existing.items())
    new_text = render_config_update(text, Path("config.toml"), profile, updates, routes=routes)
    data = tomllib.loads(new_text)
    table = data["profiles"][profile]
    for key, value in updates.items():
        if value is None:
            assert key not in table
        else:
            assert table[key] == value
    for key, value in existing.get(profile, {}).items():
        if key not in updates:
            assert table[key] == value
    for kind, model in (routes or {}).items():
        if model is None:
            assert kind not in table.get("routes", {})
        else:
            assert table["routes"][kind] == model
    for name, values in existing.items():
        if name != profile:
            assert data["profiles"][name] == values
    if comment:
        assert new_text.startswith("# my own notes\n")
    # applying the same edit again changes nothing
    assert render_config_update(new_text, Path("config.toml"), profile, updates, routes=routes) == new_text


def test_empty_read_between_cr_and_lf_keeps_one_event():  # found by the property above
    assert parse([b"data: a\r", b"", b"\ndata: b\r\n\r\n"]) == parse([b"data: a\r\ndata: b\r\n\r\n"])


@pytest.mark.parametrize("raw", ["https://h/v1/models/v1", "https://h/api/v1/chat/completions/v1/",
                                 "https://[::1", "http://[::1]x/api"])
def test_regressions_found_by_fuzzing(raw):
    try:
        value = hygiene.clean_base_url(raw).value
    except InputError:
        return
    assert hygiene.clean_base_url(value).value == value
