"""`taotoken explain`: a failure code, an HTTP status or a server's message (Chinese or English) -> the catalogue
entries it can mean, with {base}, {model}… filled in from the active profile where it loads. Rendering is in
`view`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from taotoken_cli.cmd.explain import view
from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.i18n import _
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
    status_text, _space, rest = query.partition(" ")
    status = int(status_text) if status_text.isdigit() and 100 <= int(status_text) <= 599 else None
    if status is not None and not rest.strip():
        return Candidates(query, "status", list(STATUS_MEANINGS.get(status) or _status_family(status)))
    matched = codes_for_message(rest if status is not None else query, status)
    if matched:
        return Candidates(query, "message", matched)
    near = close_codes(wanted)
    hint = (_("did you mean: {codes}?  all codes: taotoken explain --list").format(codes=", ".join(near)) if near
            else _("all codes: taotoken explain --list"))
    raise InputError(_("{query!r} is not a code, an HTTP status or a message taotoken knows").format(query=code), hint)


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
                                   options.json_out)
            if len(found.codes) == 1 and not options.json_out:  # one meaning: explain it right away
                io.out.line("")
                view.render_entry(io.out, lookup(found.codes[0], io.env))
        else:
            view.render_entry(io.out, found, options.json_out)
    return Exit.OK
