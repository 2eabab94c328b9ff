"""`taotoken completion`: print a packaged completion script, or install/uninstall them through the apply flow
(show, confirm, backups, `taotoken init --undo`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from taotoken_cli.cmd.completion import install as places
from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.clients.base import Machine
from taotoken_cli.core.files import applyflow
from taotoken_cli.core.platform import system
from taotoken_cli.core.term.iostreams import IOStreams


@dataclass
class CompletionOptions:
    targets: list[str] = field(default_factory=list)
    install: bool = False
    uninstall: bool = False
    yes: bool = False
    dry_run: bool = False


def _unknown(target: str, allowed: tuple[str, ...]) -> InputError:
    return InputError(_("{target!r} is not a shell taotoken has a completion for").format(target=target),
                      _("choose one of: {names}").format(names=listed(allowed)))


def run(options: CompletionOptions, io: IOStreams) -> int:
    if options.install and options.uninstall:
        raise InputError(_("--install and --uninstall cannot be combined"), _("run one of them"))
    if not (options.install or options.uninstall):
        return _print(options, io)
    targets = options.targets or _default_targets(io)
    for target in targets:
        if target not in places.TARGETS:
            raise _unknown(target, places.TARGETS)
    if places.MAN in targets and system.current().windows:
        raise InputError(_("Windows has no man: the same text is in taotoken --help and each command's --help"),
                         Fix.of(_("leave man out: {command}"),
                                command=Command("taotoken completion --install powershell")))
    machine = Machine.of(io.env, io.cwd)
    targets = list(dict.fromkeys(targets))
    plan = (places.install_plan if options.install else places.uninstall_plan)(targets, machine)
    command = "taotoken completion --install" if options.install else "taotoken completion --uninstall"
    flow = applyflow.Flow(command=command, yes=options.yes, dry_run=options.dry_run, offers_dry_run=True)
    outcome = applyflow.run(io, plan, flow, machine.config_dir)
    if outcome.step is applyflow.Step.NOOP:
        io.out.wrapped(_("already installed and up to date: {targets}").format(targets=listed(targets))
                       if options.install else _("nothing to remove: {targets}").format(targets=listed(targets)),
                       hang="  ")
    if outcome.step in (applyflow.Step.NOOP, applyflow.Step.APPLIED) and options.install:
        _next_steps(io, targets, machine)
    return outcome.exit_code


def _print(options: CompletionOptions, io: IOStreams) -> int:
    shells = places.SHELLS
    if len(options.targets) != 1:
        raise InputError(_("name one shell to print its completion script"),
                         Fix.of(_("{command}   (or zsh, fish, powershell; --install puts it in place)"),
                                command=Command("taotoken completion bash")))
    shell = options.targets[0]
    if shell not in shells:
        raise _unknown(shell, shells)
    io.out.out.write(places.script(shell).decode("utf-8"))
    return Exit.OK


def _default_targets(io: IOStreams) -> list[str]:
    shell = places.user_shell(io.env)
    if shell is None:
        raise InputError(_("cannot tell which shell you use ($SHELL is {shell})").format(
            shell=repr(io.env.get("SHELL", ""))),
            Fix.of(_("name it: {command}   (or zsh, fish, powershell; man for the man pages)"),
                   command=Command("taotoken completion --install bash")))
    return [shell] if system.current().windows else [shell, places.MAN]


def _next_steps(io: IOStreams, targets: list[str], machine: Machine) -> None:
    """How this shell gets the completion now (new ones have it), and whether man will find the page."""
    out, where = io.out, places.places(machine)
    now = {"bash": Fix.of(_("bash: new shells complete taotoken; in this one: {command}"),
                          command=Command("exec bash")),
           "zsh": Fix.of(_("zsh: new shells complete taotoken; in this one: {command}"), command=Command("exec zsh")),
           "fish": Fix.prose(_("fish: taotoken completes at the next Tab")),
           "powershell": Fix.of(_("PowerShell: new windows complete taotoken; in this one: {command}"),
                                command=Command(". $PROFILE"))}
    for target in targets:
        if target in now:
            out.wrapped(now[target], _("next: "), "  ")
    if places.MAN in targets:
        if places.man_found(where.man_root, io.env):
            out.wrapped(Fix.of(_("man: {command} ({chinese} for Chinese)"), command=Command("man taotoken"),
                               chinese=Command("LANG=zh_CN.UTF-8 man taotoken")), _("next: "), "  ")
        else:
            out.error_note(_("note: man looks beside the directories on PATH (DIR/../share/man) and in MANPATH; "
                             "{root} is in neither: add {bin} to PATH, or export MANPATH=\"{root}:\"").format(
                root=where.man_root, bin=where.man_root.parent.parent / "bin"))
