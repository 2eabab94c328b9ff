"""One module per client config format, each implementing `clients.base.Client`; `CLIENTS` lists them by
init target name, in the order init writes and doctor reads them."""

from __future__ import annotations

from taotoken_cli.clients import ccswitch, claude_code, cline, codex, shell
from taotoken_cli.clients.base import Client

CLIENTS: dict[str, Client] = {module.NAME: module for module in (claude_code, codex, cline, ccswitch, shell)}
