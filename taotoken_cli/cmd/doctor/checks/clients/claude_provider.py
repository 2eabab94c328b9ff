"""Claude Code's cloud-provider switches (claude.provider): CLAUDE_CODE_USE_BEDROCK=1, CLAUDE_CODE_USE_VERTEX=1 and
their kin send Claude Code to that cloud, and ANTHROPIC_BASE_URL is never asked, however right it is. Read where
Claude Code reads them (settings files over the shell) and where a new terminal gets them (start-up file lines);
`--fix` removes one from an env block it may edit, as init does; a shell export is named by file and line."""

from __future__ import annotations

from taotoken_cli.cmd.doctor.checks.clients.claude_code import Claude, _env_repair, claude_found
from taotoken_cli.cmd.doctor.checks.clients.common import client_check
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Result
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _
from taotoken_cli.core.clients import claude_code


@client_check("claude.provider", N_("Claude Code provider switches"), claude_found)
def claude_provider(ctx: DoctorContext, claude: Claude) -> Result:
    issues = Issues()
    for item in claude_code.provider_switches(claude.env):
        provider = claude_code.PROVIDER_SWITCHES[item.name]
        _value, places = claude_code.shell_value(item.name, ctx.machine)
        where = item.where if item.path is not None or not places else ", ".join(places)
        message = _("{name}={value} ({where}): Claude Code talks to {provider} and ignores ANTHROPIC_BASE_URL; no "
                    "request reaches the gateway").format(name=item.name, value=item.value, where=where,
                                                          provider=provider)
        if item.path is None:
            fixes: list[Fix | str] = [_("delete the line {place} (export {name}=…), then open a new terminal").format(
                place=place, name=item.name) for place in places] or [
                Fix.of(_("{command} in the shell that starts Claude Code"), command=Command(f"unset {item.name}"))]
        elif item.role == "managed":
            fixes = [_('ask the administrator who manages {path} to remove "{name}"').format(path=item.path,
                                                                                           name=item.name)]
        else:
            fixes = [_('remove "{name}" from the env block of {path}').format(name=item.name, path=item.path)]
        name = item.name
        issues.fail(message, fixes=fixes, repairs=_env_repair(
            item, _("remove env.{name} (Claude Code then uses ANTHROPIC_BASE_URL)").format(name=name),
            lambda env, name=name: env.pop(name, None)))
    for name, provider in claude_code.PROVIDER_SWITCHES.items():
        if name in claude.env:
            continue
        value, places = claude_code.shell_value(name, ctx.machine)
        if places and claude_code.switched_on(value):  # not in this shell yet: every new terminal gets it
            issues.fail(_("{name}={value} is exported in {places}: Claude Code started from a new terminal talks to "
                          "{provider} and ignores ANTHROPIC_BASE_URL").format(name=name, value=value,
                                                                               places=", ".join(places),
                                                                               provider=provider),
                        fixes=[_("delete the line {place} (export {name}=…), then open a new terminal").format(
                            place=place, name=name) for place in places])
    return issues.result(_("no cloud-provider switch is on: Claude Code uses ANTHROPIC_BASE_URL"))
