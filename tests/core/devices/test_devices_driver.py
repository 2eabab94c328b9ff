"""CUDA through the driver API (ctypes), without pycuda, against a stand-in NVIDIA driver.

No NVIDIA driver can exist on a test machine without a GPU, so the driver is the one thing faked, at
the outermost boundary: `libcuda_standin` (tests/conftest.py) compiles tests/data/fake_libcuda.c into
a real shared library with the driver API's signatures and error codes, which honours
CUDA_VISIBLE_DEVICES at cuInit like the real driver. The probe loads it through `TAOTOKEN_LIBCUDA`
(the documented override) with real ctypes calls in its real subprocess; pycuda is hidden in every
test (a GPU machine may have it, and it would answer first), so the driver API is what answers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from taotoken_cli.core.devices.probe import (
    BROKEN,
    NO_DEVICE,
    NO_DRIVER,
    PRESENT,
    backend_to_dict,
    probe_backend,
    probe_devices,
)
from taotoken_cli.core.devices.routing import choose
from tests.conftest import flat, hidden_package, python_path
from tests.timing import assert_within, fastest_s, timed

H200_UUID = "GPU-00112233-4455-6677-8899-aabbccddee00"
A100_UUID = "GPU-01122334-4556-6778-899a-abbccddeef01"


@pytest.fixture
def driver_env(libcuda_standin: Path, cpu_only_env: dict[str, str]):
    """The environment of a machine whose NVIDIA driver is the stand-in, pycuda not installed."""

    def make(**settings: str) -> dict[str, str]:
        env = {**os.environ, **cpu_only_env, "TAOTOKEN_LIBCUDA": str(libcuda_standin), **settings}
        for name in ("FAKE_CUDA_DEVICES", "FAKE_CUDA_INIT_ERROR", "FAKE_CUDA_HANG", "CUDA_VISIBLE_DEVICES"):
            if name not in settings:
                env.pop(name, None)
        return env

    return make


def test_devices_and_their_attributes_come_from_the_driver_api(driver_env):
    report = probe_backend("cuda", timeout_s=60, env=driver_env(FAKE_CUDA_DEVICES="2"))
    assert report.status == PRESENT and report.message == "2 CUDA device(s)"
    assert (report.source, report.pycuda) == ("driver_api", "not_installed")
    assert report.driver_library.endswith("libcuda.so.1") and report.driver_version == "12.4"
    h200, a100 = report.cuda_devices
    assert (h200.index, h200.name, h200.compute_capability, h200.total_memory_bytes) == (
        0, "NVIDIA H200", "9.0", 150108897280)
    assert (h200.multiprocessors, h200.clock_mhz, h200.pci_bus_id, h200.uuid) == (132, 1980, "0000:18:00.0", H200_UUID)
    assert (a100.name, a100.compute_capability, a100.multiprocessors, a100.clock_mhz, a100.pci_bus_id) == (
        "NVIDIA A100-SXM4-80GB", "8.0", 108, 1410, "0000:2a:00.0")
    # pycuda is optional now; the note says what building it needs and the ways that work.
    (note,) = report.notes
    assert note.startswith("pycuda is not installed (optional: the driver API answered)")
    for part in ("nvcc on PATH (or CUDA_ROOT)", "C++ compiler", "Python headers"):
        assert part in note
    from taotoken_cli.core.platform.installer import add_package

    assert note.endswith(f"then: {add_package('pycuda')}")  # the command for the installer taotoken runs under
    assert report.fix is None


def test_the_route_follows_the_driver_api_gpus(driver_env):
    report = probe_devices(timeout_s=60, env=driver_env())
    choice = choose({"cuda": "gpu-model", "cpu": "cpu-model"}, report, None)
    assert (choice.model, choice.route) == ("gpu-model", "cuda")
    assert choice.device.detail["source"] == "driver_api" and choice.device.detail["multiprocessors"] == 132


def test_no_device_is_no_driver_with_the_cuda_error_name(driver_env):
    report = probe_backend("cuda", timeout_s=60, env=driver_env(FAKE_CUDA_DEVICES="0"))
    assert (report.status, report.error_name, report.source) == (NO_DRIVER, NO_DEVICE, "driver_api")
    assert report.message == "the NVIDIA driver sees no CUDA-capable device (CUDA_ERROR_NO_DEVICE)"
    assert report.hidden_by is None and "install the NVIDIA driver" in report.fix


@pytest.mark.parametrize(("code", "name", "fix"), [
    ("803", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "reboot after a driver upgrade"),
    ("34", "CUDA_ERROR_STUB_LIBRARY", "remove the toolkit's lib64/stubs directory from LD_LIBRARY_PATH"),
    ("999", "CUDA_ERROR_UNKNOWN", "run nvidia-smi"),
])
def test_a_driver_error_is_broken_and_named(driver_env, code, name, fix):
    report = probe_backend("cuda", timeout_s=60, env=driver_env(FAKE_CUDA_INIT_ERROR=code))
    assert (report.status, report.failure, report.error_name) == (BROKEN, "error", name)
    assert report.message.startswith(f"cuInit failed: {name} ({code}): ")
    assert fix in report.fix
    if "nvidia-smi" in fix:  # the tool is a command of the fix, in --json's fix_step too
        step = backend_to_dict(report)["fix_step"]
        assert step["commands"] == [{"line": "nvidia-smi", "argv": ["nvidia-smi"]}]
        assert step["text"] == backend_to_dict(report)["fix"] == str(report.fix)


def test_an_error_the_driver_cannot_name_keeps_its_number(driver_env):
    report = probe_backend("cuda", timeout_s=60, env=driver_env(FAKE_CUDA_INIT_ERROR="4242"))
    assert report.status == BROKEN and report.error_name is None
    assert report.message == "cuInit failed: CUDA error 4242"


def test_a_library_that_is_no_cuda_driver_is_broken(driver_env, tmp_path, libcuda_standin):
    import shutil
    import subprocess

    other = tmp_path / "libother.so"
    source = tmp_path / "other.c"
    source.write_text("int unrelated(void) { return 0; }\n")
    compiler = next(c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and shutil.which(c))
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(other), str(source)], check=True, timeout=120)
    report = probe_backend("cuda", timeout_s=60, env=driver_env(TAOTOKEN_LIBCUDA=str(other)))
    assert report.status == BROKEN and "is not a CUDA driver library" in report.message


def test_a_hung_driver_is_killed_at_the_timeout(driver_env):
    # the reference beside it: the same probe of a driver that answers at once
    reference = fastest_s(lambda: probe_backend("cuda", timeout_s=60, env=driver_env(FAKE_CUDA_DEVICES="1")))
    report, elapsed = timed(probe_backend, "cuda", timeout_s=1.5, env=driver_env(FAKE_CUDA_HANG="60"))
    assert report.status == BROKEN and report.failure == "timeout"
    assert_within(elapsed, 1.5, reference)


# -- CUDA_VISIBLE_DEVICES, applied by the (stand-in) driver ----------------------------------------------------

def test_empty_visible_devices_hides_the_gpu_and_says_so(driver_env):
    report = probe_devices(timeout_s=60, env=driver_env(CUDA_VISIBLE_DEVICES=""))
    cuda = report.cuda
    assert (cuda.status, cuda.error_name, cuda.hidden_by) == (NO_DRIVER, NO_DEVICE, "CUDA_VISIBLE_DEVICES")
    assert cuda.message.endswith("CUDA_VISIBLE_DEVICES='' hides every GPU (the driver has 1 GPU, index 0)")
    assert [d.uuid for d in cuda.unfiltered_devices] == [H200_UUID]  # asked again without the variable
    assert cuda.fix == "unset CUDA_VISIBLE_DEVICES, or set it to GPUs that exist (e.g. CUDA_VISIBLE_DEVICES=0)"
    note = report.env[0]
    assert (note.name, note.value, note.level) == ("CUDA_VISIBLE_DEVICES", "", "warning")
    assert "hides every GPU from CUDA and from NVIDIA's OpenCL (the driver has 1 GPU, index 0)" in note.note


def test_a_visible_device_that_does_not_exist_is_a_warning(driver_env):
    report = probe_devices(timeout_s=60, env=driver_env(CUDA_VISIBLE_DEVICES="5"))  # a one-GPU machine
    assert report.cuda.status == NO_DRIVER and report.cuda.hidden_by == "CUDA_VISIBLE_DEVICES"
    assert "CUDA_VISIBLE_DEVICES='5': there is no device 5 (the driver has 1 GPU, index 0)" in report.cuda.message
    note = report.env[0]
    assert note.level == "warning"
    assert note.note == ("there is no device 5 (the driver has 1 GPU, index 0): CUDA sees no GPU; unset it or list "
                         "GPUs that exist")


def test_the_driver_stops_at_the_first_unknown_entry(driver_env):
    report = probe_devices(timeout_s=60, env=driver_env(FAKE_CUDA_DEVICES="2", CUDA_VISIBLE_DEVICES="1,5,0"))
    assert report.cuda.status == PRESENT
    assert [(d.index, d.name) for d in report.cuda.cuda_devices] == [(0, "NVIDIA A100-SXM4-80GB")]
    note = report.env[0]
    assert note.level == "warning" and "there is no device 5" in note.note and "CUDA sees only 1," in note.note


def test_a_gpu_chosen_by_uuid_prefix_is_fine(driver_env):
    report = probe_devices(timeout_s=60, env=driver_env(FAKE_CUDA_DEVICES="2", CUDA_VISIBLE_DEVICES="GPU-0112"))
    assert [d.uuid for d in report.cuda.cuda_devices] == [A100_UUID]
    assert report.env[0].level == "info"
    wrong = probe_devices(timeout_s=60, env=driver_env(CUDA_VISIBLE_DEVICES="GPU-ffff"))
    assert wrong.cuda.status == NO_DRIVER and "no device has the UUID GPU-ffff" in wrong.env[0].note


# -- NVIDIA's OpenCL honours CUDA_VISIBLE_DEVICES too ---------------------------------------------------------

NO_PLATFORM_PYOPENCL = """
class LogicError(Exception):
    pass

