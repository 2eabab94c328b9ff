"""Device probing: OpenCL through the real pyopencl and PoCL, CUDA through a fake `pycuda`.

The OpenCL tests use the real pyopencl + pocl-binary-distribution where they are installed (the test
extra) and skip, saying so, where they are not. Tests that need "a machine without GPUs" get one from
`cpu_only_env` (tests/conftest.py), so they hold on a GPU machine too. pycuda cannot be built on a
machine without the CUDA toolkit, so the pycuda tests put a FAKE `pycuda` package first on the probe
subprocess's PYTHONPATH: the outermost boundary, the same import the real probe does. Everything
between (the subprocess, JSON, parsing, timeouts, routing) is the real code. The CUDA driver API
(ctypes, without pycuda) is tested against a stand-in libcuda in test_devices_driver.py.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from taotoken_cli.core.devices.probe import (
    BROKEN,
    NO_DEVICE,
    NO_DRIVER,
    NOT_INSTALLED,
    PRESENT,
    probe_backend,
    probe_devices,
)
from taotoken_cli.core.devices.routing import candidates, choose
from taotoken_cli.core.devices.selection import selection_env_notes, sycl_filter_to_selector, visible_devices
from tests.conftest import python_path
from tests.timing import assert_within, fastest_s, timed


def fake_package(root: Path, name: str, files: dict[str, str]) -> Path:
    """Write a fake package `name` under `root` and return `root` (to prepend to PYTHONPATH)."""
    pkg = root / name
    pkg.mkdir(parents=True, exist_ok=True)
    for filename, body in files.items():
        (pkg / filename).write_text(textwrap.dedent(body), encoding="utf-8")
    return root


def env_with_path(*paths: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": python_path(*paths), **extra}


FAKE_CUDA_DRIVER_OK = """
class Error(Exception):
    pass

class RuntimeError(Error):
    pass

class device_attribute:
    MULTIPROCESSOR_COUNT = 16
    CLOCK_RATE = 13

_NAMES = ["NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 4090"]
_ATTRIBUTES = [{16: 108, 13: 1410000}, {16: 128, 13: 2520000}]

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

    def get_attribute(self, attribute):
        return _ATTRIBUTES[self.index][attribute]
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

# What pyopencl itself says about each device, read in a subprocess under the same environment as the probe.
_OPENCL_FACTS = """
import json, pyopencl as cl
print(json.dumps([[d.name, d.max_compute_units, d.global_mem_size, d.max_clock_frequency]
                  for p in cl.get_platforms() for d in p.get_devices()]))
"""


def test_opencl_finds_the_real_pocl_cpu_device_with_real_attributes(pocl_cpu, cpu_only_env):
    import json
    import subprocess
    import sys

    platform = next(p for p in pocl_cpu.platforms if "portable computing" in p.name.lower() or "pocl" in p.name.lower())
    cpu = next(d for d in platform.devices if d.type == "CPU")
    assert cpu.name.strip()
    # the probe's figures are the device's own, as pyopencl reads them (a clock of 0 is what PoCL reports where the
    # OS does not say; it is then 0 in both)
    facts = subprocess.run([sys.executable, "-c", _OPENCL_FACTS], capture_output=True, text=True, timeout=120,
                           env={**os.environ, **cpu_only_env}, check=True).stdout
    name, units, memory, clock = next(f for f in json.loads(facts) if f[0] == cpu.name)
    assert (cpu.compute_units, cpu.global_mem_bytes, cpu.max_clock_mhz) == (units, memory, clock)
    assert cpu.compute_units >= 1 and cpu.global_mem_bytes > 0
    assert cpu.driver_version
    assert "pocl" in (platform.name + platform.vendor + platform.version).lower()
    assert platform.version.startswith("OpenCL ")
    assert pocl_cpu.library_version and pocl_cpu.source == "pyopencl"


