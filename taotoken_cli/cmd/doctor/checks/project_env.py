"""Project env files (Environment section): `.env`, `.env.local` and `.env.taotoken` of the project doctor runs in
(the git repository of the working directory, else the directory). Copies of the triple in them are checked
against it; a variable the shell also sets is named with who wins (a dotenv loader keeps the shell's value by
default, sourcing the file replaces it); a key in a file git tracks is a leak (a failure), one in a file git does
not ignore is one `git add .` away from it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.cmd.doctor.checks.clients.common import permissions
from taotoken_cli.cmd.doctor.checks.gateway_vars import (
    check_copy,
    gateway_label,
    hosts,
    owned_values,
    recorded,
    show,
    sync_fix,
    written,
)
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import remember_secret
from taotoken_cli.core.clients import project_env
from taotoken_cli.core.clients.base import ConfigFile, read_text
from taotoken_cli.core.clients.envvars import (
    KEY,
    MIXED,
    MODEL,
    NO_URL,
    TAOTOKEN,
    VARIABLES,
    EnvCopy,
    left_alone,
    read_env,
)
from taotoken_cli.core.files import gitrepo
from taotoken_cli.core.formats import dotenv

SECTION = "Environment"


@dataclass(frozen=True)
class EnvFile:
    file: ConfigFile
    assignments: dict[str, dotenv.Assignment]  # the effective (last) assignment of each name
    copy: EnvCopy | None  # its gateway variables

    @property
    def keys(self) -> dict[str, str]:
        return self.copy.of_role(KEY) if self.copy else {}


def env_files(ctx: DoctorContext) -> tuple[project_env.ProjectPaths, list[EnvFile]]:
    """The project's env files that exist, parsed once per run."""
    def read() -> tuple[project_env.ProjectPaths, list[EnvFile]]:
        where = project_env.paths(ctx.machine)
        found = []
        for path in where.files.values():
            file = read_text(path)
            if not file.exists or file.error is not None:
                continue
            assignments = {a.name: a for a in dotenv.parse(file.text or "")}
            copy = read_env({name: a.value for name, a in assignments.items()}, hosts(ctx), written(ctx))
            for value in copy.of_role(KEY).values() if copy else ():
                remember_secret(value)
            found.append(EnvFile(file, assignments, copy))
        return where, found

    return ctx.memo("project:env", read)


def _fix(ctx: DoctorContext, env_file: EnvFile, root: Path) -> Fix:
    if env_file.file.path.name == project_env.FILE:
        record = recorded(ctx)
        return sync_fix(ctx, project_env.NAME, record is not None and str(root) in record.options.project_dirs)
    return Fix.of(_("edit {path} (or keep the triple only in {file}: {command} keeps it in step)"),
                  path=env_file.file.path, file=project_env.FILE,
                  command=Command(f"taotoken init --target {project_env.NAME}"))


def _who_wins(assignment: dotenv.Assignment) -> str:
    if assignment.exported:
        return _("sourcing the file (its `export` lines) replaces the shell's value; a dotenv loader keeps the shell's")
    return _("a dotenv loader (python-dotenv, Node's dotenv) keeps the shell's value unless told to override; "
             "sourcing the file replaces it")


