"""A stand-in for CC Switch's command line `cc-switch` (SaladDay/cc-switch-cli 5.10.2, Rust), which cannot be built
here (crates.io is out of reach): the tests put it first on PATH, at the outermost boundary, as `cc-switch`.

What it does is what the real program does for the two commands taotoken runs, read from its source:
- `cc-switch --app APP provider add --name N --id ID --config-file FILE --website-url URL`
  (cli/commands/provider.rs add_provider, services/provider ProviderService::add): the settings_config is FILE's
  JSON, the row goes into ~/.cc-switch/cc-switch.db ($CC_SWITCH_CONFIG_DIR) `providers`; an existing id is refused
  ("Provider ID already exists"); the first provider of an app becomes its current one.
- `cc-switch --app APP provider delete ID` (delete_provider): the current provider is refused; otherwise inquire
  asks "Are you sure you want to delete provider 'ID'?" on the terminal, and without one it fails with
  "Prompt failed: The input device is not a TTY" (inquire's NotTTY).
Errors go to stderr as `Error: …` with exit status 1 (main.rs).

Like the real binary it carries the help text of `provider add --config-file`, by which taotoken tells the command
line from CC Switch's GUI (also called `cc-switch` on Linux): Raw settings_config read from a JSON file.

For the tests it also appends each run to `standin.log` beside the database: its arguments, and the mode the
config file had when it was read.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import sys
import time
from pathlib import Path


def fail(message: str) -> None:
    print(f"Error: {message}", file=sys.stderr)
    raise SystemExit(1)


def main(argv: list[str]) -> int:
    home = Path(os.environ.get("CC_SWITCH_CONFIG_DIR") or Path(os.environ["HOME"]) / ".cc-switch")
    app = "claude"
    if "--app" in argv:
        at = argv.index("--app")
        app = argv[at + 1]
        del argv[at:at + 2]
    options = {argv[i][2:]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}
    home.mkdir(parents=True, exist_ok=True)
    log = {"argv": sys.argv[1:]}
    conn = sqlite3.connect(home / "cc-switch.db", isolation_level=None)
    conn.execute("CREATE TABLE IF NOT EXISTS providers (id TEXT NOT NULL, app_type TEXT NOT NULL, name TEXT NOT NULL,"
                 " settings_config TEXT NOT NULL, website_url TEXT, category TEXT, created_at INTEGER,"
                 " sort_index INTEGER, notes TEXT, is_current BOOLEAN NOT NULL DEFAULT 0, PRIMARY KEY (id, app_type))")
    try:
        if argv[:2] == ["provider", "add"]:
            config = Path(options["config-file"])
            log["config_mode"] = oct(stat.S_IMODE(config.stat().st_mode))
            settings = json.loads(config.read_text(encoding="utf-8"))
            pid = options.get("id") or options["name"].lower()
            if conn.execute("SELECT 1 FROM providers WHERE id = ? AND app_type = ?", (pid, app)).fetchone():
                fail(f"Provider ID already exists: {pid}")
            first = not conn.execute("SELECT 1 FROM providers WHERE app_type = ? AND is_current", (app,)).fetchone()
            conn.execute("INSERT INTO providers (id, app_type, name, settings_config, website_url, created_at, "
                         "is_current) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (pid, app, options["name"], json.dumps(settings), options.get("website-url"),
                          int(time.time() * 1000), first))
            print(f"✓ Provider '{pid}' added")
        elif argv[:2] == ["provider", "delete"]:
            pid = argv[2]
            row = conn.execute("SELECT is_current FROM providers WHERE id = ? AND app_type = ?", (pid, app)).fetchone()
            if row and row[0]:
                fail("Cannot delete the current active provider. Please switch to another provider first.")
            if not sys.stdin.isatty():
                fail("Prompt failed: The input device is not a TTY")
            sys.stdout.write(f"? Are you sure you want to delete provider '{pid}'? (y/N) ")
            sys.stdout.flush()
            answer = sys.stdin.readline().strip().lower()
            log["answer"] = answer
            if answer not in ("y", "yes"):
                print("Cancelled.")
                return 0
            conn.execute("DELETE FROM providers WHERE id = ? AND app_type = ?", (pid, app))
            print(f"✓ Deleted provider '{pid}'")
        else:
            fail(f"the stand-in knows `provider add` and `provider delete`, not {argv}")
    finally:
        with open(home / "standin.log", "a", encoding="utf-8") as file:
            file.write(json.dumps(log) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
