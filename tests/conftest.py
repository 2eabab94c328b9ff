"""Shared fixtures: a temporary HOME with a clean environment, and running the real CLI.

The CLI runs as a subprocess (`python -m taotoken_cli`) so tests see exactly what users see:
exit codes, stdout/stderr, no traceback.
"""

from __future__ import annotations

import compileall
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from taotoken_cli.core.platform.system import sandbox_env

# CI runs the fuzz tests derandomized: a red build must be reproducible, not a new random draw.
# Locally Hypothesis explores fresh examples on every run.
try:
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
    if os.environ.get("CI"):
        _hypothesis_settings.load_profile("ci")
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    pass

REPO = Path(__file__).resolve().parent.parent
# A sentinel key: tests assert it never appears whole in any output.
SENTINEL_KEY = "sk-SENTINELkey0123456789abcdefWXYZ"

# Variables that would make a test depend on the developer's machine.
_SCRUB_PREFIXES = ("TAOTOKEN_", "OPENAI_", "ANTHROPIC_", "CLAUDE_", "CODEX_", "CLINE_", "CC_SWITCH", "OPENCODE_",
                   "QWEN_")
_SCRUB = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
          "no_proxy", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "FORCE_COLOR",
          "CUDA_VISIBLE_DEVICES", "ONEAPI_DEVICE_SELECTOR", "SYCL_DEVICE_FILTER", "SSL_CERT_FILE", "SHELL"}


def needs_posix(what: str) -> None:
    """Skip the calling test where it cannot run: `what` (a POSIX shell, a pseudo-terminal, POSIX signals) does not
    exist on Windows. The behaviour it checks there is covered by scripts/windows (docs/windows.md)."""
    from taotoken_cli.core.platform import system

    if system.current().windows:
        pytest.skip(f"needs {what}, which Windows lacks")


def in_users_shell(posix: str) -> str:
    """A fix written in POSIX (`export X=…`) as the product prints it for this test's shell (PowerShell on
    Windows: `$env:X = '…'`); the translation itself is tested in tests/core/platform/test_platform.py."""
    from taotoken_cli.core.platform import shells

    return shells.in_shell(posix, shells.syntax(os.environ))


@dataclass
class Result:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def assert_clean(self, secret: str = SENTINEL_KEY) -> Result:
        """No traceback, and the full key appears nowhere."""
        assert "Traceback" not in self.output, self.output
        assert secret not in self.output, "the full key leaked into the output"
        return self


def flat(text: str) -> str:
    """`text` with every run of whitespace (line breaks of wrapped lines too) made one space: for asserting
    on a phrase whatever the terminal width wrapped."""
    return " ".join(text.split())


def squashed(text: str) -> str:
    """`text` without any whitespace: for finding a phrase however the layout broke its lines (a Chinese line
    wraps between two characters, with no space at the break), so compare both sides squashed."""
    return "".join(text.split())


def write(path: Path, text: str, mode: int = 0o600) -> Path:
    """A user's file with `text`, its directories made; 0600 unless `mode` says otherwise."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def own_config(home: Path, base: str, key: str = SENTINEL_KEY, model: str = "gpt-4o-mini") -> Path:
    """taotoken's own config file in `home`: one profile, `default`, with these values."""
    return write(home / ".config" / "taotoken" / "config.toml",
                 f'default_profile = "default"\n\n[profiles.default]\nbase_url = {json.dumps(base)}\n'
                 f"api_key = {json.dumps(key)}\nmodel = {json.dumps(model)}\n")


NETGUARD = REPO / "tests" / "netguard"  # sitecustomize.py: the network guard, in this process and every child


def netguard_env() -> dict[str, str]:
    """What a child's environment needs for the network guard (tests/netguard) when the caller builds it from
    scratch (the docs' examples): its folder first on PYTHONPATH, and the running test's log."""
    log = os.environ.get("NETGUARD_LOG")
    return {"PYTHONPATH": os.pathsep.join((str(NETGUARD), str(REPO))), "NETGUARD_LOG": log} if log else {}


