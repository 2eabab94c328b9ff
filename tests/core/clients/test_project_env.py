"""Project env files: the dotenv syntax as loaders and `sh` read it, doctor's findings about copies of the triple
in `.env`, `.env.local` and `.env.taotoken` (differences, the shell overriding or being overridden, git tracking a
key), and the `project-env` init target (0600, export lines, git-excluded once, refused when tracked, kept in step).

Real parts: real files in a temporary HOME, real `git` repositories (`git init`, `git add`), `bash` sourcing the
written file, and the real CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from taotoken_cli.core.formats import dotenv
from tests.conftest import SENTINEL_KEY, flat, needs_posix

ROOT = "https://taotoken.net/api"
MODEL = "gpt-4o-mini"
OLD_KEY = "sk-OLDoldOLDold0123456789abcdefQRST"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


# -- the dotenv syntax -----------------------------------------------------------------------------------

def test_dotenv_reads_what_the_loaders_read() -> None:
    text = """# a comment

export OPENAI_BASE_URL=https://taotoken.net/api/v1   # trailing comment
OPENAI_API_KEY = 'sk-single#not-a-comment'
TAOTOKEN_MODEL="gpt \\"quoted\\"\\nnext"
EMPTY=
URL_WITH_HASH=https://x.example/#frag
MULTI="line one
line two"
  INDENTED=yes\r
NOT AN ASSIGNMENT
UNCLOSED="never closed
LAST=1
LAST=2
"""
    found = {a.name: a for a in dotenv.parse(text)}
    assert found["OPENAI_BASE_URL"].value == "https://taotoken.net/api/v1" and found["OPENAI_BASE_URL"].exported
    assert found["OPENAI_API_KEY"].value == "sk-single#not-a-comment" and not found["OPENAI_API_KEY"].exported
    assert found["TAOTOKEN_MODEL"].value == 'gpt "quoted"\nnext'
    assert found["EMPTY"].value == ""
    assert found["URL_WITH_HASH"].value == "https://x.example/#frag"
    assert found["MULTI"].value == "line one\nline two"
    assert found["INDENTED"].value == "yes"
    assert "UNCLOSED" not in found and dotenv.values(text)["LAST"] == "2"
    assert found["OPENAI_API_KEY"].line == 4 and found["MULTI"].line == 8


def test_dotenv_edits_only_the_values() -> None:
    text = "# keep me\nexport A='old'  # why\nB=x\nA=old2\n"
    edited = dotenv.set_values(text, {"A": "new value", "C": "sk-1"})
    assert edited == "# keep me\nexport A='new value'  # why\nB=x\nA='new value'\nexport C=sk-1\n"
    assert dotenv.values(edited) == {"A": "new value", "B": "x", "C": "sk-1"}


# -- doctor -----------------------------------------------------------------------------------------------

def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository in the temporary HOME, with the working directory in a subfolder of it."""
    path = home / "app"
    (path / "src").mkdir(parents=True)
    git(path, "init", "-q")
    monkeypatch.chdir(path / "src")
    return path


def triple_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAOTOKEN_BASE_URL", ROOT)
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    monkeypatch.setenv("TAOTOKEN_MODEL", MODEL)


def doctor(run, *checks: str) -> dict[str, dict]:
    result = run("doctor", "--json", "--offline", *(a for c in checks for a in ("--check", c)))
    result.assert_clean().assert_clean(OLD_KEY)
    return {item["id"]: item for item in json.loads(result.stdout)["checks"]}


