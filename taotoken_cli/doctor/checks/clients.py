"""Clients: Claude Code, Codex, Cline and CC Switch config files (filled in from taotoken_cli.clients)."""
