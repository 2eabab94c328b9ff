"""Routing table logic for `taotoken route`: pure functions over a routes dict and a DeviceReport.

The table lives per profile in the config (`[profiles.<p>.routes]`, `Settings.routes`): keys are
device kinds (`cuda`, `gpu`, `opencl`, `cpu`, `accelerator`, vendor names such as `nvidia`,
`intel`, `amd`) or free-form task names (`code`, `embed`); values are model IDs.

Automatic choice, best first: a CUDA GPU (`cuda`, `nvidia`, `gpu`), then another GPU found through
OpenCL (its vendor, `gpu`, `opencl`), then an accelerator (its vendor, `accelerator`, `opencl`),
then the CPU (`cpu`); when no route matches, the profile's model. Every choice carries the reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from taotoken_cli.core.base.errors import InputError, TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.devices.probe import PRESENT, DeviceReport

if TYPE_CHECKING:
    from taotoken_cli.core.files.fileplan import FileChange

DEVICE_KINDS = ("cuda", "gpu", "opencl", "accelerator", "cpu")
KNOWN_VENDORS = ("nvidia", "intel", "amd", "apple", "arm", "qualcomm", "imagination", "mesa")
_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9_.\-]{0,63}$")

# Substrings of OpenCL/CUDA vendor strings -> the route key for that vendor.
_VENDOR_PATTERNS = (
    ("nvidia", "nvidia"),
    ("intel", "intel"),
    ("advanced micro devices", "amd"),
    ("authenticamd", "amd"),
    ("amd", "amd"),
    ("apple", "apple"),
    ("arm", "arm"),
    ("qualcomm", "qualcomm"),
    ("imagination", "imagination"),
    ("mesa", "mesa"),
)


def vendor_key(vendor: str) -> str | None:
    """'NVIDIA Corporation' -> 'nvidia', 'Intel(R) Corporation'/'GenuineIntel' -> 'intel', 'AuthenticAMD' -> 'amd'."""
    text = vendor.lower()
    for pattern, key in _VENDOR_PATTERNS:
        if pattern in text:
            return key
    word = re.sub(r"[^a-z0-9]+", "", text.split()[0]) if text.split() else ""
    return word or None


@dataclass
class Candidate:
    """One device the machine has, with the route keys that would select it, most specific first."""

    kind: str  # "cuda" | "gpu" | "accelerator" | "cpu"
    label: str  # e.g. "CUDA GPU 0 NVIDIA A100-SXM4-80GB"
    keys: list[str]
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Choice:
    model: str | None
    route: str | None  # the routing-table key used, None for the profile fallback
    source: str  # "task" | "device" | "auto" | "profile" | "none"
    reason: str
    device: Candidate | None = None
    considered: list[str] = field(default_factory=list)  # what was tried, for --json and doctor

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "route": self.route, "source": self.source, "reason": self.reason,
                "device": asdict(self.device) if self.device else None, "considered": self.considered}


def candidates(report: DeviceReport | None) -> list[Candidate]:
    """The machine's devices in preference order; the CPU is always last (every machine has one)."""
    found: list[Candidate] = []
    cpu: Candidate | None = None
    if report is not None and report.cuda.status == PRESENT:
        for dev in report.cuda.cuda_devices:
            found.append(Candidate("cuda", f"CUDA GPU {dev.index} {dev.name}", ["cuda", "nvidia", "gpu"],
                                   {"backend": "cuda", "name": dev.name, "index": dev.index,
                                    "compute_capability": dev.compute_capability,
                                    "memory_bytes": dev.total_memory_bytes, "multiprocessors": dev.multiprocessors,
                                    "clock_mhz": dev.clock_mhz, "source": report.cuda.source}))
    accelerators: list[Candidate] = []
    if report is not None and report.opencl.status == PRESENT:
        for dev in report.opencl.opencl_devices:
            vendor = vendor_key(dev.vendor) or vendor_key(dev.platform)
            detail = {"backend": "opencl", "name": dev.name, "vendor": dev.vendor, "platform": dev.platform,
                      "compute_units": dev.compute_units, "memory_bytes": dev.global_mem_bytes}
            if dev.type == "GPU":
                keys = _unique([vendor, "gpu", "opencl"])
                found.append(Candidate("gpu", _("OpenCL GPU {name}").format(name=dev.name), keys, detail))
            elif dev.type in ("ACCELERATOR", "CUSTOM"):
                keys = _unique([vendor, "accelerator", "opencl"])
                accelerators.append(Candidate("accelerator", _("OpenCL accelerator {name}").format(name=dev.name),
                                              keys, detail))
            elif dev.type == "CPU" and cpu is None:
                label = _("CPU {name} (OpenCL, {platform})").format(name=dev.name, platform=dev.platform)
                cpu = Candidate("cpu", label, ["cpu"], detail)
    found.extend(accelerators)
    found.append(cpu or Candidate("cpu", _("CPU (not seen through OpenCL)"), ["cpu"], {"backend": None}))
    return found


