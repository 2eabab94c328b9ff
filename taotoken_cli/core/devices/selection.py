"""Device-selection variables and what they hide: CUDA_VISIBLE_DEVICES (checked against the GPUs the
driver has), ONEAPI_DEVICE_SELECTOR, the removed SYCL_DEVICE_FILTER; and whether NVIDIA's OpenCL
driver is installed. Pure functions over the environment and plain values from the probes
(`taotoken_cli.core.devices.probe` applies them to its report).

CUDA_VISIBLE_DEVICES, as the driver reads it at cuInit: a comma-separated list of device indices or
GPU UUIDs (a unique prefix such as `GPU-8932f937` is enough); the first entry that matches no device
ends the list, so `0,5,1` means device 0 only and `5` on a one-GPU machine means no device at all.
NVIDIA's OpenCL driver honours the variable too: with every GPU hidden its platform disappears.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.platform import shells

VISIBLE = "CUDA_VISIBLE_DEVICES"
HIDE_ALL_VALUES = ("", "-1", "NoDevFiles")  # the usual ways of hiding every GPU on purpose
DEFAULT_ICD_DIR = "/etc/OpenCL/vendors"


@dataclass
class EnvNote:
    """A device-selection variable and what it means."""

    name: str
    value: str | None  # None = unset
    note: str
    level: str = "info"  # info | warning


@dataclass
class VisibleDevices:
    """What a set CUDA_VISIBLE_DEVICES does on this machine."""

    value: str
    entries: list[str]
    missing: int | None  # position of the first entry that matches no device (None: all match, or not known)
    total: int | None  # GPUs the driver has without the variable (None: not known)
    known: bool  # whether `missing` was decided (from the GPUs the driver has or the count CUDA saw)

    @property
    def on_purpose(self) -> bool:
        return self.value.strip() in HIDE_ALL_VALUES

    @property
    def hides_all(self) -> bool:
        return self.on_purpose or self.missing == 0

    @property
    def used(self) -> list[str]:
        return self.entries if self.missing is None else self.entries[:self.missing]


def visible_devices(value: str, *, all_uuids: Sequence[str | None] | None,
                    visible_count: int | None) -> VisibleDevices:
    """Check each entry against the GPUs the driver has (`all_uuids`, one per device index, from a probe
    without the variable) or, where that cannot decide, against how many devices CUDA saw with it."""
    entries = [entry.strip() for entry in value.split(",")]
    total = None if all_uuids is None else len(all_uuids)
    if value.strip() in HIDE_ALL_VALUES:
        return VisibleDevices(value, entries, 0, total, True)
    known = True
    for position, entry in enumerate(entries):
        exists = _entry_exists(entry, all_uuids)
        if exists is None and visible_count is not None:
            exists = position < visible_count  # the driver kept exactly the entries before the first bad one
        if exists is None:
            known = False
        elif not exists:
            return VisibleDevices(value, entries, position, total, True)
    return VisibleDevices(value, entries, None, total, known)


def _entry_exists(entry: str, all_uuids: Sequence[str | None] | None) -> bool | None:
    if all_uuids is None:
        return None
    if entry.isdigit():
        return int(entry) < len(all_uuids)
    lowered = entry.lower()
    if lowered.startswith("gpu-") and len(lowered) > 4:
        if any(uuid is None for uuid in all_uuids):
            return None  # a driver too old to report UUIDs
        matches = [uuid for uuid in all_uuids if uuid and uuid.lower().startswith(lowered)]
        return True if len(matches) == 1 else None if matches else False
    if lowered.startswith("mig-"):
        return None  # MIG instances are not enumerated here
    return False


def _gpu_count(total: int | None) -> str:
    """What the driver has, as a parenthesis that follows a clause (leading space included where the language
    puts one)."""
    if total is None:
        return ""
    if total == 0:
        return _(" (the driver has no GPU)")
    if total == 1:
        return _(" (the driver has 1 GPU, index 0)")
    return _(" (the driver has {count} GPUs, indices 0-{last})").format(count=total, last=total - 1)


def _no_such_device(entry: str) -> str:
    if not entry:
        return _("an empty entry matches no device")
    if entry.isdigit():
        return _("there is no device {entry}").format(entry=entry)
    if entry.lower().startswith(("gpu-", "mig-")):
        return _("no device has the UUID {entry}").format(entry=entry)
    return _("{entry} is neither a device index nor a GPU UUID").format(entry=repr(entry))


def visible_devices_note(visible: VisibleDevices | None, value: str) -> EnvNote:
    counted = _gpu_count(visible.total) if visible else ""
    if visible is None or (not visible.known and not visible.on_purpose):
        return EnvNote(VISIBLE, value, _("CUDA sees only device(s) {value}, renumbered from 0").format(value=value))
    if visible.on_purpose:
        return EnvNote(VISIBLE, value, _("hides every GPU from CUDA and from NVIDIA's OpenCL{counted}; unset it to "
                                         "use the GPUs").format(counted=counted), "warning")
    if visible.missing == 0:
        return EnvNote(VISIBLE, value, _("{problem}{counted}: CUDA sees no GPU; unset it or list GPUs that exist")
                       .format(problem=_no_such_device(visible.entries[0]), counted=counted), "warning")
    if visible.missing is not None:
        return EnvNote(VISIBLE, value, _("{problem}{counted}: the driver ignores it and what follows, so CUDA sees "
                                         "only {used}, renumbered from 0").format(
                           problem=_no_such_device(visible.entries[visible.missing]), counted=counted,
                           used=",".join(visible.used)), "warning")
    return EnvNote(VISIBLE, value, _("CUDA sees only device(s) {value}, renumbered from 0{counted}").format(
        value=value, counted=counted))


def hidden_reason(visible: VisibleDevices) -> str:
    """Why CUDA sees no GPU, for the backends' messages."""
    if visible.on_purpose:
        return _("{variable}={value} hides every GPU{counted}").format(variable=VISIBLE, value=repr(visible.value),
                                                                         counted=_gpu_count(visible.total))
    return _("{variable}={value}: {problem}{counted}").format(variable=VISIBLE, value=repr(visible.value),
                                                             problem=_no_such_device(visible.entries[0]),
                                                             counted=_gpu_count(visible.total))


