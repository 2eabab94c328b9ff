"""`taotoken config set` and `taotoken config sync`: change the triple once, and every copy `init` wrote follows.

A change is planned over taotoken's config and every recorded copy (taotoken_cli.core.clients.copies) and goes
through the apply flow (core.files.applyflow: shown, confirmed or `--yes`, backed up; `taotoken init --undo`
reverts). Without a terminal and without `--yes`, `config set` changes only taotoken's own file, as it always
did, and names the copies that are now stale and the one command that brings them in step.
"""

from __future__ import annotations

from pathlib import Path

from taotoken_cli.core.base.errors import InputError, TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.base.masking import mask_key, remember_secret
from taotoken_cli.core.clients import shell
from taotoken_cli.core.clients.base import Machine
from taotoken_cli.core.clients.copies import OWN, SYNC_COMMAND, Sync, plan_sync, stale_note, triple_of
from taotoken_cli.core.files import applyflow
from taotoken_cli.core.files.fileplan import FileChange, Plan, read_current
from taotoken_cli.core.platform import system
from taotoken_cli.core.settings.edit import (
    OWN_MERGE,
    SETTABLE_KEYS,
    TOP_LEVEL_KEYS,
    render_config_update,
    validate_profile_name,
)
from taotoken_cli.core.settings.loader import FIELDS, Overrides, clean_value, config_path, load_settings
from taotoken_cli.core.settings.origins import describe, fix_at_source, tilde
from taotoken_cli.core.term.iostreams import IOStreams
from taotoken_cli.core.term.output import Output


def set_value(io: IOStreams, key: str, value: str, profile: str | None, *, yes: bool = False,
              sync: bool = True, check_listed: bool = True) -> int:
    """One value into the profile, cleaned first; base URL, key and model reach every copy init wrote. A model the
    gateway does not list is refused before anything is written (`check_listed=False`: not asked).

    For the key, VALUE `-` asks for it: hidden input on a terminal, the whole of stdin otherwise."""
    out = io.out
    if key not in SETTABLE_KEYS:
        raise InputError(_("unknown setting {key}").format(key=repr(key)),
                         Fix.of(_("choose one of: {keys} (routes: {command})"), keys=listed(SETTABLE_KEYS),
                                command=Command("taotoken route set KIND=MODEL")))
    if key == "api_key" and value == "-":
        value = io.prompter.secret(_("API key"))
        remember_secret(value)
    elif key == "api_key":
        remember_secret(value)
        out.error_note(_("warning: a key given as an argument lands in your shell history; "
                         "prefer `taotoken config set api_key -` and paste it"))
    if key == "default_profile":  # the stored one is not read: it is being replaced (and may be a broken name)
        profile = profile or validate_profile_name(value)
    settings = load_settings(Overrides(profile=profile), io.env)  # raises with line/column on a broken file
    path = config_path(io.env)
    before = read_current(path)
    text = (before or b"").decode("utf-8")
    if key == "default_profile":
        new_text = render_config_update(text, path, validate_profile_name(value), {},
                                        default_profile=validate_profile_name(value))
        shown = value
    elif key == "lang":
        from taotoken_cli.core.base.i18n import LANG_SETTINGS

        shown = value.strip().lower()
        if shown not in LANG_SETTINGS:
            raise InputError(_("unknown language {value}").format(value=repr(value)),
                             _("use en, zh, or auto (follow the system's locale)"))
        new_text = render_config_update(text, path, settings.profile, {}, top={"lang": None if shown == "auto"
                                                                               else shown})
    else:
        validate_profile_name(settings.profile)
        cleaned = clean_value(key, value, settings.value(key).origin)
        if cleaned.error:
            raise InputError(cleaned.error, cleaned.fix)
        for note in cleaned.notes:
            out.error_note(_("note: {note}").format(note=note))
        if key == "model" and check_listed:
            _refuse_unlisted(io, settings, cleaned.value)
        new_text = render_config_update(text, path, settings.profile, {key: cleaned.value})
        shown = mask_key(cleaned.value) if key == "api_key" else cleaned.value
    setting = (_("set {key} = {value}") if key in TOP_LEVEL_KEYS else _("set {key} = {value} in profile {profile}"))
    setting = setting.format(key=key, value=shown, profile=repr(settings.profile))
    own = FileChange(path, before, new_text.encode("utf-8"), secret=True, target=OWN, summary=[setting],
                     merge=OWN_MERGE)
    copies = Sync(None, None, Plan())
    if key in FIELDS and sync:
        after = load_settings(Overrides(profile=profile), io.env, text=new_text)
        copies = plan_sync(triple_of(after), after.profile, Machine.of(io.env, io.cwd), admit=_gemini_rule(io),
                           before=triple_of(settings))
        if settings.value(key).origin.kind == "env":
            out.error_wrapped(fix_at_source(settings, key, shown, io.env), _("warning: "))
        for line in copies.foreign:  # copies taotoken does not write: named, never silently left behind
            out.error_wrapped(line, _("warning: "))
    _name_held(out, copies)
    if not copies.stale or not (yes or io.prompter.interactive):
        # taotoken's own file alone, or a script without --yes: only the own file, as before; say what is stale
        if applyflow.write_own(own):
            out.wrapped(_("{setting} ({path})").format(setting=setting, path=path), hang="  ")
        elif not copies.stale:
            out.wrapped(_("{key} is already {value} — nothing changed").format(key=key, value=shown), hang="  ")
        if copies.stale:
            _name_stale(out, copies, io.env)
        return Exit.OK
    plan = Plan([own], notes=copies.plan.notes, warnings=copies.plan.warnings, secrets=copies.plan.secrets)
    plan.extend(Plan(copies.plan.pending))
    return _apply(io, plan, applyflow.Flow(f"taotoken config set {key}", yes=yes, notes=False))