def get_platforms():
    raise LogicError("clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR")
"""


def nvidia_vendors(tmp_path: Path) -> Path:
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    (vendors / "nvidia.icd").write_text("libnvidia-opencl.so.1\n")
    return vendors


def opencl_without_platforms(tmp_path: Path) -> str:
    """FAKE pyopencl: what the ICD loader answers when its only driver (NVIDIA's) shows no platform."""
    root = tmp_path / "fake"
    (root / "pyopencl").mkdir(parents=True)
    (root / "pyopencl/__init__.py").write_text(NO_PLATFORM_PYOPENCL)
    hidden_package(root, "pycuda")
    return python_path(root)


def test_an_opencl_platform_hidden_by_visible_devices_is_not_called_a_missing_driver(driver_env, tmp_path):
    env = driver_env(CUDA_VISIBLE_DEVICES="", OCL_ICD_VENDORS=str(nvidia_vendors(tmp_path)),
                     PYTHONPATH=opencl_without_platforms(tmp_path))
    opencl = probe_devices(timeout_s=60, env=env).opencl
    assert opencl.status == NO_DRIVER and opencl.hidden_by == "CUDA_VISIBLE_DEVICES"
    assert "no ICD driver installed" not in opencl.message
    assert opencl.message == (f"no OpenCL platform: CUDA_VISIBLE_DEVICES='' hides every GPU (the driver has 1 GPU, "
                              f"index 0), and NVIDIA's OpenCL honours it too (its driver is installed: "
                              f"{tmp_path / 'vendors/nvidia.icd'})")
    assert opencl.fix.startswith("unset CUDA_VISIBLE_DEVICES")
    # Without an NVIDIA ICD the missing platform has nothing to do with the variable.
    plain = probe_devices(timeout_s=60, env={**env, "OCL_ICD_VENDORS": str(tmp_path / "empty")}).opencl
    assert plain.hidden_by is None and "no ICD driver installed" in plain.message and "ICD" in plain.fix


def test_a_present_opencl_notes_the_hidden_nvidia_platform(driver_env, tmp_path, pocl_cpu, cpu_only_env):
    """The real pyopencl and PoCL; the NVIDIA ICD file is listed (whether or not its library exists here, it
    shows no platform with every GPU hidden: on a GPU machine NVIDIA's OpenCL drops it with CUDA_VISIBLE_DEVICES
    empty, as seen on an H200)."""
    vendors = nvidia_vendors(tmp_path)
    for icd in Path(cpu_only_env["OCL_ICD_VENDORS"]).glob("*.icd"):
        (vendors / icd.name).write_bytes(icd.read_bytes())
    report = probe_devices(timeout_s=60, env=driver_env(CUDA_VISIBLE_DEVICES="", OCL_ICD_VENDORS=str(vendors)))
    assert report.opencl.status == PRESENT and report.opencl.hidden_by == "CUDA_VISIBLE_DEVICES"
    assert report.opencl.notes == [f"no NVIDIA OpenCL platform: CUDA_VISIBLE_DEVICES='' hides every GPU (the driver "
                                   f"has 1 GPU, index 0), and NVIDIA's OpenCL honours it too (its driver is "
                                   f"installed: {vendors / 'nvidia.icd'})"]


# -- what users see ---------------------------------------------------------------------------------------------

def test_route_devices_at_80_columns_shows_sms_clock_and_the_source(cli, driver_env):
    env = driver_env(FAKE_CUDA_DEVICES="2")
    env["COLUMNS"] = "80"
    result = cli("route", "devices", env=env).assert_clean()
    assert result.returncode == 0, result.output
    lines = result.stdout.splitlines()
    assert "CUDA    GPU  0: NVIDIA H200" in lines
    assert "             NVIDIA, cc 9.0, 139.8 GiB, 132 SMs, 1980 MHz, bus 0000:18:00.0" in lines
    table = lines[:lines.index("")]
    assert max(len(line) for line in table) <= 80, table
    assert "CUDA ok: 2 CUDA device(s) [via the driver API (" in flat(result.stdout)  # wrapped at 80 too
    assert "libcuda.so.1), driver CUDA 12.4]" in flat(result.stdout)
    assert all(len(line) <= 80 or " " not in line.strip() for line in lines), lines
    wide = cli("route", "devices", env={**env, "COLUMNS": "200"}).stdout.splitlines()
    assert any(line.startswith("CUDA ") and "132" in line and "1980 MHz" in line and "0000:18:00.0" in line
               for line in wide)
    data = json.loads(cli("route", "devices", "--json", env=env).stdout)["backends"]["cuda"]
    assert (data["status"], data["source"], data["pycuda"], data["device_count"]) == (
        "present", "driver_api", "not_installed", 2)
    assert data["cuda_devices"][0]["multiprocessors"] == 132 and data["cuda_devices"][0]["clock_mhz"] == 1980
    assert data["cuda_devices"][0]["uuid"] == H200_UUID


def test_doctor_shows_sms_and_warns_about_a_device_that_does_not_exist(cli, driver_env):
    result = cli("doctor", "--offline", "--check", "devices", env=driver_env()).assert_clean()
    assert "0: NVIDIA H200 (cc 9.0, 132 SMs, 1980 MHz)" in result.stdout
    hidden = cli("doctor", "--offline", "--check", "devices", "--json", env=driver_env(CUDA_VISIBLE_DEVICES="5"))
    checks = {c["id"]: c for c in json.loads(hidden.stdout)["checks"]}
    assert checks["devices.env"]["status"] == "warn"
    assert "there is no device 5 (the driver has 1 GPU, index 0)" in checks["devices.env"]["message"]
    assert checks["devices.cuda"]["status"] == "skipped"
    assert "CUDA_VISIBLE_DEVICES='5'" in checks["devices.cuda"]["message"]


def test_a_coloured_table_too_wide_for_the_terminal_is_stacked_too(driver_env):
    from taotoken_cli.cmd.route.view import render_devices
    from taotoken_cli.core.term.iostreams import IOStreams

    report = probe_devices(timeout_s=60, env=driver_env(FAKE_CUDA_DEVICES="2"))
    for width, stacked in ((80, True), (250, False)):
        io = IOStreams.memory(env={}, tty=True)  # a terminal: colour on, rich renders the table
        assert io.out.color
        render_devices(io.out, report, width)
        text = io.written()[0]
        assert ("             NVIDIA, cc 9.0, 139.8 GiB, 132 SMs, 1980 MHz, bus 0000:18:00.0" in text) is stacked
        assert ("Compute devices" in text) is not stacked
        assert "132" in text and "1980 MHz" in text and "1410 MHz" in text
