"""CC Switch's command line (core/clients/ccswitch_cli.py): where `cc-switch` is installed, init adds TaoToken with
`cc-switch provider add` instead of handing over a link, the key never on a command line, and `init --undo` deletes
it again through the terminal confirmation `provider delete` asks for.

The real program (SaladDay/cc-switch-cli, Rust) cannot be built here: tests/data/cc_switch_standin.py stands in for
it, first on PATH, at the outermost boundary (what it does, and where that comes from, is in its docstring). The
database is a real SQLite file with CC Switch's own schema; the gateway is the mock on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

from taotoken_cli.cmd.mock import MockOptions
from tests.conftest import REPO, SENTINEL_KEY, flat, write
from tests.core.clients.test_ccswitch import MODEL, claude_row, codex_row, make_db

STANDIN = REPO / "tests" / "data" / "cc_switch_standin.py"


def standin_on_path(home: Path) -> dict[str, str]:
    bin_dir = home / "bin"
    write(bin_dir / "cc-switch", f"#!{sys.executable}\n" + STANDIN.read_text(), 0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def rows(home: Path) -> dict[tuple[str, str], tuple[dict, bool]]:
    with sqlite3.connect(home / ".cc-switch" / "cc-switch.db") as conn:
        return {(app, pid): (json.loads(settings), bool(current)) for app, pid, settings, current in
                conn.execute("SELECT app_type, id, settings_config, is_current FROM providers")}


def runs(home: Path) -> list[dict]:
    log = home / ".cc-switch" / "standin.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def seeded(home: Path) -> None:
    """CC Switch in use: a current Claude and Codex provider of the user's own (no Gemini one)."""
    make_db(home, 17, [claude_row("work", "Work", "https://work.example", key="sk-workWORKwork1234", current=True),
                       codex_row("work", "Work", "https://work.example/v1", key="sk-workWORKwork1234", current=True)])


def test_init_adds_taotoken_through_cc_switch_and_undo_deletes_it(cli, home, mock_gateway):
    seeded(home)
    env = standin_on_path(home)
    mock = mock_gateway(MockOptions(key=SENTINEL_KEY))
    result = cli("init", "--target", "cc-switch", "--base-url", mock.url, "--model", MODEL, "--key-stdin", "--yes",
                 input=SENTINEL_KEY, env=env).assert_clean()
    assert result.returncode == 0, result.output
    out = flat(result.output)
    assert "added provider 'taotoken' for Claude Code with cc-switch" in out
    assert "added provider 'taotoken' for Codex with cc-switch" in out
    assert "OpenClaw: CC Switch writes a new OpenClaw provider into OpenClaw's own files at once" in out
    stored = rows(home)
    assert stored[("claude", "taotoken")] == ({"env": {
        "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY, "ANTHROPIC_BASE_URL": mock.url, "ANTHROPIC_MODEL": MODEL,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": MODEL}}, False)  # added, not selected: the user's provider stays current
    assert f'base_url = "{mock.url}/v1"' in stored[("codex", "taotoken")][0]["config"]
    assert stored[("claude", "work")][1] and stored[("codex", "work")][1]
    added = runs(home)
    assert [run["argv"][:5] for run in added] == [["--app", "claude", "provider", "add", "--name"],
                                                  ["--app", "codex", "provider", "add", "--name"]]
    for run in added:  # the key only in a 0600 file, gone once the command ended
        assert SENTINEL_KEY not in json.dumps(run["argv"]) and run["config_mode"] == "0o600"
        assert not Path(run["argv"][run["argv"].index("--config-file") + 1]).exists()

    undone = cli("init", "--undo", env=env).assert_clean()
    assert undone.returncode == 0, undone.output
    assert "removed CC Switch: provider 'taotoken' for Claude Code" in flat(undone.output)
    assert set(rows(home)) == {("claude", "work"), ("codex", "work")}
    assert [run.get("answer") for run in runs(home)[2:]] == ["y", "y"]  # asked on a terminal, answered


def test_an_app_without_a_current_provider_keeps_its_link_and_a_provider_made_current_is_not_deleted(
        cli, home, mock_gateway):
    """Gemini has no provider in CC Switch yet: an added one would become current (rewriting Gemini CLI's files), so
    it gets the link. A TaoToken provider the user selected since init is not deleted by undo, which says so."""
    seeded(home)
    (home / ".gemini").mkdir()
    env = standin_on_path(home)
    mock = mock_gateway(MockOptions(key=SENTINEL_KEY))
    result = cli("init", "--target", "cc-switch", "--target", "gemini-cli", "--base-url", mock.url, "--model", MODEL,
                 "--key-stdin", "--yes", input=SENTINEL_KEY, env=env).assert_clean()
    assert result.returncode == 0, result.output
    assert "Gemini CLI: CC Switch has no current Gemini CLI provider" in flat(result.output)
    assert ("gemini", "taotoken") not in rows(home) and ("claude", "taotoken") in rows(home)
    with sqlite3.connect(home / ".cc-switch" / "cc-switch.db") as conn:  # the user selects TaoToken for Claude
        conn.execute("UPDATE providers SET is_current = (id = 'taotoken') WHERE app_type = 'claude'")
    undone = cli("init", "--undo", env=env).assert_clean()
    out = flat(undone.output)
    assert undone.returncode == 0 and "removed CC Switch: provider 'taotoken' for Codex" in out
    assert "not undone: CC Switch: provider 'taotoken' for Claude Code: it said:" in out
    assert "Cannot delete the current active provider" in out
    assert "run `" + str(home / "bin" / "cc-switch") + " --app claude provider delete taotoken`" in out


def test_cc_switchs_gui_of_the_same_name_is_never_run(cli, home, mock_gateway):
    """On Linux the GUI's executable is `cc-switch` too: without the command line's help text it is not run."""
    seeded(home)
    write(home / "bin" / "cc-switch", f"#!/bin/sh\necho ran >> {home}/gui-ran\n", 0o755)
    mock = mock_gateway(MockOptions(key=SENTINEL_KEY))
    result = cli("init", "--target", "cc-switch", "--base-url", mock.url, "--model", MODEL, "--key-stdin", "--yes",
                 input=SENTINEL_KEY, env={"PATH": f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}"}).assert_clean()
    assert result.returncode == 0 and not (home / "gui-ran").exists()
    assert ("claude", "taotoken") not in rows(home) and "taotoken init --target cc-switch --open" in flat(result.output)
