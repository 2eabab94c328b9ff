"""The I/O a command runs against, built once at start and passed into its core (as `gh`'s IOStreams).

`IOStreams.system()` wraps the process's streams, environment and working directory; tests build
`IOStreams.memory(...)` and read back what was written. Output goes through `io.out` (redacting, colour
decided from the streams and the environment), and every question a command asks goes through
`io.prompter`: one confirm, one question, one secret prompt and one "press Enter" pause, the same for `init`,
`doctor --fix` and `config set api_key -`.
"""

from __future__ import annotations

import io as _io
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO, TypeVar

from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.term.output import Output, isatty

T = TypeVar("T")


class ConfirmationNeeded(InputError):
    """A change needs a yes, and there is no terminal to ask on (nothing was written)."""

    def __init__(self, dry_run: bool = False) -> None:
        super().__init__(_("confirmation needed, but stdin is not a terminal (nothing was written)"),
                         _("re-run with --yes to apply the changes shown, or with --dry-run to see the diffs")
                         if dry_run else _("re-run with --yes to apply the changes shown"))


class Prompter:
    """Every question a command asks. Prompts go to stderr, so stdout stays clean for pipes."""

    LIST_LIMIT = 20  # choices shown at once; more are reached by narrowing the list

    def __init__(self, streams: IOStreams, hidden_input: Callable[[str], str] | None = None) -> None:
        self._io = streams
        self._hidden_input = hidden_input

    @property
    def interactive(self) -> bool:
        return self._io.stdin_tty

    def say(self, text: str, prefix: str = "") -> None:
        """A line for the person answering (stderr, secrets masked), wrapped to the terminal: continuation lines
        hang under the text after `prefix`, or two columns in when there is none."""
        self._io.out.error_wrapped(text, prefix, None if prefix else "  ")

    def _read_line(self, prompt: str) -> str:
        self._io.stderr.write(prompt)
        self._io.stderr.flush()
        line = self._io.stdin.readline()
        if not line:  # end of input (Ctrl-D): the user walked away from the question
            raise KeyboardInterrupt
        return line.rstrip("\r\n")

    def confirm(self, question: str, *, assume_yes: bool = False, default: bool = False,
                dry_run_hint: bool = False) -> bool:
        """True for y/yes (an empty answer is `default`). Without a terminal (and without --yes) this refuses: a
        script must say --yes (`dry_run_hint`: the command also has --dry-run, and the refusal says so)."""
        if assume_yes:
            return True
        if not self.interactive:
            raise ConfirmationNeeded(dry_run_hint)
        answer = self._read_line(_("{question} [{choices}] ").format(question=question,
                                                                     choices="Y/n" if default else "y/N"))
        answer = answer.strip().lower()
        return default if not answer else answer in ("y", "yes")

    def ask(self, label: str, default: str | None = None) -> str:
        """One line of input; an empty answer is the default (when there is one)."""
        prompt = _("{label} [{default}]: ").format(label=label, default=default) if default else \
            _("{label}: ").format(label=label)
        answer = self._read_line(prompt)
        return answer if answer.strip() or default is None else default

    def pause(self, message: str) -> bool:
        """Wait for Enter on a terminal (`message` says what to do first and what comes next). Without a terminal
        there is nobody to wait for: returns False at once, and the caller says how to go on later."""
        if not self.interactive:
            return False
        self._read_line(_("{message} — press Enter to continue (Ctrl-C stops) ").format(message=message))
        return True

    def secret(self, label: str) -> str:
        """A secret: typed hidden on a terminal; otherwise the whole of stdin (`printf %s "$KEY" | …`)."""
        if not self.interactive:
            return self._io.stdin.read()
        try:
            return (self._hidden_input or self._read_line)(_("{label} (input hidden): ").format(label=label))
        except EOFError:  # getpass on Ctrl-D
            raise KeyboardInterrupt from None

    def ask_until(self, label: str, accept: Callable[[str], T], *, default: str | None = None,
                  secret: bool = False) -> T:
        """Ask until `accept` takes the answer: each refusal (an InputError) is shown and the question asked
        again, so one bad paste does not end the whole dialogue. Ctrl-D ends it (KeyboardInterrupt)."""
        while True:
            answer = self.secret(label) if secret else self.ask(label, default)
            try:
                return accept(answer)
            except InputError as exc:
                if not self.interactive:  # nobody to ask again
                    raise
                self.say(exc.message, _("error: "))
                if exc.fix:
                    from taotoken_cli.core.term.guard import fix_in_users_shell

                    self.say(fix_in_users_shell(exc.fix, self._io.env), "  " + _("fix: "))

    def choose(self, label: str, choices: list[str], *, narrow: Callable[[str], list[str]],
               unknown: Callable[[str], str]) -> str:
        """One of `choices`: its number in the list shown, or itself typed; anything else narrows the list
        (`narrow(text)`), and when nothing matches `unknown(text)` says why before asking again."""
        shown = choices
        self._show(shown, len(choices))
        while True:
            answer = self.ask(label).strip()
            if answer in choices:
                return answer
            if answer.isdigit():
                numbered = min(len(shown), self.LIST_LIMIT)
                if 1 <= int(answer) <= numbered:
                    return shown[int(answer) - 1]
                self.say(_("there is no number {number} in the list shown (1-{last})").format(number=answer,
                                                                                           last=numbered))
                continue
            if not answer:
                self.say(_("type a number from the list, an ID, or part of one to narrow the list"))
                continue
            matches = narrow(answer)
            if matches:
                shown = matches
                self._show(shown, len(choices))
            else:
                self.say(unknown(answer))

    def _show(self, items: list[str], total: int) -> None:
        if len(items) < total:
            self.say(_("{shown} of {total} match:").format(shown=len(items), total=total))
        width = len(str(min(len(items), self.LIST_LIMIT)))
        for number, item in enumerate(items[: self.LIST_LIMIT], 1):
            self.say(f"{number:>{width}}) {item}", "  ")
        if len(items) > self.LIST_LIMIT:
            self.say(_("… {count} more: type part of a name to narrow the list").format(
                count=len(items) - self.LIST_LIMIT), "  ")


