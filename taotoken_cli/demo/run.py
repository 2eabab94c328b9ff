"""`taotoken demo`: every command, for real, against the local mock gateway in a throwaway HOME.

The demo starts `taotoken_cli.mock.MockGateway` on a free loopback port, creates a temporary directory
with a HOME that already holds typical client configs, and runs each step as the real CLI in a
subprocess (`python -m taotoken_cli …`) whose environment points only into that directory. Nothing
outside it is written, and nothing beyond 127.0.0.1 is contacted. The runner computes one
`CommandResult` per command and hands it to a reporter as soon as it exists; rendering lives in
`demo_view`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from taotoken_cli.errors import InputError, TaotokenError
from taotoken_cli.exitcodes import Exit
from taotoken_cli.masking import Redactor, mask_key, mask_unknown_keys

# A key for the local mock only: it opens nothing anywhere else.
DEMO_KEY = "sk-demo7f3a9c1e5b2d8f4a6c0e9b7dDEMO"
DEMO_MODEL = "gpt-4o-mini"
GPU_MODEL = "gpu-a100-qwen25-72b-fp16"
CPU_MODEL = "cpu-llama3-8b-int8"
# Gateways often answer an undated model name with a dated variant; the demo's gateway does too.
ALIAS_MODEL, ALIAS_ANSWER = "gpt-4o", "gpt-4o-2024-08-06"
SERVED_MODELS = (DEMO_MODEL, "claude-sonnet-4-5", GPU_MODEL, CPU_MODEL)

STEP_NAMES = ("init", "check", "doctor", "route", "bench")
# Variables that would point a step at the real machine's configs, keys or proxies.
_SCRUB_PREFIXES = ("TAOTOKEN_", "OPENAI_", "ANTHROPIC_", "CLAUDE_", "CODEX_", "CLINE_", "CC_SWITCH", "XDG_")
_SCRUB_NAMES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy", "socks_proxy",
                "ssl_cert_file", "requests_ca_bundle", "curl_ca_bundle", "pythonstartup", "force_color"}
COMMAND_TIMEOUT_S = 90.0
ENV_SH = ".config/taotoken/env.sh"  # written by init's shell target (under XDG_CONFIG_HOME = ~/.config)

# What the temporary HOME holds before `init` runs: a user's real-looking, hand-edited configs.
SEED_FILES = {
    ".claude/settings.json": (
        '{\n'
        '  "theme": "dark",\n'
        '  "permissions": {\n'
        '    "allow": ["Bash(git status)", "Bash(npm run test:*)"]\n'
        '  },\n'
        '  "includeCoAuthoredBy": false\n'
        '}\n'),
    ".codex/config.toml": (
        '# my Codex settings: keep this comment\n'
        'approval_policy = "on-request"\n'
        'sandbox_mode = "workspace-write"\n'
        '\n'
        '[mcp_servers.docs]\n'
        'command = "npx"\n'
        'args = ["-y", "@acme/docs-mcp"]\n'),
}
SEED_DIRS = (".cline",)


class DemoError(TaotokenError):
    pass


@dataclass
class DemoOptions:
    keep: bool = False
    step: str | None = None  # run only this step (its prerequisites run quietly first)
    fast: bool = False  # no simulated latency, fewer requests
    parent_dir: Path | None = None  # where the temporary directory is created (default: the system's)
    base_env: dict[str, str] | None = None  # environment to derive the steps' from (default: os.environ)

    def validate(self) -> DemoOptions:
        if self.step is not None and self.step not in STEP_NAMES:
            raise InputError(f"unknown demo step {self.step!r}", f"use one of: {', '.join(STEP_NAMES)}")
        return self


@dataclass
class Command:
    args: tuple[str, ...]  # after `taotoken`
    stdin: str | None = None
    shown_stdin: str = ""  # how the stdin is written in the header, e.g. 'printf %s "$KEY" |'
    ok_exit: tuple[int, ...] = (Exit.OK,)
    why: str = ""  # one line: what this command shows
    source: str | None = None  # not taotoken: `. FILE` (relative to HOME) in the steps' shell

    @property
    def shown(self) -> str:
        if self.source is not None:
            return f". ~/{self.source}"
        line = "taotoken " + " ".join(shlex.quote(a) for a in self.args)
        return f"{self.shown_stdin} {line}" if self.shown_stdin else line


@dataclass
class Step:
    name: str
    title: str
    commands: list[Command]
    needs: tuple[str, ...] = ()
    show_files: bool = False
    skipped: str | None = None  # reason when this step cannot run in this version


@dataclass
class FileShown:
    path: str  # as displayed (~/…)
    mode: str  # e.g. 0600
    state: str  # new | changed
    text: str  # masked content


@dataclass
class GatewayLine:
    text: str  # one mock log line, key masked, duration left out so equal requests group
    count: int


@dataclass
class CommandResult:
    step: str
    command: Command
    returncode: int
    stdout: str  # key masked, temporary HOME shown as ~
    stderr: str
    elapsed_s: float
    gateway: list[GatewayLine] = field(default_factory=list)
    files: list[FileShown] = field(default_factory=list)
    backups: int = 0  # backup files init made of the previous versions

    @property
    def ok(self) -> bool:
        return self.returncode in self.command.ok_exit


@dataclass
class DemoInfo:
    root: Path
    home: Path
    gateway_url: str
    key_masked: str
    models: tuple[str, ...]
    aliases: dict[str, str]
    steps: list[str]
    prepared: list[str]  # prerequisite steps run quietly (with --step)
    seeded: list[str]  # files that existed before init (displayed paths)


@dataclass
class DemoSummary:
    results: list[CommandResult]
    elapsed_s: float
    kept: Path | None
    removed: bool
    with_doctor: bool = False
    interrupted: bool = False
    skipped: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[CommandResult]:
        return [r for r in self.results if not r.ok]

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return Exit.INTERRUPTED
        return Exit.FAILURE if self.failed else Exit.OK


class Reporter(Protocol):
    def intro(self, info: DemoInfo) -> None: ...
    def step(self, step: Step) -> None: ...
    def command(self, command: Command) -> None: ...
    def result(self, result: CommandResult) -> None: ...
    def outro(self, summary: DemoSummary) -> None: ...


# -- the temporary world --------------------------------------------------------------------------

class Sandbox:
    """A temporary directory holding HOME (with seeded client configs) and TMPDIR for the steps."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.tmp = root / "tmp"

    @classmethod
    def create(cls, parent: Path | None = None) -> Sandbox:
        root = Path(tempfile.mkdtemp(prefix="taotoken-demo-", dir=str(parent) if parent else None))
        box = cls(root)
        box.home.mkdir()
        box.tmp.mkdir()
        return box

    def seed(self) -> list[str]:
        for rel, text in SEED_FILES.items():
            path = self.home / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        for rel in SEED_DIRS:
            (self.home / rel).mkdir(parents=True, exist_ok=True)
        return ["~/" + rel for rel in (*SEED_FILES, *(d + "/" for d in SEED_DIRS))]

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """The steps' environment: the caller's, minus everything naming keys, configs or proxies."""
        env = {name: value for name, value in base.items()
               if not name.startswith(_SCRUB_PREFIXES) and name.lower() not in _SCRUB_NAMES}
        home = str(self.home)
        env.update({
            "HOME": home, "USERPROFILE": home,
            "XDG_CONFIG_HOME": str(self.home / ".config"), "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local/share"), "XDG_STATE_HOME": str(self.home / ".local/state"),
            "TMPDIR": str(self.tmp), "TEMP": str(self.tmp), "TMP": str(self.tmp),
            "NO_PROXY": "127.0.0.1,localhost,::1", "no_proxy": "127.0.0.1,localhost,::1",
            # Read existing bytecode, write none: the package directory stays untouched.
            "PYTHONDONTWRITEBYTECODE": "1",
            # The steps run the same taotoken_cli as this process, wherever it is installed.
            "PYTHONPATH": os.pathsep.join(p for p in (_package_parent(), base.get("PYTHONPATH", "")) if p),
        })
        env.setdefault("COLUMNS", str(shutil.get_terminal_size((100, 24)).columns))
        return env

    def display(self, text: str) -> str:
        """Show the temporary HOME as `~`, the way the user will see their own."""
        return text.replace(str(self.home), "~")

    def snapshot(self) -> dict[str, tuple[str, int]]:
        """Relative path -> (content hash, mode) of every file under HOME."""
        files: dict[str, tuple[str, int]] = {}
        for path in sorted(self.home.rglob("*")):
            if path.is_file() and not path.is_symlink():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                files[path.relative_to(self.home).as_posix()] = (digest, path.stat().st_mode & 0o777)
        return files

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _package_parent() -> str:
    import taotoken_cli

    return str(Path(taotoken_cli.__file__).resolve().parent.parent)


