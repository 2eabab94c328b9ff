"""Rendering for `taotoken route` (and the device section doctor shows): text, rich tables, JSON shapes.

Nothing here computes: it turns DeviceReport, Choice, the routes dict and VerifyReport into output.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from taotoken_cli.cmd.route.verify import FAILED, MATCH_LABEL, VerifyReport
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, clauses, listed
from taotoken_cli.core.devices.probe import BackendReport, DeviceReport
from taotoken_cli.core.devices.routing import Choice, key_kind
from taotoken_cli.core.term import layout
from taotoken_cli.core.term.output import Output

BACKEND_TITLE = {"cuda": "CUDA", "opencl": "OpenCL"}
# Words for codes (translated where shown: `_(STATUS_LABEL[…])`); the codes themselves are what --json says.
STATUS_LABEL = {"present": N_("ok"), "not_installed": N_("not installed"), "no_driver": N_("no driver/device"),
                "broken": N_("broken"), "skipped": N_("not probed")}
FAILURE_LABEL = {"crashed": N_("crashed"), "timeout": N_("timeout")}
KIND_LABEL = {"device": N_("device"), "vendor": N_("vendor"), "task": N_("task")}
SAMPLE_LABEL = {"equal": N_("equal"), "variant": N_("variant"), "different": N_("different"),
                "unknown": N_("unknown")}


def human_bytes(value: int | None) -> str:
    if not value:
        return "-"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit in ("B", "KiB") else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"


def _label(labels: Mapping[str, str], code: str) -> str:
    return _(labels[code]) if code in labels else code


def backend_status_line(report: BackendReport) -> str:
    label = _label(STATUS_LABEL, report.status)
    if report.failure and report.failure != "error":
        label = _("{status} ({failure})").format(status=label, failure=_label(FAILURE_LABEL, report.failure))
    extra = []
    if report.backend == "opencl" and report.library_version:
        extra.append(f"pyopencl {report.library_version}")
    if report.source == "pycuda":
        extra.append(_("via pycuda, built for CUDA {version}").format(version=report.library_version)
                     if report.library_version else _("via pycuda"))
    elif report.source == "driver_api":
        extra.append(_("via the driver API ({library})").format(library=report.driver_library)
                     if report.driver_library else _("via the driver API"))
    if report.backend == "cuda" and report.driver_version:
        extra.append(_("driver CUDA {version}").format(version=report.driver_version))
    tail = f" [{clauses(extra)}]" if extra else ""
    return f"{BACKEND_TITLE[report.backend]:<7} " + _("{status}: {message}").format(status=label,
                                                                                  message=report.message) + tail


def _clock(mhz: int | None) -> str:
    return f"{mhz} MHz" if mhz else "-"


def device_rows(report: DeviceReport) -> list[list[str]]:
    """One row per device: backend, type, name, vendor, driver, memory, compute units (SMs), clock, platform."""
    rows: list[list[str]] = []
    for dev in report.cuda.cuda_devices:
        rows.append(["CUDA", "GPU", f"{dev.index}: {dev.name}", "NVIDIA", f"cc {dev.compute_capability}",
                     human_bytes(dev.total_memory_bytes), str(dev.multiprocessors or "-"), _clock(dev.clock_mhz),
                     dev.pci_bus_id or ""])
    for dev in report.opencl.opencl_devices:
        rows.append(["OpenCL", dev.type, dev.name, dev.vendor, dev.driver_version or "-",
                     human_bytes(dev.global_mem_bytes), str(dev.compute_units or "-"), _clock(dev.max_clock_mhz),
                     dev.platform])
    return rows


DEVICE_HEADERS = [N_("backend"), N_("type"), N_("device"), N_("vendor"), N_("driver"), N_("memory"), N_("units"),
                  N_("clock"), N_("platform / bus")]


def stacked_device_lines(rows: list[list[str]], width: int) -> list[str]:
    """The table's rows as a name line and detail lines per device, for terminals too narrow for the table."""
    indent = " " * 13
    lines = []
    for backend, kind, name, vendor, driver, memory, units, clock, where in rows:
        cuda = backend == "CUDA"
        labelled = [(vendor, vendor), (driver, driver if cuda else _("driver {version}").format(version=driver)),
                    (memory, memory),
                    (units, (_("{count} SMs") if cuda else _("{count} compute units")).format(count=units)),
                    (clock, clock),
                    (where, (_("bus {bus}") if cuda else _("platform {platform}")).format(bus=where, platform=where))]
        lines.append(f"{backend:<7} {kind:<4} {name}")
        line = ""
        for text in (text for raw, text in labelled if raw and raw != "-"):
            if line and len(indent) + layout.cell_width(line) + layout.cell_width(text) + 2 > width:
                lines.append(indent + line + ",")
                line = ""
            line = f"{line}, {text}" if line else text
        lines.append(indent + line)
    return lines