def test_cpu_route_is_selected_when_no_gpu_exists(cpu_only_env, pocl_cpu):
    # The real OpenCL probe (PoCL CPU only); no pycuda and no NVIDIA driver library (cpu_only_env).
    report = probe_devices(timeout_s=60, env={**os.environ, **cpu_only_env})
    assert report.cuda.status == NO_DRIVER and report.cuda.source is None
    assert "no NVIDIA driver library" in report.cuda.message and "pycuda is not installed either" in report.cuda.message
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
    # the reference beside it: a probe whose pyopencl answers at once (a child started, imported, reaped)
    answers = fake_package(tmp_path / "answers", "pyopencl", {"__init__.py": "def get_platforms():\n    return []\n"})
    reference = fastest_s(lambda: probe_backend("opencl", timeout_s=60, env=env_with_path(answers)))
    report, elapsed = timed(probe_backend, "opencl", timeout_s=1.5, env=env_with_path(root))
    assert report.status == BROKEN and report.failure == "timeout"
    assert "killed" in report.message and "1.5 s" in report.message
    assert_within(elapsed, 1.5, reference)
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
    assert (report.cuda.source, report.cuda.pycuda) == ("pycuda", "present")  # pycuda answers first
    first, second = report.cuda.cuda_devices
    assert (first.name, first.compute_capability, first.total_memory_bytes) == (
        "NVIDIA A100-SXM4-80GB", "8.0", 85899345920)
    assert (first.multiprocessors, first.clock_mhz) == (108, 1410)
    assert second.compute_capability == "8.9" and second.pci_bus_id == "0000:02:00.0"
    assert report.cuda.driver_version == "12.4" and report.cuda.library_version == "12.2.0"
    # Whatever else this machine has (PoCL, an NVIDIA OpenCL platform), the CUDA GPUs come first.
    assert [c.kind for c in candidates(report)][:2] == ["cuda", "cuda"]
    choice = choose({"cpu": "cpu-m", "nvidia": "nv-m", "cuda": "cuda-m"}, report, None)
    assert (choice.model, choice.route) == ("cuda-m", "cuda")
    assert "NVIDIA A100-SXM4-80GB" in choice.reason
    assert choice.device.detail["multiprocessors"] == 108 and choice.device.detail["source"] == "pycuda"
    # Without a cuda route the vendor route is next, then gpu.
    assert choose({"cpu": "c", "nvidia": "nv-m", "gpu": "g"}, report, None).model == "nv-m"
    assert choose({"cpu": "c", "gpu": "g"}, report, None).model == "g"


def test_cuda_missing_libcuda_is_no_driver(tmp_path):
    """FAKE pycuda: `import pycuda.driver` raises the ImportError a machine without libcuda.so.1 gives; the
    driver API then finds no library either (TAOTOKEN_LIBCUDA names one that does not exist)."""
    root = fake_package(tmp_path / "fake", "pycuda", {"__init__.py": "", "driver.py": FAKE_CUDA_NO_LIBCUDA})
    report = probe_backend("cuda", timeout_s=60, env=env_with_path(
        root, TAOTOKEN_LIBCUDA=str(tmp_path / "none/libcuda.so.1")))
    assert report.status == NO_DRIVER and report.pycuda == BROKEN and report.source is None
    assert "no NVIDIA driver library" in report.message and "libcuda.so.1" in report.message
    assert any("pycuda is installed but cannot be imported: libcuda.so.1" in note for note in report.notes)
    assert "NVIDIA driver" in report.fix


def test_cuda_init_failure_is_no_driver(tmp_path):
    """FAKE pycuda: cuda.init() raises pycuda's RuntimeError for CUDA_ERROR_NO_DEVICE."""
    root = fake_package(tmp_path / "fake", "pycuda", {"__init__.py": "", "driver.py": FAKE_CUDA_NO_DEVICE})
    report = probe_backend("cuda", timeout_s=60, env=env_with_path(root))
    assert report.status == NO_DRIVER and report.error_name == NO_DEVICE and report.source == "pycuda"
    assert "cuInit failed: no CUDA-capable device" in report.message


def test_neither_pycuda_nor_a_driver_library_is_no_driver(cpu_only_env):
    report = probe_backend("cuda", timeout_s=60, env={**os.environ, **cpu_only_env})
    assert (report.status, report.pycuda, report.source) == (NO_DRIVER, NOT_INSTALLED, None)
    assert report.message.startswith("no NVIDIA driver library (")
    assert "cannot open shared object file" in report.message, report.message  # the loader's own reason
    assert report.message.endswith("; pycuda is not installed either")
    assert "install the NVIDIA driver" in report.fix and "TAOTOKEN_LIBCUDA" in report.fix