@pytest.fixture(autouse=True)
def _no_network(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, request):
    """Nothing a test runs contacts a real gateway or the internet: a lookup of any host but loopback (and the
    reserved names that never resolve) is refused and logged, in this process and in every Python child, and a
    logged one fails the test (tests/netguard/sitecustomize.py)."""
    import importlib.util

    if "guard" not in _NETGUARD:
        spec = importlib.util.spec_from_file_location("taotoken_test_netguard", NETGUARD / "sitecustomize.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # replaces socket.getaddrinfo; idle while NETGUARD_LOG is unset
        _NETGUARD["guard"] = module
        _NETGUARD["dir"] = tmp_path_factory.mktemp("netguard")
    log = _NETGUARD["dir"] / f"{abs(hash(request.node.nodeid))}.log"
    log.unlink(missing_ok=True)
    monkeypatch.setenv("NETGUARD_LOG", str(log))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(NETGUARD), os.environ.get("PYTHONPATH", ""))
                                                     if p))
    yield
    contacted = log.read_text(encoding="utf-8").strip() if log.exists() else ""
    if contacted:
        pytest.fail("the test tried to reach the network (only loopback is allowed):\n" + contacted, pytrace=False)


_NETGUARD: dict = {}


@pytest.fixture(autouse=True)
def _secrets_of_this_test_only():
    """Each test starts with no remembered secret, as each run of the real CLI is a process of its own: what a
    test's output masks (and how) never depends on the keys earlier tests in this worker remembered."""
    from taotoken_cli.core.base.masking import SECRETS

    SECRETS.clear()


@pytest.fixture
def chinese():
    """This process speaks Chinese for one test (messages are translated when they are produced), then the
    language it spoke before."""
    from taotoken_cli.core.base import i18n

    before = i18n.current()
    i18n.use("zh")
    yield
    i18n.use(before)


