"""The live view on stderr (terminals only): one line per model with rich.progress, sized to the
terminal; a model's line settles into its result when it is done, and the whole view disappears
before the report is printed, so no stale line is left behind.

It runs in the parent process, which only polls the workers' shared counters (about 10 times a
second) and redraws a few times a second: the measuring happens in the worker processes."""

from __future__ import annotations

import contextlib
import os
import signal

from taotoken_cli.cmd.bench.campaign import Progress
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.term.layout import cell_width, truncate

STATUS_WIDTH = 25  # "1200/2000 1,234/s 9 err 120s" (display columns); longer ones are shortened
MIN_BAR = 6
FREE_COLUMNS = 3  # left free at the right edge: the last column, and room for the terminal's "^C"


class LiveView(Progress):
    def __init__(self, console, models: list[str], sweep=None, repeat: int = 1) -> None:
        from rich.progress import BarColumn, TextColumn
        from rich.progress import Progress as RichProgress
        from rich.table import Column

        self.sweep = sweep
        self.repeat = repeat
        # the terminal's own width, whatever COLUMNS says (a wider guess wraps and leaves stale lines), less three
        # columns: a line that fills the last one leaves the cursor past the edge (some terminals wrap there), and
        # the terminal's own "^C" echo on Ctrl-C must fit on the line, or it wraps and the line it pushed up stays
        with contextlib.suppress(AttributeError, OSError, ValueError):
            console.width = os.get_terminal_size(console.file.fileno()).columns - FREE_COLUMNS
        width = max(40, console.width)
        step_width = 0
        if sweep is not None:
            steps = len(sweep.values)
            step_width = max(len(sweep.label(v)) for v in sweep.values) + len(f" {steps}/{steps}")
        if repeat > 1:
            step_width += len(f" #{repeat}")
        # 3 gaps of one space between 4 columns (or 2 between 3)
        room = width - STATUS_WIDTH - MIN_BAR - (step_width + 1 if step_width else 0) - 3
        self.name_width = max(8, min(max(cell_width(m) for m in models), room))
        columns = [TextColumn("{task.fields[name]}", table_column=Column(width=self.name_width, no_wrap=True,
                                                                         overflow="ellipsis"))]
        if step_width:
            columns.append(TextColumn("{task.fields[step]}", table_column=Column(width=step_width, no_wrap=True)))
        columns += [BarColumn(bar_width=None, table_column=Column(ratio=1, min_width=MIN_BAR)),
                    TextColumn("{task.fields[status]}", justify="right",
                               table_column=Column(width=STATUS_WIDTH, no_wrap=True))]
        self.progress = RichProgress(*columns, console=console, transient=True, refresh_per_second=5, expand=True)
        self.tasks = {model: self.progress.add_task("", total=None, name=model, step="", status=_("waiting"),
                                                    start=False) for model in models}
        self.progress.start()

    def series_started(self, plan, step: str | None, repeat: int | None):
        task = self.tasks[plan.model]
        label = ""
        if step is not None and self.sweep is not None:
            index = next((i for i, v in enumerate(self.sweep.values) if self.sweep.label(v) == step), 0)
            label = f"{step} {index + 1}/{len(self.sweep.values)}"
        if repeat is not None:
            label += f" #{repeat + 1}"
        self.progress.start_task(task)
        self.progress.update(task, step=label.strip(), completed=0, total=1000, status=_("starting"))
        duration = plan.duration

        def on_progress(done: int, failed: int, total: int | None, elapsed: float) -> None:
            fraction = min(1.0, done / total) if total else (min(1.0, elapsed / duration) if duration else 0.0)
            self.progress.update(task, completed=fraction * 1000, status=status_text(done, failed, total, elapsed))

        return on_progress

    def series_finished(self, plan, result) -> None:
        task = self.tasks[plan.model]
        stats = result.stats
        done = stats.ok + stats.failed
        status = status_text(done, stats.failed, None, stats.elapsed)
        if result.aborted:
            status = _("stopped: {failed} failed").format(failed=stats.failed)
        self.progress.update(task, completed=1000, status=status)

    def close(self) -> None:
        self.progress.stop()


class PlainProgress(Progress):
    """TERM=dumb: nothing is redrawn (no carriage return, no escape sequence); one plain line per model every
    INTERVAL_S at most ("gpt-4o-mini: 120/200 29/s 3 err 4s"), and one when a series ends."""

    INTERVAL_S = 5.0

    def __init__(self, out, models: list[str], sweep=None, repeat: int = 1) -> None:
        self.out = out
        self.width = out.err_width - 1  # never the last column
        self.after_ctrl_c = False  # the line break after the terminal's "^C" is written

    def _fresh_line(self) -> None:
        """After Ctrl-C the terminal has echoed "^C" where the cursor was, at the start of an empty line (each plain
        line ends with its newline): what follows (a progress line, the partial report) starts on the next one.
        The live view erases its line, "^C" with it; a plain terminal cannot, so the "^C" keeps its own line."""
        from taotoken_cli.cmd.bench.campaign import STOP

        if STOP.signal == signal.SIGINT and not self.after_ctrl_c:
            self.after_ctrl_c = True
            self.out.err.write("\n")

    def _say(self, text: str) -> None:
        self._fresh_line()
        self.out.error_line(truncate(text, self.width))
        self.out.err.flush()

    def series_started(self, plan, step: str | None, repeat: int | None):
        import time

        label = plan.model + (f" {step}" if step else "") + (f" #{repeat + 1}" if repeat is not None else "")
        last = [time.monotonic()]

        def on_progress(done: int, failed: int, total: int | None, elapsed: float) -> None:
            now = time.monotonic()
            if now - last[0] >= self.INTERVAL_S:
                last[0] = now
                self._say(f"{label}: {status_text(done, failed, total, elapsed)}")

        return on_progress

    def series_finished(self, plan, result) -> None:
        stats = result.stats
        status = (_("stopped: {failed} failed").format(failed=stats.failed) if result.aborted
                  else status_text(stats.ok + stats.failed, stats.failed, None, stats.elapsed))
        self._say(f"{plan.model}: {status}")

    def close(self) -> None:
        self._fresh_line()
        self.out.err.flush()


def _short(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10000 else str(n)


def status_text(done: int, failed: int, total: int | None, elapsed: float) -> str:
    """"120/200 29/s 3 err 4s", made shorter (12.0k, no rate) rather than cut when it would not fit."""
    rate = f" {done / elapsed:,.0f}/s" if elapsed >= 0.2 else ""
    # i18n: failed requests in the live progress line, kept short: "120/200 29/s 3 err 4s"
    errors = " " + _("{n} err").format(n=failed) if failed else ""
    for short in (str, _short):
        count = f"{short(done)}/{short(total)}" if total else short(done)
        for text in (f"{count}{rate}{errors} {elapsed:.0f}s", f"{count}{errors} {elapsed:.0f}s"):
            if cell_width(text) <= STATUS_WIDTH:
                return text
    return truncate(f"{count}{errors}", STATUS_WIDTH, ellipsis="")


