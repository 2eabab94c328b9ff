"""The one device-probe module (used by `route` and `doctor`).

Each backend is probed in its own interpreter (`backends.py`, JSON on stdout) with a timeout,
because a broken driver can hang or crash the process that loads it. OpenCL is read through
pyopencl; CUDA through pycuda when it is installed, otherwise through the CUDA driver API itself
(ctypes on `libcuda.so.1` / `nvcuda.dll`, or the file `$TAOTOKEN_LIBCUDA` names). The probes run
concurrently; when CUDA_VISIBLE_DEVICES is set, one more asks the driver without it, so what the
variable hides can be named. Nothing here creates a context or allocates device memory.

Per backend the outcome is one of:
- `not_installed`: the Python binding is missing (OpenCL; the fix names the pip extra);
- `no_driver`: there is no platform/driver/device (no OpenCL ICD, `libcuda.so.1` missing,
  CUDA_ERROR_NO_DEVICE);
- `present`: devices found, with their attributes;
- `broken`: the probe failed (`failure` = "error" with the message, "crashed", or "timeout").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _
from taotoken_cli.core.base.oserrors import error_text
from taotoken_cli.core.devices.selection import (
    VISIBLE,
    EnvNote,
    VisibleDevices,
    hidden_reason,
    nvidia_opencl_icd,
    selection_env_notes,
    visible_devices,
    visible_devices_fix,
)
from taotoken_cli.core.platform import system
from taotoken_cli.core.platform.installer import add_extra, add_package

PROBE_SCRIPT = Path(__file__).with_name("backends.py")
DEFAULT_TIMEOUT_S = 15.0
BACKENDS = ("cuda", "opencl")
CUDA_DRIVER_ONLY = "cuda-driver"  # the probe's mode that skips pycuda
LIBCUDA_OVERRIDE = "TAOTOKEN_LIBCUDA"
NO_DEVICE = "CUDA_ERROR_NO_DEVICE"

PRESENT, NOT_INSTALLED, NO_DRIVER, BROKEN = "present", "not_installed", "no_driver", "broken"

# The fixes, translated where a report is made (`hint(NO_DRIVER_HINT, backend)`): the language is chosen per run.
# {command}, {opencl}, {pocl}: the commands for the installer taotoken runs under (core.platform.installer);
# {nvidia_smi}, {clinfo}: the tools that show what the driver sees. Each is a command part of the Fix `hint` makes.
PYCUDA_HINT = N_("pycuda builds from source: it needs nvcc on PATH (or CUDA_ROOT), a C++ compiler and the Python "
                 "headers; then: {command}")
INSTALL_HINT = {
    "opencl": N_("{opencl}   (no GPU driver? {pocl} adds the PoCL CPU device)"),
    "cuda": N_("optional, the CUDA driver API is probed without it: {pycuda_hint}"),
}
NO_DRIVER_HINT = {
    "opencl": N_("install an OpenCL ICD driver for your device (NVIDIA driver, Intel compute-runtime, ROCm), "
                 "or the PoCL CPU driver: {pocl}; ICD files live in /etc/OpenCL/vendors "
                 "(or $OCL_ICD_VENDORS)"),
    "cuda": N_("with an NVIDIA GPU: install the NVIDIA driver (it provides libcuda.so.1) and check {nvidia_smi}; in "
               "containers run with the GPU exposed (e.g. docker --gpus all) and no CUDA stub libcuda.so first on "
               "LD_LIBRARY_PATH; $TAOTOKEN_LIBCUDA=/path/to/libcuda.so.1 names the library to load"),
}
# The same, where the OS differs (core.platform.system's kind): Windows has no LD_LIBRARY_PATH or /etc, macOS no CUDA.
NO_DRIVER_HINT_FOR_OS = {
    ("cuda", "windows"): N_("with an NVIDIA GPU: install the NVIDIA driver (it provides nvcuda.dll in System32) and "
                            "check {nvidia_smi}; the variable TAOTOKEN_LIBCUDA, set to a path to nvcuda.dll, names "
                            "another library to load"),
    ("cuda", "macos"): N_("macOS has no CUDA driver (NVIDIA's last was for macOS 10.13): route this machine with "
                          "`cpu`, or OpenCL"),
    ("opencl", "windows"): N_("install the GPU vendor's driver (NVIDIA, Intel, AMD: each registers its OpenCL ICD "
                              "under HKEY_LOCAL_MACHINE\\SOFTWARE\\Khronos\\OpenCL\\Vendors), or the PoCL CPU "
                              "driver: {pocl}"),
    ("opencl", "macos"): N_("macOS ships its own OpenCL platform (Apple): reinstall pyopencl if it finds none; or the "
                            "PoCL CPU driver: {pocl}"),
}
BROKEN_HINT = {
    "opencl": N_("run {clinfo} to see what the ICD loader finds; reinstall pyopencl if it cannot be imported"),
    "cuda": N_("run {nvidia_smi}; 'Driver/library version mismatch' means the driver was upgraded without a "
               "reboot; reinstall pycuda if it was built against another CUDA version"),
}
# Driver errors with a more precise fix than BROKEN_HINT.
CUDA_ERROR_HINT = {
    "CUDA_ERROR_STUB_LIBRARY": N_("a CUDA toolkit stub libcuda.so was loaded instead of the driver's: remove the "
                                  "toolkit's lib64/stubs directory from LD_LIBRARY_PATH"),
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": N_("the driver library does not match the loaded kernel module: reboot "
                                            "after a driver upgrade, or drop a cuda-compat libcuda from "
                                            "LD_LIBRARY_PATH"),
}


def no_driver_hints() -> dict[str, str]:
    """NO_DRIVER_HINT with this OS's own words where they differ."""
    kind = system.current().kind
    return {api: NO_DRIVER_HINT_FOR_OS.get((api, kind), text) for api, text in NO_DRIVER_HINT.items()}


