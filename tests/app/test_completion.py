"""The generated completion scripts, driven in real bash, zsh and fish (in tmux): Tab completes commands,
options, option values (from the code), positional arguments and file names, and offers nothing rather than
the option list where a value nobody can guess is due."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.tmux import Tmux, require_tmux

PROMPT = "T> "
MARK = "Z"  # typed after Tab: shows whether completion added a space

SHARE = REPO / "taotoken_cli" / "share" / "completions"
SETUP = {
    "bash": (["bash", "--norc", "--noprofile"],
             f"PS1='{PROMPT}'; bind 'set show-all-if-ambiguous on'; bind 'set bell-style none'; "
             f"bind 'set page-completions off'; source {SHARE / 'taotoken.bash'}"),
    "zsh": (["zsh", "-f"],
            f"PS1='{PROMPT}'; fpath=({SHARE} $fpath); autoload -Uz compinit; compinit -u -D"),
    "fish": (["fish", "--no-config"],
             f"function fish_prompt; echo -n '{PROMPT}'; end; set -g fish_autosuggestion_enabled 0; "
             f"source {SHARE / 'taotoken.fish'}"),
}

# (typed before Tab, the command line after Tab and MARK)
COMPLETES = [
    ("taotoken con", "taotoken config Z"),
    ("taotoken doctor --che", "taotoken doctor --check Z"),
    ("taotoken init --target cod", "taotoken init --target codex Z"),
    ("taotoken init --target=cod", "taotoken init --target=codex Z"),
    ("taotoken init --scope pro", "taotoken init --scope project Z"),
    ("taotoken explain auth.inv", "taotoken explain auth.invalid_key Z"),
    ("taotoken config set ba", "taotoken config set base_url Z"),
    ("taotoken demo --step do", "taotoken demo --step doctor Z"),
    ("taotoken mock --fail-style lite", "taotoken mock --fail-style litellm Z"),
    ("taotoken mock --fault trunc", "taotoken mock --fault truncated-stream Z"),
    ("taotoken doctor --check gateway.ch", "taotoken doctor --check gateway.chat Z"),
    ("taotoken route --device nvi", "taotoken route --device nvidia Z"),
    ("taotoken route set cu", "taotoken route set cuda=Z"),
    ("taotoken bench --arrival poi", "taotoken bench --arrival poisson Z"),
    ("taotoken bench --prompt-file READ", "taotoken bench --prompt-file README.md Z"),
    ("taotoken bench -n 10 --dataset REd", "taotoken bench -n 10 --dataset REdir/Z"),
    # a value nobody can guess: nothing is inserted (before the fix: "-" and the option list)
    ("taotoken bench --model ", "taotoken bench --model Z"),
    ("taotoken config set model ", "taotoken config set model Z"),
    # a value that depends on the key before it
    ("taotoken config set lang z", "taotoken config set lang zh Z"),
]

# (typed before Tab, the words the list shown below the command line must hold)
LISTS = [
    ("taotoken init --target ", ["claude-code", "codex", "cline", "cc-switch", "shell", "mcp", "project-env"]),
    ("taotoken bench --prompt-file RE", ["README.md", "REPORT.txt", "REdir/"]),  # a directory shows its /
    ("taotoken config set ", ["base_url", "api_key", "model", "default_profile"]),
    ("taotoken config set lang ", ["en", "zh", "auto"]),
]


def prompts(screen: str) -> list[str]:
    """The command lines on the screen (a capture drops the prompt's trailing space on an empty line)."""
    return [line[len(PROMPT):].rstrip() for line in screen.splitlines() if line.startswith(PROMPT.rstrip())]


def command_line(screen: str) -> str:
    lines = prompts(screen)
    return lines[-1] if lines else ""


@pytest.fixture(params=sorted(SETUP))
def shell(request: pytest.FixtureRequest, tmp_path: Path):
    require_tmux()
    name = request.param
    if not shutil.which(name):
        pytest.skip(f"{name} is not installed here")
    work = tmp_path / "work"
    work.mkdir()
    for file in ("README.md", "REPORT.txt"):
        (work / file).write_text("x\n")
    (work / "REdir").mkdir()
    argv, setup = SETUP[name]
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config"),
           "XDG_DATA_HOME": str(tmp_path / ".local/share"), "INPUTRC": "/dev/null", "TERM": "xterm-256color"}
    with Tmux(argv, width=200, height=40, cwd=work, env=env) as term:
        term.type(setup + "; clear")
        term.send("Enter")
        term.wait_for(lambda s: s.strip() == PROMPT.strip())
        yield term


def _until(term: Tmux, key: str, done: Callable[[str], bool]) -> None:
    """Send `key` until the screen shows `done` (three tries, a few seconds each)."""
    for _ in range(3):
        term.send(key)
        try:
            term.wait_for(done, timeout=3)
            return
        except AssertionError:
            continue
    term.wait_for(done)


def _fresh_line(term: Tmux) -> None:
    """An empty command line on a cleared screen. A shell busy completing or handling the C-c may drop a key
    typed meanwhile (seen on a loaded machine in bash, zsh and fish), so each is sent again if it was lost."""
    _until(term, "C-c", lambda s: command_line(s) == "")
    _until(term, "C-l", lambda s: prompts(s) == [""] and "^C" not in s)


def _tab(term: Tmux, typed: str, done: Callable[[str], bool], *, mark: bool) -> str:
    """On a fresh line: `typed`, Tab (then MARK when `mark`), until the screen shows `done`; the screen. A loaded
    machine can drop or reorder a key sent while the shell is busy (CI once showed `T> taotoken con` and then a new
    prompt holding `T> Z`): the case is typed again once on a fresh line. A wrong completion fails both times."""
    for attempt in (1, 2):
        _fresh_line(term)
        term.type(typed)
        term.send("Tab")
        if mark:
            term.type(MARK)
        try:
            return term.wait_for(done, timeout=5)
        except AssertionError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def test_tab_completes_commands_options_values_arguments_and_files(shell: Tmux) -> None:
    for typed, expected in COMPLETES:
        try:
            _tab(shell, typed, lambda s, e=expected: command_line(s) == e, mark=True)
        except AssertionError as exc:
            raise AssertionError(f"{typed!r} + Tab: expected {expected!r}\n{exc}") from None


def listed(screen: str) -> str:
    """The screen without its command lines: what completion listed (the typed words, "taotoken" holding
    "en" among them, are left out)."""
    return "\n".join(line for line in screen.splitlines() if not line.startswith(PROMPT.rstrip()))


def test_tab_lists_the_values_and_inserts_nothing_else(shell: Tmux) -> None:
    for typed, shown in LISTS:
        try:
            screen = _tab(shell, typed, lambda s, shown=shown: set(shown) <= set(listed(s).split()), mark=False)
        except AssertionError as exc:
            raise AssertionError(f"{typed!r} + Tab: expected a list of {shown}\n{exc}") from None
        assert command_line(screen) == typed.rstrip(), screen
        assert set(shown) <= set(listed(screen).split()), screen
        assert "--" not in listed(screen), screen  # no options offered instead of the values
