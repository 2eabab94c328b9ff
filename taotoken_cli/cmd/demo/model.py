"""What the demo produces as it runs: one result per command, the intro and the summary, and the
Reporter that receives each as soon as it exists."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from taotoken_cli.cmd.demo.sandbox import FileShown
from taotoken_cli.cmd.demo.steps import Command, Step
from taotoken_cli.core.base.exitcodes import Exit


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
    interrupted: bool = False

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