def _unique(keys: list[str | None]) -> list[str]:
    out: list[str] = []
    for key in keys:
        if key and key not in out:
            out.append(key)
    return out


def normalize_key(key: str) -> str:
    return key.strip().lower()


def choose(routes: Mapping[str, str], report: DeviceReport | None, profile_model: str | None, *,
           device: str | None = None, task: str | None = None, profile: str = "default") -> Choice:
    """Pick the model: an explicit --task/--device route, else the best device's route, else the profile model.

    An explicit key missing from the table is an error (a script asked for something specific).
    """
    table = {normalize_key(k): v for k, v in routes.items()}
    for flag, asked in (("--task", task), ("--device", device)):
        if asked is None:
            continue
        key = normalize_key(asked)
        if key in table:
            kind = "task" if flag == "--task" else "device"
            return Choice(table[key], key, kind, _("{flag} {key} selects route {key} = {model}").format(
                flag=flag, key=key, model=table[key]))
        known = listed(sorted(table)) or _("none")
        raise TaotokenError(_("no route {key} in profile {profile} (routes: {routes})").format(
                                key=repr(key), profile=repr(profile), routes=known),
                            Fix.of(_("{command}   (or choose one of the routes listed)"),
                                   command=Command(f"taotoken route set {key}=MODEL")),
                            Exit.CONFIG, code="route.missing")
    considered: list[str] = []
    for cand in candidates(report):
        for key in cand.keys:
            if key in table:
                return Choice(table[key], key, "auto", _auto_reason(cand, key, table[key], considered), cand,
                              considered)
        considered.append(f"{cand.label} ({'/'.join(cand.keys)})")
    devices, name = _("; ").join(considered), repr(profile)
    if profile_model:
        reason = (_("no route matches this machine's devices ({devices}); using the model of profile {profile}")
                  if table else _("the routing table is empty; using the model of profile {profile}"))
        return Choice(profile_model, None, "profile", reason.format(devices=devices, profile=name), None, considered)
    reason = (_("no route matches this machine's devices ({devices}) and profile {profile} has no model") if table
              else _("the routing table is empty and profile {profile} has no model"))
    return Choice(None, None, "none", reason.format(devices=devices, profile=name), None, considered)


def _auto_reason(cand: Candidate, key: str, model: str, skipped: list[str]) -> str:
    names = _("; ").join(skipped)
    if cand.kind == "cpu":
        seen = cand.label if cand.detail.get("backend") else _("the CPU")
        reason = (_("no route for {skipped}; {device}: route {key} = {model}") if skipped
                  else _("no GPU found; {device}: route {key} = {model}"))
        return reason.format(skipped=names, device=seen, key=key, model=model)
    reason = (_("{device} found: route {key} = {model} (no route for {skipped})") if skipped
              else _("{device} found: route {key} = {model}"))
    return reason.format(skipped=names, device=cand.label, key=key, model=model)


# -- editing the table ------------------------------------------------------------------------

@dataclass
class RouteEdit:
    key: str
    model: str | None  # None = remove
    notes: list[str] = field(default_factory=list)


