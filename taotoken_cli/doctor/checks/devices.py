"""Devices: what the device probe (taotoken_cli.devices, shared with `taotoken route`) finds, and
whether the routing table fits this machine."""

from __future__ import annotations

from taotoken_cli.doctor.context import DoctorContext
from taotoken_cli.doctor.model import Issues, Result
from taotoken_cli.doctor.registry import check

SECTION = "Devices"
# Route keys that only a given backend can satisfy (see taotoken_cli.routing).
_BACKEND_KEYS = {"cuda": {"cuda", "nvidia"}, "opencl": {"opencl", "gpu", "accelerator"}}


def device_report(ctx: DoctorContext):
    from taotoken_cli.devices import probe_devices

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
        return ["read through pycuda" + (f" (built for CUDA {report.library_version})" if report.library_version
                                         else "")]
    if report.source == "driver_api":
        return [f"read through the CUDA driver API ({report.driver_library})"]
    return [f"library {report.library_version}"] if report.library_version else []


def _backend(ctx: DoctorContext, name: str) -> Result:
    from taotoken_cli.devices import BROKEN, PRESENT

    report = getattr(device_report(ctx), name)
    wanted = sorted(set(ctx.settings.routes) & _BACKEND_KEYS[name])
    fixes = [report.fix] if report.fix else []
    if report.status == PRESENT:
        if name == "cuda":
            names = [_cuda_device(d) for d in report.cuda_devices]
        else:
            names = [f"{d.name} ({d.type}, {d.platform})" for d in report.opencl_devices]
        return Result.ok(f"{report.device_count} device(s): {'; '.join(names)}",
                         details=_source(report) + report.notes)
    if wanted:
        return Result.warn(f"{report.message} — but the routing table has {', '.join(wanted)} routes",
                           details=[f"those routes cannot be chosen on this machine (elapsed "
                                    f"{report.elapsed_s:.1f} s)", *report.notes], fixes=fixes)
    if report.status == BROKEN:
        return Result.warn(report.message, details=report.notes, fixes=fixes)
    # Not an error here: nothing routes to this backend (a GPU hidden by CUDA_VISIBLE_DEVICES is
    # reported by devices.env).
    return Result.skipped(report.message + (f" — {report.fix}" if report.fix else ""), details=report.notes)


@check("devices.cuda", SECTION, "CUDA (pycuda or the driver API)")
def devices_cuda(ctx: DoctorContext) -> Result:
    return _backend(ctx, "cuda")


@check("devices.opencl", SECTION, "OpenCL (pyopencl)")
def devices_opencl(ctx: DoctorContext) -> Result:
    return _backend(ctx, "opencl")


@check("devices.env", SECTION, "Device selection variables")
def devices_env(ctx: DoctorContext) -> Result:
    # From the probe's report: CUDA_VISIBLE_DEVICES is checked against the GPUs the driver has.
    notes = device_report(ctx).env
    issues = Issues()
    for note in notes:
        if note.level == "warning":
            issues.warn(f"{note.name}={note.value!r}: {note.note}")
        elif note.value is not None:
            issues.details.append(f"{note.name}={note.value}: {note.note}")
    return issues.result("no device-selection variable restricts the devices" if not issues.details
                         else ", ".join(n.name for n in notes if n.value is not None) + " set")


@check("devices.route", SECTION, "Route for this machine")
def devices_route(ctx: DoctorContext) -> Result:
    from taotoken_cli.routing import choose

    routes = ctx.settings.routes
    if not routes:
        return Result.skipped("no routing table in this profile (taotoken route set KIND=MODEL)")
    choice = choose(routes, device_report(ctx), ctx.model, profile=ctx.settings.profile)
    issues = Issues()
    issues.details.append(choice.reason)
    if choice.model is None:
        issues.fail(choice.reason, fixes=["taotoken route set cpu=MODEL   (or set the profile's model)"])
    if not ctx.offline and ctx.base_url and ctx.api_key:
        from taotoken_cli.diagnosis.models import close_model_matches, model_ids
        from taotoken_cli.doctor import probes
        from taotoken_cli.doctor.context import DeadlineExceeded

        try:
            obs = probes.models(ctx)
        except DeadlineExceeded:
            obs = None
        listed = model_ids(obs.json()) if obs is not None and obs.ok_status else []
        for key, model in routes.items():
            if listed and model not in listed:
                close = close_model_matches(model, listed, limit=1)
                issues.warn(f"route {key} = {model} is not offered by the gateway"
                            + (f" (did you mean {close[0]}?)" if close else ""),
                            fixes=[f"taotoken route set {key}={close[0] if close else 'MODEL'}"])
    return issues.result(f"{choice.model} via {choice.route or 'the profile model'}")
