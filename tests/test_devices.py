"""Device probing: the real PoCL CPU device through pyopencl, and CUDA through a fake `pycuda`.

pycuda cannot be built on this machine (no CUDA toolkit, no NVIDIA driver), so the CUDA tests put
a FAKE `pycuda` package first on the probe subprocess's PYTHONPATH: the outermost boundary, the
same import the real probe does. Everything between (the subprocess, JSON, parsing, timeouts,
routing) is the real code. The OpenCL tests use the real pyopencl + pocl-binary-distribution.
"""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from taotoken_cli import devices
from taotoken_cli.devices import BROKEN, NO_DRIVER, NOT_INSTALLED, PRESENT, probe_backend, probe_devices
from taotoken_cli.routing import candidates, choose


def fake_package(root: Path, name: str, files: dict[str, str]) -> Path:
    """Write a fake package `name` under `root` and return `root` (to prepend to PYTHONPATH)."""
    pkg = root / name
    pkg.mkdir(parents=True, exist_ok=True)
    for filename, body in files.items():
        (pkg / filename).write_text(textwrap.dedent(body), encoding="utf-8")
    return root


def env_with_path(*paths: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(p) for p in paths] + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


FAKE_CUDA_DRIVER_OK = """
class Error(Exception):
    pass

class RuntimeError(Error):
    pass

_NAMES = ["NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 4090"]

def init(flags=0):
    pass

def get_driver_version():
    return 12040

def get_version():
    return (12, 2, 0)

class Device:
    def __init__(self, index):
        self.index = index

    @staticmethod
    def count():
        return len(_NAMES)

    def name(self):
        return _NAMES[self.index]

    def compute_capability(self):
        return (8, 0) if self.index == 0 else (8, 9)

    def total_memory(self):
        return 85899345920 if self.index == 0 else 25757220864

    def pci_bus_id(self):
        return f"0000:{self.index + 1:02x}:00.0"
"""

FAKE_CUDA_NO_LIBCUDA = """
raise ImportError("libcuda.so.1: cannot open shared object file: No such file or directory")
"""

FAKE_CUDA_NO_DEVICE = """
class Error(Exception):
    pass

class RuntimeError(Error):
    pass

def init(flags=0):
    raise RuntimeError("cuInit failed: no CUDA-capable device is detected")
"""


# -- OpenCL: the real PoCL CPU device ---------------------------------------------------------

def test_opencl_finds_the_real_pocl_cpu_device_with_real_attributes():
    report = probe_backend("opencl", timeout_s=60)
    assert report.status == PRESENT, report
    cpus = [d for d in report.opencl_devices if d.type == "CPU"]
    assert cpus, report
    cpu = cpus[0]
    assert cpu.name.strip()
    assert cpu.compute_units is not None and cpu.compute_units >= 1
    assert cpu.global_mem_bytes is not None and cpu.global_mem_bytes > 0
    assert cpu.max_clock_mhz is not None and cpu.max_clock_mhz >= 0
    assert cpu.driver_version
    platform = report.platforms[0]
    assert "pocl" in (platform.name + platform.vendor + platform.version).lower()
    assert platform.version.startswith("OpenCL ")
    assert report.library_version  # pyopencl's version


def test_cpu_route_is_selected_when_no_gpu_exists(tmp_path):
    # Real OpenCL probe (PoCL CPU only); CUDA absent because pycuda is not installed here.
    report = probe_devices(timeout_s=60)
    assert report.cuda.status in (NOT_INSTALLED, NO_DRIVER)
    assert report.opencl.status == PRESENT
    routes = {"cuda": "gpu-a100-qwen25-72b-fp16", "gpu": "gpu-generic", "cpu": "cpu-llama3-8b-int8"}
    choice = choose(routes, report, "fallback-model")
    assert choice.model == "cpu-llama3-8b-int8"
    assert choice.route == "cpu" and choice.source == "auto"
    assert "no GPU found" in choice.reason and choice.device is not None
    assert choice.device.detail["backend"] == "opencl"
    assert choice.device.detail["compute_units"] >= 1


def test_opencl_not_installed_names_the_extra(tmp_path):
    # A fake `pyopencl` raising exactly what Python raises for a missing package shadows the real one.
    root = fake_package(tmp_path / "fake", "pyopencl", {
        "__init__.py": "raise ModuleNotFoundError(\"No module named 'pyopencl'\", name='pyopencl')\n"})
    report = probe_backend("opencl", timeout_s=60, env=env_with_path(root))
    assert report.status == NOT_INSTALLED
    assert "pip install 'taotoken[opencl]'" in report.fix
    assert "taotoken[pocl]" in report.fix


def test_opencl_without_platform_is_no_driver(tmp_path):
    root = fake_package(tmp_path / "fake", "pyopencl", {"__init__.py": """
        class LogicError(Exception):
            pass

        def get_platforms():
            raise LogicError("clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR")
        """})
    report = probe_backend("opencl", timeout_s=60, env=env_with_path(root))
    assert report.status == NO_DRIVER
    assert "PLATFORM_NOT_FOUND_KHR" in report.message
    assert "ICD" in report.fix