def hint(hints: Mapping[str, str], key: str | None) -> Fix | None:
    """The fix `hints` holds for `key`, in the user's language, its commands as commands."""
    if key not in hints:
        return None
    return Fix.of(_(hints[key]), pycuda_hint=pycuda_hint(), opencl=add_extra("opencl"), pocl=add_extra("pocl"),
                  nvidia_smi=Command("nvidia-smi"), clinfo=Command("clinfo -l"))


def pycuda_hint() -> Fix:
    """How to add pycuda where taotoken is installed (it is in no extra: it builds from source)."""
    return Fix.of(_(PYCUDA_HINT), command=add_package("pycuda"))


@dataclass
class OpenCLDevice:
    name: str
    type: str  # "CPU" | "GPU" | "ACCELERATOR" | "CUSTOM" | "UNKNOWN"
    vendor: str
    driver_version: str | None = None
    version: str | None = None
    global_mem_bytes: int | None = None
    max_mem_alloc_bytes: int | None = None
    compute_units: int | None = None
    max_clock_mhz: int | None = None
    platform: str = ""


@dataclass
class OpenCLPlatform:
    name: str
    vendor: str
    version: str
    devices: list[OpenCLDevice] = field(default_factory=list)


@dataclass
class CudaDevice:
    index: int
    name: str
    compute_capability: str  # "8.0"
    total_memory_bytes: int
    pci_bus_id: str | None = None
    multiprocessors: int | None = None  # SMs
    clock_mhz: int | None = None
    uuid: str | None = None  # "GPU-…" (driver API only)


@dataclass
class BackendReport:
    backend: str  # "opencl" | "cuda"
    status: str  # present | not_installed | no_driver | broken
    message: str
    fix: Fix | str | None = None
    failure: str | None = None  # for broken: "error" | "crashed" | "timeout"
    elapsed_s: float = 0.0
    platforms: list[OpenCLPlatform] = field(default_factory=list)  # OpenCL
    cuda_devices: list[CudaDevice] = field(default_factory=list)  # CUDA
    driver_version: str | None = None  # CUDA: installed driver's CUDA version, e.g. "12.4"
    library_version: str | None = None  # pyopencl version / CUDA version pycuda was built against
    source: str | None = None  # what answered: "pycuda" | "driver_api" (CUDA), "pyopencl"
    pycuda: str | None = None  # CUDA: the binding itself: present | not_installed | broken
    driver_library: str | None = None  # CUDA: the library the driver API was read from
    error_name: str | None = None  # CUDA: the driver's error, e.g. CUDA_ERROR_NO_DEVICE
    hidden_by: str | None = None  # a selection variable that hides this backend's devices
    notes: list[str] = field(default_factory=list)
    # CUDA with CUDA_VISIBLE_DEVICES set: the GPUs the driver has without it (None: not known)
    unfiltered_devices: list[CudaDevice] | None = None

    @property
    def device_count(self) -> int:
        if self.backend == "cuda":
            return len(self.cuda_devices)
        return sum(len(p.devices) for p in self.platforms)

    @property
    def opencl_devices(self) -> list[OpenCLDevice]:
        return [device for platform in self.platforms for device in platform.devices]


