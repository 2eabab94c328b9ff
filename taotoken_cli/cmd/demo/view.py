"""Rendering `taotoken demo`: a transcript a newcomer can follow and retype (plain text, bold headers on a TTY).

The demo's own lines are in the user's language and wrap to the terminal (taotoken_cli.core.term.layout), and so do
the gateway's log lines; what it shows as it is never wraps: the commands to retype, their output (each step
wraps its own lines, with the temporary HOME shown as ~) and the files' contents.
"""

from __future__ import annotations

from taotoken_cli.cmd.demo.model import CommandResult, DemoInfo, DemoSummary
from taotoken_cli.cmd.demo.steps import Command, Step, what_next
from taotoken_cli.core.base.fix import Command as ShellLine
from taotoken_cli.core.base.fix import Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.platform import shells
from taotoken_cli.core.term.layout import cell_width, pad, wrap
from taotoken_cli.core.term.output import Output

_MAX_GATEWAY_LINES = 8
_RULE = "─" * 4


class TranscriptReporter:
    """Prints each part of the demo as soon as it happens."""

    def __init__(self, out: Output, shell: str = shells.POSIX) -> None:
        self.out = out
        self.shell = shell  # the user's shell: "what next" is written in its syntax
        self._total = 0
        self._index = 0

    def _strong(self, text: str, prefix: str = "", hang: str | None = None) -> None:
        self._bold(wrap(text, self.out.width, prefix, hang))

    def _bold(self, lines: list[str]) -> None:
        for line in lines:
            if self.out.color:
                self.out.console.print(line, style="bold", markup=False, highlight=False)
            else:
                self.out.line(line)

    def _flush(self) -> None:
        self.out.out.flush()

    def intro(self, info: DemoInfo) -> None:
        self._total = len(info.steps)
        self._strong(_("taotoken demo: every command, for real, against a local gateway in a throwaway HOME"),
                     hang="  ")
        labels = (_("gateway"), "HOME")
        column = max(cell_width(label) for label in labels) + 2
        gateway, home = (f"  {pad(label, column)}" for label in labels)
        under = " " * cell_width(gateway)
        models = listed(info.models)
        aliases = listed(_("{alias} answers as {model}").format(alias=a, model=b) for a, b in info.aliases.items())
        for prefix, text in (
            (gateway, _("{url}   (taotoken mock on loopback; key {key})").format(url=info.gateway_url,
                                                                              key=info.key_masked)),
            (under, _("models: {models}; {aliases}").format(models=models, aliases=aliases) if aliases
             else _("models: {models}").format(models=models)),
            (home, _("{home}   (shown as ~ below)").format(home=info.home)),
            (under, _("already there, as on a real machine: {files}").format(files=listed(info.seeded))),
        ):
            self.out.wrapped(text, prefix, under)
        self.out.wrapped(_("nothing outside {root} is written; nothing beyond 127.0.0.1 is contacted").format(
            root=info.root), "  ")
        if info.prepared:
            self.out.wrapped(_("prepared quietly first: {steps}").format(steps=listed(info.prepared)), "  ")
        self._flush()

    def step(self, step: Step) -> None:
        self._index += 1
        self.out.line()
        self._strong(_("{step}: {title}").format(step=step.name, title=_(step.title)),
                     f"{_RULE} {self._index}/{self._total} ")
        self._flush()

    def command(self, command: Command) -> None:
        self.out.line()
        if command.why:
            self.out.wrapped(_(command.why), "# ", "# ")
        self._bold([f"$ {command.shown}"])  # one line to retype, never wrapped
        self._flush()

    def result(self, result: CommandResult) -> None:
        line = self.out.line
        for text in (result.stdout, result.stderr):
            if text.strip():
                line(text.rstrip("\n"))
        seconds = f"{result.elapsed_s:.2f}"
        if result.ok:
            self.out.wrapped(_("[exit {code}; {seconds} s]").format(code=result.returncode, seconds=seconds), hang=" ")
        else:
            codes = [str(c) for c in result.command.ok_exit]
            expected = codes[0] if len(codes) == 1 else _("{codes} or {last}").format(codes=listed(codes[:-1]),
                                                                                        last=codes[-1])
            self.out.wrapped(_("[exit {code}, expected {expected}: this step did not work as it should; {seconds} s]")
                          .format(code=result.returncode, expected=expected, seconds=seconds), hang=" ")
        if result.gateway:
            line(_("the gateway received:"))
            for entry in result.gateway[:_MAX_GATEWAY_LINES]:  # log lines, as the mock prints them, fitted
                self.out.wrapped(entry.text + (f"   x{entry.count}" if entry.count > 1 else ""), "  ", "      ")
            rest = result.gateway[_MAX_GATEWAY_LINES:]
            if rest:
                self.out.wrapped(_("… and {n} more request(s)").format(n=sum(e.count for e in rest)), "  ")
        if result.files:
            line(_("files now in ~ (key masked):"))
            for shown in result.files:
                if shown.mode:
                    access = _("mode {mode}").format(mode=shown.mode)
                else:  # Windows: a mode means nothing there, the ACL does
                    access = _("readable by you alone") if shown.private else _("others may read it")
                state = (_("{path}   (new, {access})") if shown.state == "new"
                         else _("{path}   (changed, {access})"))
                self.out.wrapped(state.format(path=shown.path, access=access), "  ", "    ")
                for text in shown.text.rstrip("\n").splitlines():
                    line(f"    │ {text}")
            if result.backups:
                self.out.wrapped(_("(+ {n} backup file(s) of the previous versions under ~/.config/taotoken/backups/)")
                              .format(n=result.backups), "  ", "   ")
        self._flush()

    def outro(self, summary: DemoSummary) -> None:
        self.out.line()
        commands = len(summary.results)
        seconds = f"{summary.elapsed_s:.1f}"
        rule = _RULE + " "
        if summary.interrupted:
            self._strong(_("interrupted after {seconds} s ({n} command(s) ran)").format(seconds=seconds, n=commands),
                         rule)
        elif summary.failed:
            names = listed(_("`{command}` (exit {code})").format(command=r.command.shown, code=r.returncode)
                              for r in summary.failed)
            self._strong(_("finished in {seconds} s; {failed} of {total} command(s) did not work: {commands}")
                         .format(seconds=seconds, failed=len(summary.failed), total=commands, commands=names), rule)
        else:
            self._strong(_("done in {seconds} s: {n} command(s), all worked").format(seconds=seconds, n=commands),
                         rule)
        if summary.kept is not None:
            self.out.wrapped(Fix.of(_("kept {path} (the gateway has stopped); look around: {command}"),
                                    path=str(summary.kept), command=ShellLine(f"ls -la {summary.kept / 'home'}")),
                             hang="  ")
            self.out.wrapped(Fix.of(_("remove it when done: {command}"), command=ShellLine(f"rm -rf {summary.kept}")),
                             hang="  ")
        elif summary.removed:
            self.out.wrapped(_("removed the temporary directory; nothing else was touched"), hang="  ")
        if summary.interrupted:
            self._flush()
            return
        self.out.line()
        self._strong(_("what next, for your real setup:"), hang="  ")
        for cmd, why in what_next(self.shell):
            self.out.line(f"  $ {cmd}")
            self.out.wrapped(_(why), "      ")
        self._flush()