def visible_devices_fix(visible: VisibleDevices) -> str:
    if visible.total != 0:
        return _("unset CUDA_VISIBLE_DEVICES, or set it to GPUs that exist (e.g. CUDA_VISIBLE_DEVICES=0)")
    return _("unset CUDA_VISIBLE_DEVICES, or set it to GPUs that exist")


def nvidia_opencl_icd(env: Mapping[str, str]) -> str | None:
    """The installed NVIDIA OpenCL ICD (a `.icd` file, or a library named in OCL_ICD_FILENAMES), if any."""
    for library in (env.get("OCL_ICD_FILENAMES") or "").split(os.pathsep):
        if "nvidia" in library.lower():
            return library
    location = Path(env.get("OCL_ICD_VENDORS") or env.get("OPENCL_VENDOR_PATH") or DEFAULT_ICD_DIR)
    try:
        files = sorted(location.glob("*.icd")) if location.is_dir() else [location] if location.is_file() else []
        for path in files:
            if "nvidia" in path.name.lower() or "nvidia" in path.read_text(errors="replace")[:1000].lower():
                return str(path)
    except OSError:
        return None
    return None


_SYCL_BACKENDS = {"level_zero": "level_zero", "ext_oneapi_level_zero": "level_zero", "opencl": "opencl",
                  "cuda": "cuda", "ext_oneapi_cuda": "cuda", "hip": "hip", "ext_oneapi_hip": "hip",
                  "native_cpu": "native_cpu", "ext_oneapi_native_cpu": "native_cpu", "*": "*"}
_SYCL_TYPES = {"cpu": "cpu", "gpu": "gpu", "acc": "fpga", "fpga": "fpga", "*": "*"}


def sycl_filter_to_selector(value: str) -> str:
    """Translate a deprecated SYCL_DEVICE_FILTER (`backend:type:num,…`) to ONEAPI_DEVICE_SELECTOR syntax."""
    terms: list[str] = []
    for item in value.split(","):
        backend, device_type, number = "*", None, None
        for part in (p.strip().lower() for p in item.split(":") if p.strip()):
            if part in _SYCL_BACKENDS:
                backend = _SYCL_BACKENDS[part]
            elif part in _SYCL_TYPES:
                device_type = _SYCL_TYPES[part]
            elif part.isdigit():
                number = part
            elif part == "host":
                backend = None  # the host device no longer exists
                break
        if backend is None:
            continue
        # The selector indexes devices per backend, so a number only carries over without a type.
        term = f"{backend}:{device_type or number or '*'}"
        if term not in terms:
            terms.append(term)
    return ";".join(terms) or "*:*"


def selection_env_notes(env: Mapping[str, str], visible: VisibleDevices | None = None) -> list[EnvNote]:
    """One note per selection variable; `visible` (from the probes) lets CUDA_VISIBLE_DEVICES be checked."""
    notes: list[EnvNote] = []
    cvd = env.get(VISIBLE)
    if cvd is None:
        notes.append(EnvNote(VISIBLE, None, _("unset: CUDA sees every GPU")))
    else:
        if visible is None and cvd.strip() in HIDE_ALL_VALUES:
            visible = visible_devices(cvd, all_uuids=None, visible_count=None)
        notes.append(visible_devices_note(visible, cvd))
    selector = env.get("ONEAPI_DEVICE_SELECTOR")
    if selector is None:
        notes.append(EnvNote("ONEAPI_DEVICE_SELECTOR", None, _("unset: SYCL/oneAPI runtimes see every device")))
    elif not selector.strip():
        notes.append(EnvNote("ONEAPI_DEVICE_SELECTOR", selector, _("set but empty; unset it or give "
                                                                   "backend:devices, e.g. level_zero:gpu"), "warning"))
    else:
        notes.append(EnvNote("ONEAPI_DEVICE_SELECTOR", selector, _("SYCL/oneAPI runtimes use only the devices it "
                                                                   "selects (backend:devices; ';' separates terms, "
                                                                   "'!' excludes)")))
    legacy = env.get("SYCL_DEVICE_FILTER")
    if legacy is not None:
        equivalent = sycl_filter_to_selector(legacy)
        # written in POSIX, said in the user's shell (PowerShell: Remove-Item Env:…; $env:… = '…')
        replace = shells.in_shell(f"unset SYCL_DEVICE_FILTER; export ONEAPI_DEVICE_SELECTOR='{equivalent}'",
                                  shells.syntax(env))
        notes.append(EnvNote("SYCL_DEVICE_FILTER", legacy, _("deprecated since 2022 and removed from current DPC++ "
                                                             "runtimes (no longer honoured); replace it: {command}")
                             .format(command=replace), "warning"))
    return notes