@check("env.project_files", SECTION, N_("Project env files (.env, .env.local, .env.taotoken)"))
def project_files(ctx: DoctorContext) -> Result:
    where, found = env_files(ctx)
    if not found:
        return Result.skipped(_("no {files} in {path}").format(files=listed(project_env.READ), path=where.root))
    issues = Issues()
    with_vars = [env_file for env_file in found if env_file.copy is not None]
    for env_file in with_vars:
        copy, path = env_file.copy, env_file.file.path
        assert copy is not None
        permissions(issues, env_file.file, holds_key=bool(env_file.keys))
        if copy.points == TAOTOKEN:
            fix = _fix(ctx, env_file, where.root)
            issues.details += [_("{path}: {why}").format(path=path, why=why) for why in left_alone(copy)]
            check_copy(issues, ctx, owned_values(copy), str(path), fix=fix,
                       set_fix=lambda name, url, path=path: _("set {name}={url} in {path}").format(
                           name=name, url=url, path=path))
            model = copy.values.get("TAOTOKEN_MODEL")
            if model is not None and ctx.model and model != ctx.model:
                issues.warn(_("{path}: TAOTOKEN_MODEL = {value} differs from taotoken's model {model}").format(
                    path=path, value=repr(model), model=repr(ctx.model)), fixes=[fix])
            issues.details += [_("{path}: {name} = {value} (taotoken's model is {model})").format(
                path=path, name=name, value=repr(value), model=ctx.model)
                for name, value in copy.of_role(MODEL).items() if not VARIABLES[name].synced]
        elif copy.points == MIXED:
            issues.warn(_("{path} points partly at {gateway} and partly at {hosts}").format(
                path=path, gateway=gateway_label(ctx), hosts=listed(copy.other_hosts(hosts(ctx)))),
                        fixes=[_("point every URL in {path} at one gateway").format(path=path)])
        elif copy.points != NO_URL:
            issues.details.append(_("{path}: {names} — points at {hosts}, not {gateway}; not a copy").format(
                path=path, names=listed(copy.names), hosts=listed(copy.other_hosts(hosts(ctx))),
                gateway=gateway_label(ctx)))
        else:
            issues.details.append(_("{path}: {names} — no base URL").format(path=path, names=listed(copy.names)))
        for name, value in copy.values.items():
            shell = ctx.env.get(name)
            if shell is not None and shell != value:
                issues.warn(_("{name}: the shell has {shell}, {file} has {value} — {who_wins}").format(
                    name=name, shell=show(name, shell), file=path.name, value=show(name, value),
                    who_wins=_who_wins(env_file.assignments[name])),
                            fixes=[Fix.of(_("make them the same, or {command} in the shell (and its start-up "
                                            "files)"), command=Command(f"unset {name}"))])
    if not with_vars:
        return issues.result(_("{files} in {path}: no gateway variables").format(
            files=listed(f.file.path.name for f in found), path=where.root))
    return issues.result(_("{files} agree with the triple").format(
        files=listed(f"{f.file.path.name} ({', '.join(f.copy.names)})" for f in with_vars if f.copy)))


@check("env.project_tracked", SECTION, N_("Project env files and git"))
def project_tracked(ctx: DoctorContext) -> Result:
    where, found = env_files(ctx)
    if not where.repo:
        return Result.skipped(_("{path} is not a git repository").format(path=where.root))
    holding = [env_file for env_file in found if any(env_file.keys.values())]
    if not holding:
        return Result.ok(_("no project env file holds a key"))
    issues = Issues()
    for env_file in holding:
        path, names = env_file.file.path, listed(name for name, value in env_file.keys.items() if value)
        relative = path.relative_to(where.root)
        if gitrepo.tracked(path):
            issues.fail(_("{path} holds {names} and git tracks it: a committed key is a leak").format(
                path=path, names=names),
                        fixes=[Fix.of(_("{command}   (in {path}; the file stays on disk)"),
                                      command=Command(f"git rm --cached {relative}"), path=where.root),
                               Fix.run(f"echo {relative} >> .gitignore"),
                               _("rotate the key in the TaoToken console: git history (and any pushed copy) keeps "
                                 "it")])
        elif gitrepo.ignored(path) is False:
            issues.warn(_("{path} holds {names} and git does not ignore it: one `git add .` commits the key").format(
                path=path, names=names),
                        fixes=[Fix.of(_("{command}   (or, for you only: >> .git/info/exclude)"),
                                      command=Command(f"echo {relative} >> .gitignore"))])
    return issues.result(_("{files}: holds a key, ignored by git").format(
        files=listed(f.file.path.name for f in holding)))