def test_hanging_probe_is_killed_at_its_timeout(tmp_path):
    pidfile = tmp_path / "probe.pid"
    root = fake_package(tmp_path / "fake", "pyopencl", {"__init__.py": f"""
        import os, time
        with open({str(pidfile)!r}, "w") as handle:
            handle.write(str(os.getpid()))

        def get_platforms():
            time.sleep(600)
        """})
    started = time.monotonic()
    report = probe_backend("opencl", timeout_s=1.5, env=env_with_path(root))
    elapsed = time.monotonic() - started
    assert report.status == BROKEN and report.failure == "timeout"
    assert "killed" in report.message and "1.5 s" in report.message
    assert elapsed < 10
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_crashing_probe_is_reported_as_crashed(tmp_path):
    root = fake_package(tmp_path / "fake", "pyopencl", {"__init__.py": """
        import os, signal
        os.kill(os.getpid(), signal.SIGSEGV)
        """})
    report = probe_backend("opencl", timeout_s=30, env=env_with_path(root))
    assert report.status == BROKEN and report.failure == "crashed"
    assert "SIGSEGV" in report.message


# -- CUDA: fake pycuda at the import boundary (no toolkit or driver on this machine) -------------

def test_cuda_present_gpu_with_attributes_is_preferred(tmp_path):
    """FAKE pycuda (see module docstring): two GPUs with attributes, as pycuda.driver reports them."""
    root = fake_package(tmp_path / "fake", "pycuda", {"__init__.py": "", "driver.py": FAKE_CUDA_DRIVER_OK})
    report = probe_devices(timeout_s=60, env=env_with_path(root))
    assert report.cuda.status == PRESENT
    first, second = report.cuda.cuda_devices
    assert (first.name, first.compute_capability, first.total_memory_bytes) == (
        "NVIDIA A100-SXM4-80GB", "8.0", 85899345920)
    assert second.compute_capability == "8.9" and second.pci_bus_id == "0000:02:00.0"
    assert report.cuda.driver_version == "12.4" and report.cuda.library_version == "12.2.0"
    # The real PoCL CPU is still there, but the CUDA GPU wins.
    assert [c.kind for c in candidates(report)][:2] == ["cuda", "cuda"]
    choice = choose({"cpu": "cpu-m", "nvidia": "nv-m", "cuda": "cuda-m"}, report, None)
    assert (choice.model, choice.route) == ("cuda-m", "cuda")
    assert "NVIDIA A100-SXM4-80GB" in choice.reason
    # Without a cuda route the vendor route is next, then gpu.
    assert choose({"cpu": "c", "nvidia": "nv-m", "gpu": "g"}, report, None).model == "nv-m"
    assert choose({"cpu": "c", "gpu": "g"}, report, None).model == "g"


def test_cuda_missing_libcuda_is_no_driver(tmp_path):
    """FAKE pycuda: `import pycuda.driver` raises the ImportError a machine without libcuda.so.1 gives."""
    root = fake_package(tmp_path / "fake", "pycuda", {"__init__.py": "", "driver.py": FAKE_CUDA_NO_LIBCUDA})
    report = probe_backend("cuda", timeout_s=60, env=env_with_path(root))
    assert report.status == NO_DRIVER
    assert "libcuda.so.1" in report.message
    assert "NVIDIA driver" in report.fix


def test_cuda_init_failure_is_no_driver(tmp_path):
    """FAKE pycuda: cuda.init() raises pycuda's RuntimeError for CUDA_ERROR_NO_DEVICE."""
    root = fake_package(tmp_path / "fake", "pycuda", {"__init__.py": "", "driver.py": FAKE_CUDA_NO_DEVICE})
    report = probe_backend("cuda", timeout_s=60, env=env_with_path(root))
    assert report.status == NO_DRIVER
    assert "cuInit failed: no CUDA-capable device" in report.message


def test_cuda_not_installed_names_the_extra():
    report = probe_backend("cuda", timeout_s=60)  # pycuda is really not installed in this venv
    assert report.status == NOT_INSTALLED
    assert "pip install 'taotoken[cuda]'" in report.fix


# -- selection variables ------------------------------------------------------------------------

def test_selection_variables_are_reported_and_sycl_filter_translated():
    notes = {n.name: n for n in devices.selection_env_notes({
        "CUDA_VISIBLE_DEVICES": "", "ONEAPI_DEVICE_SELECTOR": "level_zero:gpu",
        "SYCL_DEVICE_FILTER": "level_zero:gpu:0,opencl:cpu"})}
    assert notes["CUDA_VISIBLE_DEVICES"].level == "warning" and "hides every GPU" in notes["CUDA_VISIBLE_DEVICES"].note
    assert notes["ONEAPI_DEVICE_SELECTOR"].value == "level_zero:gpu"
    legacy = notes["SYCL_DEVICE_FILTER"]
    assert legacy.level == "warning" and "deprecated" in legacy.note and "removed" in legacy.note
    assert "ONEAPI_DEVICE_SELECTOR='level_zero:gpu;opencl:cpu'" in legacy.note
    assert "SYCL_DEVICE_FILTER" not in {n.name for n in devices.selection_env_notes({})}


@pytest.mark.parametrize(("legacy", "selector"), [
    ("gpu", "*:gpu"),
    ("opencl", "opencl:*"),
    ("ext_oneapi_cuda:gpu", "cuda:gpu"),
    ("level_zero:1", "level_zero:1"),
    ("host,opencl:acc", "opencl:fpga"),
    ("host", "*:*"),
])
def test_sycl_filter_to_selector(legacy, selector):
    assert devices.sycl_filter_to_selector(legacy) == selector
