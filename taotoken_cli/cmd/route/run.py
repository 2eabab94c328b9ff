"""`taotoken route` and its subcommands, from options to exit status: choose (and verify) the model for this
machine, probe the devices, edit and list the routing table. The table logic itself is shared with doctor
(`taotoken_cli.core.devices.routing`); rendering is in `view`."""

from __future__ import annotations

from dataclasses import dataclass, field

from taotoken_cli.cmd.route import PROBE_TIMEOUT_S, view
from taotoken_cli.core.base.errors import InputError, TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, Fix, config_set
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.devices.routing import RouteEdit, choose_for_settings, parse_assignments, plan_routes
from taotoken_cli.core.files import applyflow
from taotoken_cli.core.settings import Overrides, load_settings
from taotoken_cli.core.term.iostreams import IOStreams

LIST_TIMEOUT_S = 5.0  # route set asks the gateway for its model list once, briefly


@dataclass
class RouteOptions:
    overrides: Overrides = field(default_factory=Overrides)
    device: str | None = None
    task: str | None = None
    export: bool = False  # only `export TAOTOKEN_MODEL=…` lines, for eval
    openai: bool = False  # with export: OPENAI_MODEL too
    verify: bool = False
    samples: int = 3
    all_routes: bool = False
    json_out: bool = False
    timeout_s: float = PROBE_TIMEOUT_S

    def validate(self) -> RouteOptions:
        if self.device and self.task:
            raise InputError(_("--device and --task are alternatives"), _("give one of them"))
        if self.openai and not self.export:
            raise InputError(_("--openai only applies to --export"), "taotoken route --export --openai")
        if self.export and (self.json_out or self.verify):
            raise InputError(_("--export prints only shell lines; it cannot be combined with --json or --verify"),
                             _("run them separately"))
        if self.all_routes and not self.verify:
            raise InputError(_("--all only applies to --verify"), "taotoken route --verify --all")
        return self


def choose(options: RouteOptions, io: IOStreams) -> int:
    """The model chosen for this machine (or --device/--task) and why; with --verify, what really answers."""
    options.validate()
    out = io.out
    settings = load_settings(options.overrides, io.env)
    # a spinner while the devices are probed or the gateway asked; none for output read by programs
    with out.spinner(view.probing_text(), enabled=not (options.json_out or options.export)) as spinner:
        choice = choose_for_settings(settings, device=options.device, task=options.task,
                                     probe_timeout_s=options.timeout_s,
                                     need_devices=not (options.verify and options.all_routes), env=io.env)
        if options.verify:
            from taotoken_cli.cmd.route.verify import run_verify

            report = run_verify(settings, choice, samples=options.samples, all_routes=options.all_routes,
                                request_timeout=options.timeout_s, env=io.env,
                                on_request=lambda *state: spinner.update(view.asking_text(*state)))
    if options.verify:
        if options.json_out:
            out.json({"profile": settings.profile, "choice": choice.to_dict(), **report.to_dict()},
                     exit_code=report.exit_code)
        else:
            view.render_verify(out, report)
        return report.exit_code
    if choice.model is None:
        raise TaotokenError(choice.reason, Fix.of(_("{command}   (or: {command2})"),
                                                  command=Command("taotoken route set cpu=MODEL"),
                                                  command2=config_set("model", "MODEL")),
                            Exit.CONFIG, code="config.missing")
    if options.export:
        from taotoken_cli.core.platform.shells import syntax

        for line in view.export_lines(choice.model, options.openai, syntax(io.env)):
            out.line(line)
    elif options.json_out:
        out.json({"profile": settings.profile, **choice.to_dict()}, exit_code=Exit.OK)
    else:
        view.render_choice(out, choice, settings.profile)
    return Exit.OK


def devices(io: IOStreams, *, json_out: bool, timeout_s: float = PROBE_TIMEOUT_S) -> int:
    """What CUDA and OpenCL find on this machine."""
    from taotoken_cli.core.devices.probe import probe_devices

    with io.out.spinner(view.probing_text(), enabled=not json_out):
        report = probe_devices(timeout_s=timeout_s, env=io.env)
    if json_out:
        io.out.json(report.to_dict(), exit_code=Exit.OK)
    else:
        view.render_devices(io.out, report)
    return Exit.OK


