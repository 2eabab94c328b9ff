"""Every command and subcommand of the real app, found from the Typer app itself: the sweeps that must cover each
command (tests/sweeps/test_sweep_secrets.py, tests/sweeps/test_sweep_fuzz_commands.py) take their list from here,
so a new command is swept as soon as it exists."""

from __future__ import annotations

import click
import typer

from taotoken_cli.app import app

ROOT = typer.main.get_command(app)


def command_paths() -> dict[str, click.Command]:
    """Every command and subcommand of the real app: 'route devices' -> its click command ('' is the app)."""
    found: dict[str, click.Command] = {}

    def walk(command: click.Command, path: list[str]) -> None:
        found[" ".join(path)] = command
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, [*path, name])

    walk(ROOT, [])
    return found
