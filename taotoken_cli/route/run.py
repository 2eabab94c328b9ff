"""`taotoken route` and its subcommands, from options to exit status: choose (and verify) the model for this
machine, probe the devices, edit and list the routing table. The table logic itself is shared with doctor
(`taotoken_cli.routing`); rendering is in `view`."""

from __future__ import annotations

from dataclasses import dataclass, field

from taotoken_cli.config import Overrides, load_settings
from taotoken_cli.errors import InputError, TaotokenError
from taotoken_cli.exitcodes import Exit
from taotoken_cli.iostreams import IOStreams
from taotoken_cli.route import PROBE_TIMEOUT_S, view
from taotoken_cli.routing import RouteEdit, choose_for_settings, parse_assignments, save_routes

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
            raise InputError("--device and --task are alternatives", "give one of them")
        if self.openai and not self.export:
            raise InputError("--openai only applies to --export", "taotoken route --export --openai")
        if self.export and (self.json_out or self.verify):
            raise InputError("--export prints only shell lines; it cannot be combined with --json or --verify",
                             "run them separately")
        if self.all_routes and not self.verify:
            raise InputError("--all only applies to --verify", "taotoken route --verify --all")
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
            from taotoken_cli.route.verify import run_verify

            report = run_verify(settings, choice, samples=options.samples, all_routes=options.all_routes,
                                request_timeout=options.timeout_s, env=io.env,
                                on_request=lambda *state: spinner.update(view.asking_text(*state)))
    if options.verify:
        if options.json_out:
            out.json({"profile": settings.profile, "choice": choice.to_dict(), **report.to_dict()})
        else:
            view.render_verify(out, report)
        return report.exit_code
    if choice.model is None:
        raise TaotokenError(choice.reason, "taotoken route set cpu=MODEL   (or: taotoken config set model MODEL)",
                            Exit.CONFIG, code="config.missing")
    if options.export:
        for line in view.export_lines(choice.model, options.openai):
            out.line(line)
    elif options.json_out:
        out.json({"profile": settings.profile, **choice.to_dict()})
    else:
        view.render_choice(out, choice, settings.profile)
    return Exit.OK


def devices(io: IOStreams, *, json_out: bool, timeout_s: float = PROBE_TIMEOUT_S) -> int:
    """What CUDA and OpenCL find on this machine."""
    from taotoken_cli.devices import probe_devices

    with io.out.spinner(view.probing_text(), enabled=not json_out):
        report = probe_devices(timeout_s=timeout_s, env=io.env)
    if json_out:
        io.out.json(report.to_dict())
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
            out.error_line(f"note: {note}")
    result = save_routes(edits, profile, io.env)
    for edit in result.applied:
        out.line(f"removed route {edit.key}" if edit.model is None else f"set route {edit.key} = {edit.model}")
    for edit in result.unchanged:
        out.line(f"route {edit.key} was not set — nothing to remove" if edit.model is None
                 else f"route {edit.key} is already {edit.model} — nothing changed")
    if result.applied:
        out.line(f"profile {result.profile!r} in {result.path}")
    routed = [edit for edit in edits if edit.model is not None]
    if check_models and routed:
        warn_unlisted(io, routed, profile, timeout_s)
    return Exit.OK


def warn_unlisted(io: IOStreams, edits: list[RouteEdit], profile: str | None, timeout_s: float) -> None:
    """One models request: a routed model the list lacks is a warning; no list (no key, offline) is a note."""
    from taotoken_cli.diagnosis.listing import fetch_model_list
    from taotoken_cli.diagnosis.models import close_model_matches
    from taotoken_cli.gateway import budgeted

    out = io.out
    unchecked = "note: the model(s) were not checked against the gateway's list"
    settings = load_settings(Overrides(profile=profile), io.env)
    if not (settings.base_url.is_set and settings.api_key.is_set):
        out.error_line(f"{unchecked}: no usable base URL and key in profile {settings.profile!r}")
        return
    with budgeted(settings.base_url.value or "", settings.api_key.value, timeout_s, env=io.env) as gateway:
        listing = fetch_model_list(gateway)
    if listing.diagnosis is not None:
        out.error_line(f"{unchecked}: {listing.diagnosis.entry.title} [{listing.diagnosis.code}] "
                       "(skip the check: --no-check)")
        return
    for edit in edits:
        if edit.model in listing.ids:
            continue
        close = close_model_matches(edit.model or "", listing.ids, limit=3)
        out.error_line(f"warning: route {edit.key}: {edit.model!r} is not listed by the gateway"
                       + (f" (close: {', '.join(close)})" if close else "") + "; saved all the same")
        out.error_line(f"  fix: taotoken route set {edit.key}={close[0]}   (all models: taotoken models)" if close
                       else "  fix: pick a listed ID: taotoken models")


def list_routes(io: IOStreams, *, json_out: bool, profile: str | None) -> int:
    settings = load_settings(Overrides(profile=profile), io.env)
    if json_out:
        io.out.json({**view.routes_to_dict(settings.routes, settings.profile),
                     "fallback_model": settings.model.value})
    else:
        view.render_routes(io.out, settings.routes, settings.profile, settings.model.value)
    return Exit.OK