def test_doctor_reports_copies_that_differ_and_who_wins_against_the_shell(run, repo, monkeypatch) -> None:
    (repo / ".env").write_text(f"# app settings\nOPENAI_BASE_URL={ROOT}\nOPENAI_API_KEY={OLD_KEY}\nDEBUG=1\n")
    (repo / ".env.local").write_text(f"export ANTHROPIC_BASE_URL={ROOT}/v1\nexport TAOTOKEN_MODEL=old-model\n")
    os.chmod(repo / ".env", 0o600)
    triple_env(monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)  # the shell has the right key, .env the old one
    monkeypatch.setenv("ANTHROPIC_BASE_URL", ROOT)
    found = doctor(run, "env.project_files")["env.project_files"]
    assert found["status"] == "fail", found
    problems = [found["message"], *found["details"]]
    assert any(f"{repo}/.env: OPENAI_BASE_URL = '{ROOT}' should be {ROOT}/v1: the OpenAI SDKs append "
               "/chat/completions" in p for p in problems), problems
    assert any(f"{repo}/.env: OPENAI_API_KEY = sk-OL…QRST differs from taotoken's key sk-SE…WXYZ" in p
               for p in problems)
    assert any(f"{repo}/.env.local: ANTHROPIC_BASE_URL = '{ROOT}/v1' should be {ROOT}: the Anthropic SDK appends "
               "/v1/messages" in p for p in problems)
    assert any("TAOTOKEN_MODEL = 'old-model' differs from taotoken's model 'gpt-4o-mini'" in p for p in problems)
    # .env has no export lines: a dotenv loader keeps the shell's value; .env.local is written to be sourced
    assert any(p.startswith("OPENAI_API_KEY: the shell has sk-SE…WXYZ, .env has sk-OL…QRST — a dotenv loader "
                            "(python-dotenv, Node's dotenv) keeps the shell's value") for p in problems), problems
    assert any(p.startswith(f"ANTHROPIC_BASE_URL: the shell has '{ROOT}', .env.local has '{ROOT}/v1' — sourcing the "
                            "file (its `export` lines) replaces the shell's value") for p in problems), problems
    assert any("keep the triple only in .env.taotoken" in fix for fix in found["fixes"])


def test_env_files_pointing_elsewhere_are_listed_not_judged(run, repo, monkeypatch) -> None:
    (repo / ".env").write_text("OPENAI_BASE_URL=https://api.openai.com/v1\nOPENAI_API_KEY=sk-openai-key-1234567890\n")
    os.chmod(repo / ".env", 0o600)
    triple_env(monkeypatch)
    found = doctor(run, "env.project_files")["env.project_files"]
    assert found["status"] == "ok", found
    assert any("points at api.openai.com, not TaoToken; not a copy" in d for d in found["details"])


def test_a_tracked_key_is_a_failure_and_an_unignored_one_a_warning(run, repo, monkeypatch) -> None:
    (repo / ".env").write_text(f"OPENAI_API_KEY={OLD_KEY}\n")
    git(repo, "add", ".env")
    triple_env(monkeypatch)
    found = doctor(run, "env.project_tracked")["env.project_tracked"]
    assert found["status"] == "fail", found
    assert found["message"] == f"{repo}/.env holds OPENAI_API_KEY and git tracks it: a committed key is a leak"
    assert found["fixes"][:2] == [f"git rm --cached .env   (in {repo}; the file stays on disk)",
                                  "echo .env >> .gitignore"]
    assert "rotate the key in the TaoToken console" in found["fixes"][2]

    git(repo, "rm", "-q", "--cached", ".env")  # the fix, followed as printed (but not the .gitignore line yet)
    found = doctor(run, "env.project_tracked")["env.project_tracked"]
    assert found["status"] == "warn" and "git does not ignore it: one `git add .` commits the key" in found["message"]
    (repo / ".gitignore").write_text(".env\n")
    assert doctor(run, "env.project_tracked")["env.project_tracked"]["status"] == "ok"


def test_outside_a_repository_the_directory_is_the_project(run, home, monkeypatch) -> None:
    project = home / "scratch"
    project.mkdir()
    monkeypatch.chdir(project)
    triple_env(monkeypatch)
    checks = doctor(run, "env.project_files", "env.project_tracked")
    assert checks["env.project_files"]["status"] == "skipped"
    assert f"in {project}" in checks["env.project_files"]["message"]
    assert checks["env.project_tracked"]["status"] == "skipped"
    (project / ".env.taotoken").write_text(f"export TAOTOKEN_BASE_URL={ROOT}\n")
    assert doctor(run, "env.project_files")["env.project_files"]["status"] == "ok"


# -- the project-env target -------------------------------------------------------------------------------

def init_project(run, *extra: str, model: str = MODEL):
    return run("init", "--allow-unlisted",
               "--target", "project-env", "--yes", "--base-url", ROOT, "--model", model, "--key-stdin",
               *extra, input=SENTINEL_KEY).assert_clean()


def sourced(path: Path) -> dict[str, str]:
    """The variables a shell has after sourcing the file."""
    needs_posix("bash sourcing the file")
    out = subprocess.run(["bash", "-c", f". {path}; env -0"], capture_output=True, check=True,
                         env={"PATH": os.environ["PATH"]}).stdout.decode()
    return dict(item.split("=", 1) for item in out.split("\0") if "=" in item)