# -- the steps ------------------------------------------------------------------------------------

def doctor_available() -> bool:
    """`doctor` is a separate part of the tool: run its step only when this version has it."""
    from taotoken_cli.app import app

    return any((c.name or getattr(c.callback, "__name__", "")) == "doctor" for c in app.registered_commands)


def build_steps(gateway_url: str, fast: bool, with_doctor: bool) -> list[Step]:
    bench_n = "10" if fast else "20"
    samples = "1" if fast else "2"
    steps = [
        Step("init", "write the gateway's base URL, key and model into every client", [
            Command(("init", "--all", "--yes", "--base-url", gateway_url, "--model", DEMO_MODEL, "--key-stdin"),
                    stdin=DEMO_KEY, shown_stdin='printf %s "$TAOTOKEN_KEY" |',
                    why="every client gets the URL form it needs; the key comes on stdin, never on the command "
                        "line"),
            Command((), source=ENV_SH,
                    why="what every new shell now does (init added it to ~/.bashrc); the next steps run in it"),
        ], show_files=True),
        Step("check", "one fast request: does the setup work?", [
            Command(("check",), why="lists the models with the configured URL and key"),
            Command(("check", "--stream"), why="also streams a 1-token chat completion"),
        ], needs=("init",)),
        Step("doctor", "everything at once: env, client files, network, gateway, key, model, streaming", [
            Command(("doctor",), why="reads every client's file and probes the gateway"),
        ], needs=("init",), skipped=None if with_doctor else "`taotoken doctor` is not part of this version yet"),
        Step("route", "pick the model for this machine's devices and verify what answers", [
            Command(("route", "devices"), why="probes CUDA and OpenCL devices"),
            Command(("route", "set", f"cuda={GPU_MODEL}", f"gpu={ALIAS_MODEL}", f"cpu={CPU_MODEL}"),
                    why="a routing table in the config: device kind -> model ID"),
            Command(("route",), why="the model for this machine, and why"),
            Command(("route", "--verify", "--all", "-n", samples),
                    why="asks the gateway per route which model really answers"),
        ], needs=("init",)),
        Step("bench", "a short load test, two models side by side", [
            Command(("bench", "-m", GPU_MODEL, "-m", CPU_MODEL, "--stream", "-n", bench_n, "-c", "4",
                     "--max-tokens", "16"),
                    why="latency percentiles, time to first token, tokens/s, errors by cause"),
        ], needs=("init",)),
    ]
    return steps