# -- selection variables ------------------------------------------------------------------------

def test_selection_variables_are_reported_and_sycl_filter_translated():
    notes = {n.name: n for n in selection_env_notes({
        "CUDA_VISIBLE_DEVICES": "", "ONEAPI_DEVICE_SELECTOR": "level_zero:gpu",
        "SYCL_DEVICE_FILTER": "level_zero:gpu:0,opencl:cpu"})}
    assert notes["CUDA_VISIBLE_DEVICES"].level == "warning" and "hides every GPU" in notes["CUDA_VISIBLE_DEVICES"].note
    assert notes["ONEAPI_DEVICE_SELECTOR"].value == "level_zero:gpu"
    legacy = notes["SYCL_DEVICE_FILTER"]
    assert legacy.level == "warning" and "deprecated" in legacy.note and "removed" in legacy.note
    assert "ONEAPI_DEVICE_SELECTOR='level_zero:gpu;opencl:cpu'" in legacy.note
    assert "SYCL_DEVICE_FILTER" not in {n.name for n in selection_env_notes({})}


@pytest.mark.parametrize(("legacy", "selector"), [
    ("gpu", "*:gpu"),
    ("opencl", "opencl:*"),
    ("ext_oneapi_cuda:gpu", "cuda:gpu"),
    ("level_zero:1", "level_zero:1"),
    ("host,opencl:acc", "opencl:fpga"),
    ("host", "*:*"),
])
def test_sycl_filter_to_selector(legacy, selector):
    assert sycl_filter_to_selector(legacy) == selector


UUIDS = ["GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", "GPU-11223344-5566-7788-99aa-bbccddeeff00"]


@pytest.mark.parametrize(("value", "all_uuids", "seen", "missing", "used"), [
    ("1", UUIDS, 1, None, ["1"]),
    ("5", UUIDS[:1], 0, 0, []),  # the one-GPU machine
    ("0,5,1", UUIDS, 1, 1, ["0"]),  # the driver stops at the first entry that matches nothing
    ("GPU-1122", UUIDS, 1, None, ["GPU-1122"]),  # a unique UUID prefix is enough
    ("GPU-dead,0", UUIDS, 0, 0, []),
    ("MIG-4a2c", UUIDS, 1, None, ["MIG-4a2c"]),  # MIG instances are not enumerated: CUDA's count decides
    ("MIG-4a2c", UUIDS, 0, 0, []),
    ("0,1,7", None, 2, 2, ["0", "1"]),  # without the driver's full list: what CUDA saw decides
    ("abc", UUIDS, 0, 0, []),
    ("-1", None, None, 0, []),
])
def test_visible_devices_entries_are_checked_like_the_driver_does(value, all_uuids, seen, missing, used):
    visible = visible_devices(value, all_uuids=all_uuids, visible_count=seen)
    assert (visible.missing, visible.used, visible.known) == (missing, used, True)


def test_visible_devices_notes_name_the_entry_that_matches_no_device():
    def note(value, all_uuids, seen):
        return selection_env_notes({"CUDA_VISIBLE_DEVICES": value},
                                   visible_devices(value, all_uuids=all_uuids, visible_count=seen))[0]

    five = note("5", UUIDS[:1], 0)
    assert five.level == "warning"
    assert five.note.startswith("there is no device 5 (the driver has 1 GPU, index 0): CUDA sees no GPU")
    partial = note("0,5,1", UUIDS, 1)
    assert partial.level == "warning" and "there is no device 5 (the driver has 2 GPUs, indices 0-1)" in partial.note
    assert "CUDA sees only 0, renumbered from 0" in partial.note
    uuid = note("GPU-dead", UUIDS, 0)
    assert uuid.level == "warning" and "no device has the UUID GPU-dead" in uuid.note
    fine = note("1", UUIDS, 1)
    assert fine.level == "info" and fine.note == "CUDA sees only device(s) 1, renumbered from 0 (the driver has 2 " \
        "GPUs, indices 0-1)"
    unknown = note("3", None, None)  # no driver to ask: nothing is claimed
    assert unknown.level == "info" and unknown.note == "CUDA sees only device(s) 3, renumbered from 0"
