"""Plan, show, apply and undo changes to the user's files — the one way taotoken writes them.

`init` (and later `doctor --fix`) compute a Plan of FileChanges (the whole new content of each file)
without touching anything. `apply` then, under a lock, checks that every file is still what the
plan saw, backs every existing file up into `<config_dir>/backups/<timestamp>/` (with a manifest),
writes each file atomically, and restores the already-written files if a later write fails, so a run
either happens completely or not at all. `undo_last` puts the files of the last run back exactly.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, listed, ngettext
from taotoken_cli.core.base.masking import SECRETS, Redactor, mask_unknown_keys
from taotoken_cli.core.base.oserrors import os_error_text
from taotoken_cli.core.files import gitrepo
from taotoken_cli.core.files.fsutil import (
    GIVEN,
    SECRET_MODE,
    atomic_write,
    give_owner,
    make_dirs,
    owner_for,
    resolve_target,
)
from taotoken_cli.core.platform import locks, permissions

LOCK_NAME = "taotoken.lock"
BACKUPS_DIR = "backups"
MANIFEST = "manifest.json"
LOCK_TIMEOUT_S = 3.0


OWN_TARGET = "own"  # the target of taotoken's own files in a plan (core.clients.copies.OWN)


@dataclass
class FileChange:
    """The complete new content of one file, and what it was when the plan was made."""

    path: Path  # as the client knows it (may be a symlink; the write lands on its target)
    before: bytes | None  # None: the file does not exist yet
    after: bytes | None  # None: the file is removed (backed up first, put back by undo)
    secret: bool = False  # holds a key: created 0600, group/world bits dropped
    summary: list[str] = field(default_factory=list)  # human lines: "set env.ANTHROPIC_MODEL = …"
    target: str = ""  # which init target produced it ("claude-code", "own", …)
    new_mode: int | None = None  # mode for a new non-secret file (default 0644)
    # A merger `undo_last` may use on this file when it was edited after the run (a name in its `mergers`): the
    # run's content is kept in the backup for it
    merge: str | None = None
    # Set when the change puts back what the user removed from a file an earlier run wrote (the start-up line that
    # loads env.sh): why it is held back. Only init, asked again, puts it back; a sync (config set/sync, doctor
    # --fix) leaves the user's choice standing and says this instead (core.clients.copies.Sync.held_back)
    held_back: str = ""

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def creates(self) -> bool:
        return self.before is None

    @property
    def removes(self) -> bool:
        return self.after is None and self.before is not None


@dataclass
class Plan:
    changes: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what this plan does here that needs saying (a kept line, a store)
    warnings: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)  # extra values to mask in diffs (e.g. an old key)
    # What will still not work once the plan is applied (a client that will refuse to start), said instead of
    # "next: taotoken check"
    broken: list[str] = field(default_factory=list)
    # what every such plan means, the same each time (Codex reads the key from the environment, …): said with
    # -v or --dry-run, left out of init's compact output
    details: list[str] = field(default_factory=list)
    # the change summaries that repair what the user had set (a proxy, a provider switch, an old export): also
    # said in init's compact output, which lists files and not their summaries
    repairs: list[str] = field(default_factory=list)

    def add(self, change: FileChange) -> None:
        self.changes.append(change)

    def extend(self, other: Plan) -> None:
        self.changes.extend(other.changes)
        self.notes.extend(other.notes)
        self.details.extend(other.details)
        self.repairs.extend(other.repairs)
        self.warnings.extend(other.warnings)
        self.secrets.extend(other.secrets)
        self.broken.extend(other.broken)

    @property
    def pending(self) -> list[FileChange]:
        return [change for change in self.changes if change.changed]

    @property
    def is_noop(self) -> bool:
        return not self.pending

    def redactor(self) -> Callable[[str], str]:
        # One redactor over the plan's secrets and the process's: every whole key is replaced before any partial
        # echo is looked for, so a piece two keys share is never shown as the wrong key.
        local = Redactor(*self.secrets, *SECRETS.secrets)
        return lambda text: mask_unknown_keys(SECRETS(local(text)))


def read_current(path: Path) -> bytes | None:
    """The bytes a write to `path` would replace (through symlinks); None when there is no file."""
    try:
        return resolve_target(path).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------------- diffs

def unified_diff(change: FileChange, redact: Callable[[str], str] | None = None) -> str:
    """A unified diff of one change with every known secret masked."""
    redact = redact or (lambda text: mask_unknown_keys(SECRETS(text)))
    before = (change.before or b"").decode("utf-8", errors="replace")
    after = (change.after or b"").decode("utf-8", errors="replace")
    from_name = "/dev/null" if change.before is None else str(change.path)
    to_name = "/dev/null" if change.after is None else str(change.path)
    lines = difflib.unified_diff(_lines(before), _lines(after), fromfile=from_name, tofile=to_name)
    return redact("".join(lines))


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def change_lines(plan: Plan) -> list[str]:
    """The pending changes as a person reads them: create/update, the file, which target, what it means, and
    what happens to the mode of a file that holds the key."""
    lines = []
    for change in plan.pending:
        what = (_("create {path}  [{target}]") if change.creates else _("remove {path}  [{target}]")
                if change.removes else _("update {path}  [{target}]"))
        if change.secret and change.creates:
            what = _("create {path}  [{target}] (holds the key: 0600)")
        elif change.secret and _group_or_world_bits(change.path):
            what = _("update {path}  [{target}] (holds the key: mode tightened to 0600)")
        lines.append("  " + what.format(path=change.path, target=change.target))
        if not change.creates and not change.removes and _read_only(change.path):
            lines.append("      " + _("the file is read-only (mode {mode}): it is replaced all the same and keeps that "
                                      "mode; if you made it read-only to keep it as it is, answer no").format(
                mode=oct(stat.S_IMODE(os.stat(resolve_target(change.path)).st_mode))[2:].zfill(4)))
        lines += [f"      {line}" for line in change.summary]
    return lines


def _read_only(path: Path) -> bool:
    try:
        return not os.stat(resolve_target(path)).st_mode & stat.S_IWUSR
    except OSError:
        return False


def render_changes(out, plan: Plan) -> None:
    """`change_lines` on `out` (an output.Output), each wrapped under its own text."""
    for line in change_lines(plan):
        text = line.lstrip(" ")
        indent = len(line) - len(text)
        out.wrapped(text, line[:indent], " " * (indent + 4))


def _group_or_world_bits(path: Path) -> bool:
    try:
        return bool(os.stat(resolve_target(path)).st_mode & 0o077)
    except OSError:
        return False


def plan_diff(plan: Plan) -> str:
    redact = plan.redactor()
    return "".join(unified_diff(change, redact) for change in plan.pending)


# ----------------------------------------------------------------------------------------------- git

def add_git_warnings(plan: Plan) -> None:
    for change in plan.pending:
        if change.secret and change.before is not None and gitrepo.tracked(change.path):
            plan.warnings.append(_(
                "{path} is tracked by git and will now hold your API key: do not commit it ({command} and add it "
                "to .gitignore)").format(path=change.path,
                                         command=f"`git rm --cached {resolve_target(change.path).name}`"))


# ---------------------------------------------------------------------------------------------- lock

@contextlib.contextmanager
def run_lock(config_dir: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """One taotoken run writes at a time: a second one waits up to `timeout` s, then refuses."""
    lock_path = config_dir / LOCK_NAME
    try:
        make_dirs(config_dir, 0o700)
        owner = owner_for(lock_path)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        give_owner(fd, owner)
    except OSError as exc:
        raise TaotokenError(
            _("cannot create the lock file {path}: {error}; nothing was written").format(
                path=lock_path, error=os_error_text(exc)),
            Fix.of(_("make {directory} a writable directory (e.g. {command}), or point TAOTOKEN_CONFIG at a config "
                     "file in a writable directory"), directory=config_dir,
                   command=Command(permissions.access_fix(config_dir, directory=True))),
            Exit.FAILURE, code="init.write_failed") from None
    try:
        deadline = time.monotonic() + timeout
        while True:
            if locks.try_lock(fd):
                break
            if time.monotonic() >= deadline:
                raise TaotokenError(
                    _("another taotoken run is writing config files (lock {path} is held)").format(
                        path=lock_path),
                    _("wait for it to finish and run the command again (the lock is released when that "
                      "process exits, so a crashed run never leaves it stuck)"),
                    Exit.FAILURE, code="init.locked") from None
            time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing releases the lock


# --------------------------------------------------------------------------------------------- apply

@dataclass
class ApplyResult:
    written: list[FileChange]
    backup_dir: Path | None

    @property
    def noop(self) -> bool:
        return not self.written


def ownership_note() -> str | None:
    """Said once by a run that, as root, wrote files belonging to another user (fsutil.owner_for)."""
    if not GIVEN:
        return None
    users = listed(sorted(GIVEN))
    GIVEN.clear()
    return _("running as root: the files written were given to {users}, who owns them (owner, group and mode "
             "kept), so their programs can still read them").format(users=users)


def _missing_dirs(path: Path) -> list[Path]:
    """Directories a write to `path` would create, outermost first."""
    missing = []
    parent = path.parent
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    return list(reversed(missing))


def _new_backup_dir(config_dir: Path) -> Path:
    root = config_dir / BACKUPS_DIR
    make_dirs(root, 0o700)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    candidate = root / stamp
    suffix = 1
    while candidate.exists():
        candidate = root / f"{stamp}-{suffix}"
        suffix += 1
    make_dirs(candidate, 0o700)
    return candidate


def _write_private(path: Path, data: bytes) -> None:
    owner = owner_for(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), SECRET_MODE)
    give_owner(fd, owner)
    try:
        permissions.make_private(path)  # before the content: a backup may hold the key
    except OSError:
        os.close(fd)
        raise
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _write_manifest(backup_dir: Path, manifest: dict) -> None:
    _write_private(backup_dir / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode())


def apply(plan: Plan, config_dir: Path, *, lock_timeout: float = LOCK_TIMEOUT_S,
          command: str = "taotoken init") -> ApplyResult:
    """Write every pending change, or none of them. See the module docstring for the guarantees."""
    GIVEN.clear()  # ownership_note speaks of this run only
    pending = plan.pending
    if not pending:
        return ApplyResult([], None)
    targets = [resolve_target(change.path) for change in pending]
    if len(set(targets)) != len(targets):
        raise TaotokenError(_("internal error: two planned changes write the same file"), None, Exit.FAILURE)
    with run_lock(config_dir, lock_timeout):
        stale = [change.path for change in pending if read_current(change.path) != change.before]
        if stale:
            raise TaotokenError(
                _("these files changed after the plan was made; nothing was written: {files}").format(
                    files=listed(str(p) for p in stale)),
                _("run the command again to plan against the current contents"), Exit.FAILURE,
                code="init.changed_since_plan")
        backup_dir = None
        try:
            backup_dir = _new_backup_dir(config_dir)
            entries = []
            for index, (change, real) in enumerate(zip(pending, targets, strict=True)):
                entry = {"path": str(change.path), "target": str(real), "existed": change.before is not None,
                         "mode": None, "backup": None, "after_sha256": _sha(change.after), "created_dirs": []}
                if change.before is not None:
                    entry["mode"] = stat.S_IMODE(real.stat().st_mode)
                    entry["backup"] = f"{index:03d}-{real.name}"
                    _write_private(backup_dir / entry["backup"], change.before)
                else:
                    entry["created_dirs"] = [str(d) for d in _missing_dirs(real)]
                if change.merge:
                    entry["merge"], entry["after"] = change.merge, f"{index:03d}-{real.name}.after"
                    _write_private(backup_dir / entry["after"], change.after)
                entries.append(entry)
            manifest = {"version": 1, "command": command, "created": datetime.now(timezone.utc).isoformat(),
                        "complete": False, "undone": False, "files": entries}
            _write_manifest(backup_dir, manifest)
        except OSError as exc:  # no user file has been touched yet: drop the partial backup and stop
            if backup_dir is not None:
                shutil.rmtree(backup_dir, ignore_errors=True)
            where = config_dir / BACKUPS_DIR
            raise TaotokenError(
                _("cannot save backups in {directory}: {error}; nothing was written").format(
                    directory=where, error=os_error_text(exc)),
                Fix.of(_("make {directory} writable and check the disk has space ({command}), then run again"),
                       directory=config_dir, command=Command(f"df -h {config_dir}")),
                Exit.FAILURE, code="init.write_failed") from None

        written: list[tuple[FileChange, dict]] = []
        for change, entry in zip(pending, entries, strict=True):
            try:
                if change.after is None:
                    resolve_target(change.path).unlink()
                else:
                    atomic_write(change.path, change.after, secret=change.secret, mode=change.new_mode)
            except OSError as exc:
                failed = [] if entry["existed"] else [entry]  # only its new directories need removing
                problems = _restore(failed + [e for _, e in reversed(written)], backup_dir)
                if problems:
                    raise TaotokenError(
                        _("could not write {path}: {error}; restoring the files already written also failed: "
                          "{problems}").format(path=change.path, error=os_error_text(exc),
                                               problems=_("; ").join(problems)),
                        _("the originals are in {directory}; copy them back by hand (see {manifest} there)").format(
                            directory=backup_dir, manifest=MANIFEST),
                        Exit.FAILURE, code="init.write_failed") from None
                shutil.rmtree(backup_dir, ignore_errors=True)
                raise TaotokenError(
                    ngettext("could not write {path}: {error}; nothing was changed (the {count} file already "
                             "written was restored)",
                             "could not write {path}: {error}; nothing was changed (the {count} files already "
                             "written were restored)", len(written)).format(
                        path=change.path, error=os_error_text(exc), count=len(written)),
                    _("check that {directory} is a writable directory, then run again").format(
                        directory=resolve_target(change.path).parent),
                    Exit.FAILURE, code="init.write_failed") from None
            written.append((change, entry))
        manifest["complete"] = True
        _write_manifest(backup_dir, manifest)
    return ApplyResult([change for change, _ in written], backup_dir)


def _restore(entries: list[dict], backup_dir: Path) -> list[str]:
    """Put each file of `entries` back as it was before the run; returns what could not be restored."""
    problems = []
    for entry in entries:
        target = Path(entry["target"])
        try:
            if entry["existed"]:
                data = (backup_dir / entry["backup"]).read_bytes()
                atomic_write(target, data, mode=entry["mode"])
                os.chmod(target, entry["mode"])
            else:
                with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                    target.unlink()
                for directory in reversed(entry.get("created_dirs", [])):
                    with contextlib.suppress(OSError):
                        Path(directory).rmdir()  # only succeeds when empty
        except OSError as exc:
            problems.append(f"{target}: {os_error_text(exc)}")
    return problems


# ---------------------------------------------------------------------------------------------- undo

@dataclass
class UndoResult:
    backup_dir: Path
    command: str
    restored: list[Path]
    deleted: list[Path]
    reverted: list[str] = field(default_factory=list)  # the programs' steps undone (their labels)
    not_reverted: list[str] = field(default_factory=list)  # steps that could not be: label, why, the command to type
    kept: list[Path] = field(default_factory=list)  # edited since the run: only the run's own values reverted


@dataclass(frozen=True)
class UndoStep:
    """A change a program made after the files were written (CC Switch's `cc-switch provider add`), and the command
    that reverts it. The program may ask for confirmation on its terminal: `prompt` is what its question contains,
    `answer` what undo types (core.platform.answering)."""

    label: str  # what was changed, in words
    argv: tuple[str, ...]  # the command that reverts it
    prompt: str = ""
    answer: str = ""


def record_steps(backup_dir: Path, steps: list[UndoStep]) -> None:
    """Add `steps` to the run's manifest (the run in `backup_dir`), so `undo_last` reverts them too."""
    path = backup_dir / MANIFEST
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest.setdefault("steps", []).extend(
        {"label": s.label, "argv": list(s.argv), "prompt": s.prompt, "answer": s.answer} for s in steps)
    _write_manifest(backup_dir, manifest)


def _revert_steps(entries: list[dict], env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """Run each step's reverting command, last first; (reverted labels, the ones that could not be, with why)."""
    import shlex

    from taotoken_cli.core.platform import answering

    reverted, failed = [], []
    for entry in reversed(entries):
        argv = [str(a) for a in entry.get("argv", [])]
        if entry.get("prompt"):
            done = answering.run(argv, entry["prompt"], entry.get("answer", ""), env)
        else:
            try:
                proc = subprocess.run(argv, env=dict(env), capture_output=True, text=True, timeout=30,
                                      stdin=subprocess.DEVNULL)
                done = answering.Answered(proc.returncode, proc.stdout + proc.stderr)
            except (OSError, subprocess.TimeoutExpired) as exc:
                done = answering.Answered(None, str(exc))
        if done.returncode == 0:
            reverted.append(entry.get("label", ""))
            continue
        said = " ".join(done.output.split())[-200:]
        why = _("it said: {output}").format(output=said) if said else _("it could not be run here")
        failed.append(_("{label}: {why}; run {command}").format(label=entry.get("label", ""), why=why,
                                                               command=f"`{shlex.join(argv)}`"))
    return reverted, failed


# (before the run or None, what the run wrote, what the file holds now) -> the file with only the run's change undone,
# b"" for "remove it", or None when that cannot be worked out
Merger = Callable[[bytes | None, bytes, bytes | None], bytes | None]


def runs(config_dir: Path) -> list[tuple[Path, dict]]:
    """Completed, not yet undone runs, oldest first."""
    root = config_dir / BACKUPS_DIR
    found = []
    if root.is_dir():
        for directory in sorted(root.iterdir()):
            try:
                manifest = json.loads((directory / MANIFEST).read_text())
            except (OSError, ValueError):
                continue
            if manifest.get("complete") and not manifest.get("undone"):
                found.append((directory, manifest))
    return found


def _already_undone(entry: dict, backup_dir: Path) -> bool:
    """Whether the file of `entry` already holds what it held before the run (or, created by it, is gone)."""
    current = read_current(Path(entry["target"]))
    if not entry["existed"]:
        return current is None
    try:
        return current == (backup_dir / entry["backup"]).read_bytes()
    except OSError:
        return False


def _merged(entry: dict, backup_dir: Path, mergers: dict[str, Merger]) -> bytes | None:
    """The file of `entry`, edited since the run, with only the run's change undone (its merger), or None."""
    merger = mergers.get(entry.get("merge") or "")
    if merger is None or not entry.get("after"):
        return None
    try:
        before = (backup_dir / entry["backup"]).read_bytes() if entry["existed"] else None
        after = (backup_dir / entry["after"]).read_bytes()
    except OSError:
        return None
    return merger(before, after, read_current(Path(entry["target"])))


def undo_last(config_dir: Path, *, force: bool = False, lock_timeout: float = LOCK_TIMEOUT_S,
              mergers: dict[str, Merger] | None = None, env: Mapping[str, str] | None = None) -> UndoResult:
    """Restore every file of the last run exactly: old contents and modes back, created files removed; then revert
    the programs' steps it recorded (record_steps), running their commands under `env`. A file edited since the run
    whose change has a merger (taotoken's own config: `route set` wrote it since) keeps those edits, and only the
    run's values go back."""
    GIVEN.clear()
    with run_lock(config_dir, lock_timeout):
        history = runs(config_dir)
        if not history:
            raise TaotokenError(_("there is no taotoken run to undo"),
                                _("backups live in {directory}").format(directory=config_dir / BACKUPS_DIR),
                                Exit.FAILURE, code="init.nothing_to_undo")  # not the URL/model class (5)
        backup_dir, manifest = history[-1]
        entries = manifest["files"]
        # A file already back as it was (an earlier undo was killed part way) is not an edit: this undo resumes it.
        edited = [e for e in entries if _sha(read_current(Path(e["target"]))) != e["after_sha256"]
                  and not _already_undone(e, backup_dir)]
        merged = {e["target"]: data for e in edited if not force
                  and (data := _merged(e, backup_dir, mergers or {})) is not None}
        edited = [e["target"] for e in edited if e["target"] not in merged]
        if edited and not force:
            raise TaotokenError(
                _("these files were changed after the last run, undo would discard those edits: {files}").format(
                    files=listed(edited)),
                Fix.of(_("save your edits elsewhere and run {command}"),
                       command=Command("taotoken init --undo --force")),
                Exit.FAILURE, code="init.undo_conflict")
        problems = _restore([e for e in entries if e["target"] not in merged], backup_dir)
        problems += _write_merged(entries, merged)
        if problems:
            raise TaotokenError(_("undo could not restore: {problems}").format(problems=_("; ").join(problems)),
                                _("the originals are in {directory}").format(directory=backup_dir), Exit.FAILURE,
                                code="init.undo_failed")
        reverted, not_reverted = _revert_steps(manifest.get("steps", []), os.environ if env is None else env)
        manifest["undone"] = True
        manifest["undone_at"] = datetime.now(timezone.utc).isoformat()
        _write_manifest(backup_dir, manifest)
    kept = [Path(e["path"]) for e in entries if merged.get(e["target"])]
    restored = [Path(e["path"]) for e in entries if e["existed"] and e["target"] not in merged]
    deleted = [Path(e["path"]) for e in entries if not e["existed"] and merged.get(e["target"], b"") == b""]
    return UndoResult(backup_dir, manifest.get("command", ""), restored, deleted, reverted, not_reverted, kept)


def _write_merged(entries: list[dict], merged: dict[str, bytes]) -> list[str]:
    """Write each merged file (b"": remove it, the run created it and nothing else is in it now)."""
    problems = []
    for entry in entries:
        data = merged.get(entry["target"])
        if data is None:
            continue
        target = Path(entry["target"])
        try:
            if data == b"" and not entry["existed"]:
                target.unlink(missing_ok=True)
            else:
                atomic_write(target, data)  # keeps the file's mode and owner
        except OSError as exc:
            problems.append(f"{target}: {exc.strerror or exc}")
    return problems
