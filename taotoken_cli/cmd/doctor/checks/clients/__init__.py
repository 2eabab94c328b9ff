"""Clients: Claude Code, Codex, Cline, Gemini CLI, OpenClaw, CC Switch, OpenCode and Qwen Code, read through
taotoken_cli.core.clients (the same readers `init` writes with). Each trap from reference/client-configs.md is its own
check with a stable id; one module per client (vscode: Claude Code's VS Code extension settings), registered in the
order imported here."""

from taotoken_cli.cmd.doctor.checks.clients import (  # noqa: F401, I001 - registers, in this order
    claude_code, claude_provider, vscode, codex, cline, gemini_cli, openclaw, ccswitch, opencode, qwen_code)