def _plan(steps: list[Step], only: str | None) -> tuple[list[Step], list[Step]]:
    """(steps run quietly as prerequisites, steps shown)."""
    if only is None:
        return [], steps
    by_name = {s.name: s for s in steps}
    target = by_name[only]
    return [by_name[n] for n in target.needs], [target]


# -- running --------------------------------------------------------------------------------------

def run_command(step: str, command: Command, box: Sandbox, env: dict[str, str], mock, redact: Redactor,
                show_files: bool = False) -> CommandResult:
    """Run one command; a `source` command updates `env` in place, as a shell would."""
    if command.source is not None:
        return source_env_file(step, command, box, env, redact)
    before = box.snapshot() if show_files else {}
    seen = len(mock.requests)
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "taotoken_cli", *command.args], input=command.stdin,
                              capture_output=True, text=True, env=env, cwd=str(box.home),
                              timeout=COMMAND_TIMEOUT_S)
        returncode, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        returncode = Exit.FAILURE
        stdout = _text(exc.stdout)
        stderr = _text(exc.stderr) + f"\n(demo: stopped after {COMMAND_TIMEOUT_S:.0f} s)"
    elapsed = time.monotonic() - started

    def clean(text: str) -> str:
        return box.display(mask_unknown_keys(redact(text)))

    result = CommandResult(step, command, returncode, clean(stdout), clean(stderr), elapsed,
                           gateway=group_gateway_log(mock.requests[seen:]))
    if show_files:
        result.files, result.backups = changed_files(box, before, redact)
    return result


