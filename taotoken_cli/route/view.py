"""Rendering for `taotoken route` (and the device section doctor shows): text, rich tables, JSON shapes.

Nothing here computes: it turns DeviceReport, Choice, the routes dict and VerifyReport into output.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from taotoken_cli.devices import BackendReport, DeviceReport
from taotoken_cli.output import Output
from taotoken_cli.route.verify import MATCH_LABEL, VerifyReport
from taotoken_cli.routing import Choice, key_kind

BACKEND_TITLE = {"cuda": "CUDA", "opencl": "OpenCL"}
STATUS_LABEL = {"present": "ok", "not_installed": "not installed", "no_driver": "no driver/device",
                "broken": "broken", "skipped": "not probed"}


def human_bytes(value: int | None) -> str:
    if not value:
        return "-"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit in ("B", "KiB") else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"


def backend_status_line(report: BackendReport) -> str:
    label = STATUS_LABEL.get(report.status, report.status)
    if report.failure and report.failure != "error":
        label += f" ({report.failure})"
    extra = []
    if report.backend == "opencl" and report.library_version:
        extra.append(f"pyopencl {report.library_version}")
    if report.source == "pycuda":
        extra.append("via pycuda" + (f", built for CUDA {report.library_version}" if report.library_version else ""))
    elif report.source == "driver_api":
        extra.append(f"via the driver API ({report.driver_library})" if report.driver_library else "via the driver API")
    if report.backend == "cuda" and report.driver_version:
        extra.append(f"driver CUDA {report.driver_version}")
    tail = f" [{', '.join(extra)}]" if extra else ""
    return f"{BACKEND_TITLE[report.backend]:<7} {label}: {report.message}{tail}"


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


DEVICE_HEADERS = ["backend", "type", "device", "vendor", "driver", "memory", "units", "clock", "platform / bus"]


def stacked_device_lines(rows: list[list[str]], width: int) -> list[str]:
    """The table's rows as a name line and detail lines per device, for terminals too narrow for the table."""
    indent = " " * 13
    lines = []
    for backend, kind, name, vendor, driver, memory, units, clock, where in rows:
        cuda = backend == "CUDA"
        labelled = [(vendor, vendor), (driver, driver if cuda else f"driver {driver}"), (memory, memory),
                    (units, f"{units} {'SMs' if cuda else 'compute units'}"), (clock, clock),
                    (where, f"{'bus' if cuda else 'platform'} {where}")]
        lines.append(f"{backend:<7} {kind:<4} {name}")
        line = ""
        for text in (text for raw, text in labelled if raw and raw != "-"):
            if line and len(indent) + len(line) + len(text) + 2 > width:
                lines.append(indent + line + ",")
                line = ""
            line = f"{line}, {text}" if line else text
        lines.append(indent + line)
    return lines


def terminal_width(env: Mapping[str, str], tty: bool) -> int | None:
    """COLUMNS, else the terminal's width; None (no limit) when writing to a pipe or file."""
    try:
        columns = int(env.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    if not tty:
        return None
    import shutil

    return shutil.get_terminal_size().columns


def render_devices(out: Output, report: DeviceReport, width: int | None = None) -> None:
    rows = device_rows(report)
    lines = _plain_table(DEVICE_HEADERS, rows) if rows else []
    # rich's box adds a border and padding per column; a table folded into narrow columns is unreadable.
    needed = max((len(line) for line in lines), default=0) + (len(DEVICE_HEADERS) + 3 if out.color else 0)
    if rows and width is not None and needed > width:
        for line in stacked_device_lines(rows, width):
            out.line(line)
    elif rows and out.color:
        from rich.table import Table

        table = Table(title="Compute devices", title_justify="left")
        for header in DEVICE_HEADERS:
            table.add_column(header, overflow="fold")
        for row in rows:
            table.add_row(*row)
        if width is not None:
            out.console.width = width  # the width the layout was chosen for (COLUMNS or the terminal's)
        out.console.print(table)
    else:
        for line in lines:
            out.line(line)
    if not rows:
        out.line("no compute devices found through CUDA or OpenCL (the CPU is always usable: route `cpu`)")
    out.line("")
    for backend in report.backends:
        out.line(backend_status_line(backend))
        if backend.status == "present":
            for platform in backend.platforms:
                out.line(f"        platform {platform.name} ({platform.vendor}): {platform.version}")
        for note in backend.notes:
            out.line(f"        note: {note}")
        if backend.fix and backend.status != "present":
            out.line(f"        fix: {backend.fix}")
    out.line("")
    values = ["(unset)" if note.value is None else repr(note.value) for note in report.env]
    value_width = max((len(v) for v in values), default=0)
    for note, value in zip(report.env, values, strict=True):
        marker = "warning: " if note.level == "warning" else ""
        out.line(f"{note.name:<23} {value:<{value_width}}  {marker}{note.note}")


def _plain_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [headers, *rows]]