def _refuse_unlisted(io: IOStreams, settings, model: str) -> None:
    """A model the gateway's list lacks is not written into taotoken's file and four clients' with exit 0: refused
    with the listed ID it was probably meant to be. No list to ask (offline, no key): it is set, as before."""
    from taotoken_cli.core.base.fix import config_set
    from taotoken_cli.core.diagnosis.model_check import check_model

    found = check_model(settings.base_url.value if settings.base_url.is_set else None,
                        settings.api_key.value if settings.api_key.is_set else None, model, io.env)
    if found.listed is not False:  # True, or None: no list to ask (offline, no key), set as before
        return
    message = _("{model} is not in the gateway's model list for this key; nothing was written").format(
        model=repr(model))
    keep = Command(config_set("model", model, settings.profile).line + " --allow-unlisted")
    if found.close:
        fix = Fix.of(_("did you mean {close}? {command}   (keep {model} anyway: {keep})"), close=found.close[0],
                     command=config_set("model", found.close[0], settings.profile), model=repr(model), keep=keep)
    else:
        fix = Fix.of(_("pick a listed ID: {list}, or keep {model} anyway: {keep}"), list=Command("taotoken models"),
                     model=repr(model), keep=keep)
    raise TaotokenError(message, fix, Exit.NOT_FOUND, code="model.not_found")


def sync(io: IOStreams, profile: str | None, *, yes: bool = False, dry_run: bool = False) -> int:
    """`taotoken config sync`: bring every copy init wrote in step with the triple taotoken uses now."""
    out = io.out
    settings = load_settings(Overrides(profile=profile), io.env)
    settings.require("base_url", "api_key", "model")
    copies = plan_sync(triple_of(settings), settings.profile, Machine.of(io.env, io.cwd), admit=_gemini_rule(io))
    for line in copies.foreign:
        out.error_wrapped(line, _("warning: "))
    if copies.record is None and not copies.stale:
        out.wrapped(Fix.of(_("nothing to sync: no client holds a copy written by taotoken (run {command} to write "
                             "them)"), command=Command("taotoken init")), hang="  ")
        return Exit.OK
    if copies.record is not None and copies.record.profile != settings.profile:
        raise InputError(_("the clients hold profile {recorded}, not {profile}").format(
                             recorded=repr(copies.record.profile), profile=repr(settings.profile)),
                         Fix.of(_("{command}   (or write profile {profile} into them: {init})"),
                                command=Command(f"{SYNC_COMMAND} --profile {copies.record.profile}"),
                                profile=repr(settings.profile),
                                init=Command(f"taotoken init --profile {settings.profile}")))
    for name in FIELDS:
        if settings.value(name).origin.kind in ("env", "flag"):
            out.error_note(_("note: {name} comes from {origin}, not the config file").format(
                name=name, origin=describe(settings.value(name), io.env)))
    _name_held(out, copies)
    if not copies.stale:
        targets = listed(copies.record.targets if copies.record else ()) or _("no clients")
        out.wrapped(_("every copy already holds the values of profile {profile} ({targets}); nothing to do").format(
            profile=repr(settings.profile), targets=targets), hang="  ")
        _name_gone(out, copies, io.env)
        return Exit.OK
    _name_gone(out, copies, io.env)
    return _apply(io, copies.plan, applyflow.Flow(SYNC_COMMAND, yes=yes, dry_run=dry_run, offers_dry_run=True,
                                                  notes=False))


def _gemini_rule(io: IOStreams):
    """Gemini CLI's copy moves only to a gateway that serves the Gemini API (asked when the base URL changes)."""
    from taotoken_cli.core.diagnosis import gemini_api

    return gemini_api.admit(gemini_api.probe_for(io.env))


def _name_held(out: Output, copies: Sync) -> None:
    for reason in copies.held:
        out.error_note(_("warning: {problem}").format(problem=reason))


def _name_gone(out: Output, copies: Sync, env) -> None:
    home = Path(env.get("HOME") or Path.home())
    for change in copies.gone:
        out.error_note(_("note: {path} no longer exists: not recreated ({command} writes it again)").format(
            path=tilde(change.path, home), command=f"`taotoken init --target {change.target}`"))
    for why in copies.held_back:
        out.error_note(_("note: {note}").format(note=why))


def _name_stale(out: Output, copies: Sync, env) -> None:
    out.error_note(_("warning: {text}").format(text=stale_note(copies, env)))
    out.error_wrapped(Fix.of(_("{command}   (or run {set} on a terminal)"), command=Command(f"{SYNC_COMMAND} --yes"),
                             set=Command("taotoken config set")), "  " + _("bring them in step: "))


def _apply(io: IOStreams, plan: Plan, flow: applyflow.Flow) -> int:
    """The apply flow; after a write, open shells still hold the old variables when env.sh changed."""
    own_dir = config_path(io.env).parent
    # the Windows user environment and launchd's session follow the files
    flow.after_apply = lambda: shell.after_apply(Machine.of(io.env, io.cwd, own_dir))
    outcome = applyflow.run(io, plan, flow, own_dir)
    if outcome.result and any(change.target == "shell" for change in outcome.result.written):
        io.out.wrapped(Fix.of(_("open shells still have the old variables: run {command} in each"),
                              command=Command(_load_command(io))), hang="  ")
    return outcome.exit_code


def _load_command(io: IOStreams) -> str:
    """The command that loads the new variables into an open shell, in that shell's syntax."""
    if system.current().windows:
        return shell.load_command(Machine.of(io.env, io.cwd))
    return ". " + tilde(config_path(io.env).parent / "env.sh", Path(io.env.get("HOME") or Path.home()))
