"""A project's env files: `.env`, `.env.local` (read by doctor) and `.env.taotoken`, which the `project-env` init
target writes in the project (the git repository of the working directory, else the directory itself).

`.env.taotoken` is `export` lines (agent start scripts source it; dotenv loaders read it too), mode 0600, each
variable in its own URL form: TAOTOKEN_BASE_URL the root (what taotoken reads), OPENAI_BASE_URL root + /v1 (the
OpenAI SDKs append /chat/completions), and the key. Lines the user added are kept. The file goes into the
repository's `.git/info/exclude` unless git already ignores it, and a file git tracks is refused: a key there is one
push away from being public. The projects written are recorded (PlanOptions.project_dirs), so a later sync updates
exactly those from any directory; it creates the file only in the project it runs in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.i18n import N_, _, ngettext
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import envvars
from taotoken_cli.core.clients.base import (
    ClientState,
    ConfigFile,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    read_text,
    text_change,
)
from taotoken_cli.core.clients.envvars import left_alone, read_env, taotoken_hosts
from taotoken_cli.core.files import gitrepo
from taotoken_cli.core.files.fileplan import FileChange, Plan
from taotoken_cli.core.formats import dotenv

NAME = "project-env"
LABEL = N_("project env file (.env.taotoken)")  # shown as _(LABEL)
FILE = ".env.taotoken"
READ = (".env", ".env.local", FILE)  # what doctor reads, in the order loaders that read several apply them
_HEADER = ("# Written by `taotoken init --target project-env`: the TaoToken triple for this project's scripts and\n"
           "# agents (source it: `. ./.env.taotoken`, or load it with dotenv). It holds the API key: never commit\n"
           "# it (git ignores it through .git/info/exclude). `taotoken config set` keeps it in step.\n")


@dataclass(frozen=True)
class ProjectPaths:
    root: Path  # the git repository of the working directory, else the directory
    repo: bool  # root is a git repository
    files: dict[str, Path]  # file name (READ) -> path


def paths(machine: Machine) -> ProjectPaths:
    repo = machine.git_root
    root = repo or machine.cwd
    return ProjectPaths(root, repo is not None, {name: root / name for name in READ})


def detect(machine: Machine) -> Detection:
    """Never detected: a key goes into a project folder only when asked (`--target project-env`)."""
    return Detection(False, [])


def read(machine: Machine) -> ClientState:
    where = paths(machine)
    return ClientState(NAME, detect(machine), {name: read_text(path) for name, path in where.files.items()})


def exports(triple: Triple) -> dict[str, str]:
    names = ("TAOTOKEN_BASE_URL", "TAOTOKEN_API_KEY", "TAOTOKEN_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY")
    return {name: str(envvars.wanted(name, triple)) for name in names}  # each variable in its own form


def refuse_tracked(path: Path) -> None:
    """Stop (nothing written) when git tracks the file: writing the key there would commit it."""
    if gitrepo.tracked(path):
        raise TaotokenError(
            _("{path} is tracked by git: taotoken will not write the API key into it (a commit would publish it); "
              "nothing was written").format(path=path),
            _("{command}   (in {directory}; if the file was ever pushed, also rotate the key in the TaoToken "
              "console), then run again").format(command=f"git rm --cached {path.name} && echo {path.name} >> "
                                                         ".gitignore", directory=path.parent),
            Exit.FAILURE, code="init.tracked_key_file")


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    result = Plan()
    here = paths(machine).root
    for directory in options.project_dirs or (str(here),):
        root = Path(directory)
        file = read_text(root / FILE)
        if not file.exists and file.error is None and root != here:
            result.notes.append(_("{path} is gone: not recreated from here (run {command} in {directory} to write it "
                                  "again)").format(path=root / FILE, command="`taotoken init --target project-env`",
                                                   directory=root))
            continue
        refuse_tracked(file.path)
        change, kept = _env_change(file, triple, options)
        result.add(change)
        result.notes += [_("{path}: {why}").format(path=file.path, why=why) for why in kept]
        result.secrets += [value for name, value in dotenv.values(file.text or "").items()
                           if name in exports(triple) and name.endswith("_KEY") and value]  # masked in diffs
        exclude = _exclude_change(root, file.path)
        if exclude is not None:
            result.add(exclude)
    return result


def stale_copies(triple: Triple, machine: Machine, hosts: frozenset[str], written: tuple[str, ...]) -> list[str]:
    """The project's own env files (.env, .env.local: the user's, maybe committed; taotoken never writes them) whose
    TaoToken variables hold other values than `triple`: named, so a changed key is not left there unsaid."""
    from taotoken_cli.core.clients.envvars import updates

    found = []
    for name, path in paths(machine).files.items():
        if name == FILE:
            continue  # .env.taotoken is taotoken's: written by the sync itself
        file = read_text(path)
        copy = read_env(dotenv.values(file.text or ""), hosts, written) if file.exists and file.error is None else None
        stale = sorted(updates(copy, triple)) if copy is not None else []
        if stale:
            found.append(ngettext(
                "{path}: {names} still holds the old value; taotoken does not write this file (yours, perhaps "
                "committed): update it there, or source .env.taotoken instead ({command})",
                "{path}: {names} still hold the old values; taotoken does not write this file (yours, perhaps "
                "committed): update them there, or source .env.taotoken instead ({command})", len(stale)).format(
                path=path, names=", ".join(stale), command="`taotoken init --target project-env`"))
    return found


def _env_change(file: ConfigFile, triple: Triple, options: PlanOptions) -> tuple[FileChange, list[str]]:
    """The new text, and why variables the user pointed elsewhere are kept (envvars: one rule for key variables)."""
    file.check()
    wanted = exports(triple)
    before = dotenv.values(file.text or "")
    kept: list[str] = []
    copy = read_env(before, taotoken_hosts(triple.base_url, options.taotoken_hosts), options.written_keys)
    if copy is not None:  # a variable the user changed to another service's stays theirs, its key too
        theirs = [name for name in wanted if name in copy.values and name not in copy.owned]
        kept = [_("{name} = {value} is left alone: it does not point at TaoToken").format(
            name=name, value=repr(copy.values[name])) for name in theirs if name not in copy.foreign]
        kept += left_alone(copy)
        wanted = {name: value for name, value in wanted.items() if name not in theirs}
    if file.exists:
        changed = [name for name, value in wanted.items() if before.get(name) != value]
        summary = [_("set {name} = {value}").format(
            name=name, value=mask_key(wanted[name]) if name.endswith("_KEY") else repr(wanted[name]))
            for name in changed]
        text = dotenv.set_values(file.text or "", wanted)
    else:
        summary = [_("export TAOTOKEN_BASE_URL (the root), TAOTOKEN_API_KEY, TAOTOKEN_MODEL, OPENAI_BASE_URL "
                     "(root + /v1) and OPENAI_API_KEY (mode 0600)")]
        text = dotenv.set_values(_HEADER, wanted)
    return text_change(file, text, target=NAME, summary=summary, secret=True), kept


def _exclude_change(root: Path, env_file: Path) -> FileChange | None:
    """One anchored line in .git/info/exclude, unless git already ignores the file (or root is no repository)."""
    if gitrepo.root(root) != root.resolve() or gitrepo.ignored(env_file) is not False:
        return None
    exclude = gitrepo.exclude_file(root)
    if exclude is None:
        return None
    current = read_text(exclude)
    text = current.text or ""
    if text and not text.endswith("\n"):
        text += "\n"
    text += f"# the TaoToken key file (added by taotoken init)\n/{env_file.name}\n"
    return text_change(current, text, target=NAME,
                       summary=[_("ignore {pattern} (never committed)").format(pattern=f"/{env_file.name}")])
