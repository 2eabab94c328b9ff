"""Configuration: taotoken's own config file and the resolved triple (base URL, key, model)."""

from __future__ import annotations

import functools
from pathlib import Path
from urllib.parse import urlsplit

from taotoken_cli import DEFAULT_BASE_URL
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Repair, Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.errors import ConfigFileError, InputError, TaotokenError
from taotoken_cli.core.base.fix import Command, Fix, config_set
from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.files.fileplan import FileChange
from taotoken_cli.core.files.fsutil import is_world_readable, private_fix
from taotoken_cli.core.net import hygiene
from taotoken_cli.core.settings import ENV_API_KEY, ENV_MODEL, Value
from taotoken_cli.core.settings.edit import render_config_update
from taotoken_cli.core.settings.origins import describe, fix_at_source

SECTION = "Configuration"
# Paths of web pages people copy instead of the API root.
_WEB_PAGE_PATHS = ("/console", "/dashboard", "/login", "/register", "/token", "/tokens", "/keys", "/panel",
                   "/pricing", "/docs", "/topup", "/log", "/setting")
_OFFICIAL_HOST = urlsplit(DEFAULT_BASE_URL).hostname or ""


def origin_text(ctx: DoctorContext, item: Value) -> str:
    if item.origin.kind in ("env", "file", "flag"):
        return _("from {origin}").format(origin=describe(item, ctx.env))
    return describe(item, ctx.env)


def set_fix(ctx: DoctorContext, name: str, value: str | None) -> Fix:
    """The instruction that sets `name` where its value really comes from (the key itself is never shown)."""
    return fix_at_source(ctx.settings, name, value, ctx.env)


def file_repair(ctx: DoctorContext, name: str, value: str) -> list[Repair]:
    """Rewrite one cleaned value into the own config file (only when it came from that file)."""
    item = ctx.settings.value(name)
    if item.origin.kind != "file" or ctx.settings_error is not None:
        return []
    settings = ctx.settings
    if name == "api_key":
        description = _("set api_key in [profiles.{profile}] to the key with whitespace/quotes removed")
    else:
        description = _("set {name} in [profiles.{profile}] to {value}")
    description = description.format(name=name, profile=settings.profile, value=value)

    def transform(text: str) -> str:
        return render_config_update(text, settings.config_path, settings.profile, {name: value})

    return [Repair(settings.config_path, description, transform, secret=True)]


@check("config.file", SECTION, N_("taotoken config file"))
def config_file(ctx: DoctorContext) -> Result:
    s = ctx.settings
    err = ctx.settings_error
    if err is not None:
        where = err.message
        fix = [err.fix] if err.fix else []
        if isinstance(err, ConfigFileError):
            where = f"{err.path}:{err.line}:{err.column}: {err.detail}" if err.line else f"{err.path}: {err.detail}"
        return Result.fail(_("config file does not parse: {error}").format(error=where), fixes=fix)
    if not s.config_exists:
        if ctx.settings.api_key.origin.kind in ("env", "flag"):
            return Result.ok(_("no config file ({path}); values come from the environment").format(
                path=s.config_path))
        return Result.warn(_("no config file at {path}").format(path=s.config_path), fixes=[Fix.run("taotoken init")])
    details = [_("profile {profile} ({origin})").format(profile=s.profile, origin=s.profile_origin)]
    if s.profiles and s.profile not in s.profiles:
        names = listed(s.profiles)
        return Result.fail(_("profile {profile} is not in {path}").format(profile=repr(s.profile), path=s.config_path),
                           details=[_("profiles in the file: {profiles}").format(profiles=names)],
                           fixes=[Fix.of(_("{command}   (or pick one of: {profiles})"),
                                         command=Command(f"taotoken init --profile {s.profile}"), profiles=names)])
    if is_world_readable(s.config_path) and s.api_key.origin.kind == "file":
        return Result.warn(_("{path} holds the key and is readable by other users").format(path=s.config_path),
                           details=details, fixes=[Fix.run(private_fix(s.config_path))])
    return Result.ok(_("{path} (profile {profile})").format(path=s.config_path, profile=s.profile), details=details)