def test_init_writes_a_private_sourceable_file_and_excludes_it_once(run, repo) -> None:
    result = init_project(run)
    assert result.returncode == 0, result.output
    written = repo / ".env.taotoken"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    shell = sourced(written)
    assert {name: shell[name] for name in ("TAOTOKEN_BASE_URL", "TAOTOKEN_API_KEY", "TAOTOKEN_MODEL",
                                           "OPENAI_BASE_URL", "OPENAI_API_KEY")} == {
        "TAOTOKEN_BASE_URL": ROOT, "TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_MODEL": MODEL,
        "OPENAI_BASE_URL": ROOT + "/v1", "OPENAI_API_KEY": SENTINEL_KEY}
    assert all(line.startswith(("#", "export ")) for line in written.read_text().splitlines())
    assert dotenv.values(written.read_text())["OPENAI_BASE_URL"] == ROOT + "/v1"  # and a dotenv loader agrees
    exclude = repo / ".git" / "info" / "exclude"
    assert exclude.read_text().count("/.env.taotoken\n") == 1
    assert git(repo, "status", "--porcelain", "--ignored") == "!! .env.taotoken\n"

    again = init_project(run, model="gpt-4.1")  # a second run: the value changes, the exclude line is not repeated
    assert again.returncode == 0, again.output
    assert exclude.read_text().count("/.env.taotoken\n") == 1
    assert sourced(written)["TAOTOKEN_MODEL"] == "gpt-4.1"
    checks = doctor(run, "env.project_files", "env.project_tracked")
    assert checks["env.project_tracked"]["status"] == "ok", checks
    assert checks["env.project_files"]["status"] == "ok", checks


def test_a_file_git_already_ignores_leaves_the_exclude_file_alone(run, repo) -> None:
    (repo / ".gitignore").write_text(".env*\n")
    exclude = repo / ".git" / "info" / "exclude"
    before = exclude.read_bytes()
    assert init_project(run).returncode == 0
    assert exclude.read_bytes() == before


def test_a_tracked_file_is_refused_and_nothing_is_written(run, home, repo) -> None:
    target = repo / ".env.taotoken"
    target.write_text("export TAOTOKEN_MODEL=old\n")
    git(repo, "add", ".env.taotoken")
    result = init_project(run)
    assert result.returncode == 1, result.output
    assert f"{target} is tracked by git: taotoken will not write the API key into it" in flat(result.stderr)
    assert "git rm --cached .env.taotoken" in result.stderr and "Traceback" not in result.output
    assert target.read_text() == "export TAOTOKEN_MODEL=old\n"
    assert not (home / ".config" / "taotoken" / "config.toml").exists()  # nothing at all


def test_lines_the_user_added_are_kept_and_undo_restores(run, repo) -> None:
    target = repo / ".env.taotoken"
    target.write_text(f"# mine\nexport PROJECT_NAME=demo\nexport TAOTOKEN_API_KEY='{OLD_KEY}'\n")
    exclude = repo / ".git" / "info" / "exclude"
    before = {target: target.read_bytes(), exclude: exclude.read_bytes()}
    assert init_project(run).returncode == 0
    text = target.read_text()
    assert text.startswith(f"# mine\nexport PROJECT_NAME=demo\nexport TAOTOKEN_API_KEY={SENTINEL_KEY}\n"), text
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert run("init", "--undo").assert_clean().returncode == 0
    assert {path: path.read_bytes() for path in before} == before


def test_a_later_change_from_anywhere_updates_the_recorded_project(run, home, repo, monkeypatch) -> None:
    assert init_project(run).returncode == 0
    elsewhere = home / "other"
    elsewhere.mkdir()
    git(elsewhere, "init", "-q")
    monkeypatch.chdir(elsewhere)
    result = run("config", "set", "model", "gpt-4.1", "--yes", "--allow-unlisted").assert_clean()
    assert result.returncode == 0, result.output
    assert sourced(repo / ".env.taotoken")["TAOTOKEN_MODEL"] == "gpt-4.1"
    assert not (elsewhere / ".env.taotoken").exists()  # the sync writes where init wrote, not here

    (repo / ".env.taotoken").unlink()  # deleted by the user: a sync from elsewhere does not bring it back
    result = run("config", "set", "model", MODEL, "--yes", "--allow-unlisted").assert_clean()
    assert not (repo / ".env.taotoken").exists() and result.returncode == 0, result.output


def test_all_targets_never_include_project_env(run, repo, loopback_gateway) -> None:
    result = run("init", "--all", "--yes", "--base-url", loopback_gateway.url, "--model", MODEL, "--key-stdin",
                 input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 0, result.output
    assert not (repo / ".env.taotoken").exists()
    assert "project-env" not in result.stdout and "create ~/.config/taotoken/config.toml" in result.stdout
