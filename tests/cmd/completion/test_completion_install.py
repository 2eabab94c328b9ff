"""`taotoken completion --install` in the real shells: a new interactive bash, zsh and fish (in tmux, started as a
user starts them, reading their own start-up files from a temporary HOME) completes `taotoken ch<Tab>`, and
`man` finds the page through the search path it derives from PATH. Also: printing, idempotence, --uninstall, the
generic undo, and where the lines go in start-up files users really have."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, write
from tests.tmux import Tmux, require_tmux

SKEL_BASHRC = Path("/etc/skel/.bashrc")


def _shim(home: Path) -> Path:
    """`taotoken` in ~/.local/bin, where pipx and uv put it (the repository's code, this Python)."""
    import sys

    bin_dir = home / ".local" / "bin"
    return write(bin_dir / "taotoken", f'#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m taotoken_cli "$@"\n',
                 0o755)


def _env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "PATH": f"{home / '.local' / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            "TERM": "xterm-256color", "LANG": "C.UTF-8", "INPUTRC": "/dev/null", "XDG_CONFIG_HOME": None,
            "XDG_DATA_HOME": None, "MANPATH": None, "NO_COLOR": "1"}


def _clean(env: dict[str, str | None]) -> dict[str, str]:
    full = {key: value for key, value in os.environ.items() if env.get(key, "") is not None}
    full.update({key: value for key, value in env.items() if value is not None})
    return full


INTERACTIVE = {"bash": ["bash", "-i"], "zsh": ["zsh", "-i"], "fish": ["fish", "-i"]}


def _new_shell_completes(shell: str, home: Path) -> None:
    """A new interactive shell: `taotoken ch` + Tab becomes `taotoken check `; `man -w` finds both pages."""
    env = _clean(_env(home))
    with Tmux(INTERACTIVE[shell], width=200, height=40, cwd=home, env=env) as term:
        term.wait_for(lambda s: s.strip() != "", timeout=20)  # the prompt
        term.type("taotoken ch")
        term.send("Tab")
        term.type("Z")
        term.wait_for(lambda s: "taotoken check Z" in s, timeout=20)
        term.send("C-u")
        if shutil.which("man"):
            term.type("man -w taotoken; man -w -L zh_CN taotoken")
            term.send("Enter")
            man1 = str(home / ".local/share/man/man1/taotoken.1")
            zh = str(home / ".local/share/man/zh_CN/man1/taotoken.1")
            term.wait_for(lambda s: man1 in s.replace("\n", "") and zh in s.replace("\n", ""), timeout=20,
                          joined=True)


def _install(cli, home: Path, *targets: str):
    return cli("completion", "--install", *targets, "--yes", env=_env(home)).assert_clean()


@pytest.mark.parametrize("shell", sorted(INTERACTIVE))
def test_a_new_shell_completes_after_install_and_man_finds_the_pages(shell, cli, home) -> None:
    require_tmux()
    if not shutil.which(shell):
        pytest.skip(f"{shell} is not installed here (.ci/run installs it)")
    _shim(home)
    if shell == "bash" and SKEL_BASHRC.is_file():  # a new account's ~/.bashrc (Debian's loads bash-completion)
        shutil.copy(SKEL_BASHRC, home / ".bashrc")
    result = _install(cli, home, shell, "man")
    assert result.returncode == 0, result.output
    _new_shell_completes(shell, home)


def test_bash_without_bash_completion_gets_a_line_in_bashrc(cli, home, tmp_path) -> None:
    """No bash-completion on this 'system' (TAOTOKEN_SYSTEM_ROOT: an empty root): ~/.bashrc sources the file."""
    require_tmux()
    _shim(home)
    env = {**_env(home), "TAOTOKEN_SYSTEM_ROOT": str(tmp_path / "root")}
    result = cli("completion", "--install", "bash", "--yes", env=env).assert_clean()
    assert result.returncode == 0, result.output
    line = (home / ".bashrc").read_text()
    assert "# taotoken-completion" in line and ".local/share/bash-completion/completions/taotoken" in line
    env = _clean(_env(home))
    with Tmux(["bash", "--norc", "--noprofile", "-i"], width=200, height=20, cwd=home, env=env) as term:
        term.type(". ~/.bashrc; clear")  # what bash does at start with its rc file (--norc: nothing of the system's)
        term.send("Enter")
        term.wait_for(lambda s: "clear" not in s)
        term.type("taotoken ch")
        term.send("Tab")
        term.type("Z")
        term.wait_for(lambda s: "taotoken check Z" in s, timeout=20)


