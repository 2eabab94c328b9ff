"""Shell start-up files and the desktop (Environment section): whether new shells, and programs started from the
desktop, get the variables that `init --target shell` wrote.

A line the user commented out or removed stays so (the user's choice: `init` and `config set` never bring it back);
doctor says that new shells lack the variables and how to bring the line back. Per OS (core.platform.system): the
line in ~/.bashrc / ~/.zshrc sourcing env.sh (macOS: ~/.zshrc, ~/.bash_profile); on Windows the line in the
PowerShell profiles loading env.ps1, and Git Bash's (~/.bashrc, ~/.bash_profile) where init wrote env.sh for
it. For programs started from the desktop: on Windows the user environment (HKCU\\Environment), on macOS the
LaunchAgent and launchd's session (`launchctl getenv`).
"""

from __future__ import annotations

import json
from pathlib import Path

from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import macshell, shell, winshell
from taotoken_cli.core.platform import desktopenv, system

SECTION = "Environment"
_RERUN = Command("taotoken init --target shell")


@check("env.startup_line", SECTION, N_("Shell start-up line for env.sh"))
def startup_line(ctx: DoctorContext) -> Result:
    """Per shell that init wrote a line for (on Windows the PowerShell profiles, and Git Bash's start-up files where
    env.sh was written for it): the marked line in effect, commented out, or removed."""
    where = shell.paths(ctx.machine)
    if system.current().windows:
        groups = [(ctx.machine.config_dir / winshell.ENV_PS1, winshell.profiles(ctx.machine), True)]
        if where.env_sh.exists():  # init wrote env.sh: a POSIX shell (Git Bash) is in use here
            groups.append((where.env_sh, list(shell.start_up_files(where)), False))
    else:
        groups = [(where.env_sh, list(shell.start_up_files(where)), False)]
    if not groups[0][0].exists():
        return Result.skipped(_("no {path}: `taotoken init --target shell` was not run").format(path=groups[0][0]))
    issues, fine = Issues(), []
    for env_file, files, powershell in groups:
        states = shell.line_states(files)
        active = [path for path, in_effect in states.items() if in_effect]
        off = [path for path, in_effect in states.items() if not in_effect]
        if active:
            fine.append((_("new PowerShell windows load {env} ({files})") if powershell else
                         _("new shells source {env} ({files})")).format(env=env_file,
                                                                       files=listed(str(p) for p in active)))
        elif off:
            message = (_("the line that loads {env} is commented out in {files}: new PowerShell windows lack "
                         "OPENAI_BASE_URL and OPENAI_API_KEY") if powershell else
                       _("the line that sources {env} is commented out in {files}: new shells lack "
                         "OPENAI_BASE_URL and OPENAI_API_KEY"))
            issues.warn(message.format(env=env_file, files=listed(str(p) for p in off)),
                        fixes=[_("remove the leading # from the line marked {marker} in {path}").format(
                            marker=shell.MARKER, path=off[0])])
        else:
            message = (_("no PowerShell profile loads {env}: new PowerShell windows lack OPENAI_BASE_URL and "
                         "OPENAI_API_KEY") if powershell else
                       _("no start-up file sources {env}: new shells lack OPENAI_BASE_URL and OPENAI_API_KEY"))
            issues.warn(message.format(env=env_file),
                        fixes=[Fix.of(_("{command}   (adds the one marked line back)"), command=_RERUN)])
    issues.details.extend(fine if issues.items else fine[1:])
    return issues.result(fine[0] if fine else "")


@check("env.desktop", SECTION, N_("Variables for apps started from the desktop"))
def desktop(ctx: DoctorContext) -> Result:
    facts = system.current()
    if not (facts.windows or facts.macos):
        return Result.skipped(_("desktop sessions here start programs with the login shell's variables"))
    if facts.windows:
        wanted = _windows_record(ctx.machine.config_dir / winshell.RECORD)
        if wanted is None:
            return Result.skipped(_("no {path}: `taotoken init --target shell` was not run").format(
                path=ctx.machine.config_dir / winshell.RECORD))
        where = _("the Windows user environment (HKCU\\Environment)")
    else:
        env_sh = shell.paths(ctx.machine).env_sh
        if not env_sh.exists():
            return Result.skipped(_("no {path}: `taotoken init --target shell` was not run").format(path=env_sh))
        agent = macshell.agent_path(ctx.machine)
        written = macshell.read_agent(agent)
        if written is None:
            return Result.warn(_("no LaunchAgent {path}: apps started from the Dock or Spotlight (VS Code, Codex in "
                                 "it) lack OPENAI_BASE_URL and OPENAI_API_KEY").format(path=agent),
                               fixes=[Fix.of(_("{command}   (adds it; or start the app from a terminal)"),
                                             command=_RERUN)])
        if written != macshell.agent_plist(env_sh):  # not the agent init writes for this env.sh
            return Result.warn(_("{path} does not load {env}: apps started from the Dock get other values or none")
                               .format(path=agent, env=env_sh), fixes=[Fix.run(_RERUN)])
        wanted = {name: value for name, value in macshell.exported_by(env_sh).items() if name in macshell.NAMES}
        where = _("launchd's session (launchctl)")
    if desktopenv.kind(ctx.env) is None:
        return Result.skipped(_("{where} cannot be read here").format(where=where))
    found = desktopenv.get(wanted, ctx.env)
    wrong = [name for name, value in wanted.items() if found.get(name) != value]
    shown = listed(f"{name}={mask_key(value) if 'KEY' in name else value}" for name, value in wanted.items())
    if wrong:
        return Result.warn(_("{where} lacks {names} or holds other values: programs started from the desktop do "
                             "not get taotoken's").format(where=where, names=listed(wrong)),
                           details=[_("wanted: {values}").format(values=shown)],
                           fixes=[Fix.of(_("{command}   (sets them again)"), command=_RERUN)])
    return Result.ok(_("{where}: {values}").format(where=where, values=shown))


def _windows_record(path: Path) -> dict[str, str] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    wanted = data.get("set") if isinstance(data, dict) else None
    # a None: a variable init put back to unset (NO_PROXY once the gateway left this machine): nothing of taotoken's
    return {str(k): str(v) for k, v in wanted.items() if v is not None} if isinstance(wanted, dict) else None