def probing_text() -> str:
    return _("probing CUDA and OpenCL devices…")


def asking_text(sent: int, total: int, model: str) -> str:
    return _("asking the gateway: {model} (request {number} of {total})…").format(model=model, number=sent + 1,
                                                                                  total=total)


def render_devices(out: Output, report: DeviceReport, width: int | None = None) -> None:
    width = out.width if width is None else width
    rows = device_rows(report)
    headers = [_(header) for header in DEVICE_HEADERS]
    lines = _plain_table(headers, rows) if rows else []
    # rich's box adds a border and padding per column; a table folded into narrow columns is unreadable.
    needed = max((layout.cell_width(line) for line in lines), default=0) + (len(headers) + 3 if out.color else 0)
    if rows and needed > width:
        for line in stacked_device_lines(rows, width):
            out.line(line)
    elif rows and out.color:
        from rich.table import Table

        table = Table(title=_("Compute devices"), title_justify="left")
        for header in headers:
            table.add_column(header, overflow="fold")
        for row in rows:
            table.add_row(*row)
        out.console.width = width  # the width the layout was chosen for (COLUMNS or the terminal's)
        out.console.print(table)
    else:
        for line in lines:
            out.line(line)
    if not rows:
        out.wrapped(_("no compute devices found through CUDA or OpenCL (the CPU is always usable: route `cpu`)"))
    out.line("")
    indent = " " * 8
    for backend in report.backends:
        out.wrapped(backend_status_line(backend), hang=indent)
        if backend.status == "present":
            for platform in backend.platforms:
                out.wrapped(f"{platform.name} ({platform.vendor}): {platform.version}", indent + _("platform "))
        for note in backend.notes:
            out.wrapped(note, indent + _("note: "))
        if backend.fix and backend.status != "present":
            out.wrapped(backend.fix, indent + _("fix: "))
    out.line("")
    rows = [[note.name, _("(unset)") if note.value is None else repr(note.value),
             (_("warning: ") if note.level == "warning" else "") + note.note] for note in report.env]
    for line in layout.table(None, rows, width, indent="", align="lll"):
        out.line(line)


def _plain_table(headers: list[str], rows: list[list[str]], width: int | None = None) -> list[str]:
    return layout.table(headers, rows, width or 10**6, indent="", align="l" * len(headers))


def render_choice(out: Output, choice: Choice, profile: str) -> None:
    labels = [_("model"), _("route"), _("why")]
    width = max(layout.cell_width(label) for label in labels) + 3
    model, route, why = (layout.pad(label, width) for label in labels)
    out.wrapped(str(choice.model), model)
    out.wrapped(_("{route}   profile {profile}").format(route=choice.route or _("(none: profile model)"),
                                                       profile=profile), route)
    out.wrapped(choice.reason, why)


