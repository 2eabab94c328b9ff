"""`taotoken init`: write the triple into every client's real config, safely (plan, confirm, apply, undo)."""

from __future__ import annotations

import typer

from taotoken_cli.cmd import options as _options
from taotoken_cli.core.base.i18n import _

# Values shell completion offers (autocompletion=), taken from the code that accepts them; gen_docs writes
# them into the static completion scripts, so Tab never starts Python. Imports happen only when asked.


def complete_ccswitch_apps() -> list[str]:
    from taotoken_cli.core.clients.ccswitch_store import LINK_APPS

    return list(LINK_APPS)


def complete_codex_auth_modes() -> list[str]:
    from taotoken_cli.core.clients.codex import AUTH_MODES

    return list(AUTH_MODES)


def complete_init_scopes() -> list[str]:
    from taotoken_cli.cmd.init.plan import SCOPES

    return list(SCOPES)


def complete_init_targets() -> list[str]:
    from taotoken_cli.cmd.init.plan import TARGETS

    return list(TARGETS)



def register(app: typer.Typer) -> None:
    app.command("init", help=_("Write base URL, key and model into every AI client's real config (dry-run, "
                               "backups, undo)."))(init)


def init(
    base_url: str | None = _options.BASE_URL,
    model: str | None = _options.MODEL,
    key: str | None = typer.Option(None, "--key", metavar="KEY",
                                   help=_("The API key (lands in shell history: prefer --key-stdin).")),
    key_stdin: bool = typer.Option(False, "--key-stdin", help=_("Read the API key from stdin.")),
    target: list[str] = typer.Option([], "--target", metavar="TARGET", autocompletion=complete_init_targets,
                                     help=_("claude-code, codex, cline, gemini-cli (only where the gateway serves the "
                                       "Gemini API), openclaw, opencode, qwen-code, cc-switch, shell, mcp "
                                       "(MCP servers that point at TaoToken) or project-env (.env.taotoken here) "
                                       "(repeatable; default: the clients detected here). Own config: always.")),
    all_targets: bool = typer.Option(False, "--all", help=_("Write every target (project-env only when named).")),
    yes: bool = typer.Option(False, "--yes", "-y", help=_("Apply without asking (for scripts).")),
    dry_run: bool = typer.Option(False, "--dry-run", help=_("Show unified diffs (key masked); write nothing.")),
    verbose: bool = typer.Option(False, "--verbose", "-v", help=_("List every change, note and file written (the "
                                                                  "default: one line per client).")),
    undo: bool = typer.Option(False, "--undo", help=_("Restore every file of the last run exactly.")),
    force: bool = typer.Option(False, "--force", help=_("With --undo: restore even files edited since that run.")),
    scope: str = typer.Option("user", "--scope", metavar="SCOPE", autocompletion=complete_init_scopes,
                              help=_("Claude Code: user (~/.claude/settings.json) or project "
                                "(.claude/settings.local.json of this git repository).")),
    codex_auth: str = typer.Option("env", "--codex-auth", metavar="MODE", autocompletion=complete_codex_auth_modes,
                                   help=_("How Codex gets the key: env (env_key + shell target), auth-json "
                                     "(auth.json; replaces a ChatGPT login) or inline (plaintext).")),
    open_links: bool = typer.Option(False, "--open", help=_("Hand the CC Switch import links to xdg-open/open/start, "
                                      "one at a time (Enter between them).")),
    open_app: str | None = typer.Option(None, "--open-app", metavar="APP", autocompletion=complete_ccswitch_apps,
                                        help=_("Hand over only this app's CC Switch link: claude or codex (implies "
                                          "--open).")),
    allow_unlisted: bool = typer.Option(False, "--allow-unlisted",
                                        help=_("Write a --model without asking the gateway whether it lists it (for "
                                               "gateways that hide some models).")),
    profile: str | None = _options.PROFILE,
    _t: str | None = _options.retired("-t", "--target"),
) -> None:
    from taotoken_cli.cmd.init.plan import InitRequest
    from taotoken_cli.cmd.init.run import InitOptions, run

    request = InitRequest(base_url=base_url, api_key=key, model=model, key_from_flag=key is not None,
                          key_stdin=key_stdin, targets=list(target), all_targets=all_targets, scope=scope,
                          codex_auth=codex_auth, open_links=open_links or open_app is not None,
                          open_app=open_app, profile=profile, allow_unlisted=allow_unlisted)
    raise typer.Exit(run(InitOptions(request, yes=yes, dry_run=dry_run, undo=undo, force=force, verbose=verbose),
                         _options.io()))
