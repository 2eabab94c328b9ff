"""Pure routing and model-comparison logic (no subprocesses, no network)."""

from __future__ import annotations

import pytest

from taotoken_cli.cmd.route.verify import DIFFERENT, EQUAL, UNKNOWN, VARIANT, compare_models
from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.devices.probe import BackendReport, CudaDevice, DeviceReport, OpenCLDevice, OpenCLPlatform
from taotoken_cli.core.devices.routing import candidates, choose, parse_assignments, vendor_key


def report(cuda: list[str] = (), opencl: list[tuple[str, str, str]] = ()) -> DeviceReport:
    """cuda: GPU names; opencl: (type, name, vendor)."""
    cuda_report = BackendReport("cuda", "present" if cuda else "not_installed", "")
    cuda_report.cuda_devices = [CudaDevice(i, name, "8.0", 1 << 34) for i, name in enumerate(cuda)]
    ocl = BackendReport("opencl", "present" if opencl else "no_driver", "")
    platform = OpenCLPlatform("Test platform", "Test", "OpenCL 3.0")
    platform.devices = [OpenCLDevice(name, kind, vendor, platform="Test platform") for kind, name, vendor in opencl]
    ocl.platforms = [platform]
    return DeviceReport(cuda_report, ocl)


INTEL_GPU = ("GPU", "Intel(R) Arc(TM) A770 Graphics", "Intel(R) Corporation")
AMD_GPU = ("GPU", "gfx1100", "Advanced Micro Devices, Inc.")
CPU = ("CPU", "pthread-AMD EPYC", "AuthenticAMD")
ROUTES = {"cuda": "m-cuda", "nvidia": "m-nv", "intel": "m-intel", "gpu": "m-gpu", "opencl": "m-ocl",
          "cpu": "m-cpu"}


@pytest.mark.parametrize(("devices", "routes", "model", "route"), [
    (report(["A100"], [INTEL_GPU, CPU]), ROUTES, "m-cuda", "cuda"),
    (report([], [INTEL_GPU, CPU]), ROUTES, "m-intel", "intel"),
    (report([], [AMD_GPU, CPU]), ROUTES, "m-gpu", "gpu"),  # no amd route: gpu before opencl
    (report([], [AMD_GPU, CPU]), {"opencl": "m-ocl", "cpu": "m-cpu"}, "m-ocl", "opencl"),
    (report([], [CPU]), ROUTES, "m-cpu", "cpu"),  # a CPU does not take the opencl route
    (report(["A100"], []), {"cpu": "m-cpu"}, "m-cpu", "cpu"),  # no GPU route at all: the CPU's
    (None, {"cpu": "m-cpu"}, "m-cpu", "cpu"),  # nothing probed: every machine has a CPU
])
def test_automatic_choice_order(devices, routes, model, route):
    choice = choose(routes, devices, "profile-model")
    assert (choice.model, choice.route, choice.source) == (model, route, "auto")
    assert choice.reason


def test_skipped_gpu_is_named_in_the_reason():
    choice = choose({"cpu": "m-cpu"}, report(["NVIDIA A100"], [CPU]), None)
    assert "no route for CUDA GPU 0 NVIDIA A100 (cuda/nvidia/gpu)" in choice.reason


def test_fallback_to_profile_model_and_nothing():
    assert choose({"code": "c"}, report([], [CPU]), "pm").source == "profile"
    nothing = choose({}, None, None)
    assert nothing.model is None and "no model" in nothing.reason


def test_explicit_keys_are_case_insensitive_and_missing_ones_fail():
    assert choose({"Code": "c"}, None, None, task="CODE").model == "c"
    with pytest.raises(TaotokenError) as info:
        choose({"code": "c"}, None, "pm", device="cuda")
    assert info.value.exit_code == 3 and "routes: code" in info.value.message


def test_candidates_keys_for_vendors():
    cands = candidates(report(["A100"], [INTEL_GPU, ("ACCELERATOR", "FPGA emu", "Intel(R) Corporation"), CPU]))
    assert [c.keys for c in cands] == [["cuda", "nvidia", "gpu"], ["intel", "gpu", "opencl"],
                                       ["intel", "accelerator", "opencl"], ["cpu"]]


@pytest.mark.parametrize(("vendor", "key"), [
    ("NVIDIA Corporation", "nvidia"), ("Intel(R) Corporation", "intel"), ("GenuineIntel", "intel"),
    ("Advanced Micro Devices, Inc.", "amd"), ("AuthenticAMD", "amd"), ("Apple", "apple"), ("", None),
])
def test_vendor_key(vendor, key):
    assert vendor_key(vendor) == key


def test_parse_assignments():
    edits = parse_assignments(["CUDA=gpu-m", "cpu=", "code=' q '", "cuda=gpu-2"])
    assert [(e.key, e.model) for e in edits] == [("cuda", "gpu-2"), ("cpu", None), ("code", "q")]


@pytest.mark.parametrize(("asked", "returned", "category"), [
    ("gpt-4o", "gpt-4o", EQUAL),
    ("gpt-4o", "gpt-4o-2024-08-06", VARIANT),
    ("claude-x", "claude-x-20250101", VARIANT),
    ("gpt-4o-2024-08-06", "gpt-4o", VARIANT),
    ("gpt-4", "gpt-4-0613", VARIANT),
    ("gemini-1.5-pro", "gemini-1.5-pro-002", VARIANT),
    ("claude-3-5-sonnet", "claude-3-5-sonnet@20240620", VARIANT),
    ("claude-3-5-sonnet", "claude-3-5-sonnet-latest", VARIANT),
    ("openai/gpt-4o", "gpt-4o-2024-08-06", VARIANT),
    ("Qwen/Qwen2.5-72B", "qwen/qwen2.5-72b", VARIANT),
    ("gpt-4o", "gpt-4o-mini", DIFFERENT),
    ("gpt-4", "gpt-4o", DIFFERENT),
    ("qwen2.5-7b", "qwen2.5-72b", DIFFERENT),
    ("claude-3", "claude-3-5-sonnet", DIFFERENT),
    ("llama3-8b", "llama3-8b-int8", DIFFERENT),
    ("gpu-a100-qwen", None, UNKNOWN),
])
def test_compare_models(asked, returned, category):
    assert compare_models(asked, returned)[0] == category
