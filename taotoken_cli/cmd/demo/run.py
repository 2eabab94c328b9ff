"""`taotoken demo`: every command, for real, against the local mock gateway in a throwaway HOME.

The demo starts `taotoken_cli.cmd.mock.MockGateway` on a free loopback port, creates a temporary directory
(`sandbox`) with a HOME that already holds typical client configs, and runs each step of the script
(`steps`) as the real CLI in a subprocess (`python -m taotoken_cli …`) whose environment points only into
that directory. Nothing outside it is written, and nothing beyond 127.0.0.1 is contacted. The runner
computes one `CommandResult` per command and hands it to a reporter as soon as it exists; rendering lives
in `view`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.cmd.demo.model import CommandResult, DemoInfo, DemoSummary, GatewayLine, Reporter
from taotoken_cli.cmd.demo.sandbox import Sandbox, changed_files
from taotoken_cli.cmd.demo.steps import (
    ALIAS_ANSWER,
    ALIAS_MODEL,
    DEMO_KEY,
    SERVED_MODELS,
    STEP_NAMES,
    Command,
    build_steps,
    plan_steps,
)
from taotoken_cli.core.base import i18n
from taotoken_cli.core.base.errors import InputError, TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command as FixCommand
from taotoken_cli.core.base.fix import Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.base.masking import Redactor, mask_key, mask_unknown_keys
from taotoken_cli.core.platform import shells
from taotoken_cli.core.term.iostreams import IOStreams

COMMAND_TIMEOUT_S = 90.0


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
            raise InputError(_("unknown demo step {step}").format(step=repr(self.step)),
                             _("use one of: {choices}").format(choices=listed(STEP_NAMES)))
        return self


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
        stderr = _text(exc.stderr) + "\n" + _("(demo: stopped after {seconds} s)").format(
            seconds=f"{COMMAND_TIMEOUT_S:.0f}")
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
    """Source the file in a real `sh` and keep the variables it sets (the parser of init's env.sh without one; for
    env.ps1, the parser of what init writes there: PowerShell is not started for two assignments)."""
    from taotoken_cli.core.clients.envfiles import parse_env_ps1, parse_env_sh

    path = box.home / (command.source or "")
    started = time.monotonic()
    sh = shutil.which("sh", path=env.get("PATH"))
    if not path.is_file():
        return CommandResult(step, command, Exit.FAILURE, "", box.display(f"{path}: No such file or directory"),
                             time.monotonic() - started)
    if path.suffix == ".ps1" or sh is None:
        text = path.read_text(encoding="utf-8")
        new = parse_env_ps1(text) if path.suffix == ".ps1" else parse_env_sh(text)
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
    stdout = (_("now set in this shell:") + f"\n{listed}\n") if new else (_("(no variables set)") + "\n")
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
    from taotoken_cli.cmd.mock import MockGateway, MockOptions

    options.validate()
    redact = Redactor(DEMO_KEY)
    started = time.monotonic()
    results: list[CommandResult] = []
    interrupted = False
    box = Sandbox.create(options.parent_dir)
    mock = None
    try:
        with _sigterm_as_interrupt():
            try:
                seeded = box.seed()
                mock_options = MockOptions(
                    key=DEMO_KEY, models=SERVED_MODELS, aliases={ALIAS_MODEL: ALIAS_ANSWER},
                    latency_ms=0.0 if options.fast else 40.0, token_rate=0.0 if options.fast else 400.0,
                    tokens=16)
                mock = MockGateway(mock_options).start()
                env = box.env(dict(options.base_env if options.base_env is not None else os.environ),
                              lang=i18n.current())
                steps = build_steps(mock.url, options.fast, shells.syntax(env))
                prepare, shown = plan_steps(steps, options.step)
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
                            raise DemoError(_("preparing step {step}: `{command}` exited {code}").format(
                                step=repr(options.step), command=command.shown, code=result.returncode),
                                Fix.of(_("run the whole demo: {command}"), command=FixCommand("taotoken demo")))
                for step in shown:
                    reporter.step(step)
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
                          interrupted=interrupted)
    reporter.outro(summary)
    return summary


def run(options: DemoOptions, io: IOStreams) -> int:
    from taotoken_cli.cmd.demo.view import TranscriptReporter

    if options.base_env is None:
        options.base_env = io.env
    return run_demo(options, TranscriptReporter(io.out, shells.syntax(options.base_env))).exit_code
