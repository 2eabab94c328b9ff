"""Device probe that runs in its own interpreter: `python backends.py opencl|cuda|cuda-driver`.

It is started by `taotoken_cli.core.devices.probe` as a subprocess (a broken driver can hang or crash the
interpreter) and prints one JSON object on stdout. Standard library only, no imports from the
package, no contexts created and no memory allocated on any device: it only reads attributes.

`cuda` asks pycuda first and, when pycuda cannot be imported, the CUDA driver API itself through
ctypes (`libcuda.so.1`, `nvcuda.dll`; `$TAOTOKEN_LIBCUDA` names another file). `cuda-driver` asks
only the driver API.

Output: {"status": "present"|"not_installed"|"no_driver"|"broken", "message": str, ...data}

Messages are English; beside each, `<field>_i18n` holds its template and arguments, so the parent translates the
template (taotoken_cli.core.devices.probe.probe_message)
and puts in the arguments — the driver's own words — as they came.
"""

from __future__ import annotations

import json
import os
import sys

# Run by path, Python puts this file's directory (the package) first on sys.path; its modules
# (config.py, output.py, ...) must not shadow anything a GPU library imports.
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]


def N_(text: str) -> str:  # noqa: N802 - marks a template for the catalogue (scripts/i18n.py extracts it)
    return text


def said(field: str, template: str, **args) -> dict:
    """A message `field` (message, pycuda_message): the English text, and its template and arguments for the
    parent to translate."""
    return {field: template.format(**args), f"{field}_i18n": {"text": template, "args": args}}


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
            return {"status": "not_installed", **said("message", N_("pyopencl is not installed"))}
        if "libOpenCL" in str(exc):
            return {"status": "no_driver",
                    **said("message", N_("the OpenCL ICD loader cannot be loaded: {error}"), error=str(exc))}
        return {"status": "broken",
                **said("message", N_("pyopencl is installed but cannot be imported: {error}"), error=str(exc))}
    try:
        platforms = cl.get_platforms()
    except Exception as exc:  # pyopencl.LogicError / Error / RuntimeError (PR #826)
        text = f"{type(exc).__name__}: {exc}"
        if "PLATFORM_NOT_FOUND_KHR" in text or "no CL platforms" in text:
            return {"source": "pyopencl", "status": "no_driver",
                    **said("message", N_("no OpenCL platform (no ICD driver installed): {error}"), error=text)}
        return {"source": "pyopencl", "status": "broken",
                **said("message", N_("{call} failed: {error}"), call="clGetPlatformIDs", error=text)}
    result: dict = {"source": "pyopencl", "pyopencl_version": _text(_attr(cl, "VERSION_TEXT")), "platforms": []}
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
        result.update(status="present", **said("message", N_("{count} OpenCL device(s) on {platforms} platform(s)"),
                                               count=count, platforms=len(platforms)))
    elif errors:
        result.update(status="broken", message="; ".join(errors))  # the drivers' words
    elif platforms:
        result.update(status="no_driver", **said("message", N_("{platforms} OpenCL platform(s) but no devices"),
                                                 platforms=len(platforms)))
    else:
        result.update(status="no_driver", **said("message", N_("no OpenCL platform (no ICD driver installed)")))
    return result


# -- CUDA -------------------------------------------------------------------------------------
# pycuda answers first; without it the driver API itself is read through ctypes (libcuda.so.1 is
# what the NVIDIA driver installs; CUDA_VISIBLE_DEVICES is applied by the driver at cuInit).
CUDA_ERROR_NO_DEVICE = 100
NO_DEVICE = "CUDA_ERROR_NO_DEVICE"
# CUdevice_attribute values (cuda.h)
_ATTRIBUTES = {"cc_major": 75, "cc_minor": 76, "multiprocessors": 16, "clock_khz": 13,
               "pci_bus": 33, "pci_device": 34, "pci_domain": 50}
LIBCUDA_OVERRIDE = "TAOTOKEN_LIBCUDA"  # a path to load instead of the system's (same name in devices.py)


def libcuda_name() -> str:
    override = os.environ.get(LIBCUDA_OVERRIDE)
    if override:
        return override
    if sys.platform == "win32":
        return "nvcuda.dll"
    return "libcuda.dylib" if sys.platform == "darwin" else "libcuda.so.1"