_SHELL_OWN = {"_", "SHLVL", "PWD", "OLDPWD"}  # set by sh itself, not by the sourced file


def source_env_file(step: str, command: Command, box: Sandbox, env: dict[str, str],
                    redact: Redactor) -> CommandResult:
    """Source the file in a real `sh` and keep the variables it sets (the parser of init's env.sh without one)."""
    from taotoken_cli.clients.shell import parse_env_sh

    path = box.home / (command.source or "")
    started = time.monotonic()
    sh = shutil.which("sh", path=env.get("PATH"))
    if not path.is_file():
        return CommandResult(step, command, Exit.FAILURE, "", box.display(f"sh: {path}: No such file or directory"),
                             time.monotonic() - started)
    if sh is None:
        new = parse_env_sh(path.read_text(encoding="utf-8"))
        returncode, stderr = Exit.OK, ""
    else:
        proc = subprocess.run([sh, "-c", '. "$1" && env -0', "sh", str(path)], capture_output=True, env=env,
                              cwd=str(box.home), timeout=COMMAND_TIMEOUT_S)
        returncode, stderr = proc.returncode, _text(proc.stderr)
        after = dict(item.split("=", 1) for item in _text(proc.stdout).split("\0") if "=" in item)
        new = {name: value for name, value in after.items()
               if env.get(name) != value and name not in _SHELL_OWN}
    if returncode == Exit.OK:
        env.update(new)
    listed = "\n".join(f"  {name}={value}" for name, value in sorted(new.items()))
    stdout = f"now set in this shell:\n{listed}\n" if new else "(no variables set)\n"
    return CommandResult(step, command, returncode, box.display(mask_unknown_keys(redact(stdout))),
                         box.display(mask_unknown_keys(redact(stderr))), time.monotonic() - started)


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def group_gateway_log(records) -> list[GatewayLine]:
    """The mock's view of one command, equal requests counted once (order of first appearance)."""
    counts: dict[str, int] = {}
    for record in records:
        # Durations differ per request; without them, identical requests fold into one line.
        text = _DURATION.sub("", record.log_line(), count=1)
        counts[text] = counts.get(text, 0) + 1
    return [GatewayLine(text, n) for text, n in counts.items()]


_DURATION = re.compile(r" \d+ms(?=  !! |$)")


