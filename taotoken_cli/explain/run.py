"""`taotoken explain`: a failure code -> its catalogue entry, with {base}, {model}… filled in from the active
profile where it loads. Rendering is in `view`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from taotoken_cli.diagnosis.catalogue import CATALOGUE, close_codes
from taotoken_cli.diagnosis.classify import Diagnosis
from taotoken_cli.errors import InputError
from taotoken_cli.exitcodes import Exit
from taotoken_cli.explain import view
from taotoken_cli.iostreams import IOStreams


@dataclass
class ExplainOptions:
    code: str | None = None  # None: list every code
    list_all: bool = False
    json_out: bool = False


def profile_context(env: Mapping[str, str]) -> dict[str, str]:
    """{base}, {openai_base}, {model}, {host} from the active profile, when it loads; else none."""
    try:
        from urllib.parse import urlsplit

        from taotoken_cli.config import load_settings

        settings = load_settings(env=env)
    except Exception:  # explain must work even with a broken config; placeholders then stay visible
        return {}
    context: dict[str, str] = {}
    base = settings.base_url.value
    if base:
        context.update(base=base, openai_base=base + "/v1", host=urlsplit(base).hostname or "")
    if settings.model.value:
        context["model"] = settings.model.value
    return context


def lookup(code: str, env: Mapping[str, str]) -> Diagnosis:
    """The entry for `code`, as a Diagnosis with the profile's values filled in; a typo gets suggestions."""
    wanted = code.strip().lower()
    entry = CATALOGUE.get(wanted)
    if entry is None:
        near = close_codes(wanted)
        hint = ("did you mean: " + ", ".join(near) + "?  " if near else "") + "all codes: taotoken explain --list"
        raise InputError(f"unknown code {code!r}", hint)
    return Diagnosis(entry.code, entry, context=profile_context(env), generic=True)


def run(options: ExplainOptions, io: IOStreams) -> int:
    if options.list_all or options.code is None:
        view.render_list(io.out, list(CATALOGUE.values()), options.json_out)
    else:
        view.render_entry(io.out, lookup(options.code, io.env), options.json_out)
    return Exit.OK
