"""The examples in README.md and docs/*.md, run for real and compared with what the docs quote.

What is collected
- Every fenced ```console block. Each line starting with `$ ` is a command, run by `sh -c` (pipes,
  `VAR=value` prefixes and `eval "$(…)"` work); the lines after it, up to the next `$ `, are what it
  prints (stdout and stderr together, as a terminal shows them). A block that runs `taotoken demo` is
  one command: the demo's transcript holds `$` lines of its own.
- A line whose text starts with `…` stands for any number of lines the docs leave out; the rest of that
  line is a comment for the reader. A line `^C` is the terminal echoing Ctrl-C and is not compared.
- Every `taotoken …` invocation in console and bash/sh blocks must parse: the command and its options
  exist and the values have the right type (checked against the Typer app, nothing is run). In a console
  block every `$ ` line counts, so the commands `taotoken demo` prints are checked too.
- No output may hold the full key or a traceback.

Where the commands run (a "setup", chosen by `<!-- setup: NAME -->` on the line right before the fence;
the default is `configured`; the setups are defined in SETUPS in tests/doc_setups.py)
- A fresh temporary HOME per block, the project's mock gateway on 127.0.0.1 (`PORT` in a command is its
  port), a scrubbed environment (no proxies, no client variables, PATH holding only a `taotoken` shim and
  the system directories), `$KEY` holding the test key. Nothing beyond 127.0.0.1 is contacted.
- `$ taotoken mock … &` runs a mock in the background for the rest of the block: the lines after it are
  what it prints at start, and `PORT` in later commands is its port. It is stopped when the block ends.
- In the `mock-traffic` setup a block's one `taotoken mock` command is started, sent the requests of
  `_mock_traffic` (described on docs/mock.md), then stopped with Ctrl-C.

Opting out: `<!-- not checked: REASON -->` right before the fence; the reason is required. Its commands
must still parse.

What may differ (normalised on both sides before comparing): the mock's port (`PORT`), the temporary
HOME (`/home/me`), durations and figures with a decimal point (timings, rates), clock times, dates and
request ids, the counts in doctor's summary (they depend on which device libraries are installed),
bench's number of worker processes (one per core), and runs of spaces (column widths follow the figures).

    python -m tests.doc_examples docs/check.md [LINE]   # print what each example's commands print now
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# KEY is the key every setup uses: it must never appear whole in any output.
from tests.doc_setups import COMMAND_TIMEOUT_S, KEY, REPO, SETUPS, World, Worlds  # noqa: F401 - SETUPS re-exported

DOC_FILES = (REPO / "README.md", *sorted(REPO.glob("README.*.md")), *sorted((REPO / "docs").glob("*.md")))
# A page in another language runs its examples in that language (the commands are the same).
PAGE_LANGUAGE = {"README.zh-CN.md": "zh"}  # README.<lang>.md
DOC_HOME = "/home/me"  # how the docs write the temporary HOME

FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
MARKER = re.compile(r"^<!--\s*(not checked|setup)\s*:\s*(.*?)\s*-->\s*$")
ANY_MARKER = re.compile(r"^\s*<!--\s*(not checked|setup)\b")
ELLIPSIS = "…"
SHELL_LANGS = ("bash", "sh", "shell", "console")


# -- reading the docs ---------------------------------------------------------------------------------

@dataclass
class Step:
    command: str
    expected: list[str]
    line: int


@dataclass
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    lang: str
    body: list[str]
    setup: str = "configured"
    skip_reason: str | None = None
    problems: list[str] = field(default_factory=list)  # malformed markers or blocks

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO).as_posix()}:{self.line}"

    @property
    def steps(self) -> list[Step]:
        steps: list[Step] = []
        for offset, text in enumerate(self.body):
            if text.startswith("$ ") and not (steps and steps[0].command.startswith("taotoken demo")):
                steps.append(Step(text[2:].strip(), [], self.line + 1 + offset))
            elif steps:
                steps[-1].expected.append(text)
        return steps


def read_blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, with the marker on the line before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        start, ticks = i, fence.group(1)
        i += 1
        body: list[str] = []
        while i < len(lines) and not lines[i].startswith(ticks):
            body.append(lines[i])
            i += 1
        block = Block(path, start + 1, fence.group(2).lower(), body)
        marker = MARKER.match(lines[start - 1]) if start else None
        if marker:
            kind, value = marker.groups()
            if kind == "setup":
                block.setup = value
            elif value:
                block.skip_reason = value
            else:
                block.problems.append(f"{block.id}: `<!-- not checked: … -->` needs a reason")
        if block.lang == "console" and (not body or not body[0].startswith("$ ")):
            block.problems.append(f"{block.id}: a console block starts with `$ COMMAND`")
        blocks.append(block)
        i += 1
    return blocks


def stray_markers(path: Path) -> list[str]:
    """Markers not directly before a fence (they would silently do nothing)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    bad = []
    for n, text in enumerate(lines):
        if ANY_MARKER.search(text) and (not MARKER.match(text) or n + 1 >= len(lines)
                                        or not FENCE.match(lines[n + 1])):
            bad.append(f"{path.relative_to(REPO).as_posix()}:{n + 1}: marker not on the line before a fence: "
                       f"{text.strip()}")
    return bad