def export_lines(model: str, openai: bool, shell: str = "posix") -> list[str]:
    """Lines safe for `eval "$(taotoken route --export)"`, in the user's shell (PowerShell:
    `taotoken route --export | Invoke-Expression`)."""
    from taotoken_cli.core.platform.shells import set_var

    names = ["TAOTOKEN_MODEL", "OPENAI_MODEL"] if openai else ["TAOTOKEN_MODEL"]
    return [set_var(name, model, shell) for name in names]


def routes_to_dict(routes: Mapping[str, str], profile: str) -> dict[str, Any]:
    return {"profile": profile, "routes": [{"key": k, "kind": key_kind(k.lower()), "model": v}
                                           for k, v in routes.items()]}


def render_routes(out: Output, routes: Mapping[str, str], profile: str, profile_model: str | None) -> None:
    if not routes:
        out.wrapped(Fix.of(_("no routes in profile {profile}; add some: {command}"), profile=repr(profile),
                           command=Command("taotoken route set cuda=MODEL cpu=MODEL")))
    else:
        rows = [[k, _label(KIND_LABEL, key_kind(k.lower())), v] for k, v in routes.items()]
        for line in _plain_table([_("route"), _("kind"), _("model")], rows, out.width):
            out.line(line)
    out.wrapped(_("fallback (profile {profile} model): {model}").format(profile=repr(profile),
                                                                         model=profile_model or _("(not set)")),
                hang="  ")


def _outcome(match: str, value: str | None) -> str:
    """One entry of a route's distribution, as text shows it (--json has `distribution`)."""
    if match == FAILED:
        return _("failed: {code}").format(code=value)
    return value or _("(no model field)")


def render_verify(out: Output, report: VerifyReport) -> None:
    out.wrapped(_("verifying routes against {base_url}").format(base_url=report.base_url), hang="  ")
    labels = {match: _(label) for match, label in SAMPLE_LABEL.items()}
    label_width = max(layout.cell_width(label) for label in labels.values()) + 1
    for route in report.routes:
        name = route.route or _("(profile model)")
        out.line("")
        out.wrapped(f"{name} -> {route.model}: {_(MATCH_LABEL[route.verdict])}", hang="  ")
        for sample in route.samples:
            if sample.diagnosis:
                diag = sample.diagnosis
                text = _("failed [{code}] {detail}").format(code=diag.get("code"), detail=sample.detail)
            else:
                label = layout.pad(labels.get(sample.match, sample.match), label_width)
                text = label + _("{model}  ({detail})").format(model=sample.returned_model or "-",
                                                               detail=sample.detail)
            status = sample.status if sample.status is not None else "---"
            out.wrapped(f"#{sample.index} HTTP {status} {sample.elapsed_s * 1000:.0f} ms  {text}", "  ", " " * 5)
            ids = dict(sample.headers)
            if sample.system_fingerprint:
                ids["system_fingerprint"] = sample.system_fingerprint
            if sample.response_id:
                ids["id"] = sample.response_id
            if ids:
                out.wrapped("  ".join(f"{k}={v}" for k, v in ids.items()), " " * 5)
        distribution = listed(f"{_outcome(*outcome)} x{count}" for outcome, count in route.outcomes().items())
        out.wrapped(_("distribution over {count} sample(s): {distribution}").format(
            count=len(route.samples), distribution=distribution), "  ", " " * 4)
        failed = next((s for s in route.samples if s.diagnosis), None)
        if failed:
            for fix in failed.fixes:
                out.wrapped(fix, "  " + _("fix: "))
    out.line("")
    bad = [r for r in report.routes if r.exit_code]
    if not bad:
        out.wrapped(_("all {count} route(s) answered with the model asked for").format(count=len(report.routes)),
                    hang="  ")
    else:
        out.wrapped(_("{failed} of {count} route(s) failed or answered with another model (exit {code})").format(
            failed=len(bad), count=len(report.routes), code=report.exit_code), hang="  ")
        if any(r.verdict == "different" for r in bad):
            out.wrapped(_("a different `model` is a hint, not proof: channels may report a mapped or dated name"),
                        _("note: "))