def _website_instead_of_api(url: str) -> str | None:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    path = parts.path.rstrip("/").lower()
    if host in (_OFFICIAL_HOST, "www." + _OFFICIAL_HOST) and not path.startswith("/api"):
        return DEFAULT_BASE_URL
    for page in _WEB_PAGE_PATHS:
        if path.endswith(page) or f"{page}/" in path:
            return f"{parts.scheme}://{parts.netloc}"  # best guess shown as a hint only
    return None


@check("config.base_url", SECTION, N_("Base URL"))
def base_url(ctx: DoctorContext) -> Result:
    item = ctx.settings.base_url
    where = origin_text(ctx, item)
    if item.error:
        return Result.fail(_("base URL {url} ({where}) cannot be used: {error}").format(
            url=repr(item.raw), where=where, error=item.error),
            fixes=[item.fix or set_fix(ctx, "base_url", DEFAULT_BASE_URL)])
    assert item.value is not None
    raw = item.raw or item.value
    cleaned = hygiene.clean_base_url(raw)
    details = [_("root {root}: Claude Code gets {root}, OpenAI-style clients get {root}/v1").format(root=item.value)]
    parts = urlsplit(item.value)
    website = _website_instead_of_api(item.value)
    if website == DEFAULT_BASE_URL:
        return Result.fail(_("{url} ({where}) is the website, not the API root").format(url=item.value, where=where),
                           details=details, fixes=[set_fix(ctx, "base_url", DEFAULT_BASE_URL)],
                           repairs=file_repair(ctx, "base_url", DEFAULT_BASE_URL))
    if website:
        return Result.warn(_("{url} ({where}) looks like a web page of the console, not the API root").format(
            url=item.value, where=where),
            details=details + [_("the API root is what the console's API/docs page shows as base URL")],
            fixes=[Fix.of(_("{fix}   (or your gateway's API root)"), fix=set_fix(ctx, "base_url", DEFAULT_BASE_URL))])
    if cleaned.changes:
        # taotoken cleans it for itself, but the source is still wrong and other tools read it as is.
        return Result.warn(_("base URL {url} ({where}) needed cleaning: {changes}").format(
            url=repr(raw.strip()), where=where, changes=_("; ").join(cleaned.changes)),
            details=details + [_("taotoken uses {url}").format(url=item.value)],
            fixes=[set_fix(ctx, "base_url", item.value)],
            repairs=file_repair(ctx, "base_url", item.value))
    if hygiene.is_loopback_host(parts.hostname):
        return _loopback(ctx, item.value, where, details)
    if cleaned.warnings:
        return Result.warn(_("{url} ({where}): {warnings}").format(url=item.value, where=where,
                                                                   warnings=_("; ").join(cleaned.warnings)),
                           details=details,
                           fixes=[set_fix(ctx, "base_url", "https://" + item.value.split("://", 1)[1])])
    if item.value != DEFAULT_BASE_URL:
        details.append(_("custom endpoint in use (the TaoToken default is {url})").format(url=DEFAULT_BASE_URL))
    return Result.ok(_("{value} ({where})").format(value=item.value, where=where), details=details)


