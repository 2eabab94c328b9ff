"""Completions and the man page are generated from the app, committed, and kept fresh."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SHARE = REPO / "taotoken_cli" / "share"
MAN_PAGE = SHARE / "man" / "man1" / "taotoken.1"
ZH_MAN_PAGE = SHARE / "man" / "zh_CN" / "man1" / "taotoken.1"


def test_generated_files_are_fresh() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "scripts/gen_docs.py"), "--check"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr + "\nregenerate with: python scripts/gen_docs.py"


def _bash_complete(line: str) -> list[str]:
    words = line.split(" ")
    quoted = " ".join(shlex.quote(w) for w in words)
    script = (f"source {SHARE / 'completions' / 'taotoken.bash'}\n"
              f"COMP_WORDS=({quoted})\nCOMP_CWORD={len(words) - 1}\n_taotoken\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    return proc.stdout.split()


def test_bash_completion_completes_commands_subcommands_and_options() -> None:
    assert "config" in _bash_complete("taotoken ")
    assert set(_bash_complete("taotoken config ")) >= {"show", "path", "set", "profiles"}
    assert _bash_complete("taotoken config show --or") == ["--origin"]


@pytest.mark.parametrize("shell, path", [("zsh", "completions/_taotoken"), ("fish", "completions/taotoken.fish")])
def test_other_completions_parse(shell: str, path: str) -> None:
    if not shutil.which(shell):
        pytest.skip(f"{shell} is not installed here (.ci/run installs it)")
    proc = subprocess.run([shell, "-n", str(SHARE / path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


MAN_ENV = {"MANWIDTH": "100", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def test_man_page_renders_cleanly(tmp_path: Path) -> None:
    if not shutil.which("man"):
        pytest.skip("man is not installed")
    # Minimized images (Ubuntu's) replace `man` with a script that prints a notice instead of any page.
    probe_page = tmp_path / "probe.1"
    probe_page.write_text('.TH PROBE 1\n.SH NAME\nprobe \\- renders\n')
    probe = subprocess.run(["man", "-l", str(probe_page)], capture_output=True, text=True, env=MAN_ENV)
    if "renders" not in probe.stdout:
        pytest.skip(f"man cannot render any page here: {(probe.stdout + probe.stderr).strip()[:200]!r}")
    for locale in ("C.UTF-8", "C"):  # the page's escapes render without warnings on a UTF-8 or an ASCII terminal
        proc = subprocess.run(["man", "-l", "--warnings", str(MAN_PAGE)], capture_output=True,
                              text=True, env={**MAN_ENV, "LANG": locale, "LC_ALL": locale})
        assert proc.returncode == 0
        assert "warning" not in proc.stderr.lower(), (locale, proc.stderr)
        for section in ("NAME", "SYNOPSIS", "COMMANDS", "EXIT STATUS", "FILES", "ENVIRONMENT", "EXAMPLES"):
            assert section in proc.stdout
        # each command's synopsis names its arguments as its help does
        assert "taotoken config set [OPTIONS] KEY VALUE" in proc.stdout
        assert "taotoken route set [OPTIONS] KIND=MODEL..." in proc.stdout


def _render(page: Path, width: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["man", "-l", "--warnings", str(page)], capture_output=True, text=True,
                          env={**MAN_ENV, "MANWIDTH": str(width), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})


def test_the_chinese_man_page_renders_within_80_columns() -> None:
    """groff 1.22 measures a CJK character as one column: the page is wrapped by taotoken's layout rule instead,
    so at 80 columns no line is wider than the terminal, and nothing warns."""
    if not shutil.which("man"):
        pytest.skip("man is not installed")
    from taotoken_cli.core.term.layout import cell_width

    proc = _render(ZH_MAN_PAGE, 80)
    if "TAOTOKEN" not in proc.stdout:
        pytest.skip(f"man cannot render any page here: {proc.stderr[:200]!r}")
    assert "warning" not in proc.stderr.lower(), proc.stderr
    for heading in ("名称", "概要", "描述", "命令", "退出码", "环境变量", "文件", "示例"):
        assert f"\n{heading}\n" in proc.stdout, heading
    assert "TAOTOKEN_LANG" in proc.stdout and "CLICOLOR_FORCE" in proc.stdout
    widest = max(proc.stdout.splitlines(), key=cell_width)
    assert cell_width(widest) <= 80, widest


# Variables the code reads that the page leaves out on purpose: the OS's own plumbing, and test seams.
NOT_FOR_USERS = {"PATH", "PYTHONPATH", "PYTHONIOENCODING", "REQUEST_METHOD", "SYSTEMDRIVE", "APPDATA", "USERPROFILE",
                 "USERNAME", "PROMPT", "PSModulePath", "LOCALAPPDATA", "TAOTOKEN_SYSTEM_ROOT",
                 "MANPATH", "LINES", "AppleLanguages"}


def test_the_man_pages_name_every_variable_the_code_reads() -> None:
    """ENVIRONMENT lists each variable read through env.get / environ[…] / `in env` anywhere in the package, and
    each TAOTOKEN_* variable a module names in a constant (read through that constant: system.ENV_DESKTOP), in both
    languages; a new variable fails here until the page names it (scripts/gen_docs.py, MAN_TEXT)."""
    import re

    read: set[str] = set()
    pattern = re.compile(r"""(?:\.get\(|environ\[|env\[|getenv\()\s*["']([A-Z][A-Za-z0-9_]{2,})["']"""
                         r"""|["']([A-Z][A-Z0-9_]{2,})["'] in (?:env|os\.environ)"""
                         r"""|^[A-Z][A-Z0-9_]* = ["'](TAOTOKEN_[A-Z0-9_]+)["']""", re.M)
    for path in (REPO / "taotoken_cli").rglob("*.py"):
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            read.add(match.group(1) or match.group(2) or match.group(3))
    for page in (MAN_PAGE, ZH_MAN_PAGE):
        text = page.read_text(encoding="utf-8").replace("\\-", "-").replace("\\_", "_")
        text = text.replace("\\fB", " ")
        missing = sorted(name for name in read - NOT_FOR_USERS
                         if not re.search(rf"(?<![A-Za-z0-9_]){name}(?![A-Za-z0-9_])", text))
        assert not missing, (page.name, missing)


def test_the_wheel_and_the_sdist_carry_the_completions_and_the_man_pages(tmp_path: Path) -> None:
    """Every script and page is package data (so `taotoken completion` has it however taotoken was installed, uv's
    tool environments included) and a data file under share/ where pip's installs make it visible."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    shipped = sorted(str(p.relative_to(REPO)) for p in SHARE.rglob("*") if p.is_file())
    assert len(shipped) == 6, shipped  # bash, zsh, fish, PowerShell; the English and the Chinese page
    data_files = {file for files in project["data-files"].values() for file in files}
    assert data_files == set(shipped) - {"taotoken_cli/share/completions/taotoken.ps1"}
    from fnmatch import fnmatch

    patterns = project["package-data"]["taotoken_cli"]
    for path in shipped:
        assert any(fnmatch(path.removeprefix("taotoken_cli/"), pattern) for pattern in patterns), path


def _generator():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "scripts/gen_docs.py")
    gen = importlib.util.module_from_spec(spec)
    sys.modules["gen_docs"] = gen  # dataclasses look their module up while the file executes
    spec.loader.exec_module(gen)
    return gen


def test_each_kind_of_option_value_gets_its_completion_in_every_shell() -> None:
    """Values, files and free values, as each script writes them (tests/app/test_completion.py drives them)."""
    gen = _generator()
    shape = gen.Opt(["--shape"], "Shape.", True, ["round", "square"], "SHAPE")
    out = gen.Opt(["-o", "--out"], "Output.", True, [], "FILE")
    size = gen.Opt(["--size"], "Size.", True, [], "N")
    set_ = gen.Cmd(["set"], "Set.", [], [gen.Arg("KEY", ["lang", "model"]),
                                        gen.Arg("VALUE", [], after={"lang": ["en", "zh"]})])
    tree = gen.Cmd([], "root", [], [], [gen.Cmd(["draw"], "Draw.", [shape, out, size], [gen.Arg("KIND", ["a="])]),
                                        set_])
    bash, zsh, fish = gen.render_bash(tree), gen.render_zsh(tree), gen.render_fish(tree)
    assert '"/draw|--shape") _taotoken_words "round square"; return ;;' in bash
    assert '"/draw|-o"|"/draw|--out") _taotoken_files -f; return ;;' in bash
    assert '"/draw|--size") :; return ;;' in bash
    assert '"/draw|0") _taotoken_words "a="; return ;;' in bash
    assert '"/draw|--shape") compadd -- round square; return ;;' in zsh
    assert '"/draw|-o"|"/draw|--out") _files; return ;;' in zsh
    assert '"/draw|0") compadd -S \'\' -- a=; return ;;' in zsh
    assert "-l shape -x -a 'round square'" in fish and "-s o -l out -r -F -d 'Output.'" in fish
    assert "-l size -x -d 'Size.'" in fish
    # a value that depends on the argument before it (config set lang -> en zh auto)
    assert '"/set|1") [[ $prev == lang ]] && { _taotoken_words "en zh"; return; } ;;' in bash
    assert '"/set|1") [[ $prev == lang ]] && { compadd -- en zh; return; } ;;' in zsh
    assert ("-n 'test \"/set#1\" = (__taotoken_state arg); and test (commandline -opc)[-1] = lang' -a 'en zh'"
            in fish)


def test_the_man_page_is_ascii_with_groff_escapes() -> None:
    page = MAN_PAGE.read_text(encoding="utf-8")
    assert page.isascii(), [line for line in page.splitlines() if not line.isascii()][:3]
    assert "`export TAOTOKEN_MODEL=...`" in page  # route --export's help: "…" written as three dots


def test_the_shipped_completions_offer_values_from_the_code() -> None:
    from taotoken_cli.cmd.mock.options import FAIL_STYLES
    from taotoken_cli.core.clients import CLIENTS
    from taotoken_cli.core.diagnosis.catalogue import CATALOGUE
    from taotoken_cli.core.settings.edit import SETTABLE_KEYS

    bash = (SHARE / "completions" / "taotoken.bash").read_text(encoding="utf-8")
    assert f'"/init|--target") _taotoken_words "{" ".join(CLIENTS)}"' in bash
    assert f'"/config/set|0") _taotoken_words "{" ".join(SETTABLE_KEYS)}"' in bash
    assert f'"/mock|--fail-style") _taotoken_words "{" ".join(FAIL_STYLES)}"' in bash
    assert all(code in bash for code in CATALOGUE)


def test_ci_runs_exactly_the_readmes_test_command() -> None:
    """CI (.ci/run) runs the suite the way the README tells a contributor to: one command, in parallel (xdist)."""
    import re

    command = "pip install -e '.[test]' && python -m pytest"
    ci = [line for line in (REPO / ".ci/run").read_text().splitlines() if line.startswith(command)]
    readme = {m.group(1).strip() for m in re.finditer(rf"^({re.escape(command)}[^#\n]*)",
                                                      (REPO / "README.md").read_text(), re.M)}
    assert len(ci) == 1 and readme == {ci[0].strip()}, (ci, readme)
    assert " -n " in ci[0], "the suite runs on pytest-xdist workers (the test extra brings it)"
