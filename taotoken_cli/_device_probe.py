"""Device probe that runs in its own interpreter: `python _device_probe.py opencl|cuda`.

It is started by `taotoken_cli.devices` as a subprocess (a broken driver can hang or crash the
interpreter) and prints one JSON object on stdout. Standard library only, no imports from the
package, no contexts created and no memory allocated on any device: it only reads attributes.

Output: {"status": "present"|"not_installed"|"no_driver"|"broken", "message": str, ...data}
"""

from __future__ import annotations

import json
import os
import sys

# Run by path, Python puts this file's directory (the package) first on sys.path; its modules
# (config.py, output.py, ...) must not shadow anything a GPU library imports.
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]


def _not_installed(exc: ImportError, top: str) -> bool:
    return isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] == top


def _attr(obj, name, default=None):
    try:
        return getattr(obj, name)
    except Exception:  # an attribute the driver does not support raises LogicError/INVALID_VALUE
        return default


def _text(value) -> str | None:
    return value.strip() if isinstance(value, str) else None


def _device_type(cl, value) -> str:
    try:
        value = int(value)
    except (TypeError, ValueError):
        return "UNKNOWN"
    # Check GPU/ACCELERATOR before CPU: a device may set several bits (and ALL is all ones).
    for name in ("GPU", "ACCELERATOR", "CPU", "CUSTOM"):
        bit = getattr(cl.device_type, name, None)
        if bit is not None and value & int(bit):
            return name
    return "UNKNOWN"


def probe_opencl() -> dict:
    try:
        import pyopencl as cl
    except ImportError as exc:
        if _not_installed(exc, "pyopencl"):
            return {"status": "not_installed", "message": "pyopencl is not installed"}
        if "libOpenCL" in str(exc):
            return {"status": "no_driver", "message": f"the OpenCL ICD loader cannot be loaded: {exc}"}
        return {"status": "broken", "message": f"pyopencl is installed but cannot be imported: {exc}"}
    try:
        platforms = cl.get_platforms()
    except Exception as exc:  # pyopencl.LogicError / Error / RuntimeError (PR #826)
        text = f"{type(exc).__name__}: {exc}"
        if "PLATFORM_NOT_FOUND_KHR" in text or "no CL platforms" in text:
            return {"status": "no_driver", "message": f"no OpenCL platform (no ICD driver installed): {text}"}
        return {"status": "broken", "message": f"clGetPlatformIDs failed: {text}"}
    result: dict = {"pyopencl_version": _text(_attr(cl, "VERSION_TEXT")), "platforms": []}
    errors: list[str] = []
    for platform in platforms:
        entry = {"name": _text(_attr(platform, "name")) or "", "vendor": _text(_attr(platform, "vendor")) or "",
                 "version": _text(_attr(platform, "version")) or "", "devices": []}
        try:
            devices = platform.get_devices()
        except Exception as exc:  # DEVICE_NOT_FOUND on a platform without devices
            if "DEVICE_NOT_FOUND" not in str(exc):
                errors.append(f"{entry['name']}: {type(exc).__name__}: {exc}")
            devices = []
        for device in devices:
            entry["devices"].append({
                "name": _text(_attr(device, "name")) or "",
                "type": _device_type(cl, _attr(device, "type")),
                "vendor": _text(_attr(device, "vendor")) or "",
                "version": _text(_attr(device, "version")),
                "driver_version": _text(_attr(device, "driver_version")),
                "global_mem_bytes": _attr(device, "global_mem_size"),
                "max_mem_alloc_bytes": _attr(device, "max_mem_alloc_size"),
                "compute_units": _attr(device, "max_compute_units"),
                "max_clock_mhz": _attr(device, "max_clock_frequency"),
            })
        result["platforms"].append(entry)
    count = sum(len(p["devices"]) for p in result["platforms"])
    if errors:
        result["errors"] = errors
    if count:
        result.update(status="present", message=f"{count} OpenCL device(s) on {len(platforms)} platform(s)")
    elif errors:
        result.update(status="broken", message="; ".join(errors))
    elif platforms:
        result.update(status="no_driver", message=f"{len(platforms)} OpenCL platform(s) but no devices")
    else:
        result.update(status="no_driver", message="no OpenCL platform (no ICD driver installed)")
    return result


def probe_cuda() -> dict:
    try:
        import pycuda.driver as cuda
    except ImportError as exc:
        if _not_installed(exc, "pycuda"):
            return {"status": "not_installed", "message": "pycuda is not installed"}
        if "libcuda.so" in str(exc) or "nvcuda" in str(exc):
            return {"status": "no_driver", "message": f"the NVIDIA driver library is missing: {exc}"}
        return {"status": "broken", "message": f"pycuda is installed but cannot be imported: {exc}"}
    except OSError as exc:
        return {"status": "no_driver", "message": f"the NVIDIA driver library cannot be loaded: {exc}"}
    try:
        cuda.init()
    except Exception as exc:  # pycuda.driver.Error subclasses; RuntimeError = CUDA_ERROR_NO_DEVICE
        text = str(exc)
        if "no CUDA-capable device" in text or "NO_DEVICE" in text:
            return {"status": "no_driver", "message": f"the NVIDIA driver sees no CUDA-capable device: {text}"}
        return {"status": "broken", "message": f"{type(exc).__name__}: {text}"}
    result: dict = {"devices": []}
    try:
        result["driver_version"] = int(cuda.get_driver_version())
    except Exception:
        result["driver_version"] = None
    try:
        result["built_against"] = ".".join(str(part) for part in cuda.get_version())
    except Exception:
        result["built_against"] = None
    try:
        count = int(cuda.Device.count())
        for index in range(count):
            device = cuda.Device(index)
            major, minor = device.compute_capability()
            try:
                bus = device.pci_bus_id()
            except Exception:
                bus = None
            result["devices"].append({"index": index, "name": str(device.name()).strip(),
                                      "compute_capability": f"{major}.{minor}",
                                      "total_memory_bytes": int(device.total_memory()), "pci_bus_id": bus})
    except Exception as exc:
        result.update(status="broken", message=f"{type(exc).__name__}: {exc}")
        return result
    if result["devices"]:
        result.update(status="present", message=f"{count} CUDA device(s)")
    else:
        result.update(status="no_driver", message="the NVIDIA driver reports 0 CUDA devices")
    return result


def main(argv: list[str]) -> int:
    backend = argv[1] if len(argv) > 1 else ""
    probes = {"opencl": probe_opencl, "cuda": probe_cuda}
    if backend not in probes:
        sys.stderr.write("usage: _device_probe.py opencl|cuda\n")
        return 2
    try:
        result = probes[backend]()
    except Exception as exc:  # never a traceback: the parent reports it as a broken probe
        result = {"status": "broken", "message": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