@check("config.api_key", SECTION, N_("API key"))
def api_key(ctx: DoctorContext) -> Result:
    item = ctx.settings.api_key
    where = origin_text(ctx, item)
    if item.origin.kind == "unset":
        return Result.fail(_("no API key configured"),
                           fixes=[Fix.run("taotoken init"), Fix.run(f"export {ENV_API_KEY}=sk-…")])
    if item.error:
        return Result.fail(_("the key ({where}) cannot be used: {error}").format(where=where, error=item.error),
                           fixes=[f for f in (item.fix, set_fix(ctx, "api_key", None)) if f])
    assert item.value is not None and item.raw is not None
    shown = mask_key(item.value)
    try:
        cleaned = hygiene.clean_key(item.raw)
    except InputError as exc:  # pragma: no cover - load_settings would have set item.error
        return Result.fail(exc.message, fixes=[exc.fix or ""])
    if cleaned.changes:
        fixes = []
        if item.origin.kind == "env":
            fixes.append(Fix.of(_("set {var} without quotes or a newline: {command}"),
                                var=ENV_API_KEY, command=Command(f"export {ENV_API_KEY}=sk-…")))
        elif item.origin.kind == "file":
            fixes.append(Fix.of(_("{command}   (rewrites the cleaned key into the config file)"),
                                command=Command("taotoken doctor --fix")))
        else:
            fixes.append(_("pass the key without quotes or a newline"))
        return Result.warn(_("key {key} ({where}) needs cleaning: {changes}").format(
            key=shown, where=where, changes=_("; ").join(cleaned.changes)),
            details=[_("taotoken strips it, but other clients send the raw value and get a 401 "
                       "(an HTTP header cannot carry a newline)")],
            fixes=fixes, repairs=file_repair(ctx, "api_key", item.value))
    if cleaned.warnings:
        return Result.warn(_("key {key} ({where}): {warnings}").format(key=shown, where=where,
                                                                       warnings=_("; ").join(cleaned.warnings)),
                           fixes=[Fix.of(_("copy the key again from the TaoToken console, then: {fix}"),
                                         fix=set_fix(ctx, "api_key", None))])
    return Result.ok(_("{value} ({where})").format(value=shown, where=where))


@check("config.model", SECTION, N_("Model"))
def model(ctx: DoctorContext) -> Result:
    item = ctx.settings.model
    where = origin_text(ctx, item)
    if item.origin.kind == "unset":
        return Result.fail(_("no model configured"),
                           fixes=[Fix.of(_("{command}   (gateway.model lists your models)"),
                                         command=config_set("model", "<model-id>")),
                                  Fix.run(f"export {ENV_MODEL}=<model-id>")])
    if item.error:
        return Result.fail(_("model ({where}) cannot be used: {error}").format(where=where, error=item.error),
                           fixes=[item.fix or ""])
    assert item.value is not None
    if item.raw is not None and item.raw != item.value:
        return Result.warn(_("model {model} ({where}) had whitespace or quotes around it").format(
            model=repr(item.raw), where=where),
            fixes=[set_fix(ctx, "model", item.value)],
            repairs=file_repair(ctx, "model", item.value))
    routes = ctx.settings.routes
    details = [_("routes: {routes}").format(routes=listed(f"{k}={v}" for k, v in routes.items()))] if routes else []
    return Result.ok(_("{value} ({where})").format(value=item.value, where=where), details=details)


def _loopback(ctx: DoctorContext, url: str, where: str, details: list[str]) -> Result:
    """A base URL on this machine: fine when a local gateway/relay listens, a leftover when nothing does."""
    from taotoken_cli.cmd.doctor import probes

    fix = set_fix(ctx, "base_url", DEFAULT_BASE_URL)
    if ctx.offline:
        return Result.warn(_("base URL {url} ({where}) points at this machine (not checked: --offline)").format(
            url=url, where=where),
            details=details + [_("often left over from an old local proxy or relay")],
            fixes=[Fix.of(_("{fix}   (if the local relay is gone)"), fix=fix)])
    host, port = probes.host_port(url)
    probe = probes.tcp(ctx, host, port)
    if probe.ok:
        return Result.ok(_("{url} ({where}): a local gateway or relay listens there").format(url=url, where=where),
                         details=details)
    return Result.fail(_("base URL {url} ({where}) points at this machine, but nothing listens on {host}:{port}")
                       .format(url=url, where=where, host=host, port=port),
                       details=details + [_("usually left over from an old local proxy or relay")], fixes=[fix])


