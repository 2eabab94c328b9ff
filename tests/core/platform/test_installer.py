"""Which installer taotoken runs under, and the command each fix then names. The environments are real virtual
environments (the standard library's venv); only the installers' own marker files are written by the test, at the
outermost boundary, with the content pipx 1.18.4 and uv 0.13.9 wrote in real installs of taotoken's wheel (those
commands were run by hand against the real tools: `uv tool install 'taotoken[html] @ file://…'` and `pipx inject
taotoken 'plotly>=5.20'` each added plotly to the tool's environment)."""

from __future__ import annotations

import importlib.util
import json
import site
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest

from taotoken_cli.core.platform import installer
from tests.conftest import REPO, hidden_package, python_path

UV_RECEIPT = """[tool]
requirements = [{ name = "taotoken", extras = ["fast"], path = "/tmp/dist/taotoken-0.1.0-py3-none-any.whl" }, \
{ name = "httpx", extras = ["socks"] }]
entrypoints = [
    { name = "taotoken", install-path = "/home/me/.local/bin/taotoken", from = "taotoken" },
]
"""
PIPX_METADATA = {"main_package": {"package": "taotoken", "package_or_url": "taotoken", "pip_args": [],
                                  "include_apps": True}, "pipx_metadata_version": "0.5", "injected_packages": {}}


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real virtual environment (no pip: quick to make), its interpreter running this checkout's taotoken."""
    if importlib.util.find_spec("venv") is None:
        pytest.skip("this interpreter has no venv module (the Windows run's embeddable CPython ships without it)")
    where = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    return where


def _python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def _in(venv: Path, code: str, *hidden: Path) -> str:
    """Run `code` on the venv's interpreter, taotoken and its dependencies importable from this environment."""
    env = {"PYTHONPATH": python_path(*hidden, sysconfig.get_paths()["purelib"]), "PATH": "/usr/bin:/bin",
           "NO_COLOR": "1", "COLUMNS": "200"}
    proc = subprocess.run([str(_python(venv)), "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout + proc.stderr


ASK = ("from taotoken_cli.core.platform import installer as i; c = i.current(); "
       "print(c.kind); print(i.add_extra('html')); print(i.add_package('pycuda'))")


def _with_marker(venv: Path, name: str | None, text: str = "") -> None:
    for marker in (installer.PIPX_RECEIPT, installer.UV_RECEIPT):
        (venv / marker).unlink(missing_ok=True)
    if name:
        (venv / name).write_text(text, encoding="utf-8")


def test_a_plain_virtual_environment_is_pip_with_its_own_interpreter(venv) -> None:
    _with_marker(venv, None)
    kind, extra, package = _in(venv, ASK).splitlines()
    assert kind == installer.PIP_VENV
    assert extra == f"{_python(venv)} -m pip install 'taotoken[html]'"
    assert package == f"{_python(venv)} -m pip install pycuda"


def test_pipx_injects_the_extras_requirements(venv) -> None:
    _with_marker(venv, installer.PIPX_RECEIPT, json.dumps(PIPX_METADATA))
    kind, extra, package = _in(venv, ASK).splitlines()
    assert (kind, extra, package) == ("pipx", "pipx inject taotoken 'plotly>=5.20'", "pipx inject taotoken pycuda")


def test_uv_tool_reinstalls_with_the_extra_keeping_the_source_extras_and_withs(venv) -> None:
    _with_marker(venv, installer.UV_RECEIPT, UV_RECEIPT)
    kind, extra, package = _in(venv, ASK).splitlines()
    assert kind == "uv-tool"
    assert extra == ("uv tool install 'taotoken[fast,html] @ file:///tmp/dist/taotoken-0.1.0-py3-none-any.whl' "
                     "--with 'httpx[socks]'")
    assert package == ("uv tool install 'taotoken[fast] @ file:///tmp/dist/taotoken-0.1.0-py3-none-any.whl' "
                       "--with 'httpx[socks]' --with pycuda")


def test_a_uv_venv_without_pip_uses_uv_pip(venv) -> None:
    _with_marker(venv, None)
    cfg = venv / "pyvenv.cfg"
    original = cfg.read_text()
    cfg.write_text(original + "uv = 0.13.9\n")  # what `uv venv` writes; such a venv has no pip
    try:
        kind, extra, _package = _in(venv, ASK).splitlines()
    finally:
        cfg.write_text(original)
    assert (kind, extra) == ("uv-venv", f"uv pip install --python {_python(venv)} 'taotoken[html]'")


def test_the_user_site_and_the_system_python() -> None:
    user_module = Path(site.getusersitepackages()) / "taotoken_cli" / "__init__.py"
    prefix = Path(sys.base_prefix)
    user = installer.detect(prefix, prefix, "/usr/bin/python3", user_module)
    assert installer.add_extra("opencl", user) == installer.Command(
        "/usr/bin/python3 -m pip install --user 'taotoken[opencl]'")
    system = installer.detect(prefix, prefix, "/usr/bin/python3", Path("/usr/lib/python3/dist-packages/x.py"))
    assert str(installer.add_extra("pocl", system)) == "/usr/bin/python3 -m pip install 'taotoken[pocl]'"
    assert str(installer.add_extra("html", installer.GENERIC)) == "pip install 'taotoken[html]'"


def test_the_extras_come_from_the_installed_metadata() -> None:
    try:
        metadata.distribution(installer.DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pytest.skip("taotoken runs from the checkout with no installed metadata (the Windows run under Wine)")
    assert installer.extra_packages("html") == ["plotly>=5.20"]
    assert installer.extra_packages("pocl") == ["pyopencl>=2024.1", "pocl-binary-distribution>=1.2"]
    assert installer.extra_packages("fast") == ["uvloop>=0.19"]


def test_bench_html_without_plotly_names_the_pipx_command(venv, tmp_path) -> None:
    """The real CLI on a pipx-made environment (the receipt), plotly hidden: the fix is pipx's, and so is the
    help; the same under uv."""
    hidden = hidden_package(tmp_path / "hidden", "plotly")
    _with_marker(venv, installer.PIPX_RECEIPT, json.dumps(PIPX_METADATA))
    refused = _in(venv, f"import sys; sys.argv = ['taotoken', 'bench', '--html', '{tmp_path / 'r.html'}']; "
                        "from taotoken_cli.__main__ import main; main()", hidden)
    assert "--html needs the plotting library plotly" in refused
    assert "fix: pipx inject taotoken 'plotly>=5.20'" in refused
    assert "pip install" not in refused
    _with_marker(venv, installer.UV_RECEIPT, UV_RECEIPT)
    helped = _in(venv, "import sys; sys.argv = ['taotoken', 'bench', '--help']; "
                       "from taotoken_cli.__main__ import main; main()")
    assert "uv tool install 'taotoken[fast,html]" in " ".join(helped.replace("│", " ").split())
    _with_marker(venv, None)