def changed_files(box: Sandbox, before: dict[str, tuple[str, int]],
                  redact: Redactor) -> tuple[list[FileShown], int]:
    after = box.snapshot()
    shown: list[FileShown] = []
    backups = 0
    for rel, (digest, mode) in after.items():
        if before.get(rel, (None,))[0] == digest:
            continue
        if "/backups/" in f"/{rel}":
            backups += 1
            continue
        if rel.endswith(".lock"):  # init's lock file: empty, internal
            continue
        text = (box.home / rel).read_text(encoding="utf-8", errors="replace")
        shown.append(FileShown("~/" + rel, f"{mode:04o}", "changed" if rel in before else "new",
                               box.display(mask_unknown_keys(redact(text)))))
    return shown, backups


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM cleans up like Ctrl-C does (only possible from the main thread)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):  # noqa: ARG001 - signal handler signature
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_demo(options: DemoOptions, reporter: Reporter) -> DemoSummary:
    """Run the walkthrough; the temporary directory is removed at the end (also on Ctrl-C) unless kept."""
    from taotoken_cli.mock import MockGateway, MockOptions

    options.validate()
    redact = Redactor(DEMO_KEY)
    started = time.monotonic()
    results: list[CommandResult] = []
    skipped: list[str] = []
    interrupted = False
    box = Sandbox.create(options.parent_dir)
    mock = None
    with_doctor = doctor_available()
    try:
        with _sigterm_as_interrupt():
            try:
                seeded = box.seed()
                mock_options = MockOptions(
                    key=DEMO_KEY, models=SERVED_MODELS, aliases={ALIAS_MODEL: ALIAS_ANSWER},
                    latency_ms=0.0 if options.fast else 40.0, token_rate=0.0 if options.fast else 400.0,
                    tokens=16)
                mock = MockGateway(mock_options).start()
                env = box.env(dict(options.base_env if options.base_env is not None else os.environ))
                steps = build_steps(mock.url, options.fast, with_doctor)
                prepare, shown = _plan(steps, options.step)
                reporter.intro(DemoInfo(box.root, box.home, mock.url, mask_key(DEMO_KEY),
                                        SERVED_MODELS, {ALIAS_MODEL: ALIAS_ANSWER}, [s.name for s in shown],
                                        [s.name for s in prepare], seeded))
                for step in prepare:
                    for command in step.commands:
                        result = run_command(step.name, command, box, env, mock, redact)
                        if not result.ok:  # without its prerequisite the step would only show that failure
                            reporter.command(command)
                            reporter.result(result)
                            results.append(result)
                            raise DemoError(f"preparing step {options.step!r}: `{command.shown}` exited "
                                            f"{result.returncode}", "run the whole demo: taotoken demo")
                for step in shown:
                    reporter.step(step)
                    if step.skipped:
                        skipped.append(step.name)
                        continue
                    for command in step.commands:
                        reporter.command(command)
                        result = run_command(step.name, command, box, env, mock, redact, step.show_files)
                        results.append(result)
                        reporter.result(result)
            except KeyboardInterrupt:
                interrupted = True
    finally:
        if mock is not None:
            mock.close()
        kept = box.root if options.keep else None
        if not options.keep:
            box.remove()
    summary = DemoSummary(results, time.monotonic() - started, kept, removed=not box.root.exists(),
                          with_doctor=with_doctor, interrupted=interrupted, skipped=skipped)
    reporter.outro(summary)
    return summary


def what_next(with_doctor: bool = True) -> list[tuple[str, str]]:
    """(command, what it does) for the user's real setup."""
    steps = [
        ('printf %s "$TAOTOKEN_KEY" | taotoken init --key-stdin --model MODEL --dry-run',
         "see what would change in your real client files (nothing is written)"),
        ("taotoken init", "the same for real: asks for base URL, key (hidden) and model; backups, undo"),
        ("taotoken check", "one request: works, or the failure and its fix"),
        ("taotoken doctor", "every cause of a broken setup, each with its fix"),
        ("taotoken mock", "a local gateway to point your own clients at and watch what they send"),
    ]
    return [s for s in steps if with_doctor or s[0] != "taotoken doctor"]