def render_choice(out: Output, choice: Choice, profile: str) -> None:
    out.line(f"model   {choice.model}")
    out.line(f"route   {choice.route or '(none: profile model)'}   profile {profile}")
    out.line(f"why     {choice.reason}")


def export_lines(model: str, openai: bool) -> list[str]:
    """Shell lines safe for `eval "$(taotoken route --export)"`."""
    import shlex

    lines = [f"export TAOTOKEN_MODEL={shlex.quote(model)}"]
    if openai:
        lines.append(f"export OPENAI_MODEL={shlex.quote(model)}")
    return lines


def routes_to_dict(routes: Mapping[str, str], profile: str) -> dict[str, Any]:
    return {"profile": profile, "routes": [{"key": k, "kind": key_kind(k.lower()), "model": v}
                                           for k, v in routes.items()]}


def render_routes(out: Output, routes: Mapping[str, str], profile: str, profile_model: str | None) -> None:
    if not routes:
        out.line(f"no routes in profile {profile!r}; add some: taotoken route set cuda=MODEL cpu=MODEL")
    else:
        rows = [[k, key_kind(k.lower()), v] for k, v in routes.items()]
        for line in _plain_table(["route", "kind", "model"], rows):
            out.line(line)
    out.line(f"fallback (profile {profile!r} model): {profile_model or '(not set)'}")


def render_verify(out: Output, report: VerifyReport) -> None:
    out.line(f"verifying routes against {report.base_url}")
    for route in report.routes:
        name = route.route or "(profile model)"
        out.line("")
        out.line(f"{name} -> {route.model}: {MATCH_LABEL[route.verdict]}")
        for sample in route.samples:
            if sample.diagnosis:
                diag = sample.diagnosis
                text = f"failed [{diag.get('code')}] {sample.detail}"
            else:
                text = f"{sample.match:<9} {sample.returned_model or '-'}  ({sample.detail})"
            status = sample.status if sample.status is not None else "---"
            out.line(f"  #{sample.index} HTTP {status} {sample.elapsed_s * 1000:.0f} ms  {text}")
            ids = dict(sample.headers)
            if sample.system_fingerprint:
                ids["system_fingerprint"] = sample.system_fingerprint
            if sample.response_id:
                ids["id"] = sample.response_id
            if ids:
                out.line("     " + "  ".join(f"{k}={v}" for k, v in ids.items()))
        distribution = ", ".join(f"{model} x{count}" for model, count in route.distribution.items())
        out.line(f"  distribution over {len(route.samples)} sample(s): {distribution}")
        failed = next((s.diagnosis for s in route.samples if s.diagnosis), None)
        if failed:
            for fix in failed.get("fixes") or []:
                out.line(f"  fix: {fix}")
    out.line("")
    bad = [r for r in report.routes if r.exit_code]
    if not bad:
        out.line(f"all {len(report.routes)} route(s) answered with the model asked for")
    else:
        out.line(f"{len(bad)} of {len(report.routes)} route(s) failed or answered with another model "
                 f"(exit {report.exit_code})")
        if any(r.verdict == "different" for r in bad):
            out.line("note: a different `model` is a hint, not proof: channels may report a mapped or dated name")
