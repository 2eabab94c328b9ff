"""Shell start-up files and the desktop (Environment section): whether new shells, and programs started from the
desktop, get the variables that `init --target shell` wrote.

A line the user commented out or removed stays so (the user's choice: `init` and `config set` never bring it back);
doctor says that new shells lack the variables and how to bring the line back. Per OS (core.platform.system): the
line in ~/.bashrc / ~/.zshrc sourcing env.sh (macOS: ~/.zshrc, ~/.bash_profile); on Windows the line in the
PowerShell profiles loading env.ps1. For programs started from the desktop: on Windows the user environment
(HKCU\\Environment), on macOS the LaunchAgent and launchd's session (`launchctl getenv`).
"""

from __future__ import annotations

import json
from pathlib import Path

from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Result
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
    windows = system.current().windows
    if windows:
        env_file = ctx.machine.config_dir / winshell.ENV_PS1
        files = winshell.profiles(ctx.machine)
    else:
        env_file = shell.paths(ctx.machine).env_sh
        files = list(shell.start_up_files(shell.paths(ctx.machine)))
    if not env_file.exists():
        return Result.skipped(_("no {path}: `taotoken init --target shell` was not run").format(path=env_file))
    states = shell.line_states(files)
    active = [path for path, in_effect in states.items() if in_effect]
    if active:
        shown = listed(str(p) for p in active)
        return Result.ok((_("new PowerShell windows load {env} ({files})") if windows else
                          _("new shells source {env} ({files})")).format(env=env_file, files=shown))
    off = [path for path, in_effect in states.items() if not in_effect]
    if off:
        message = (_("the line that loads {env} is commented out in {files}: new PowerShell windows lack "
                     "OPENAI_BASE_URL and OPENAI_API_KEY") if windows else
                   _("the line that sources {env} is commented out in {files}: new shells lack "
                     "OPENAI_BASE_URL and OPENAI_API_KEY"))
        return Result.warn(message.format(env=env_file, files=listed(str(p) for p in off)),
                           fixes=[_("remove the leading # from the line marked {marker} in {path}").format(
                               marker=shell.MARKER, path=off[0])])
    message = (_("no PowerShell profile loads {env}: new PowerShell windows lack OPENAI_BASE_URL and "
                 "OPENAI_API_KEY") if windows else
               _("no start-up file sources {env}: new shells lack OPENAI_BASE_URL and OPENAI_API_KEY"))
    return Result.warn(message.format(env=env_file),
                       fixes=[Fix.of(_("{command}   (adds the one marked line back)"), command=_RERUN)])


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
    return {str(k): str(v) for k, v in wanted.items()} if isinstance(wanted, dict) else None