@check("config.copies", SECTION, N_("Copies of the triple in step"))
def copies(ctx: DoctorContext) -> Result:
    """Every file init wrote (client configs, env.sh, the CC Switch links) holds the values taotoken uses."""
    from taotoken_cli.core.clients.copies import SYNC_COMMAND, plan_sync, stale_note, triple_of

    if ctx.settings_error is not None:
        return Result.skipped(_("the config file does not parse (see config.file)"), blocked_by="config.file")
    triple = triple_of(ctx.settings)
    if triple is None:
        return Result.skipped(_("base URL, key or model is missing (see above)"))
    try:
        sync = plan_sync(triple, ctx.settings.profile, ctx.machine, admit=_gemini_rule(ctx))
    except TaotokenError as exc:  # a client file that does not parse: its own check in Clients says where
        return Result.skipped(_("cannot compare: {error} (see Clients)").format(error=exc.message.splitlines()[0]))
    if sync.record is None:
        return Result.skipped(_("init has not written any client yet"))
    if sync.record.profile != ctx.settings.profile:
        return Result.ok(_("the clients hold profile {held} (this run checks {profile})").format(
            held=repr(sync.record.profile), profile=repr(ctx.settings.profile)))
    gone = [_("{path} no longer exists: not recreated (`taotoken init --target {target}` writes it again)").format(
        path=change.path, target=change.target) for change in sync.gone] + sync.held + sync.held_back
    if not sync.stale:
        same = (_("{clients}: every copy holds the same values").format(clients=listed(sync.record.targets))
                if sync.record.targets else _("no clients: every copy holds the same values"))
        return Result.ok(same, details=gone)
    details = [f"{change.path}: {'; '.join(change.summary)}" for change in sync.stale] + gone
    doubt = _config_in_doubt(ctx)
    if doubt:  # the copies may well hold the right values: syncing would spread the config's mistake
        return Result.warn(_("{note}; not synced: {reason}").format(note=stale_note(sync, ctx.env), reason=doubt),
                           details=details,
                           fixes=[Fix.of(_("correct taotoken's config first (see the finding named above), then: "
                                           "{command}"), command=Command(SYNC_COMMAND))])
    return Result.warn(stale_note(sync, ctx.env), details=details,
                       fixes=[Fix.of(_("{command}   (or: {command2})"), command=Command(SYNC_COMMAND),
                                     command2=Command("taotoken doctor --fix"))],
                       repairs=_sync_repairs(ctx, sync.stale))


def _gemini_rule(ctx: DoctorContext):
    """Gemini CLI's copy is in step only with a gateway that serves the Gemini API (the run's one probe)."""
    from taotoken_cli.cmd.doctor import probes
    from taotoken_cli.core.diagnosis import gemini_api

    return gemini_api.admit(lambda _triple: probes.gemini(ctx))


def _config_in_doubt(ctx: DoctorContext) -> str | None:
    """Why the config's own values are not known to be good (None: the gateway accepts its key and lists its
    model). Offline nothing is known."""
    from taotoken_cli.cmd.doctor import probes
    from taotoken_cli.core.diagnosis.model_ids import model_ids

    if ctx.offline:
        return _("--offline cannot confirm that the gateway accepts taotoken's values (run `taotoken check`)")
    obs = probes.models(ctx)
    if obs.status in (401, 403):
        return _("the gateway rejects the key in taotoken's config (see gateway.key)")
    if not obs.ok_status:
        return _("the gateway did not confirm taotoken's values (see gateway.layout)")
    ids = model_ids(obs.json())
    if ids and ctx.model not in ids:
        return _("the gateway does not list taotoken's model {model} (see gateway.model)").format(model=ctx.model)
    return None


def _sync_repairs(ctx: DoctorContext, stale: list[FileChange]) -> list[Repair]:
    """Write each copy anew from the triple, re-planned at fix time (a file may have changed since the check).
    doctor --fix runs every transform before it writes anything, so one re-plan serves all the copies."""
    from taotoken_cli.core.clients.copies import plan_sync, triple_of

    @functools.cache
    def replanned() -> dict[Path, bytes]:
        now: dict[Path, bytes] = {}
        for change in plan_sync(triple_of(ctx.settings), ctx.settings.profile, ctx.machine,
                                admit=_gemini_rule(ctx)).stale:
            now.setdefault(change.path, change.after)
        return now

    def repair(change: FileChange) -> Repair:
        def transform(text: str) -> str:
            after = replanned().get(change.path)
            return text if after is None else after.decode("utf-8")  # None: in step by now

        return Repair(change.path, _("bring in step with taotoken's config ({target})").format(target=change.target),
                      transform, secret=change.secret, whole_file=True)

    return [repair(change) for change in stale]
