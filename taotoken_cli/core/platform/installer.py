"""How this taotoken was installed, told from the environment it runs in, and the one command that adds a package
or one of taotoken's extras there. Every fix that installs something (a missing extra, pycuda, httpx's SOCKS
support) and bench's help ask `add_extra` or `add_package`, never write `pip install` themselves.

What tells them apart, in this order (each installer's own marker in the environment, `sys.prefix`):
- pipx: `pipx_metadata.json` (its venvs under ~/.local/share/pipx/venvs, PIPX_HOME): `pipx inject taotoken PKG`.
- uv tool: `uv-receipt.toml` (under ~/.local/share/uv/tools): `uv tool install 'taotoken[x]'`, the requirements
  the receipt records kept (their source, the extras and `--with` packages installed before).
- a virtual environment without pip whose pyvenv.cfg names uv (`uv venv`): `uv pip install --python PY …`.
- a virtual environment with pip, the user site (`pip install --user`), anything else: `PY -m pip install …` with
  the interpreter taotoken runs on, so the package lands where taotoken is whatever `pip` is first on PATH.

Each command is written in the user's shell's syntax (core.platform.shells: `'taotoken[html]'` in a POSIX shell or
PowerShell, `taotoken[html]` in cmd.exe, where single quotes are no quotes).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.fix import Command
from taotoken_cli.core.platform import shells

PIPX, UV_TOOL, UV_VENV, PIP_VENV, PIP_USER, PIP = "pipx", "uv-tool", "uv-venv", "pip-venv", "pip-user", "pip"
DISTRIBUTION = "taotoken"
PIPX_RECEIPT = "pipx_metadata.json"
UV_RECEIPT = "uv-receipt.toml"


@dataclass(frozen=True)
class Installation:
    kind: str
    python: str | None  # the interpreter taotoken runs on (None: the generic form the generated docs show)
    requirement: str = DISTRIBUTION  # uv tool: taotoken's requirement as the receipt records it, without extras
    extras: tuple[str, ...] = ()  # uv tool: the extras installed before
    withs: tuple[str, ...] = ()  # uv tool: the other requirements (`--with`) installed before
    shell: str | None = None  # the syntax commands are written in (core.platform.shells); None: the user's shell

    def line(self, *words: str) -> Command:
        """`words` as one command line in this installation's shell."""
        return Command(shells.command_line(words, self.shell or shells.syntax(os.environ)))


# What the man page and the completions show (scripts/gen_docs.py): the same whoever generates them.
GENERIC = Installation(PIP, None, shell=shells.POSIX)
_current: Installation | None = None


def current() -> Installation:
    """This process's installation (looked at once)."""
    global _current
    if _current is None:
        _current = detect(Path(sys.prefix), Path(getattr(sys, "base_prefix", sys.prefix)), sys.executable,
                          Path(__file__).resolve())
    return _current


def detect(prefix: Path, base_prefix: Path, python: str, module: Path) -> Installation:
    """The installation an interpreter at `prefix` (a venv when it differs from `base_prefix`) running `module`
    (a file of the package) belongs to."""
    if (prefix / PIPX_RECEIPT).is_file():
        return Installation(PIPX, python)
    if (prefix / UV_RECEIPT).is_file():
        return _uv_tool(prefix / UV_RECEIPT, python)
    if prefix != base_prefix:
        if not _has_pip(prefix) and re.search(r"^\s*uv\s*=", _read(prefix / "pyvenv.cfg"), re.M):
            return Installation(UV_VENV, python)
        return Installation(PIP_VENV, python)
    if _in_user_site(module):
        return Installation(PIP_USER, python)
    return Installation(PIP, python)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _has_pip(prefix: Path) -> bool:
    """pip in this environment (lib/pythonX.Y/site-packages on POSIX, Lib/site-packages on Windows)."""
    return any(prefix.glob("lib*/python*/site-packages/pip")) or (prefix / "Lib" / "site-packages" / "pip").is_dir()


def _in_user_site(module: Path) -> bool:
    import site

    try:
        user_site = Path(site.getusersitepackages()).resolve()
    except (AttributeError, OSError):
        return False
    return user_site in module.parents