@dataclass
class DeviceReport:
    cuda: BackendReport
    opencl: BackendReport
    env: list[EnvNote] = field(default_factory=list)

    @property
    def backends(self) -> list[BackendReport]:
        return [self.cuda, self.opencl]

    def to_dict(self) -> dict[str, Any]:
        return {"backends": {b.backend: backend_to_dict(b) for b in self.backends},
                "env": [asdict(note) for note in self.env]}


_CUDA_ONLY = ("cuda_devices", "driver_version", "pycuda", "driver_library", "error_name", "unfiltered_devices")


def backend_to_dict(report: BackendReport) -> dict[str, Any]:
    data = asdict(report)
    # the fix as the line it has always been, and structured beside it (its commands), as doctor's fix_steps
    data["fix"] = None if report.fix is None else str(report.fix)
    data["fix_step"] = None if report.fix is None else Fix.coerce(report.fix).to_dict()
    data["device_count"] = report.device_count
    if report.backend == "cuda":
        del data["platforms"]
    else:
        for key in _CUDA_ONLY:
            del data[key]
    return data


# -- running the probes -----------------------------------------------------------------------

def probe_devices(*, timeout_s: float = DEFAULT_TIMEOUT_S, env: Mapping[str, str] | None = None,
                  backends: tuple[str, ...] = BACKENDS, python: str | None = None) -> DeviceReport:
    """Probe CUDA and OpenCL concurrently, each in its own subprocess, and read the selection variables."""
    env = dict(os.environ if env is None else env)
    jobs = {name: (name, env) for name in backends}
    if "cuda" in backends and VISIBLE in env:
        # The driver applies CUDA_VISIBLE_DEVICES at cuInit: only a second process without it sees every GPU.
        jobs["unfiltered"] = (CUDA_DRIVER_ONLY, {k: v for k, v in env.items() if k != VISIBLE})
    with ThreadPoolExecutor(max_workers=len(jobs) or 1) as pool:
        futures = {key: pool.submit(probe_backend, mode, timeout_s=timeout_s, env=job_env, python=python)
                   for key, (mode, job_env) in jobs.items()}
        results = {key: future.result() for key, future in futures.items()}
    unfiltered = results.pop("unfiltered", None)
    skipped = {name: BackendReport(name, "skipped", _("not probed")) for name in BACKENDS if name not in results}
    results.update(skipped)
    report = DeviceReport(cuda=results["cuda"], opencl=results["opencl"])
    if unfiltered is not None and unfiltered.source == "driver_api":
        if unfiltered.status == PRESENT:
            report.cuda.unfiltered_devices = unfiltered.cuda_devices
        elif unfiltered.error_name == NO_DEVICE:
            report.cuda.unfiltered_devices = []
    explain_selection(report, env)
    return report