def parse_assignments(items: list[str]) -> list[RouteEdit]:
    """Parse `KIND=MODEL` arguments (`KIND=` removes). Models go through the shared hygiene."""
    from taotoken_cli.core.net.hygiene import clean_model

    if not items:
        raise InputError(_("no route given"),
                         Fix.of(_("{command}   (KIND= removes one)"),
                                command=Command("taotoken route set cuda=gpu-model cpu=cpu-model")))
    edits: dict[str, RouteEdit] = {}
    for item in items:
        if "=" not in item:
            raise InputError(_("{item} is not KIND=MODEL").format(item=repr(item)),
                             _("write it as {kind}=MODEL-ID (device kinds: cuda, gpu, opencl, cpu, vendor names; or a "
                               "task name)").format(kind=item.strip() or "cpu"))
        raw_key, raw_model = item.split("=", 1)
        key = normalize_key(raw_key)
        if not _KEY_RE.match(key):
            raise InputError(_("route name {name} is not allowed").format(name=repr(raw_key.strip())),
                             _("use letters, digits, '.', '_' or '-' (e.g. cuda, gpu, intel, cpu, code, embed)"))
        if not raw_model.strip():
            edits[key] = RouteEdit(key, None)
            continue
        cleaned = clean_model(raw_model)
        edits[key] = RouteEdit(key, cleaned.value, [f"{key}: {note}" for note in cleaned.notes])
    return list(edits.values())


def key_kind(key: str) -> str:
    """'device', 'vendor' or 'task' — for listing the table."""
    if key in DEVICE_KINDS:
        return "device"
    if key in KNOWN_VENDORS:
        return "vendor"
    return "task"


@dataclass
class RoutePlan:
    """What `route set` changes: taotoken's own file (`change`), and which edits change something."""

    change: FileChange
    profile: str
    applied: list[RouteEdit]
    unchanged: list[RouteEdit]

    @property
    def path(self) -> str:
        return str(self.change.path)


def plan_routes(edits: list[RouteEdit], profile: str | None = None, env: Mapping[str, str] | None = None) -> RoutePlan:
    """`edits` in [profiles.<profile>.routes] of the config file, planned (the file may hold the key: 0600)."""
    from taotoken_cli.core.files.fileplan import FileChange, read_current
    from taotoken_cli.core.settings import Overrides, load_settings, read_config_file
    from taotoken_cli.core.settings.edit import render_config_update, validate_profile_name

    settings = load_settings(Overrides(profile=profile), env)  # raises with line:column on a broken file
    validate_profile_name(settings.profile)
    path = settings.config_path
    read_config_file(path)
    before = read_current(path)
    text = (before or b"").decode("utf-8")  # bytes: a CRLF file keeps its line endings
    existing = {normalize_key(k): k for k in settings.routes}
    updates: dict[str, str | None] = {}
    applied, unchanged = [], []
    for edit in edits:
        current_key = existing.get(edit.key)
        if edit.model is None:
            if current_key is None:
                unchanged.append(edit)
                continue
            updates[current_key] = None
        else:
            if current_key is not None and settings.routes[current_key] == edit.model:
                unchanged.append(edit)
                continue
            if current_key is not None and current_key != edit.key:
                updates[current_key] = None  # a hand-written 'CUDA' becomes 'cuda'
            updates[edit.key] = edit.model
        applied.append(edit)
    after = render_config_update(text, path, settings.profile, {}, routes=updates) if updates else text
    change = FileChange(path, before, after.encode("utf-8") if updates else (before or b""), secret=True,
                        target="own")
    return RoutePlan(change, settings.profile, applied, unchanged)


def choose_for_settings(settings, *, device: str | None = None, task: str | None = None,
                        probe_timeout_s: float = 15.0, need_devices: bool = True,
                        env: Mapping[str, str] | None = None) -> Choice:
    """`choose` for resolved Settings; probes the devices only when the choice depends on them."""
    report = None
    if need_devices and device is None and task is None and settings.routes:
        from taotoken_cli.core.devices.probe import probe_devices

        report = probe_devices(timeout_s=probe_timeout_s, env=env)
    return choose(settings.routes, report, settings.model.value, device=device, task=task,
                  profile=settings.profile)
