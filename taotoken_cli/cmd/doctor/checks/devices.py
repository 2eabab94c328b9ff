"""Devices: what the device probe (taotoken_cli.core.devices.probe, shared with `taotoken route`) finds, and
whether the routing table fits this machine."""

from __future__ import annotations

from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, listed, ngettext

SECTION = "Devices"
# Route keys that only a given backend can satisfy (see taotoken_cli.core.devices.routing).
_BACKEND_KEYS = {"cuda": {"cuda", "nvidia"}, "opencl": {"opencl", "gpu", "accelerator"}}


def device_report(ctx: DoctorContext):
    from taotoken_cli.core.devices.probe import probe_devices

    # Each backend is probed in its own killable subprocess; keep it inside the run's deadline.
    return ctx.memo("devices", lambda: probe_devices(timeout_s=max(1.0, min(15.0, ctx.remaining() - 0.5)),
                                                     env=ctx.env))


def _cuda_device(device) -> str:
    parts = [f"cc {device.compute_capability}"]
    if device.multiprocessors:
        parts.append(f"{device.multiprocessors} SMs")
    if device.clock_mhz:
        parts.append(f"{device.clock_mhz} MHz")
    return f"{device.index}: {device.name} ({', '.join(parts)})"


def _source(report) -> list[str]:
    if report.source == "pycuda":
        return [_("read through pycuda (built for CUDA {version})").format(version=report.library_version)
                if report.library_version else _("read through pycuda")]
    if report.source == "driver_api":
        return [_("read through the CUDA driver API ({library})").format(library=report.driver_library)]
    return [_("library {version}").format(version=report.library_version)] if report.library_version else []


def _backend(ctx: DoctorContext, name: str) -> Result:
    from taotoken_cli.core.devices.probe import BROKEN, PRESENT

    report = getattr(device_report(ctx), name)
    wanted = sorted(set(ctx.settings.routes) & _BACKEND_KEYS[name])
    fixes = [report.fix] if report.fix else []
    if report.status == PRESENT:
        if name == "cuda":
            names = [_cuda_device(d) for d in report.cuda_devices]
        else:
            names = [f"{d.name} ({d.type}, {d.platform})" for d in report.opencl_devices]
        return Result.ok(ngettext("{n} device: {devices}", "{n} devices: {devices}", report.device_count).format(
            n=report.device_count, devices=_("; ").join(names)), details=_source(report) + report.notes)
    if wanted:
        return Result.warn(_("{message} — but the routing table has {routes} routes").format(
            message=report.message, routes=listed(wanted)),
            details=[_("those routes cannot be chosen on this machine (elapsed {seconds} s)").format(
                seconds=f"{report.elapsed_s:.1f}"), *report.notes], fixes=fixes)
    if report.status == BROKEN:
        return Result.warn(report.message, details=report.notes, fixes=fixes)
    # Not an error here: nothing routes to this backend (a GPU hidden by CUDA_VISIBLE_DEVICES is
    # reported by devices.env).
    return Result.skipped(_("{message} — {fix}").format(message=report.message, fix=report.fix) if report.fix
                          else report.message, details=report.notes)


@check("devices.cuda", SECTION, N_("CUDA (pycuda or the driver API)"))
def devices_cuda(ctx: DoctorContext) -> Result:
    return _backend(ctx, "cuda")


@check("devices.opencl", SECTION, N_("OpenCL (pyopencl)"))
def devices_opencl(ctx: DoctorContext) -> Result:
    return _backend(ctx, "opencl")


@check("devices.env", SECTION, N_("Device selection variables"))
def devices_env(ctx: DoctorContext) -> Result:
    # From the probe's report: CUDA_VISIBLE_DEVICES is checked against the GPUs the driver has.
    notes = device_report(ctx).env
    issues = Issues()
    for note in notes:
        if note.level == "warning":
            issues.warn(f"{note.name}={note.value!r}: {note.note}")
        elif note.value is not None:
            issues.details.append(f"{note.name}={note.value}: {note.note}")
    return issues.result(_("no device-selection variable restricts the devices") if not issues.details
                         else _("{names} set").format(names=listed(n.name for n in notes if n.value is not None)))


@check("devices.route", SECTION, N_("Route for this machine"))
def devices_route(ctx: DoctorContext) -> Result:
    from taotoken_cli.core.devices.routing import choose

    routes = ctx.settings.routes
    if not routes:
        return Result.skipped(_("no routing table in this profile (taotoken route set KIND=MODEL)"))
    choice = choose(routes, device_report(ctx), ctx.model, profile=ctx.settings.profile)
    issues = Issues()
    issues.details.append(choice.reason)
    if choice.model is None:
        issues.fail(choice.reason, fixes=[Fix.of(_("{command}   (or set the profile's model)"),
                                                 command=Command("taotoken route set cpu=MODEL"))])
    if not ctx.offline and ctx.base_url and ctx.api_key:
        from taotoken_cli.cmd.doctor import probes
        from taotoken_cli.cmd.doctor.context import DeadlinePassed
        from taotoken_cli.core.diagnosis.model_ids import close_model_matches, model_ids

        try:
            obs = probes.models(ctx)
        except DeadlinePassed:
            obs = None
        listed = model_ids(obs.json()) if obs is not None and obs.ok_status else []
        for key, model in routes.items():
            if listed and model not in listed:
                close = close_model_matches(model, listed, limit=1)
                issues.warn((_("route {key} = {model} is not offered by the gateway (did you mean {other}?)") if close
                             else _("route {key} = {model} is not offered by the gateway")).format(
                    key=key, model=model, other=close[0] if close else ""),
                    fixes=[Fix.run(f"taotoken route set {key}={close[0] if close else 'MODEL'}")])
    if choice.route:
        return issues.result(_("{model} via {route}").format(model=choice.model, route=choice.route))
    return issues.result(_("{model} via the profile model").format(model=choice.model))
