"""CC Switch's own command line, used instead of an import link where it is installed (ccswitch.md).

`cc-switch` (SaladDay/cc-switch-cli, read at 5.10.2: src-tauri/src/cli/commands/provider.rs) shares CC Switch's
database (~/.cc-switch/cc-switch.db, or $CC_SWITCH_CONFIG_DIR). init adds TaoToken with

    cc-switch --app APP provider add --name TaoToken --id taotoken --config-file FILE --website-url ORIGIN

where FILE is the provider's settings_config (the JSON deeplink/provider.rs builds for a link) in a temporary 0600
file, removed right after: the key is never on a command line. `provider add` changes the database only when the
app already has a current provider there; for an app without one the new provider becomes current and CC Switch
rewrites the app's own files at once, and OpenCode's and OpenClaw's providers are always written into their live
files ("additive" apps). Those would be switched without the user choosing it, so they keep the link. Undo is
`cc-switch --app APP provider delete taotoken`, which asks for confirmation on a terminal (inquire, no flag skips
it): init records it in its run's manifest and `init --undo` answers it (core.platform.answering).

The GUI's executable is called `cc-switch` on Linux too, and would open a window: the command line is told apart by
the help text of `provider add --config-file`, which only it carries (the file is read, never run, to tell).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.base.oserrors import os_error_text
from taotoken_cli.core.clients.base import Machine, on_path
from taotoken_cli.core.clients.ccswitch_store import APP_LABELS, Store
from taotoken_cli.core.files.fileplan import UndoStep

COMMAND = "cc-switch"
MARKER = b"Raw settings_config read from a JSON file"  # clap's help for `provider add --config-file`
SWITCH_APPS = ("claude", "codex", "gemini")  # one current provider each; `add` of a non-current one writes the DB only
TIMEOUT_S = 30.0
DELETE_PROMPT = "delete provider"  # inquire's question: "Are you sure you want to delete provider '<id>'?"
_SCAN_LIMIT = 256 * 1024 * 1024


def find(machine: Machine) -> Path | None:
    """The `cc-switch` command line on PATH (not the GUI of the same name), or None."""
    where = on_path(COMMAND, machine.env)
    if where is None:
        return None
    try:
        with open(where, "rb") as handle:
            tail, read = b"", 0
            while read < _SCAN_LIMIT and (chunk := handle.read(1 << 20)):
                if MARKER in tail + chunk:
                    return Path(where)
                tail, read = chunk[-len(MARKER):], read + len(chunk)
    except OSError:
        return None
    return None


@dataclass
class Handover:
    """How each app gets TaoToken: through the command line (`cli_apps`), or its link (with a note saying why)."""

    command: Path | None
    cli_apps: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def handover(command: Path | None, store: Store, settings: object, wanted: dict[str, str],
             provider_id: str) -> Handover:
    """Which of the `wanted` apps (app -> the endpoint TaoToken's provider has) `provider add` may take: not one
    CC Switch has already, nor one the add would switch (see the module docstring)."""
    if command is None:
        return Handover(None)
    if store.kind != "sqlite" or store.problem:
        return Handover(command, notes=(_("{command} is installed, but CC Switch's database cannot be read here: the "
                                          "links are handed over instead").format(command=COMMAND),))
    chosen, notes = [], []
    for app, endpoint in wanted.items():
        label = APP_LABELS[app]
        if store.same_endpoint(app, endpoint):
            continue  # CC Switch has it already: neither the command nor the link (ccswitch.plan says so)
        if any(p.id == provider_id for p in store.providers_for(app)):
            notes.append(_("CC Switch already has a {app} provider with id {id} (another endpoint): update it in CC "
                           "Switch, or delete it there and run init again").format(app=label, id=repr(provider_id)))
        elif app not in SWITCH_APPS:
            notes.append(_("{app}: CC Switch writes a new {app} provider into {app}'s own files at once, so it gets "
                           "the import link (you confirm it in CC Switch)").format(app=label))
        elif store.current(app, settings if isinstance(settings, dict) else None)[0] is None:
            notes.append(_("{app}: CC Switch has no current {app} provider, so an added one would become current and "
                           "rewrite {app}'s files: it gets the import link instead").format(app=label))
        else:
            chosen.append(app)
    return Handover(command, tuple(chosen), tuple(notes))


def add(command: Path, app: str, settings_config: dict, *, name: str, provider_id: str, homepage: str,
        env: dict[str, str]) -> str | None:
    """`cc-switch provider add` for one app, the settings in a 0600 temporary file removed after; None when it
    worked, else what went wrong, in words (the key is in no argument, so in none of them)."""
    handle, path = tempfile.mkstemp(prefix="taotoken-cc-switch-", suffix=".json")  # created 0600
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(settings_config, file)
        argv = [str(command), "--app", app, "provider", "add", "--name", name, "--id", provider_id,
                "--config-file", path, "--website-url", homepage]
        try:
            proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=TIMEOUT_S, errors="replace")
        except subprocess.TimeoutExpired:
            return _("{command} did not finish within {seconds} s").format(command=COMMAND, seconds=int(TIMEOUT_S))
        except OSError as exc:
            return os_error_text(exc)
    finally:
        Path(path).unlink(missing_ok=True)
    if proc.returncode == 0:
        return None
    said = [line.strip() for line in (proc.stderr + "\n" + proc.stdout).splitlines() if line.strip()]
    return _("{command} exited with status {status}: {said}").format(command=COMMAND, status=proc.returncode,
                                                                    said=" ".join(said[-2:]) or _("(nothing)"))


def undo_step(command: Path, app: str, provider_id: str) -> UndoStep:
    return UndoStep(_("CC Switch: provider {id} for {app}").format(id=repr(provider_id), app=APP_LABELS[app]),
                    (str(command), "--app", app, "provider", "delete", provider_id), prompt=DELETE_PROMPT,
                    answer="y")