def _uv_tool(receipt: Path, python: str) -> Installation:
    """taotoken's requirement and the others (`--with`) as uv's receipt records them."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        requirements = tomllib.loads(_read(receipt)).get("tool", {}).get("requirements", [])
    except ValueError:
        requirements = []
    ours = next((r for r in requirements if _name(r.get("name", "")) == DISTRIBUTION), {})
    withs = tuple(_requirement(r) for r in requirements if r is not ours and r.get("name"))
    return Installation(UV_TOOL, python, _requirement(ours, extras=False) if ours else DISTRIBUTION,
                        tuple(ours.get("extras", ())), withs)


def _name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement(entry: dict, *, extras: bool = True) -> str:
    """A receipt entry as a PEP 508 requirement (`name[extras]>=1`, `name @ URL`); extras left out on request."""
    text = entry.get("name", DISTRIBUTION)
    if extras and entry.get("extras"):
        text += "[" + ",".join(entry["extras"]) + "]"
    if entry.get("specifier"):
        return text + entry["specifier"]
    for key in ("url", "git", "path", "directory", "editable"):
        if entry.get(key):
            source = entry[key]
            if key in ("path", "directory", "editable"):
                source = Path(source).as_uri()
            elif key == "git" and not source.startswith("git+"):
                source = "git+" + source
            return f"{text} @ {source}"
    return text


def extra_packages(extra: str) -> list[str]:
    """The requirements taotoken's `extra` adds (from the installed distribution's metadata: pyproject.toml's
    optional-dependencies), markers other than the extra's own kept out."""
    from importlib import metadata

    try:
        requires = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return [f"{DISTRIBUTION}[{extra}]"]
    found = []
    for line in requires:
        requirement, _sep, marker = line.partition(";")
        if re.search(rf"""extra\s*==\s*["']{re.escape(extra)}["']""", marker):
            found.append(requirement.strip().replace(" ", ""))
    return found or [f"{DISTRIBUTION}[{extra}]"]


def _with_extra(requirement: str, extras: tuple[str, ...]) -> str:
    name, at, source = requirement.partition(" @ ")
    match = re.match(r"([A-Za-z0-9_.-]+)(.*)", name)
    base, rest = (match.group(1), match.group(2)) if match else (name, "")
    return f"{base}[{','.join(extras)}]{rest}" + (f" @ {source}" if at else "")


def _pip(installation: Installation, *requirements: str) -> Command:
    user = ("--user",) if installation.kind == PIP_USER else ()
    if installation.kind == UV_VENV:
        return installation.line("uv", "pip", "install", "--python", installation.python or "python", *requirements)
    runner = ("pip",) if installation.python is None else (installation.python, "-m", "pip")
    return installation.line(*runner, "install", *user, *requirements)


def add_extra(extra: str, installation: Installation | None = None) -> Command:
    """The command that adds taotoken's `extra` (html, opencl, pocl, fast) where this taotoken is installed."""
    installation = installation or current()
    if installation.kind == PIPX:
        return installation.line("pipx", "inject", "taotoken", *extra_packages(extra))
    if installation.kind == UV_TOOL:
        extras = tuple(dict.fromkeys((*installation.extras, extra)))
        return installation.line("uv", "tool", "install", _with_extra(installation.requirement, extras),
                                 *_withs(installation.withs))
    return _pip(installation, f"{DISTRIBUTION}[{extra}]")


def add_package(package: str, installation: Installation | None = None) -> Command:
    """The command that adds `package` (pycuda, httpx[socks]) to the environment this taotoken runs in."""
    installation = installation or current()
    if installation.kind == PIPX:
        return installation.line("pipx", "inject", "taotoken", package)
    if installation.kind == UV_TOOL:
        extras = installation.extras
        base = _with_extra(installation.requirement, extras) if extras else installation.requirement
        return installation.line("uv", "tool", "install", base, *_withs((*installation.withs, package)))
    return _pip(installation, package)


def _withs(requirements: tuple[str, ...]) -> list[str]:
    return [word for requirement in requirements for word in ("--with", requirement)]
