"""CC Switch's checks: it rewrites Claude Code's and Codex's files when it switches providers, so what counts is
which provider it has selected for each app whose files it manages, and what its TaoToken provider stores.

Its store is read only (the database through a `mode=ro` URI; see clients/ccswitch_store.py). The current
provider comes from settings.json `currentProvider<App>`, else the database's `is_current`, else the legacy
config.json `<app>.current`. Only apps whose files exist here are checked: CC Switch with no Codex file writes
nothing Codex reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.cmd.doctor.checks.clients.common import (
    CLAUDE_FORM,
    CODEX_FORM,
    and_join,
    claude_url_why,
    clean_root,
    client_base_url_result,
    client_check,
    client_state,
    codex_url_why,
    parse_failure,
)
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Result, Status
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import ccswitch
from taotoken_cli.core.clients.ccswitch_store import APPS, Store, StoredProvider, live_files


@dataclass(frozen=True)
class CCSwitch:
    store: Store
    current: dict[str, tuple[str | None, str]]  # app -> (current provider id, where that came from)
    managed: dict[str, list[Path]]  # app -> the files of it CC Switch rewrites that exist here

    def details(self) -> list[str]:
        lines = [self.store.describe()]
        for app, (pid, source) in self.current.items():
            if app in self.managed:
                lines.append(_("current {app} provider: {provider} (from {source})").format(
                    app=ccswitch.APP_LABELS[app], provider=pid or _("(none)"), source=source))
        return lines


def ccswitch_found(ctx: DoctorContext) -> CCSwitch | Result:
    store = ctx.memo("ccswitch:store", lambda: ccswitch.store(ctx.machine))
    if store.kind == "none":
        return Result.skipped(_("CC Switch not found (no cc-switch.db or config.json in {path})").format(
            path=store.paths.home))
    settings = client_state(ctx, ccswitch.NAME).files["settings"]
    if settings.error:
        return parse_failure(settings)
    data = settings.data if isinstance(settings.data, dict) else {}
    current = {app: store.current(app, data) for app in APPS}
    managed = {app: existing for app, files in live_files(store.paths, ctx.machine.home, data).items()
               if (existing := [f for f in files if f.exists()])}
    return CCSwitch(store, current, managed)


def is_taotoken(ctx: DoctorContext, provider: StoredProvider) -> bool:
    """Named TaoToken, or pointing at the root taotoken uses."""
    if "taotoken" in f"{provider.name} {provider.id}".lower():
        return True
    return bool(ctx.base_url and provider.endpoint and clean_root(provider.endpoint)[0] == ctx.base_url)


@client_check("ccswitch.managed", N_("CC Switch manages the same files"), ccswitch_found)
def ccswitch_managed(ctx: DoctorContext, found: CCSwitch) -> Result:
    store, details = found.store, found.details()
    if not found.managed:
        return Result.ok(_("CC Switch is installed; it manages no client file here yet"), details=details)
    issues = Issues(details=details)
    elsewhere = []
    for app, files in found.managed.items():
        label, (pid, _source) = ccswitch.APP_LABELS[app], found.current[app]
        ours = [p for p in store.providers_for(app) if is_taotoken(ctx, p)]
        if pid is None and store.problem:
            issues.warn(_("CC Switch's current {app} provider is unknown: {problem}").format(app=label,
                                                                                             problem=store.problem),
                        fixes=[Fix.of(_("run {command} again once CC Switch is idle"),
                                      command=Command("taotoken doctor --check ccswitch"))])
        elif not (any(p.id == pid for p in ours) or (pid and "taotoken" in pid.lower())):
            elsewhere.extend(str(f) for f in files)
            add = f"taotoken init --target cc-switch --open-app {app}"
            fix = _("select TaoToken for {app} in CC Switch") if ours else \
                _("select TaoToken for {app} in CC Switch (if it is missing: {command})") if store.problem else \
                _("add TaoToken to CC Switch for {app}: {command} (then select it there)")
            issues.fixes.append(Fix.of(fix, app=label, command=Command(add)))
    if elsewhere:
        issues.warn(_("CC Switch manages {files}: its next provider switch overwrites edits made there (and absorbs "
                      "them into the current provider)").format(files=listed(elsewhere)))
    apps = and_join([ccswitch.APP_LABELS[app] for app in found.managed])
    return issues.result(_("TaoToken is CC Switch's current provider for {apps}").format(apps=apps))


def taotoken_providers(app: str) -> Callable[[DoctorContext], list[StoredProvider] | Result]:
    """A resolver for the check of `app`: CC Switch's TaoToken providers for it (the current one, when it is
    one of them), or why there is nothing to check."""

    def resolve(ctx: DoctorContext) -> list[StoredProvider] | Result:
        found = ccswitch_found(ctx)
        if isinstance(found, Result):  # not installed, or settings.json does not parse (reported once, there)
            return found if found.status is Status.SKIPPED else Result.skipped(_("see ccswitch.managed"))
        label = ccswitch.APP_LABELS[app]
        if app not in found.managed:
            return Result.skipped(_("CC Switch manages no {app} file here").format(app=label))
        if found.store.problem:
            return Result.skipped(_("CC Switch's providers could not be read (see ccswitch.managed)"))
        ours = [p for p in found.store.providers_for(app) if is_taotoken(ctx, p)]
        if not ours:
            return Result.skipped(_("CC Switch has no TaoToken provider for {app} (see ccswitch.managed)").format(
                app=label))
        return [p for p in ours if p.id == found.current[app][0]] or ours

    return resolve


def _summary(providers: list[StoredProvider], form: str) -> str:
    return _("; ").join(_("{provider}: {url} ({form}), key {key}, model {model}").format(
        provider=p.describe(), url=p.endpoint, form=form, key=mask_key(p.api_key), model=p.model or _("(default)"))
        for p in providers)


def _edit(provider: StoredProvider, msgid: str, **values: str | Command) -> Fix:
    """An instruction to edit `provider` in CC Switch: `msgid` (marked N_()) names the edit with {app} and
    {provider} (the whole sentence is one message, so each language orders it its own way)."""
    return Fix.of(_(msgid), app=ccswitch.APP_LABELS[provider.app], provider=provider.describe(), **values)


_SAVE = N_("in CC Switch, edit the {app} provider {provider} and save it")
_ENDPOINT = N_("in CC Switch, edit the {app} provider {provider}: API endpoint {url}")


def _check_key(ctx: DoctorContext, provider: StoredProvider, field: str, issues: Issues) -> None:
    stored = provider.api_key
    if stored is None:
        issues.fail(_("{provider} {field} is empty: requests go out without a key (401)").format(
            provider=provider.describe(), field=field),
                    fixes=[_edit(provider, N_("in CC Switch, edit the {app} provider {provider}: paste the key "
                                              "({key})"), key=mask_key(ctx.api_key))])
    elif ctx.api_key and stored.strip() != ctx.api_key:
        issues.fail(_("{provider} {field} is {value}, taotoken's key is {ours}").format(
            provider=provider.describe(), field=field, value=mask_key(stored), ours=mask_key(ctx.api_key)),
                    fixes=[_edit(provider, N_("in CC Switch, edit the {app} provider {provider}: paste the current key "
                                              "({key})"), key=mask_key(ctx.api_key))])


def _check_model(ctx: DoctorContext, provider: StoredProvider, issues: Issues) -> None:
    if provider.model and ctx.model and provider.model != ctx.model:
        issues.details.append(_("{provider} model = {model} (taotoken's model is {ours})").format(
            provider=provider.describe(), model=provider.model, ours=ctx.model))


@client_check("ccswitch.claude", N_("CC Switch's TaoToken provider for Claude Code"), taotoken_providers("claude"))
def ccswitch_claude(ctx: DoctorContext, providers: list[StoredProvider]) -> Result:
    issues = Issues()
    for provider in providers:
        if provider.problem:
            issues.fail(_("{label}: {text}").format(label=provider.describe(), text=provider.problem),
                        fixes=[_edit(provider, _SAVE)])
            continue
        value = provider.env.get("ANTHROPIC_BASE_URL")
        if not isinstance(value, str) or not value.strip():
            issues.fail(_("{provider} stores no ANTHROPIC_BASE_URL: Claude Code would call Anthropic").format(
                provider=provider.describe()), fixes=[_edit(provider, _ENDPOINT, url=str(ctx.base_url))])
        else:
            issues.add_result(client_base_url_result(
                ctx, f"{provider.describe()} ANTHROPIC_BASE_URL = {value!r}", value, CLAUDE_FORM,
                why=claude_url_why(value),
                set_fix=lambda url, p=provider: _edit(p, _ENDPOINT, url=url)))
        _check_key(ctx, provider, "ANTHROPIC_API_KEY" if "ANTHROPIC_AUTH_TOKEN" not in provider.env and
                   "ANTHROPIC_API_KEY" in provider.env else "ANTHROPIC_AUTH_TOKEN", issues)
        _check_model(ctx, provider, issues)
    return issues.result(_summary(providers, _("bare root, as Claude Code needs")))


@client_check("ccswitch.codex", N_("CC Switch's TaoToken provider for Codex"), taotoken_providers("codex"))
def ccswitch_codex(ctx: DoctorContext, providers: list[StoredProvider]) -> Result:
    issues = Issues()
    for provider in providers:
        _config, problem = provider.codex_config()
        chosen, table = provider.codex_provider()
        if provider.problem or problem:
            issues.fail(_("{label}: {text}").format(label=provider.describe(), text=provider.problem or problem),
                        fixes=[_edit(provider, _SAVE)])
            continue
        if not table:
            issues.fail(_("{provider}: model_provider = {value} has no [model_providers] table").format(
                provider=provider.describe(), value=repr(chosen)),
                        fixes=[_edit(provider, N_("in CC Switch, edit the {app} provider {provider}, or delete it and "
                                                  "run: {command}"),
                                     command=Command("taotoken init --target cc-switch --open-app codex"))])
            continue
        value = table.get("base_url")
        if not isinstance(value, str) or not value.strip():
            issues.fail(_("{provider}: {table} has no base_url").format(provider=provider.describe(),
                                                                        table=f"[model_providers.{chosen}]"),
                        fixes=[_edit(provider, _ENDPOINT, url=CODEX_FORM.url(ctx.base_url))])
        else:
            issues.add_result(client_base_url_result(
                ctx, f"{provider.describe()} base_url = {value!r}", value, CODEX_FORM, why=codex_url_why,
                set_fix=lambda url, p=provider: _edit(p, _ENDPOINT, url=url)))
        if table.get("wire_api", "responses") != "responses":
            issues.fail(_('{provider}: wire_api = "{value}": Codex refuses to start (only "responses" is '
                          "supported)").format(provider=provider.describe(), value=table.get("wire_api")),
                        fixes=[_edit(provider, N_('in CC Switch, edit the {app} provider {provider}: set wire_api = '
                                                  '"responses" in its config'))])
        _check_key(ctx, provider, "auth.OPENAI_API_KEY", issues)
        _check_model(ctx, provider, issues)
    return issues.result(_summary(providers, _("root + /v1, as Codex needs")))
