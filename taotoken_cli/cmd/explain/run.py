"""`taotoken explain`: a failure code, an HTTP status or a server's message (Chinese or English) -> the catalogue
entries it can mean, with {base}, {model}… filled in from the active profile where it loads. Rendering is in
`view`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from taotoken_cli.cmd.explain import view
from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.diagnosis.catalogue import CATALOGUE, STATUS_MEANINGS, close_codes
from taotoken_cli.core.diagnosis.classify import Diagnosis, codes_for_message
from taotoken_cli.core.diagnosis.context import DiagnosisContext, context_for
from taotoken_cli.core.term.iostreams import IOStreams


@dataclass
class ExplainOptions:
    code: str | None = None  # a code, an HTTP status or a server's message; None: list every code
    list_all: bool = False
    json_out: bool = False


@dataclass
class Candidates:
    """What a status or a message can mean: several codes, most likely first."""

    query: str
    kind: str  # "status" | "message"
    codes: list[str]
    status: int | None = None  # the HTTP status the query names ("HTTP 429", "http 401", "429")


def profile_context(env: Mapping[str, str]) -> DiagnosisContext:
    """{base}, {openai_base}, {model}, {host} from the active profile, when it loads; else none."""
    try:
        from taotoken_cli.core.settings import load_settings

        settings = load_settings(env=env)
    except Exception:  # explain must work even with a broken config; placeholders then stay visible
        return context_for(env=env)
    return context_for(settings=settings, env=env, sources=False)


def lookup(code: str, env: Mapping[str, str]) -> Diagnosis | Candidates:
    """The entry for a code (a Diagnosis with the profile's values filled in), or the codes an HTTP status or a
    server's message can mean. Nothing known: an error that suggests the nearest codes."""
    query = code.strip()
    wanted = query.lower()
    entry = CATALOGUE.get(wanted)
    if entry is not None:
        return Diagnosis(entry.code, entry, context=profile_context(env), generic=True)
    status, rest = status_and_message(query)
    matched = codes_for_message(rest or query, status) if rest or status is None else []
    if status is not None and not matched:  # "429", "HTTP 429", "http 401", "429 Too Many Requests"
        return Candidates(query, "status", list(STATUS_MEANINGS.get(status) or _status_family(status)), status)
    if matched:
        return Candidates(query, "message", matched)
    near = close_codes(wanted)
    every = Command("taotoken explain --list")
    hint = (Fix.of(_("did you mean: {codes}?  all codes: {command}"), codes=listed(near), command=every) if near
            else Fix.of(_("all codes: {command}"), command=every))
    raise InputError(_("{query!r} is not a code, an HTTP status or a message taotoken knows").format(query=code), hint)


# How a status is written where users copy it from: "429", "HTTP 429", "http 401", "HTTP/1.1 429 Too Many
# Requests", "status 503", "状态码 401", "错误码：429", followed or not by the server's message.
_STATUS = re.compile(r"(?:(?:https?(?:/[\d.]+)?|status(?:\s+code)?|状态码|错误码|code)\s*[:：=]?\s*)?"
                     r"(?P<status>[1-5]\d\d)(?!\d)\s*[:：,，\-–—]?\s*(?P<rest>.*)", re.IGNORECASE | re.DOTALL)


def status_and_message(query: str) -> tuple[int | None, str]:
    """(the HTTP status `query` starts with, the rest: the server's message, or "" for none or only the reason
    phrase); (None, query) when it names no status."""
    match = _STATUS.fullmatch(query.strip())
    if match is None:
        return None, query
    status, rest = int(match.group("status")), match.group("rest").strip()
    if rest.lower() == _REASONS.get(status, "").lower():
        rest = ""
    return status, rest


_REASONS = {400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
            405: "Method Not Allowed", 408: "Request Timeout", 413: "Payload Too Large", 422: "Unprocessable Entity",
            429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout"}


def _status_family(status: int) -> tuple[str, ...]:
    """A status the table does not list: what its class means (4xx: the request, 5xx: the server)."""
    return ("server.error",) if status >= 500 else ("request.invalid",) if status >= 400 else ()


def run(options: ExplainOptions, io: IOStreams) -> int:
    if options.list_all or options.code is None:
        view.render_list(io.out, list(CATALOGUE.values()), options.json_out)
    else:
        found = lookup(options.code, io.env)
        if isinstance(found, Candidates):
            view.render_candidates(io.out, found.query, found.kind, [CATALOGUE[c] for c in found.codes],
                                   options.json_out, status=found.status)
            if len(found.codes) == 1 and not options.json_out:  # one meaning: explain it right away
                io.out.line("")
                view.render_entry(io.out, lookup(found.codes[0], io.env))
        else:
            view.render_entry(io.out, found, options.json_out)
    return Exit.OK
