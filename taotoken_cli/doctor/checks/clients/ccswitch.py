"""CC Switch's check: it manages the same files as Claude Code and Codex."""

from __future__ import annotations

from taotoken_cli.clients import ccswitch, claude_code, codex
from taotoken_cli.doctor.checks.clients.common import SECTION, client_state, parse_failure
from taotoken_cli.doctor.context import DoctorContext
from taotoken_cli.doctor.model import Result
from taotoken_cli.doctor.registry import check


@check("ccswitch.managed", SECTION, "CC Switch manages the same files")
def ccswitch_managed(ctx: DoctorContext) -> Result:
    where = ccswitch.paths(ctx.machine)
    kind = ccswitch.store_kind(where)
    if kind == "none":
        return Result.skipped("CC Switch not found (no ~/.cc-switch)")
    state = client_state(ctx, ccswitch.NAME)
    settings = state.files["settings"]
    if settings.error:
        return parse_failure(settings)
    data = settings.data if isinstance(settings.data, dict) else {}
    current = {app: data.get(f"currentProvider{app.capitalize()}") for app in ("claude", "codex")}
    managed = []
    claude_settings = claude_code.paths(ctx.machine).settings
    codex_config = codex.paths(ctx.machine).config
    if claude_settings.exists():
        managed.append(str(claude_settings))
    if codex_config.exists():
        managed.append(str(codex_config))
    details = [f"store: {kind} in {where.home}"] + [f"current {app} provider: {pid}" for app, pid in current.items()
                                                     if pid]
    if not managed:
        return Result.ok("CC Switch is installed; it manages no client file here yet", details=details)
    if all(pid and "taotoken" in str(pid).lower() for app, pid in current.items() if app in ("claude", "codex")):
        return Result.ok("TaoToken is CC Switch's current provider for Claude Code and Codex", details=details)
    return Result.warn(f"CC Switch manages {', '.join(managed)}: its next provider switch overwrites edits made "
                       "there (and absorbs them into the current provider)",
                       details=details,
                       fixes=["add TaoToken as a CC Switch provider and switch to it there (taotoken init writes the "
                              "ccswitch://v1/import links), instead of editing those files by hand"])