@dataclass
class IOStreams:
    stdin: TextIO
    stdout: TextIO
    stderr: TextIO
    env: dict[str, str]
    cwd: Path
    stdin_tty: bool = False
    stdout_tty: bool = False
    stderr_tty: bool = False
    hidden_input: Callable[[str], str] | None = None
    _out: Output | None = field(default=None, repr=False)
    _prompter: Prompter | None = field(default=None, repr=False)

    @classmethod
    def system(cls) -> IOStreams:
        def hidden(prompt: str) -> str:
            import getpass

            return getpass.getpass(prompt, stream=sys.stderr)

        return cls(sys.stdin, sys.stdout, sys.stderr, dict(os.environ), Path.cwd(), isatty(sys.stdin),
                   isatty(sys.stdout), isatty(sys.stderr), hidden)

    @classmethod
    def memory(cls, stdin: str = "", *, env: Mapping[str, str] | None = None, cwd: Path | None = None,
               tty: bool = False) -> IOStreams:
        """In-memory streams for tests; with `tty`, stdin answers the prompts line by line (secrets too)."""
        return cls(_io.StringIO(stdin), _io.StringIO(), _io.StringIO(), dict(env or {}), cwd or Path.cwd(),
                   tty, tty, tty)

    @property
    def out(self) -> Output:
        if self._out is None:
            self._out = Output(stdout=self.stdout, stderr=self.stderr, env=self.env,
                               out_tty=self.stdout_tty, err_tty=self.stderr_tty)
        return self._out

    @property
    def prompter(self) -> Prompter:
        if self._prompter is None:
            self._prompter = Prompter(self, self.hidden_input)
        return self._prompter

    def written(self) -> tuple[str, str]:
        """(stdout, stderr) so far, for memory streams."""
        return self.stdout.getvalue(), self.stderr.getvalue()  # type: ignore[attr-defined]
