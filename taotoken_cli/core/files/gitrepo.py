"""The git repository around a path: its root, whether git tracks or ignores a file, and its info/exclude file.

Every answer degrades quietly (None, or False for `tracked`) when git is missing or the path is in no repository:
these only decide warnings and where a project file goes, never whether taotoken runs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from taotoken_cli.core.files.fsutil import resolve_target


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None


def _existing_dir(path: Path) -> Path:
    """The nearest directory of `path` that exists (git needs a real working directory)."""
    for candidate in (path, *path.parents):
        if candidate.is_dir():
            return candidate
    return Path("/")


def root(cwd: Path | None = None) -> Path | None:
    """The top directory of the repository `cwd` is in, or None."""
    proc = _git(["rev-parse", "--show-toplevel"], _existing_dir(cwd or Path.cwd()))
    return Path(proc.stdout.strip()) if proc and proc.returncode == 0 and proc.stdout.strip() else None


def tracked(path: Path) -> bool:
    """Does git track the file (its index holds it, even when the file itself is gone)?"""
    real = resolve_target(path)
    if not real.parent.is_dir():
        return False
    proc = _git(["ls-files", "--error-unmatch", "--", real.name], real.parent)
    return proc is not None and proc.returncode == 0


def ignored(path: Path) -> bool | None:
    """Do .gitignore, info/exclude or the global excludes file ignore `path`? None: no repository, or no git."""
    proc = _git(["check-ignore", "-q", "--", str(path)], _existing_dir(path.parent))
    return None if proc is None else {0: True, 1: False}.get(proc.returncode)


def exclude_file(repo: Path) -> Path | None:
    """The repository's own, never committed ignore list (`.git/info/exclude`; a worktree's is elsewhere)."""
    proc = _git(["rev-parse", "--git-path", "info/exclude"], repo)
    if proc is None or proc.returncode != 0 or not proc.stdout.strip():
        return None
    found = Path(proc.stdout.strip())
    return found if found.is_absolute() else repo / found
