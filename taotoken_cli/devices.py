"""The one device-probe module (used by `route` and `doctor`).

Each backend (OpenCL through pyopencl, CUDA through pycuda) is probed in its own interpreter
(`_device_probe.py`, JSON on stdout) with a timeout, because a broken driver can hang or crash
the process that loads it. Both probes run concurrently. Nothing here creates a context or
allocates device memory.

Per backend the outcome is one of:
- `not_installed`: the Python binding is missing (the fix names the pip extra);
- `no_driver`: the binding works but there is no platform/driver/device (no OpenCL ICD,
  `libcuda.so.1` missing, `cuInit failed: no CUDA-capable device`);
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

PROBE_SCRIPT = Path(__file__).with_name("_device_probe.py")
DEFAULT_TIMEOUT_S = 15.0
BACKENDS = ("cuda", "opencl")

PRESENT, NOT_INSTALLED, NO_DRIVER, BROKEN = "present", "not_installed", "no_driver", "broken"

INSTALL_HINT = {
    "opencl": "pip install 'taotoken[opencl]'   (no GPU driver? `pip install 'taotoken[pocl]'` adds the "
              "PoCL CPU device)",
    "cuda": "pip install 'taotoken[cuda]'   (needs the CUDA toolkit and the NVIDIA driver)",
}
NO_DRIVER_HINT = {
    "opencl": "install an OpenCL ICD driver for your device (NVIDIA driver, Intel compute-runtime, ROCm), "
              "or the PoCL CPU driver: pip install 'taotoken[pocl]'; ICD files live in /etc/OpenCL/vendors "
              "(or $OCL_ICD_VENDORS)",
    "cuda": "install the NVIDIA driver (provides libcuda.so.1) and check `nvidia-smi`; in containers run with "
            "the GPU exposed (e.g. docker --gpus all) and no CUDA stub libcuda.so first on LD_LIBRARY_PATH; "
            "check that CUDA_VISIBLE_DEVICES does not hide every GPU",
}
BROKEN_HINT = {
    "opencl": "run `clinfo -l` to see what the ICD loader finds; reinstall pyopencl if it cannot be imported",
    "cuda": "run `nvidia-smi`; 'Driver/library version mismatch' means the driver was upgraded without a "
            "reboot; reinstall pycuda if it was built against another CUDA version",
}


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


@dataclass
class BackendReport:
    backend: str  # "opencl" | "cuda"
    status: str  # present | not_installed | no_driver | broken
    message: str
    fix: str | None = None
    failure: str | None = None  # for broken: "error" | "crashed" | "timeout"
    elapsed_s: float = 0.0
    platforms: list[OpenCLPlatform] = field(default_factory=list)  # OpenCL
    cuda_devices: list[CudaDevice] = field(default_factory=list)  # CUDA
    driver_version: str | None = None  # CUDA: installed driver's CUDA version, e.g. "12.4"
    library_version: str | None = None  # pyopencl version / CUDA version pycuda was built against

    @property
    def device_count(self) -> int:
        if self.backend == "cuda":
            return len(self.cuda_devices)
        return sum(len(p.devices) for p in self.platforms)

    @property
    def opencl_devices(self) -> list[OpenCLDevice]:
        return [device for platform in self.platforms for device in platform.devices]


@dataclass
class EnvNote:
    """A device-selection variable and what it means."""

    name: str
    value: str | None  # None = unset
    note: str
    level: str = "info"  # info | warning


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


def backend_to_dict(report: BackendReport) -> dict[str, Any]:
    data = asdict(report)
    data["device_count"] = report.device_count
    if report.backend == "cuda":
        del data["platforms"]
    else:
        del data["cuda_devices"], data["driver_version"]
    return data


# -- running the probes -----------------------------------------------------------------------

def probe_devices(*, timeout_s: float = DEFAULT_TIMEOUT_S, env: Mapping[str, str] | None = None,
                  backends: tuple[str, ...] = BACKENDS, python: str | None = None) -> DeviceReport:
    """Probe CUDA and OpenCL concurrently, each in its own subprocess, and read the selection variables."""
    env = dict(os.environ if env is None else env)
    with ThreadPoolExecutor(max_workers=len(backends) or 1) as pool:
        futures = {name: pool.submit(probe_backend, name, timeout_s=timeout_s, env=env, python=python)
                   for name in backends}
        results = {name: future.result() for name, future in futures.items()}
    skipped = {name: BackendReport(name, "skipped", "not probed") for name in BACKENDS if name not in results}
    results.update(skipped)
    return DeviceReport(cuda=results["cuda"], opencl=results["opencl"], env=selection_env_notes(env))


def probe_backend(backend: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, env: Mapping[str, str] | None = None,
                  python: str | None = None) -> BackendReport:
    """Run one probe subprocess; kill its whole process group when it exceeds `timeout_s`."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}")
    env = dict(os.environ if env is None else env)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    started = time.perf_counter()
    try:
        proc = subprocess.Popen([python or sys.executable, str(PROBE_SCRIPT), backend], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    except OSError as exc:
        return BackendReport(backend, BROKEN, f"cannot start the probe: {exc}", BROKEN_HINT[backend], "error")
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        return BackendReport(backend, BROKEN, f"the {backend} probe did not answer within {timeout_s:g} s and "
                             f"was killed (a driver call hung)", BROKEN_HINT[backend], "timeout",
                             elapsed_s=time.perf_counter() - started)
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
        return BackendReport(backend, BROKEN, f"the {backend} probe crashed ({name})" +
                             (f": {' | '.join(tail)}" if tail else ""), BROKEN_HINT[backend], "crashed",
                             elapsed_s=elapsed_s)
    data = None
    for line in reversed(stdout.decode("utf-8", errors="replace").splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            break
    if not isinstance(data, dict) or data.get("status") not in (PRESENT, NOT_INSTALLED, NO_DRIVER, BROKEN):
        detail = " | ".join(tail) or f"exit status {returncode}, no result"
        return BackendReport(backend, BROKEN, f"the {backend} probe failed: {detail}", BROKEN_HINT[backend],
                             "crashed" if returncode else "error", elapsed_s=elapsed_s)
    status = data["status"]
    report = BackendReport(backend, status, str(data.get("message") or status), elapsed_s=elapsed_s,
                           failure="error" if status == BROKEN else None)
    report.fix = {NOT_INSTALLED: INSTALL_HINT, NO_DRIVER: NO_DRIVER_HINT, BROKEN: BROKEN_HINT}.get(
        status, {}).get(backend)
    if backend == "opencl":
        report.library_version = data.get("pyopencl_version")
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
    else:
        driver = _int(data.get("driver_version"))
        report.driver_version = f"{driver // 1000}.{driver % 1000 // 10}" if driver else None
        report.library_version = data.get("built_against")
        for dev in data.get("devices") or []:
            report.cuda_devices.append(CudaDevice(
                index=_int(dev.get("index")) or 0, name=str(dev.get("name") or ""),
                compute_capability=str(dev.get("compute_capability") or "?"),
                total_memory_bytes=_int(dev.get("total_memory_bytes")) or 0, pci_bus_id=dev.get("pci_bus_id")))
    return report


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


# -- selection variables ----------------------------------------------------------------------

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


def selection_env_notes(env: Mapping[str, str]) -> list[EnvNote]:
    notes: list[EnvNote] = []
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    if cvd is None:
        notes.append(EnvNote("CUDA_VISIBLE_DEVICES", None, "unset: CUDA sees every GPU"))
    elif cvd.strip() in ("", "-1", "NoDevFiles"):
        notes.append(EnvNote("CUDA_VISIBLE_DEVICES", cvd, "hides every GPU from CUDA (cuInit reports no "
                             "CUDA-capable device); unset it to use the GPUs", "warning"))
    else:
        notes.append(EnvNote("CUDA_VISIBLE_DEVICES", cvd, f"CUDA sees only device(s) {cvd}, renumbered from 0"))
    selector = env.get("ONEAPI_DEVICE_SELECTOR")
    if selector is None:
        notes.append(EnvNote("ONEAPI_DEVICE_SELECTOR", None, "unset: SYCL/oneAPI runtimes see every device"))
    elif not selector.strip():
        notes.append(EnvNote("ONEAPI_DEVICE_SELECTOR", selector, "set but empty; unset it or give "
                             "backend:devices, e.g. level_zero:gpu", "warning"))
    else:
        notes.append(EnvNote("ONEAPI_DEVICE_SELECTOR", selector, "SYCL/oneAPI runtimes use only the devices it "
                             "selects (backend:devices; ';' separates terms, '!' excludes)"))
    legacy = env.get("SYCL_DEVICE_FILTER")
    if legacy is not None:
        equivalent = sycl_filter_to_selector(legacy)
        notes.append(EnvNote("SYCL_DEVICE_FILTER", legacy, "deprecated since 2022 and removed from current DPC++ "
                             "runtimes (no longer honoured); replace it: unset SYCL_DEVICE_FILTER; export "
                             f"ONEAPI_DEVICE_SELECTOR='{equivalent}'", "warning"))
    return notes
