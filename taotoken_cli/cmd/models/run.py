"""Core of `taotoken models`: load the profile, list the models through the one gateway client, filter and mark
them (`collect`); `run` renders the report (`view`) and returns the exit status (check's, on a failure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from taotoken_cli.cmd.models import DEFAULT_TIMEOUT_S
from taotoken_cli.cmd.models.model import ModelRow, ModelsReport, Unlisted
from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.diagnosis.context import context_for
from taotoken_cli.core.diagnosis.listing import GLOB_CHARACTERS, config_diagnosis, fetch_model_list, match_models
from taotoken_cli.core.diagnosis.model_ids import close_model_matches, near_matches
from taotoken_cli.core.settings import LABELS, Overrides, load_settings
from taotoken_cli.core.settings.origins import fix_at_source
from taotoken_cli.core.term.iostreams import IOStreams


@dataclass(frozen=True)
class ModelsOptions:
    pattern: str | None = None  # case-insensitive substring, or a glob such as gpt-4*
    profile: str | None = None
    base_url: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    no_proxy: bool = False
    json_out: bool = False


def collect(options: ModelsOptions, env: Mapping[str, str]) -> ModelsReport:
    from taotoken_cli.core.base.masking import mask_key
    from taotoken_cli.core.net.gateway import budgeted

    report = ModelsReport(pattern=options.pattern or None)
    settings = None
    try:
        settings = load_settings(Overrides(profile=options.profile, base_url=options.base_url), env)
        report.profile = settings.profile
        settings.require("base_url", "api_key")
    except TaotokenError as exc:
        report.diagnosis = config_diagnosis(exc, settings, env)
        return report
    base = settings.base_url.value or ""
    report.base_url, report.key = base, mask_key(settings.api_key.value)
    report.configured_model, report.routes = settings.model.value, dict(settings.routes)
    for name in ("base_url", "api_key", "model"):
        report.notes.extend(settings.value(name).labelled_notes(LABELS[name]))

    with budgeted(base, settings.api_key.value, options.timeout_s, trust_env=not options.no_proxy,
                  env=env) as gateway:
        listing = fetch_model_list(gateway, context_for(base=base, settings=settings))
    obs = listing.observation
    report.url, report.status, report.proxy = obs.url, obs.status, obs.proxy
    report.latency_ms = obs.elapsed_s * 1000
    if listing.diagnosis is not None:
        report.diagnosis = listing.diagnosis
        return report
    report.listed = listing.models
    report.rows = [ModelRow(m, m.id == report.configured_model, [k for k, v in report.routes.items() if v == m.id])
                   for m in match_models(listing.models, report.pattern)]
    ids = listing.ids
    if report.no_match and report.pattern:
        wanted = report.pattern.translate({ord(ch): None for ch in GLOB_CHARACTERS + "]"})
        report.close_matches = near_matches(wanted, ids) if wanted else []
    uses = ([("model", None, report.configured_model)] if report.configured_model else []) + [
        ("route", key, model) for key, model in report.routes.items()]
    for use, route, model in uses:
        if model not in ids:
            close = close_model_matches(model, ids, limit=3)
            target = close[0] if close else _("<a listed ID>")
            fix = (Fix.run(Command(f"taotoken route set {route}={target}")) if route is not None
                   else fix_at_source(settings, "model", target, env))
            report.unlisted.append(Unlisted(use, route, model, close, fix))
    return report


def run(options: ModelsOptions, io: IOStreams) -> int:
    from taotoken_cli.cmd.models import view

    report = collect(options, io.env)
    if options.json_out:
        view.render_json(io.out, report)
    elif report.diagnosis is not None:
        view.render_failure(io.out, report)
    elif io.stdout_tty:
        view.render_table(io.out, report, width=view.terminal_width(io))
    else:
        view.render_ids(io.out, report)
    return report.exit_code