@pytest.fixture
def one_line_findings(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A width nothing wraps at, for tests that read each finding as one line (wrapping has its own tests:
    tests/core/term/test_layout.py, tests/core/term/test_terminal.py)."""
    monkeypatch.setenv("COLUMNS", "1000")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME; the process environment points every client there."""
    home_dir = tmp_path / "home"
    home_dir.mkdir()
    for name in list(os.environ):
        if name in _SCRUB or name.startswith(_SCRUB_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    # Every per-user location of this OS points into the temporary HOME: HOME and XDG_CONFIG_HOME (taotoken's
    # own config dir follows it on every OS), and on Windows USERPROFILE, APPDATA and LOCALAPPDATA, which
    # platformdirs and the clients read there.
    for name, value in sandbox_env(home_dir).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.chdir(home_dir)
    return home_dir


@pytest.fixture
def run(home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """The real entry point in-process (about 20 ms a run, against ~150 ms for `cli`'s subprocess).

    Exit status, stdout and stderr as the user sees them; `input` becomes stdin.
    """
    from taotoken_cli.app import run as cli_run

    def invoke(*args: str, input: str = "") -> Result:
        monkeypatch.setattr(sys, "stdin", io.StringIO(input))
        monkeypatch.setattr(sys, "argv", ["taotoken", *args])  # as the entry point sees them (`--json` is read there)
        try:
            cli_run(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return Result(list(args), code, captured.out, captured.err)

    return invoke


@dataclass
class Parsed:
    """What `parse` saw: the run as the user sees it, and the options object the command built (None when parsing
    stopped it: a usage error, --help)."""

    result: Result
    options: object | None


# The commands whose Typer function ends in `run(options, io)` of `taotoken_cli.cmd.<command>.run`.
PARSEABLE = ("bench", "check", "demo", "doctor", "explain", "init", "mock", "models")


@pytest.fixture
def parse(run, monkeypatch: pytest.MonkeyPatch):
    """The parse-only seam (gh's `runF`): `taotoken ARGS` through the real app in-process — Typer/Click parsing,
    option callbacks, the Typer function building its options object — with the command's work, its `run`,
    replaced by a capture. Usage errors end exactly as they do for users (exit 2, the message, no traceback);
    a parse that succeeds returns the options instead of contacting anything.

        parsed = parse("bench", "-n", "5"); parsed.options.requests == 5
    """
    import importlib

    def invoke(*args: str, input: str = "") -> Parsed:
        command = next((a for a in args if not a.startswith("-")), None)
        assert command in PARSEABLE, f"parse() knows {PARSEABLE}; use run() for {command!r}"
        captured: list[object] = []

        def capture(options, io, **_kwargs) -> int:
            captured.append(options)
            return 0

        monkeypatch.setattr(importlib.import_module(f"taotoken_cli.cmd.{command}.run"), "run", capture)
        result = run(*args, input=input)
        assert len(captured) <= 1
        return Parsed(result, captured[0] if captured else None)

    return invoke


@pytest.fixture
def cli(home: Path):
    """Run `taotoken ARGS` in a subprocess with the test's environment."""

    def run(*args: str, input: str | None = None, env: dict[str, str] | None = None,
            timeout: float = 60, cwd: Path | None = None) -> Result:
        full_env = dict(os.environ)
        full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
        # The child's pipes in UTF-8 and read as UTF-8, on every OS: on Windows a pipe is in the ANSI code page
        # (cp1252 cannot hold ≈ or Chinese); writing on a code page is tests/core/term/test_encoding.py's subject.
        full_env["PYTHONIOENCODING"] = "utf-8"
        if env:
            for key, value in env.items():
                if value is None:
                    full_env.pop(key, None)
                else:
                    full_env[key] = value
        proc = subprocess.run([sys.executable, "-m", "taotoken_cli", *args], input=input, capture_output=True,
                              text=True, encoding="utf-8", errors="replace", env=full_env, timeout=timeout,
                              cwd=cwd or home)
        return Result(list(args), proc.returncode, proc.stdout, proc.stderr)

    return run


class _MockStarter:
    """Starts mock gateways (thread or subprocess) and closes them all at teardown."""

    def __init__(self) -> None:
        self.started: list = []

    def __call__(self, options=None, *, process: bool = False, **changes):
        from taotoken_cli.cmd.mock import MockGateway, MockOptions, MockProcess

        if options is None:
            changes.setdefault("key", SENTINEL_KEY)
            options = MockOptions()
        mock = (MockProcess if process else MockGateway)(options, **changes).start()
        self.started.append(mock)
        return mock

    def close(self) -> None:
        for mock in self.started:
            mock.close()


@pytest.fixture
def mock_gateway():
    """Factory for mock gateways on 127.0.0.1 (real HTTP), closed at teardown.

    `mock = mock_gateway(latency_ms=50)` -> a started `taotoken_cli.cmd.mock.MockGateway` expecting
    SENTINEL_KEY unless `key=`/`any_key=` says otherwise; `mock.url` is the API root.
    `mock_gateway(process=True, …)` runs it as a subprocess (`MockProcess`, same interface) so
    timing-sensitive tests are not disturbed by this process's GIL.
    """
    starter = _MockStarter()
    yield starter
    starter.close()


@pytest.fixture(scope="session")
def loopback_gateway():
    """One mock gateway for the whole run (SENTINEL_KEY, every model served), for tests whose commands ask the
    gateway something on the way (init: the model list, the Gemini API) but are about something else: they point
    there instead of the real gateway's default URL."""
    starter = _MockStarter()
    yield starter()
    starter.close()


@pytest.fixture(scope="module")
def module_mock_gateway():
    """Like `mock_gateway`, but the mocks live for the whole test module (one start for many tests)."""
    starter = _MockStarter()
    yield starter
    starter.close()


class PtySession:
    """`taotoken ARGS` with a real pseudo-terminal as its controlling terminal: prompts, hidden input, Enter.

        with PtySession(["init"], cwd=home) as s:
            s.expect(b"API key (input hidden)"); s.send(b"sk-…\\n")
        s.exit_code, s.seen   # everything the terminal showed
    """

    def __init__(self, args: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.args, self.cwd = args, cwd
        # A reduced PATH: no `claude`/`codex` binaries of this machine are detected; PYTHONPATH finds the package.
        self.env = {**os.environ, "PYTHONPATH": python_path(), "PATH": "/usr/bin:/bin", **(env or {})}
        self.seen = b""
        self._read_to = 0  # `expect` looks for its text after the previous match: the same prompt twice is two
        self.exit_code: int | None = None

    def __enter__(self) -> PtySession:
        needs_posix("a pseudo-terminal (pty)")
        import pty

        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # child: the CLI with the pty as its controlling terminal
            os.chdir(self.cwd)
            os.execve(sys.executable, [sys.executable, "-m", "taotoken_cli", *self.args], self.env)
        return self

    def expect(self, text: bytes, timeout: float = 20) -> None:
        import select
        import time

        deadline = time.monotonic() + timeout
        while text not in self.seen[self._read_to:]:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"timed out waiting for {text!r}; got {self.seen!r}"
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            self.seen += chunk
        assert text in self.seen[self._read_to:], self.seen
        self._read_to = self.seen.index(text, self._read_to) + len(text)

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def __exit__(self, exc_type: object, *exc: object) -> None:
        import contextlib
        import signal

        if exc_type is not None:  # a failed expectation: the child may be waiting at a prompt for ever
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        import select
        import time

        deadline = time.monotonic() + 60  # a child still waiting for input after the test is done is killed
        with contextlib.suppress(OSError):  # read what is left, so the child never blocks on a full pty
            while True:
                if not select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                    os.kill(self.pid, signal.SIGKILL)
                    break
                if not (chunk := os.read(self.fd, 4096)):
                    break
                self.seen += chunk
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        self.exit_code = os.waitstatus_to_exitcode(status)


# -- devices: what a test may assume about this machine's GPUs ------------------------------------------------

_NOT_INSTALLED = "raise ModuleNotFoundError(\"No module named '{0}'\", name='{0}')\n"


def hidden_package(root: Path, name: str) -> Path:
    """A package `name` under `root` that raises exactly what Python raises for a missing one; `root` goes
    first on PYTHONPATH to hide the real package from a subprocess."""
    package = root / name
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(_NOT_INSTALLED.format(name), encoding="utf-8")
    return root


def python_path(*paths: Path | str) -> str:
    """PYTHONPATH with `paths` first, then the project, then what this process was given (packages installed
    with --target elsewhere must stay importable in children)."""
    parts = [str(p) for p in paths] + [str(REPO), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(p for p in parts if p)


def _pocl_icds() -> list[Path]:
    location = Path(os.environ.get("OCL_ICD_VENDORS") or "/etc/OpenCL/vendors")
    files = sorted(location.glob("*.icd")) if location.is_dir() else [location] if location.is_file() else []
    return [f for f in files if "pocl" in f.name.lower() or "pocl" in f.read_text(errors="replace").lower()]


@pytest.fixture(scope="session")
def cpu_only_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment additions under which this machine looks like one without any GPU, whatever it has:
    pycuda hidden, no NVIDIA driver library (TAOTOKEN_LIBCUDA names a file that does not exist), and
    the OpenCL ICD loader pointed at a vendors directory holding only PoCL's ICD files (an ICD shipped
    inside the pyopencl wheel, as pocl-binary-distribution's is, stays visible as well). GPU drivers
    stay installed and untouched; they are just not looked up."""
    root = tmp_path_factory.mktemp("cpu-only")
    site = hidden_package(root / "site", "pycuda")
    vendors = root / "vendors"
    vendors.mkdir()
    for icd in _pocl_icds():
        (vendors / icd.name).write_bytes(icd.read_bytes())
    return {"PYTHONPATH": python_path(site), "TAOTOKEN_LIBCUDA": str(root / "absent" / "libcuda.so.1"),
            "OCL_ICD_VENDORS": str(vendors)}


@pytest.fixture(scope="session")
def pocl_cpu(cpu_only_env: dict[str, str]):
    """The real PoCL CPU device through the real pyopencl (report of the OpenCL probe), or a skip that says
    what is missing. `pip install -e '.[test]'` brings both."""
    from taotoken_cli.core.devices.probe import NOT_INSTALLED, PRESENT, probe_backend

    report = probe_backend("opencl", timeout_s=60, env={**os.environ, **cpu_only_env})
    if report.status == NOT_INSTALLED:
        pytest.skip("pyopencl is not installed (the test extra brings pyopencl and pocl-binary-distribution)")
    pocl = [d for d in report.opencl_devices
            if d.type == "CPU" and any(mark in d.platform.lower() for mark in ("pocl", "portable computing"))]
    if report.status != PRESENT or not pocl:
        pytest.skip(f"no PoCL CPU device through OpenCL here ({report.status}: {report.message})")
    return report


@pytest.fixture(scope="session")
def libcuda_standin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stand-in for the NVIDIA driver library, built from tests/data/fake_libcuda.c with the system's C
    compiler (no CUDA driver can exist on a test machine without a GPU). Skips where none is installed."""
    import shutil

    if sys.platform == "win32":
        pytest.skip("the stand-in libcuda is built as an ELF/Mach-O shared library")
    compiler = next((c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and shutil.which(c)), None)
    if compiler is None:
        pytest.skip("no C compiler (cc, gcc, clang) to build the stand-in libcuda.so.1")
    out = tmp_path_factory.mktemp("libcuda") / "libcuda.so.1"
    source = REPO / "tests/data/fake_libcuda.c"
    proc = subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-o", str(out), str(source)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, f"{compiler} could not build the stand-in libcuda.so.1:\n{proc.stderr}"
    return out


# -- xdist: the doc examples on one worker --------------------------------------------------------------------
# `block_runs` (tests/docs/test_doc_examples.py) runs every selected doc block, concurrently, on each worker that
# runs one of the examples: on two workers each block ran twice (~45 s of CPU). A run with `-n` and no `--dist` of
# its own therefore sends the examples to one worker as one unit and every other test on its own, biggest unit
# first. This is xdist's `loadgroup` in effect, which cannot serve: it marks a group by rewriting node IDs, which
# pytest 9 ignores (`Node.nodeid` no longer reads `_nodeid`); and `--dist` in addopts or in the README's command
# would break pytest without xdist (the Windows run under Wine).
DOC_EXAMPLES = "tests/docs/test_doc_examples.py::test_example_prints_what_the_docs_show["


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # xdist's hook, on the controller
    if config.getoption("dist") != "load" or any(arg.startswith("--dist") for arg in config.invocation_params.args):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class DocExamplesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return DOC_EXAMPLES if nodeid.startswith(DOC_EXAMPLES) else nodeid

    return DocExamplesTogether(config, log)


def pytest_configure(config: pytest.Config) -> None:
    """Compile the package once, before any test (on the controller, before xdist starts its workers). The suite
    runs the CLI as a subprocess ~800 times; where PYTHONDONTWRITEBYTECODE is set (this project's CI machines) no
    run could keep what it compiled, so each compiled every module it imported from source again (~70 ms of a
    0.1 s run). An installed taotoken is compiled by pip at install; this is the same."""
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(REPO / "taotoken_cli", quiet=2)
