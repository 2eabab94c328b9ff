"""Core of `taotoken check`: one models request (plus an optional 1-token chat), as a result object.

`run_check` computes; `run` renders the result in the chosen mode (see `view`) and returns the exit status.
Nothing here prompts, needs a TTY or imports rich/tomlkit: `check` runs at shell start-up and is held to
a start-up budget.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from taotoken_cli.cmd.check import DEFAULT_TIMEOUT_S
from taotoken_cli.cmd.check.model import CheckResult, Probe
from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.base.fix import Command, Fix, config_set
from taotoken_cli.core.base.i18n import _, listed, ngettext
from taotoken_cli.core.diagnosis.catalogue import get
from taotoken_cli.core.diagnosis.classify import Diagnosis, classify
from taotoken_cli.core.diagnosis.context import DiagnosisContext, context_for
from taotoken_cli.core.diagnosis.listing import config_diagnosis, fetch_model_list
from taotoken_cli.core.diagnosis.model_ids import close_model_matches
from taotoken_cli.core.settings import LABELS
from taotoken_cli.core.term.iostreams import IOStreams


@dataclass(frozen=True)
class CheckOptions:
    profile: str | None = None
    base_url: str | None = None
    model: str | None = None
    chat: bool = False
    stream: bool = False  # the chat is streamed; success needs content and a proper end
    timeout_s: float = DEFAULT_TIMEOUT_S
    no_proxy: bool = False
    mode: str = "line"  # how the result is shown: line | quiet | code | json (see taotoken_cli.cmd.check.MODES)
    allow_unlisted: bool = False  # a model the list lacks is a note, not a failure (gateways that hide models)


def run_check(options: CheckOptions, env: dict[str, str] | None = None) -> CheckResult:
    """Load settings, call the models endpoint (and chat when asked), classify what came back."""
    from taotoken_cli.core.base.masking import mask_key
    from taotoken_cli.core.settings import Overrides, load_settings

    result = CheckResult()
    settings = None
    try:
        settings = load_settings(Overrides(profile=options.profile, base_url=options.base_url,
                                           model=options.model), env=env)
        result.profile = settings.profile
        settings.require("base_url", "api_key")
        if options.chat or options.stream:
            settings.require("model")
    except TaotokenError as exc:
        result.diagnosis = config_diagnosis(exc, settings, env)
        return result

    base = settings.base_url.value or ""
    key = settings.api_key.value
    result.base_url = base
    result.key = mask_key(key)
    result.model = settings.model.value
    result.model_explicit = options.model is not None
    for name in ("base_url", "api_key", "model"):
        result.notes.extend(settings.value(name).notes)
        result.labelled_notes.extend(settings.value(name).labelled_notes(LABELS[name]))

    from taotoken_cli.core.settings.origins import outside_config

    _ask_gateway(options, env, base, key, context_for(base=base, settings=settings, model=result.model or ""),
                 result)
    if result.diagnosis is None or not result.diagnosis.code.startswith("auth."):
        from taotoken_cli.core.net.hygiene import key_suffix_warning

        said = key_suffix_warning()
        result.labelled_notes = [note for note in result.labelled_notes if said not in note]
        result.notes = [note for note in result.notes if said not in note]
    if result.diagnosis is not None:
        # Where each value comes from (this reads the shell start-up files): only when a fix will be shown.
        result.diagnosis.context.sources = outside_config(settings, env if env is not None else os.environ)
    return result


def _ask_gateway(options: CheckOptions, env: dict[str, str] | None, base: str, key: str | None,
                 context: DiagnosisContext, result: CheckResult) -> None:
    """The models request (and the chat when asked); a failure is left in `result.diagnosis`."""
    from taotoken_cli.core.net.gateway import budgeted

    with budgeted(base, key, options.timeout_s, trust_env=not options.no_proxy, env=env) as gateway:
        listing = fetch_model_list(gateway, context)
        models = listing.observation
        result.proxy = models.proxy
        result.probes.append(Probe("models", models.method, models.url, models.status, models.elapsed_s * 1000,
                                   listing.ok))
        if listing.diagnosis is not None:
            result.diagnosis = listing.diagnosis
            return
        ids = listing.ids
        result.models_count = len(ids)
        if result.model:
            result.model_listed = result.model in ids
            if not result.model_listed:
                result.close_matches = close_model_matches(result.model, ids)
                result.unlisted_allowed = options.allow_unlisted
                # With --chat the chat decides: its answer names the cause better (a model this key may not
                # use, no channel), and a model that answers is served, listed or not.
                if not options.allow_unlisted and not (options.chat or options.stream):
                    result.diagnosis = model_not_listed(result, context)
                    return
        if (options.chat or options.stream) and result.model:
            started = time.perf_counter()
            chat = gateway.chat(result.model, max_tokens=1, stream=options.stream)
            diagnosis = classify(chat, expect="stream" if options.stream else "chat", context=context)
            elapsed_ms = chat.elapsed_s * 1000 if chat.elapsed_s else (time.perf_counter() - started) * 1000
            result.probes.append(Probe("chat", chat.method, chat.url, chat.status, elapsed_ms, diagnosis is None))
            if diagnosis is not None:
                if diagnosis.code == "model.not_found" and result.close_matches:
                    diagnosis.details.append(_("listed IDs close to it: {models}").format(
                        models=listed(result.close_matches)))
                result.diagnosis = diagnosis
                return
            result.chat_reply = chat.stream.text[:80] if chat.stream is not None else chat_text(chat.json())


def model_not_listed(result: CheckResult, context: DiagnosisContext) -> Diagnosis:
    if result.models_count:
        details = [ngettext("{model!r} is not among the {count} model this key lists",
                            "{model!r} is not among the {count} models this key lists", result.models_count).format(
            model=result.model, count=result.models_count)]
    else:
        details = [_("the gateway lists no models for this key, so {model!r} is not among them").format(
            model=result.model)]
    if result.close_matches:
        details.append(_("close matches: {models}").format(models=listed(result.close_matches)))
    details.append(_("a gateway that serves models it does not list: taotoken check --allow-unlisted"))
    first_fix = (Fix.run(config_set("model", result.close_matches[0])) if result.close_matches
                 else Fix.of(_("see the models this key can use: {command}"), command=Command("taotoken models")))
    return Diagnosis("model.not_found", get("model.not_found"), None, None, details, context, first_fix=first_fix)


def chat_text(data: Any) -> str | None:
    try:
        message = data["choices"][0].get("message") or {}
        return (message.get("content") or "")[:80]
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


def run(options: CheckOptions, io: IOStreams) -> int:
    """Check, render the result in `options.mode`, return the exit status."""
    from taotoken_cli.cmd.check import view

    result = run_check(options, io.env)
    render = {"json": view.render_json, "code": view.render_code, "quiet": view.render_quiet}.get(
        options.mode, view.render_line)
    render(io.out, result)
    return result.exit_code