def probe_backend(backend: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, env: Mapping[str, str] | None = None,
                  python: str | None = None) -> BackendReport:
    """Run one probe subprocess (`cuda`, `opencl`, or `cuda-driver`: the driver API without pycuda); kill its
    whole process group when it exceeds `timeout_s`."""
    if backend not in (*BACKENDS, CUDA_DRIVER_ONLY):
        raise ValueError(f"unknown backend {backend!r}")
    mode, backend = backend, backend.split("-")[0]
    env = dict(os.environ if env is None else env)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    started = time.perf_counter()
    try:
        proc = subprocess.Popen([python or sys.executable, str(PROBE_SCRIPT), mode], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    except OSError as exc:
        return BackendReport(backend, BROKEN, _("cannot start the probe: {error}").format(error=error_text(exc)),
                             hint(BROKEN_HINT, backend), "error")
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        return BackendReport(backend, BROKEN, _("the {backend} probe did not answer within {seconds} s and was "
                                                "killed (a driver call hung)").format(backend=backend,
                                                                                      seconds=f"{timeout_s:g}"),
                             hint(BROKEN_HINT, backend), "timeout", elapsed_s=time.perf_counter() - started)
    elapsed = time.perf_counter() - started
    return parse_probe_output(backend, proc.returncode, stdout, stderr, elapsed)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def parse_probe_output(backend: str, returncode: int, stdout: bytes, stderr: bytes, elapsed_s: float) -> BackendReport:
    tail = stderr.decode("utf-8", errors="replace").strip().splitlines()[-3:]
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        message = (_("the {backend} probe crashed ({signal}): {output}") if tail
                   else _("the {backend} probe crashed ({signal})")).format(backend=backend, signal=name,
                                                                            output=" | ".join(tail))
        return BackendReport(backend, BROKEN, message, hint(BROKEN_HINT, backend), "crashed", elapsed_s=elapsed_s)
    data = None
    for line in reversed(stdout.decode("utf-8", errors="replace").splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            break
    if not isinstance(data, dict) or data.get("status") not in (PRESENT, NOT_INSTALLED, NO_DRIVER, BROKEN):
        detail = " | ".join(tail) or _("exit status {status}, no result").format(status=returncode)
        return BackendReport(backend, BROKEN, _("the {backend} probe failed: {detail}").format(backend=backend,
                                                                                             detail=detail),
                             hint(BROKEN_HINT, backend), "crashed" if returncode else "error", elapsed_s=elapsed_s)
    status = data["status"]
    report = BackendReport(backend, status, probe_message(data, "message") or status, elapsed_s=elapsed_s,
                           failure="error" if status == BROKEN else None, source=_str(data.get("source")))
    report.fix = hint({NOT_INSTALLED: INSTALL_HINT, NO_DRIVER: no_driver_hints(), BROKEN: BROKEN_HINT}.get(status, {}),
                      backend)
    if backend == "opencl":
        _parse_opencl(report, data)
    else:
        _parse_cuda(report, data)
    return report


def _parse_opencl(report: BackendReport, data: dict[str, Any]) -> None:
    report.library_version = _str(data.get("pyopencl_version"))
    for raw in data.get("platforms") or []:
        platform = OpenCLPlatform(str(raw.get("name", "")), str(raw.get("vendor", "")), str(raw.get("version", "")))
        for dev in raw.get("devices") or []:
            platform.devices.append(OpenCLDevice(
                name=str(dev.get("name") or ""), type=str(dev.get("type") or "UNKNOWN"),
                vendor=str(dev.get("vendor") or ""), driver_version=dev.get("driver_version"),
                version=dev.get("version"), global_mem_bytes=_int(dev.get("global_mem_bytes")),
                max_mem_alloc_bytes=_int(dev.get("max_mem_alloc_bytes")),
                compute_units=_int(dev.get("compute_units")), max_clock_mhz=_int(dev.get("max_clock_mhz")),
                platform=platform.name))
        report.platforms.append(platform)


def _parse_cuda(report: BackendReport, data: dict[str, Any]) -> None:
    driver = _int(data.get("driver_version"))
    report.driver_version = f"{driver // 1000}.{driver % 1000 // 10}" if driver else None
    report.library_version = _str(data.get("built_against"))
    report.pycuda = _str(data.get("pycuda"))
    report.driver_library = _str(data.get("driver_library"))
    report.error_name = _str(data.get("error_name"))
    report.cuda_devices = [cuda_device_from(dev) for dev in data.get("devices") or [] if isinstance(dev, dict)]
    if report.status == BROKEN and report.error_name in CUDA_ERROR_HINT:
        report.fix = hint(CUDA_ERROR_HINT, report.error_name)
    if report.pycuda in (NOT_INSTALLED, BROKEN):  # the driver API was asked instead
        pycuda = probe_message(data, "pycuda_message") or f"pycuda: {report.pycuda}"
        if report.status == PRESENT:
            report.notes.append(_("{pycuda} (optional: the driver API answered); {pycuda_hint}").format(
                pycuda=pycuda, pycuda_hint=pycuda_hint()))
        elif report.pycuda == BROKEN:
            report.notes.append(pycuda)


def probe_message(data: Mapping[str, Any], field: str) -> str | None:
    """The probe's message `field` in the user's language. The probe (standard library only, in another
    interpreter) sends its English text and, beside it as `<field>_i18n`, the text's template and arguments: the
    template is translated here and the arguments, the driver's own words among them, go in as they came. A
    message without a template (a driver's error verbatim), or one that does not fit it, is shown as it came."""
    message = data.get(field)
    said = data.get(f"{field}_i18n")
    if isinstance(said, dict) and isinstance(said.get("text"), str) and isinstance(said.get("args"), dict):
        try:
            return _(said["text"]).format(**said["args"])
        except (KeyError, IndexError, ValueError):
            pass
    return str(message) if message else None


def cuda_device_from(dev: dict[str, Any]) -> CudaDevice:
    return CudaDevice(index=_int(dev.get("index")) or 0, name=str(dev.get("name") or ""),
                      compute_capability=str(dev.get("compute_capability") or "?"),
                      total_memory_bytes=_int(dev.get("total_memory_bytes")) or 0,
                      pci_bus_id=_str(dev.get("pci_bus_id")), multiprocessors=_int(dev.get("multiprocessors")),
                      clock_mhz=_int(dev.get("clock_mhz")), uuid=_str(dev.get("uuid")))


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _str(value: Any) -> str | None:
    return str(value) if value is not None else None


# -- what the selection variables hide --------------------------------------------------------

def explain_selection(report: DeviceReport, env: Mapping[str, str]) -> None:
    """Check CUDA_VISIBLE_DEVICES against what the driver has; when it hides every GPU, say so where the
    devices are missing (CUDA, and NVIDIA's OpenCL platform, which honours it too)."""
    value = env.get(VISIBLE)
    visible = None
    if value is not None:
        cuda = report.cuda
        seen = cuda.device_count if cuda.status == PRESENT else 0 if cuda.error_name == NO_DEVICE else None
        all_uuids = None if cuda.unfiltered_devices is None else [d.uuid for d in cuda.unfiltered_devices]
        visible = visible_devices(value, all_uuids=all_uuids, visible_count=seen)
        if visible.hides_all and visible.total != 0:
            if cuda.error_name == NO_DEVICE:
                _hidden_by_visible(cuda, visible, _("{message}: {reason}").format(message=cuda.message,
                                                                                  reason=hidden_reason(visible)))
            if cuda.error_name == NO_DEVICE or cuda.status == "skipped":
                _nvidia_opencl_hidden(report.opencl, visible, env)
    report.env = selection_env_notes(env, visible)


def _hidden_by_visible(report: BackendReport, visible: VisibleDevices, message: str) -> None:
    report.hidden_by, report.message, report.fix = VISIBLE, message, visible_devices_fix(visible)


def _nvidia_opencl_hidden(opencl: BackendReport, visible: VisibleDevices, env: Mapping[str, str]) -> None:
    icd = nvidia_opencl_icd(env)
    if icd is None or opencl.status not in (PRESENT, NO_DRIVER):
        return
    if any("nvidia" in (p.name + p.vendor).lower() for p in opencl.platforms):
        return
    reason = _("{reason}, and NVIDIA's OpenCL honours it too (its driver is installed: {icd})").format(
        reason=hidden_reason(visible), icd=icd)
    if opencl.status == PRESENT:
        opencl.hidden_by = VISIBLE
        opencl.notes.append(_("no NVIDIA OpenCL platform: {reason}").format(reason=reason))
    elif opencl.platforms:
        _hidden_by_visible(opencl, visible, _("{message}; no NVIDIA OpenCL platform: {reason}").format(
            message=opencl.message, reason=reason))
    else:
        _hidden_by_visible(opencl, visible, _("no OpenCL platform: {reason}").format(reason=reason))
