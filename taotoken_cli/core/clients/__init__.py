"""One module per client config format, each implementing `clients.base.Client`; `CLIENTS` lists them by
init target name, in the order init writes and doctor reads them."""

from __future__ import annotations

from taotoken_cli.core.clients import (
    ccswitch,
    claude_code,
    cline,
    codex,
    gemini_cli,
    mcp,
    openclaw,
    opencode,
    project_env,
    qwen_code,
    shell,
)
from taotoken_cli.core.clients.base import Client

CLIENTS: dict[str, Client] = {module.NAME: module for module in (claude_code, codex, cline, gemini_cli, openclaw,
                                                                 opencode, qwen_code, ccswitch, shell, mcp,
                                                                 project_env)}
# Written only when named (`--target`), never detected or part of `--all`: a key goes into a project folder only
# when the user asks for it there.
ON_REQUEST = (project_env.NAME,)