class CudaError(Exception):
    def __init__(self, call: str, code: int, name: str | None, text: str | None) -> None:
        self.call, self.code, self.name = call, code, name
        # the driver's words: its error's name (or number) and description
        self.error = (f"{name} ({code})" if name else f"CUDA error {code}") + (f": {text}" if text else "")
        super().__init__(f"{call} failed: {self.error}")

    def said(self) -> dict:
        return said("message", N_("{call} failed: {error}"), call=self.call, error=self.error)


class DriverAPI:
    """The handful of driver entry points the probe reads; no context is created."""

    def __init__(self, path: str) -> None:
        import ctypes

        self.ctypes = ctypes
        loader = ctypes.WinDLL if sys.platform == "win32" else ctypes.CDLL  # CUDAAPI is __stdcall on Windows
        self.lib = loader(path)
        c_int, ptr = ctypes.c_int, ctypes.POINTER
        self.signatures = {
            "cuInit": [ctypes.c_uint], "cuDriverGetVersion": [ptr(c_int)], "cuDeviceGetCount": [ptr(c_int)],
            "cuDeviceGet": [ptr(c_int), c_int], "cuDeviceGetName": [ctypes.c_char_p, c_int, c_int],
            "cuDeviceTotalMem_v2": [ptr(ctypes.c_size_t), c_int], "cuDeviceGetAttribute": [ptr(c_int), c_int, c_int],
            "cuDeviceGetUuid": [ctypes.c_char_p, c_int], "cuGetErrorName": [c_int, ptr(ctypes.c_char_p)],
            "cuGetErrorString": [c_int, ptr(ctypes.c_char_p)]}

    def function(self, name: str):
        fn = getattr(self.lib, name)  # AttributeError: not a CUDA driver library
        fn.restype, fn.argtypes = self.ctypes.c_int, self.signatures[name]
        return fn

    def check(self, name: str, *args) -> None:
        code = self.function(name)(*args)
        if code:
            raise CudaError(name, code, self.error_text("cuGetErrorName", code),
                            self.error_text("cuGetErrorString", code))

    def error_text(self, name: str, code: int) -> str | None:
        text = self.ctypes.c_char_p()
        try:
            if self.function(name)(code, self.ctypes.byref(text)) or not text.value:
                return None
        except AttributeError:
            return None
        return text.value.decode("utf-8", "replace")

    def out_int(self, name: str, *args) -> int:
        value = self.ctypes.c_int()
        self.check(name, self.ctypes.byref(value), *args)
        return value.value

    def device(self, ordinal: int) -> dict:
        ctypes = self.ctypes
        handle = self.out_int("cuDeviceGet", ordinal)
        name = ctypes.create_string_buffer(256)
        self.check("cuDeviceGetName", name, len(name), handle)
        memory = ctypes.c_size_t()
        self.check("cuDeviceTotalMem_v2", ctypes.byref(memory), handle)
        attrs: dict = {}
        for key, attribute in _ATTRIBUTES.items():
            try:
                attrs[key] = self.out_int("cuDeviceGetAttribute", attribute, handle)
            except CudaError:  # an attribute this driver does not know
                attrs[key] = None
        uuid = None
        raw = ctypes.create_string_buffer(16)
        try:
            self.check("cuDeviceGetUuid", raw, handle)
            h = raw.raw.hex()
            uuid = f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        except (AttributeError, CudaError):  # before CUDA 9.2
            pass
        bus = None
        if attrs["pci_bus"] is not None:
            bus = f"{attrs['pci_domain'] or 0:04x}:{attrs['pci_bus']:02x}:{attrs['pci_device'] or 0:02x}.0"
        return cuda_device(ordinal, name.value.decode("utf-8", "replace"), attrs["cc_major"], attrs["cc_minor"],
                           memory.value, bus, attrs["multiprocessors"], attrs["clock_khz"], uuid)


def cuda_device(index: int, name: str, major, minor, memory: int, bus, sms, clock_khz, uuid=None) -> dict:
    return {"index": index, "name": name.strip(),
            "compute_capability": f"{major}.{minor}" if major is not None else "?",
            "total_memory_bytes": int(memory), "pci_bus_id": bus, "multiprocessors": sms,
            "clock_mhz": round(clock_khz / 1000) if clock_khz else None, "uuid": uuid}