def test_zsh_fpath_goes_before_the_frameworks_compinit_and_a_bare_zshrc_gets_compinit(cli, home) -> None:
    omz = "export ZSH=$HOME/.oh-my-zsh\nplugins=(git)\nsource $ZSH/oh-my-zsh.sh\nalias ll='ls -l'\n"
    write(home / ".zshrc", omz, 0o644)
    _install(cli, home, "zsh")
    lines = (home / ".zshrc").read_text().splitlines()
    fpath = next(i for i, line in enumerate(lines) if line.startswith("fpath=("))
    assert fpath < lines.index("source $ZSH/oh-my-zsh.sh")
    assert not any("compinit" in line for line in lines)  # oh-my-zsh runs it
    assert "\n".join(line for line in lines if "taotoken-completion" not in line) + "\n" == omz
    (home / ".zshrc").unlink()
    _install(cli, home, "zsh")
    bare = (home / ".zshrc").read_text().splitlines()
    assert bare[0].startswith("fpath=(") and bare[1].startswith("autoload -Uz compinit && compinit")


def test_install_is_idempotent_and_uninstall_and_undo_take_it_back(cli, home) -> None:
    before = "# my zshrc\nautoload -Uz compinit; compinit\n"
    write(home / ".zshrc", before, 0o644)
    first = _install(cli, home, "zsh", "fish", "man")
    assert first.returncode == 0 and "wrote" in first.stdout
    files = [home / ".local/share/zsh/site-functions/_taotoken", home / ".config/fish/completions/taotoken.fish",
             home / ".local/share/man/man1/taotoken.1", home / ".local/share/man/zh_CN/man1/taotoken.1"]
    assert all(f.is_file() for f in files)
    again = _install(cli, home, "zsh", "fish", "man")
    assert again.returncode == 0 and "already installed and up to date" in again.stdout and "wrote" not in again.stdout
    assert (home / ".zshrc").read_text().count("taotoken-completion") == 1
    gone = cli("completion", "--uninstall", "zsh", "fish", "man", "--yes", env=_env(home)).assert_clean()
    assert gone.returncode == 0 and "removed" in gone.stdout
    assert not any(f.exists() for f in files) and (home / ".zshrc").read_text() == before
    undo = cli("init", "--undo", "--yes", env=_env(home)).assert_clean()  # the uninstall, undone: all back
    assert undo.returncode == 0, undo.output
    assert all(f.is_file() for f in files) and "taotoken-completion" in (home / ".zshrc").read_text()
    assert cli("completion", "--uninstall", "zsh", "--yes", env=_env(home)).returncode == 0
    nothing = cli("completion", "--uninstall", "zsh", "--yes", env=_env(home)).assert_clean()
    assert nothing.returncode == 0 and "nothing to remove" in nothing.stdout


def test_without_a_terminal_install_asks_for_yes_and_dry_run_writes_nothing(cli, home) -> None:
    refused = cli("completion", "--install", "fish", env=_env(home)).assert_clean()
    assert refused.returncode == 2 and "--yes" in refused.stderr and "--dry-run" in refused.stderr
    dry = cli("completion", "--install", "fish", "--dry-run", env=_env(home)).assert_clean()
    assert dry.returncode == 0 and "dry run: nothing was written" in dry.stdout
    assert not (home / ".config/fish").exists()


def test_print_each_script_and_refuse_what_is_not_a_shell(run) -> None:
    for shell, first in (("bash", "# bash completion"), ("zsh", "#compdef taotoken"), ("fish", "# fish completion"),
                         ("powershell", "# PowerShell completion")):
        result = run("completion", shell).assert_clean()
        assert result.returncode == 0 and result.stdout.startswith(first)
        assert result.stdout == (REPO / "taotoken_cli/share/completions" /
                                 {"bash": "taotoken.bash", "zsh": "_taotoken", "fish": "taotoken.fish",
                                  "powershell": "taotoken.ps1"}[shell]).read_text(encoding="utf-8")
    for args in (("completion", "tcsh"), ("completion",), ("completion", "man"), ("completion", "--install", "ksh")):
        refused = run(*args).assert_clean()
        assert refused.returncode == 2 and "fix:" in refused.stderr, args


def test_printed_scripts_parse_in_their_shells(cli) -> None:
    for shell in ("bash", "zsh", "fish"):
        if not shutil.which(shell):
            continue
        text = cli("completion", shell).stdout
        proc = subprocess.run([shell, "-n"], input=text, capture_output=True, text=True)
        assert proc.returncode == 0, (shell, proc.stderr)