def all_blocks() -> list[Block]:
    return [block for path in DOC_FILES for block in read_blocks(path)]


def checked_blocks() -> list[Block]:
    return [b for b in all_blocks() if b.lang == "console" and b.skip_reason is None and not b.problems]


# -- every documented command parses -------------------------------------------------------------------

_SEPARATORS = {"|", "||", "&&", ";", "&", "(", ")", ";;", "|&"}
_REDIRECTS = {">", ">>", "<", ">&", "<&", "&>", "&>>", "<<", "<<<", ">|"}
# Words after which the shell expects a command.
_KEYWORDS = {"if", "then", "elif", "else", "while", "until", "do", "!", "{", "time", "exec", "command"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def shell_lines(block: Block) -> list[tuple[int, str]]:
    """(line number, command line) of a console or shell block; backslash continuations joined."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for offset, text in enumerate(block.body):
        if block.lang == "console":
            if text.startswith("$ "):
                out.append((block.line + 1 + offset, text[2:]))
            continue
        if not pending:
            start = block.line + 1 + offset
        if text.rstrip().endswith("\\"):
            pending += text.rstrip()[:-1] + " "
            continue
        out.append((start, pending + text))
        pending = ""
    if pending:
        out.append((start, pending))
    return out


def taotoken_invocations(command: str) -> list[list[str]]:
    """The argument lists of every `taotoken` run by a shell command line, `$(…)` included."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: not a command line
        return []
    found: list[list[str]] = []
    at_command, i = True, 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("$(") or token.startswith("`"):
            found += taotoken_invocations(token.strip("`").removeprefix("$(").removesuffix(")"))
        if token in _SEPARATORS or (at_command and token in _KEYWORDS):
            at_command = True
        elif at_command and _ASSIGNMENT.match(token):
            pass  # VAR=value before the command
        elif at_command and token == "taotoken":
            args: list[str] = []
            i += 1
            while i < len(tokens) and tokens[i] not in _SEPARATORS:
                if tokens[i] in _REDIRECTS or (tokens[i].isdigit() and i + 1 < len(tokens)
                                               and tokens[i + 1] in _REDIRECTS):
                    i += 1 if tokens[i] in _REDIRECTS else 2
                else:
                    if tokens[i].startswith("$("):
                        found += taotoken_invocations(tokens[i].removeprefix("$(").removesuffix(")"))
                    args.append(tokens[i])
                i += 1
            found.append(args)
            continue
        else:
            at_command = False
        i += 1
    return found


def parse_error(args: list[str]) -> str | None:
    """None when `taotoken ARGS` parses (command, options, value types); else the usage error.

    Contexts are made as the app would make them, but no command is invoked (help text is swallowed).
    """
    import contextlib
    import io

    import typer
    import typer.main

    from taotoken_cli.app import app

    click = getattr(typer, "_click", None)
    if click is None:  # typer before it vendored click
        import click
    exits = tuple({typer.Exit, getattr(click.exceptions, "Exit", typer.Exit)})
    command = typer.main.get_command(app)
    name, ctx = "taotoken", None
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            while True:
                ctx = command.make_context(name, list(args), parent=ctx)
                rest = [*(getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", None) or []),
                        *ctx.args]
                if not rest or not hasattr(command, "resolve_command"):
                    return None
                name, command, args = command.resolve_command(ctx, rest)
                if command is None:
                    return f"no such command: {name}"
    except exits:  # --help, --version
        return None
    except click.exceptions.UsageError as exc:
        return exc.format_message()


# -- normalising what legitimately varies ----------------------------------------------------------------

_NORMALISE = (
    (re.compile(r"\d{8}T\d{6}(\.\d+)?Z"), "<time>"),  # backup directories
    (re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z?"), "<time>"),
    (re.compile(r"\b\d{2}:\d{2}:\d{2}\b"), "HH:MM:SS"),
    (re.compile(r"\d{12,}"), "<id>"),  # request ids
    (re.compile(r"(127\.0\.0\.1(?::|%3A))\d{4,5}\b"), r"\1PORT"),  # a port the test did not choose (demo)
    (re.compile(r"\S*/(taotoken-demo-)[A-Za-z0-9_]+"), r"/tmp/\1XXXXXXXX"),
    (re.compile(r"(?<=mock-)\d+(\.\d+)+|(?<=taotoken )\d+\.\d+\.\d+\b"), "X.Y.Z"),  # the tool's version
    (re.compile(r"(?<![\w.])\d[\d,]*(\.\d+)?(?=\s?(?:ms\b|s\b|毫秒|秒))"), "#"),  # durations (秒: in Chinese)
    (re.compile(r"(?<![\d.])\d[\d,]*\.\d+(?![\d.])"), "#.#"),  # figures: rates, percentiles, percentages
    (re.compile(r"\(\d+ checks run, \d+ skipped\)"), "(# checks run, # skipped)"),  # device libraries vary
    (re.compile(r"\b\d+ workers\b"), "# workers"),  # bench: one per core by default
)


def normalise(text: str) -> list[str]:
    lines = []
    for line in text.splitlines():
        for pattern, replacement in _NORMALISE:
            line = pattern.sub(replacement, line)
        lines.append(" ".join(line.split()))
    while lines and not lines[-1]:
        lines.pop()
    return lines


def localise(text: str, *, home: Path, ports: list[int], root: Path) -> str:
    """The run's own values written the way the docs write them."""
    text = text.replace(str(home), DOC_HOME).replace(str(root), "/tmp")
    for port in ports:
        text = re.sub(rf"(?<!\d){port}(?!\d)", "PORT", text)
    return text


def mismatch(expected: list[str], actual: list[str]) -> str | None:
    """None when `actual` fits `expected` (lines starting with `…` match any run of lines)."""
    segments: list[list[str]] = [[]]
    for line in expected:
        if line.startswith(ELLIPSIS):
            segments.append([])
        elif line != "^C":
            segments[-1].append(line)
    first, rest = segments[0], segments[1:]
    if actual[:len(first)] != first:
        return _first_difference(first, actual, 0)
    pos = len(first)
    if not rest:
        return None if pos == len(actual) else f"unexpected output from line {pos + 1}: {actual[pos]!r}"
    for n, segment in enumerate(rest):
        last = n == len(rest) - 1
        if last:
            start = len(actual) - len(segment)
            if start < pos:
                return f"too few lines after line {pos}: the docs show {len(segment)} more"
            if actual[start:] != segment:
                return "at the end: " + _first_difference(segment, actual[start:], start)
            return None
        found = next((k for k in range(pos, len(actual) - len(segment) + 1)
                      if actual[k:k + len(segment)] == segment), None)
        if found is None:
            return f"not found (in this order) after line {pos}: {segment[:3]!r}…"
        pos = found + len(segment)
    return None


def _first_difference(expected: list[str], actual: list[str], offset: int) -> str:
    for n, line in enumerate(expected):
        got = actual[n] if n < len(actual) else "<end of output>"
        if got != line:
            return f"line {offset + n + 1}: expected {line!r}\n{' ' * 10}got      {got!r}"
    return "the output is shorter than documented"


# -- running a block ---------------------------------------------------------------------------------------

@dataclass
class StepRun:
    step: Step
    raw: str  # exactly what was printed
    shown: str  # with the run's own port and paths written as the docs write them
    exit_code: int | None


class _Background:
    """A command started with `&` (or the mock-traffic block's server): output read as it comes."""

    def __init__(self, command: str, world: World) -> None:
        self.proc = subprocess.Popen(["sh", "-c", command], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=world.env, cwd=world.home,
                                     start_new_session=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.append(raw.decode("utf-8", errors="replace"))

    def wait_for(self, done: Callable[[list[str]], bool], timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not done(self.lines) and self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)

    def settle(self, quiet_s: float = 0.2, timeout: float = 2.0) -> None:
        """Wait until nothing new has been printed for `quiet_s` (a log line's hints follow it)."""
        deadline = time.monotonic() + timeout
        seen = -1
        while len(self.lines) != seen and time.monotonic() < deadline:
            seen = len(self.lines)
            time.sleep(quiet_s)

    def text(self) -> str:
        return "".join(self.lines)

    def stop(self) -> int | None:
        """Ctrl-C, as a user would press it; killed when it does not stop."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._reader.join(5)
        return self.proc.returncode


# The mock's banner in either language: "listening on http://…" / "正在监听 http://…", ending "Ctrl-C to stop" /
# "按 Ctrl-C 停止".
_LISTENING = re.compile(r"(?:listening on|正在监听) http://127\.0\.0\.1:(\d+)")
_BANNER_END = "Ctrl-C"
_LOG_LINE = re.compile(r"\d\d:\d\d:\d\d ")  # one per request in the mock's log


def run_block(block: Block, worlds: Worlds, root: Path | None = None) -> list[StepRun]:
    own_root = root is None
    root = Path(tempfile.mkdtemp(prefix="taotoken-docs-")) if root is None else root
    background: list[_Background] = []
    runs: list[StepRun] = []
    try:
        world = worlds.world(block.setup, root)
        for step in block.steps:
            command = step.command
            lang = PAGE_LANGUAGE.get(block.path.name)
            if lang:
                command = f"export TAOTOKEN_LANG={lang}; {command}"
            if world.port is not None:
                command = re.sub(r"\bPORT\b", str(world.port), command)
            if world.setup.traffic is not None or command.rstrip().endswith("&"):
                job = _Background(command.rstrip().removesuffix("&"), world)
                background.append(job)
                job.wait_for(lambda lines: any(_BANNER_END in line for line in lines))
                port = next((int(m.group(1)) for line in job.lines if (m := _LISTENING.search(line))), None)
                if port is not None:
                    world.ports.append(port)
                if world.setup.traffic is None:
                    raw, code = job.text(), None
                elif port is None:
                    raise RuntimeError(f"{block.id}: no `listening on` line from: {command}\n{job.text()}")
                else:
                    sent = world.setup.traffic(f"http://127.0.0.1:{port}/api")
                    job.wait_for(lambda lines, sent=sent: sum(bool(_LOG_LINE.match(x)) for x in lines) >= sent)
                    job.settle()
                    code = job.stop()
                    raw = job.text()
            else:
                proc = subprocess.run(["sh", "-c", command], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, env=world.env, cwd=world.home,
                                      timeout=COMMAND_TIMEOUT_S)
                raw, code = proc.stdout.decode("utf-8", errors="replace"), proc.returncode
            runs.append(StepRun(step, raw, localise(raw, home=world.home, ports=world.ports, root=root), code))
    finally:
        for job in background:
            job.stop()
        if own_root:
            shutil.rmtree(root, ignore_errors=True)
    return runs


def compare(runs: list[StepRun]) -> list[str]:
    """Every way the printed output differs from the documented one."""
    problems = []
    for run in runs:
        where = f"line {run.step.line}: $ {run.step.command}"
        if KEY in run.raw:
            problems.append(f"{where}\n  the full key appears in the output")
        if "Traceback (most recent call last)" in run.raw:
            problems.append(f"{where}\n  a traceback:\n{run.raw}")
        problem = mismatch(normalise("\n".join(run.step.expected)), normalise(run.shown))
        if problem:
            problems.append(f"{where}\n  {problem}\n  what it prints now (as the docs would write it):\n"
                            + "\n".join("    " + line for line in run.shown.rstrip("\n").splitlines()))
    return problems


# -- for the people writing the docs ---------------------------------------------------------------------

def main(argv: list[str]) -> int:
    """Print what each example of a file prints now, ready to paste (then trim with `…`)."""
    if not argv:
        print(__doc__)
        return 2
    path = Path(argv[0]).resolve()
    only = int(argv[1]) if len(argv) > 1 else None
    blocks = [b for b in read_blocks(path) if b.lang == "console" and only in (None, b.line)]
    if not blocks:
        print(f"no console block{'' if only is None else f' starts at line {only}'} in {path}", file=sys.stderr)
        return 1
    worlds = Worlds()
    try:
        for block in blocks:
            note = f"   (not checked: {block.skip_reason})" if block.skip_reason else ""
            print(f"==== {block.id}  setup {block.setup}{note}")
            for run in run_block(block, worlds):
                print(f"$ {run.step.command}")
                print(run.shown.rstrip("\n"))
                print(f"[exit {run.exit_code}]")
    finally:
        worlds.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
