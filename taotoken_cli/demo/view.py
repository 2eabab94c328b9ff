"""Rendering `taotoken demo`: a transcript a newcomer can follow and retype (plain text, bold headers on a TTY)."""

from __future__ import annotations

from taotoken_cli.demo.model import CommandResult, DemoInfo, DemoSummary
from taotoken_cli.demo.steps import Command, Step, what_next
from taotoken_cli.output import Output

_MAX_GATEWAY_LINES = 8
_RULE = "─" * 4


class TranscriptReporter:
    """Prints each part of the demo as soon as it happens."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self._total = 0
        self._index = 0

    def _strong(self, text: str) -> None:
        if self.out.color:
            self.out.console.print(text, style="bold", markup=False, highlight=False)
        else:
            self.out.line(text)

    def _flush(self) -> None:
        self.out.out.flush()

    def intro(self, info: DemoInfo) -> None:
        self._total = len(info.steps)
        line = self.out.line
        self._strong("taotoken demo: every command, for real, against a local gateway in a throwaway HOME")
        aliases = ", ".join(f"{a} answers as {b}" for a, b in info.aliases.items())
        line(f"  gateway  {info.gateway_url}   (taotoken mock on loopback; key {info.key_masked})")
        line(f"           models: {', '.join(info.models)}" + (f"; {aliases}" if aliases else ""))
        line(f"  HOME     {info.home}   (shown as ~ below)")
        line(f"           already there, as on a real machine: {', '.join(info.seeded)}")
        line(f"  nothing outside {info.root} is written; nothing beyond 127.0.0.1 is contacted")
        if info.prepared:
            line(f"  prepared quietly first: {', '.join(info.prepared)}")
        self._flush()

    def step(self, step: Step) -> None:
        self._index += 1
        self.out.line()
        self._strong(f"{_RULE} {self._index}/{self._total} {step.name}: {step.title}")
        self._flush()

    def command(self, command: Command) -> None:
        self.out.line()
        if command.why:
            self.out.line(f"# {command.why}")
        self._strong(f"$ {command.shown}")
        self._flush()

    def result(self, result: CommandResult) -> None:
        line = self.out.line
        for text in (result.stdout, result.stderr):
            if text.strip():
                line(text.rstrip("\n"))
        status = f"exit {result.returncode}"
        if not result.ok:
            expected = " or ".join(str(c) for c in result.command.ok_exit)
            status += f", expected {expected}: this step did not work as it should"
        line(f"[{status}; {result.elapsed_s:.2f} s]")
        if result.gateway:
            line("the gateway received:")
            for entry in result.gateway[:_MAX_GATEWAY_LINES]:
                line(f"  {entry.text}" + (f"   x{entry.count}" if entry.count > 1 else ""))
            rest = result.gateway[_MAX_GATEWAY_LINES:]
            if rest:
                line(f"  … and {sum(e.count for e in rest)} more request(s)")
        if result.files:
            line("files now in ~ (key masked):")
            for shown in result.files:
                line(f"  {shown.path}   ({shown.state}, mode {shown.mode})")
                for text in shown.text.rstrip("\n").splitlines():
                    line(f"    │ {text}")
            if result.backups:
                line(f"  (+ {result.backups} backup file(s) of the previous versions under "
                     "~/.config/taotoken/backups/)")
        self._flush()

    def outro(self, summary: DemoSummary) -> None:
        line = self.out.line
        line()
        commands = len(summary.results)
        if summary.interrupted:
            self._strong(f"{_RULE} interrupted after {summary.elapsed_s:.1f} s ({commands} command(s) ran)")
        elif summary.failed:
            names = ", ".join(f"`{r.command.shown}` (exit {r.returncode})" for r in summary.failed)
            self._strong(f"{_RULE} finished in {summary.elapsed_s:.1f} s; {len(summary.failed)} of {commands} "
                         f"command(s) did not work: {names}")
        else:
            self._strong(f"{_RULE} done in {summary.elapsed_s:.1f} s: {commands} command(s), all worked")
        if summary.kept is not None:
            line(f"kept {summary.kept} (the gateway has stopped); look around: ls -la {summary.kept / 'home'}")
            line(f"remove it when done: rm -rf {summary.kept}")
        elif summary.removed:
            line("removed the temporary directory; nothing else was touched")
        if summary.interrupted:
            self._flush()
            return
        line()
        self._strong("what next, for your real setup:")
        for cmd, why in what_next():
            line(f"  $ {cmd}")
            line(f"      {why}")
        self._flush()