def probe_cuda_driver(pycuda_note: dict | None = None) -> dict:
    """The driver API through ctypes: cuInit, the version, then each device's name, memory and attributes."""
    path = libcuda_name()
    result: dict = {"source": "driver_api", "driver_library": path, **(pycuda_note or {})}
    try:
        driver = DriverAPI(path)
    except OSError as exc:
        template = (N_("no NVIDIA driver library ({error}); pycuda is not installed either")
                    if result.get("pycuda") == "not_installed" else N_("no NVIDIA driver library ({error})"))
        return {**result, "source": None, "status": "no_driver", **said("message", template, error=str(exc))}
    try:
        try:
            result["driver_version"] = driver.out_int("cuDriverGetVersion")
        except CudaError:
            result["driver_version"] = None
        driver.check("cuInit", 0)
        count = driver.out_int("cuDeviceGetCount")
        result["devices"] = [driver.device(index) for index in range(count)]
    except AttributeError as exc:
        return {**result, "status": "broken",
                **said("message", N_("{library} is not a CUDA driver library: {error}"), library=path, error=str(exc))}
    except CudaError as exc:
        result.update(error_name=exc.name, error_code=exc.code)
        if exc.code == CUDA_ERROR_NO_DEVICE:
            return {**result, "status": "no_driver",
                    **said("message", N_("the NVIDIA driver sees no CUDA-capable device ({error})"),
                           error=exc.name or NO_DEVICE)}
        return {**result, "status": "broken", **exc.said()}
    if not count:
        return {**result, "status": "no_driver", **said("message", N_("the NVIDIA driver reports 0 CUDA devices"))}
    return {**result, "status": "present", **said("message", N_("{count} CUDA device(s)"), count=count)}


def probe_cuda() -> dict:
    try:
        import pycuda.driver as cuda
    except ImportError as exc:
        if _not_installed(exc, "pycuda"):
            note = {"pycuda": "not_installed", **said("pycuda_message", N_("pycuda is not installed"))}
        else:
            note = {"pycuda": "broken", **said("pycuda_message", N_("pycuda is installed but cannot be imported: "
                                                                    "{error}"), error=str(exc))}
        return probe_cuda_driver(note)
    except OSError as exc:
        return probe_cuda_driver({"pycuda": "broken", **said("pycuda_message", N_("pycuda cannot load the driver "
                                                                                  "library: {error}"), error=str(exc))})
    result: dict = {"source": "pycuda", "pycuda": "present", "devices": []}
    try:
        cuda.init()
    except Exception as exc:  # pycuda.driver.Error subclasses; RuntimeError = CUDA_ERROR_NO_DEVICE
        text = str(exc)
        if "no CUDA-capable device" in text or "NO_DEVICE" in text:
            return {**result, "error_name": NO_DEVICE, "error_code": CUDA_ERROR_NO_DEVICE, "status": "no_driver",
                    **said("message", N_("the NVIDIA driver sees no CUDA-capable device: {error}"), error=text)}
        return {**result, "status": "broken", "message": f"{type(exc).__name__}: {text}"}
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
            result["devices"].append(cuda_device(
                index, str(device.name()), major, minor, int(device.total_memory()), _call(device.pci_bus_id),
                _pycuda_attribute(cuda, device, "MULTIPROCESSOR_COUNT"),
                _pycuda_attribute(cuda, device, "CLOCK_RATE")))
    except Exception as exc:
        result.update(status="broken", message=f"{type(exc).__name__}: {exc}")
        return result
    if result["devices"]:
        result.update(status="present", **said("message", N_("{count} CUDA device(s)"), count=count))
    else:
        result.update(status="no_driver", **said("message", N_("the NVIDIA driver reports 0 CUDA devices")))
    return result


def _call(method):
    try:
        return method()
    except Exception:
        return None


def _pycuda_attribute(cuda, device, name: str):
    try:
        return int(device.get_attribute(getattr(cuda.device_attribute, name)))
    except Exception:
        return None


def main(argv: list[str]) -> int:
    backend = argv[1] if len(argv) > 1 else ""
    probes = {"opencl": probe_opencl, "cuda": probe_cuda, "cuda-driver": probe_cuda_driver}
    if backend not in probes:
        sys.stderr.write("usage: backends.py opencl|cuda|cuda-driver\n")
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