def set_routes(io: IOStreams, assignments: list[str], profile: str | None, *, check_models: bool = True,
               timeout_s: float = LIST_TIMEOUT_S) -> int:
    """Add, change (`KIND=MODEL`) or remove (`KIND=`) routes; each edit is reported, and a model the gateway does
    not list is warned about (the route is saved all the same: some gateways serve models they do not list)."""
    out = io.out
    edits = parse_assignments(assignments)
    for edit in edits:
        for note in edit.notes:
            out.error_wrapped(note, _("note: "))
    result = plan_routes(edits, profile, io.env)
    applyflow.write_own(result.change)  # the command line named the change: no question, no backup
    for edit in result.applied:
        out.wrapped(_("removed route {key}").format(key=edit.key) if edit.model is None
                    else _("set route {key} = {model}").format(key=edit.key, model=edit.model), hang="  ")
    for edit in result.unchanged:
        out.wrapped(_("route {key} was not set — nothing to remove").format(key=edit.key) if edit.model is None
                    else _("route {key} is already {model} — nothing changed").format(key=edit.key, model=edit.model),
                    hang="  ")
    if result.applied:
        out.wrapped(_("profile {profile} in {path}").format(profile=repr(result.profile), path=result.path),
                    hang="  ")
    routed = [edit for edit in edits if edit.model is not None]
    if check_models and routed:
        warn_unlisted(io, routed, profile, timeout_s)
    return Exit.OK


def warn_unlisted(io: IOStreams, edits: list[RouteEdit], profile: str | None, timeout_s: float) -> None:
    """One models request: a routed model the list lacks is a warning; no list (no key, offline) is a note."""
    from taotoken_cli.core.diagnosis.listing import fetch_model_list
    from taotoken_cli.core.diagnosis.model_ids import close_model_matches
    from taotoken_cli.core.net.gateway import budgeted

    out = io.out
    settings = load_settings(Overrides(profile=profile), io.env)
    if not (settings.base_url.is_set and settings.api_key.is_set):
        out.error_wrapped(_("the model(s) were not checked against the gateway's list: no usable base URL and key in "
                            "profile {profile}").format(profile=repr(settings.profile)), _("note: "))
        return
    with budgeted(settings.base_url.value or "", settings.api_key.value, timeout_s, env=io.env) as gateway:
        listing = fetch_model_list(gateway)
    if listing.diagnosis is not None:
        out.error_wrapped(_("the model(s) were not checked against the gateway's list: {title} [{code}] (skip the "
                            "check: --no-check)").format(title=_(listing.diagnosis.entry.title),
                                                         code=listing.diagnosis.code), _("note: "))
        return
    for edit in edits:
        if edit.model in listing.ids:
            continue
        close = close_model_matches(edit.model or "", listing.ids, limit=3)
        model = repr(edit.model)
        warning = (_("route {key}: {model} is not listed by the gateway (close: {close}); saved all the same")
                   .format(key=edit.key, model=model, close=listed(close)) if close
                   else _("route {key}: {model} is not listed by the gateway; saved all the same")
                   .format(key=edit.key, model=model))
        out.error_wrapped(warning, _("warning: "))
        every = Command("taotoken models")
        out.error_wrapped(Fix.of(_("{command}   (all models: {models})"),
                                 command=Command(f"taotoken route set {edit.key}={close[0]}"), models=every)
                          if close else Fix.of(_("pick a listed ID: {command}"), command=every), "  " + _("fix: "))


def list_routes(io: IOStreams, *, json_out: bool, profile: str | None) -> int:
    settings = load_settings(Overrides(profile=profile), io.env)
    if json_out:
        io.out.json({**view.routes_to_dict(settings.routes, settings.profile),
                     "fallback_model": settings.model.value}, exit_code=Exit.OK)
    else:
        view.render_routes(io.out, settings.routes, settings.profile, settings.model.value)
    return Exit.OK
