"""CC Switch (reference §3, ccswitch.md): add TaoToken without writing its store behind its back.

CC Switch >= 3.8 keeps providers in SQLite (~/.cc-switch/cc-switch.db); the safe way in is its
`ccswitch://v1/import` deep link, which shows the user a confirmation dialog. The links carry the key, so
they are printed masked and handed over only by an explicit action (`init --open`), one at a time: the
import dialog holds a single request. They are also written to a 0600 file in taotoken's config directory.
Only when a pre-3.8 `config.json` (v2 shape) is the live store is a provider entry added there directly,
and never while CC Switch runs (it keeps that file in memory and rewrites all of it on save).
The store is read (read-only) to tell the version and to skip a link whose endpoint CC Switch already has.
"""

from __future__ import annotations

import copy
import os
import shlex
import subprocess
import time
from urllib.parse import quote, urlsplit

from taotoken_cli.core.base.errors import ConfigFileError, TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.base.oserrors import os_error_text
from taotoken_cli.core.clients import ccswitch_cli, claude_code, codex, gemini_cli, openclaw
from taotoken_cli.core.clients.base import (
    ClientState,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    detect_by,
    json_change,
    read_json,
    read_text,
    text_change,
)
from taotoken_cli.core.clients.ccswitch_store import (
    APP_LABELS,
    APPS,
    LINK_APPS,
    CCSwitchPaths,
    Store,
    paths_under,
    read_store,
)
from taotoken_cli.core.files.fileplan import Plan, UndoStep
from taotoken_cli.core.net.urlform import OPENAI_V1
from taotoken_cli.core.platform import processes, system

NAME = "cc-switch"
LABEL = "CC Switch"
# What each app's client needs: CC Switch writes the endpoint verbatim (OpenCode's @ai-sdk/openai-compatible appends
# /chat/completions, so root + /v1).
URL_FORMS = {"claude": claude_code.URL_FORM, "codex": codex.URL_FORM, "gemini": gemini_cli.URL_FORM,
             "opencode": OPENAI_V1, "openclaw": openclaw.URL_FORM}
PROVIDER_ID = "taotoken"
PROVIDER_NAME = "TaoToken"
LINKS_FILE = "cc-switch-import.txt"
# The executable's names: `cc-switch` (Linux packages and the binary inside the AppImage, cc-switch.exe) and
# the product name `CC Switch` (macOS app bundle, Windows installer); compared without case, spaces or dashes.
PROCESS_NAMES = ("cc-switch", "CC Switch")


def paths(machine: Machine) -> CCSwitchPaths:
    return paths_under(machine.home)


def detect(machine: Machine) -> Detection:
    return detect_by([paths(machine).home], ["cc-switch"], machine.env)


def read(machine: Machine) -> ClientState:
    """The JSON files (cheap); the store itself, database included, is `store(machine)`."""
    where = paths(machine)
    files = {"legacy_config": read_json(where.legacy_config), "settings": read_json(where.settings)}
    return ClientState(NAME, detect(machine), files)


def store(machine: Machine) -> Store:
    """CC Switch's store, read only: its version, its providers, the current ones (see ccswitch_store)."""
    return read_store(paths(machine))


# ------------------------------------------------------------------------------------------------- links

def homepage(triple: Triple) -> str:
    """The provider's website: the base URL's origin. CC Switch 3.7.0–3.9.1 refuse a link without one."""
    parts = urlsplit(triple.base_url)
    return f"{parts.scheme}://{parts.netloc}"


def encode(value: str) -> str:
    """Percent-encode everything but unreserved characters: CC Switch reads the query with url's
    `query_pairs()`, where `+` is a space (so `+` goes as %2B, a space as %20)."""
    return quote(value, safe="")


def endpoint(triple: Triple, app: str) -> str:
    """Each app's provider gets the URL form of the client it configures (Claude Code: the bare root; Codex:
    root + /v1), used verbatim."""
    return triple.url_for(URL_FORMS[app])


def apps(triple: Triple, options: PlanOptions, found: Store | None = None) -> tuple[str, ...]:
    """The apps CC Switch gets a TaoToken provider for: Gemini CLI's only where the gateway answered the Gemini API
    at this root (options.gemini_root, set by diagnosis.gemini_api.gate when Gemini CLI is a target); Claude and
    Codex alone for a CC Switch before 3.8 (`found`: its legacy config.json), which knew no other app."""
    legacy = found is not None and found.kind == "legacy-json"
    return tuple(app for app in LINK_APPS if (app != "gemini" or options.gemini_root == triple.base_url)
                 and (app in APPS or not legacy))


def import_links(triple: Triple, for_apps: tuple[str, ...] = LINK_APPS) -> dict[str, str]:
    """One deep link per app. No `enabled=true`: that would switch CC Switch to TaoToken (rewriting the live
    files) without the user choosing it."""
    links = {}
    for app in for_apps:
        params = {"app": app, "resource": "provider", "name": PROVIDER_NAME, "homepage": homepage(triple),
                  "endpoint": endpoint(triple, app), "apiKey": triple.api_key, "model": triple.model}
        if app == "claude":
            params["haikuModel"] = triple.model
        links[app] = "ccswitch://v1/import?" + "&".join(f"{k}={encode(v)}" for k, v in params.items())
    return links


def mask_link(link: str, key: str) -> str:
    """The link as it may be printed: the key (as encoded in it) masked."""
    return link.replace(encode(key), mask_key(key))


def open_command(links_path) -> str:
    """The command that opens the Claude link from the links file, on this OS (core.platform.system's opener)."""
    pattern = "^ccswitch://.*app=claude"
    if system.current().windows:  # PowerShell: Start-Process hands a link to its registered handler
        quoted = "'" + str(links_path).replace("'", "''") + "'"
        return f"Start-Process (Select-String -Path {quoted} -Pattern '{pattern}').Line"
    return f'{system.current().opener[0]} "$(grep \'{pattern}\' {shlex.quote(str(links_path))})"'


def links_file_text(links: dict[str, str], links_path) -> str:
    return ("# CC Switch import links written by `taotoken init`. They contain your API key: keep this file private.\n"
            "# CC Switch's import dialog holds one link at a time: open one, confirm it in CC Switch, then the next.\n"
            "# Open the Claude link (app=codex for Codex):\n"
            f"#   {open_command(links_path)}\n"
            "# or let taotoken hand them over one by one: taotoken init --target cc-switch --open\n"
            + "".join(f"{u}\n" for u in links.values()))


def pending_links(triple: Triple, machine: Machine, links: dict[str, str],
                  only: str | None = None) -> tuple[dict[str, str], list[str]]:
    """Of `links` (import_links), those worth handing over (`only` that app, or all), and a note for each one left
    out: CC Switch already has a provider with that endpoint (a second import would duplicate it)."""
    found = store(machine)
    pending, notes = {}, []
    for app, link in links.items():
        if found.kind == "legacy-json" and app not in APPS:  # CC Switch before 3.8 imports Claude and Codex only
            continue
        if only and app != only:
            continue
        same = found.same_endpoint(app, endpoint(triple, app))
        if same:
            stale = [p for p in same if (p.api_key or "").strip() != triple.api_key]
            note = (_("CC Switch already has a {app} provider with endpoint {endpoint}: {providers}; not handing over "
                      "the {app} link again (it holds another key: paste the current one into it in CC Switch)")
                    if stale else
                    _("CC Switch already has a {app} provider with endpoint {endpoint}: {providers}; not handing over "
                      "the {app} link again"))
            notes.append(note.format(app=APP_LABELS[app], endpoint=endpoint(triple, app),
                                     providers=listed(p.describe() for p in same)))
            continue
        if found.problem:
            notes.append(_("could not check CC Switch's {app} providers for this endpoint ({problem}); if the import "
                           "would duplicate one, cancel it in the dialog").format(app=APP_LABELS[app],
                                                                                  problem=found.problem))
        pending[app] = link
    return pending, notes


def open_link(url: str) -> str | None:
    """Hand a link to the desktop's URL opener; returns an error message or None."""
    opener = system.current().opener
    if not opener:
        try:  # not `cmd /c start`: cmd.exe would cut the link at its first `&`
            os.startfile(url)  # type: ignore[attr-defined]  # Windows only
        except OSError as exc:
            return _("Windows could not open the link ({error})").format(  # never the link
                error=os_error_text(exc))
        return None
    command = [*opener, url]
    try:
        proc = subprocess.run(command, capture_output=True, timeout=15, check=False)
    except FileNotFoundError:
        return _("{program} is not available on this machine").format(program=command[0])
    except subprocess.TimeoutExpired:
        return _("{program} did not return within {seconds} s").format(program=command[0], seconds=15)
    if proc.returncode != 0:
        return _("{program} exited with status {status}").format(program=command[0], status=proc.returncode)
    return None


# ---------------------------------------------------------------------------------------------- the plan

def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    where = paths(machine)
    current = read_store(where)
    result = Plan()
    for_apps = apps(triple, options, current)
    links = import_links(triple, for_apps)
    links_path = machine.config_dir / LINKS_FILE
    result.add(text_change(read_text(links_path), links_file_text(links, links_path), target=NAME, secret=True,
                           summary=[_("CC Switch import links for {apps} (contain the key; mode 0600)").format(
                               apps=listed(APP_LABELS[app] for app in for_apps))]))
    if current.kind == "legacy-json":
        result.notes.append(_("{store}; TaoToken is added to that file directly").format(store=current.describe()))
        result.extend(_plan_legacy(triple, where))
    else:
        result.notes.append(current.describe())
        by_cli = cli_handover(triple, machine, options, current)
        if by_cli.cli_apps:
            result.notes.append(_("CC Switch: TaoToken is added for {apps} with {command} once the files are written "
                                  "(the key in a 0600 temporary file, removed after; undone by {undo})").format(
                apps=listed(APP_LABELS[app] for app in by_cli.cli_apps), command="`cc-switch provider add`",
                undo="`taotoken init --undo`"))
        result.notes.extend(by_cli.notes)
        for app in for_apps:
            same = current.same_endpoint(app, endpoint(triple, app))
            if same:
                result.notes.append(_("CC Switch already has a {app} provider with endpoint {endpoint} ({providers}): "
                                      "its link is not handed over again").format(
                    app=APP_LABELS[app], endpoint=endpoint(triple, app),
                    providers=listed(p.describe() for p in same)))
        how = (_("CC Switch: hand it the import links with {command} (or from {path}); CC Switch shows a "
                 "confirmation dialog for each") if current.kind == "sqlite" else
               _("CC Switch: hand it the import links with {command} (or from {path}); CC Switch shows a "
                 "confirmation dialog for each — start CC Switch once first"))
        result.details.append(how.format(command="`taotoken init --target cc-switch --open`", path=links_path))
    result.warnings.append(_(
        "CC Switch manages ~/.claude/settings.json and ~/.codex/config.toml + auth.json: switching providers in "
        "CC Switch rewrites those files (after saving their current content into the provider that was selected), "
        "so select TaoToken inside CC Switch instead of relying on the direct edits"))
    return result


def settings_configs(triple: Triple) -> dict[str, dict]:
    """Each app's provider settings (`settings_config`), as CC Switch builds them from an import link
    (deeplink/provider.rs): for the legacy config.json and for `cc-switch provider add --config-file`."""
    return {
        "claude": {"env": {"ANTHROPIC_AUTH_TOKEN": triple.api_key, "ANTHROPIC_BASE_URL": endpoint(triple, "claude"),
                           "ANTHROPIC_MODEL": triple.model, "ANTHROPIC_DEFAULT_HAIKU_MODEL": triple.model}},
        "codex": {"auth": {"OPENAI_API_KEY": triple.api_key}, "config": codex_config_text(triple)},
        "gemini": {"env": {"GEMINI_API_KEY": triple.api_key, "GOOGLE_GEMINI_BASE_URL": endpoint(triple, "gemini"),
                           "GEMINI_MODEL": triple.model}},
    }


def provider_entries(triple: Triple) -> dict[str, dict]:
    """Provider entries in the v2 config.json shape (serde names of CC Switch's `Provider`): Claude and Codex, the
    apps CC Switch before 3.8 managed."""
    configs = settings_configs(triple)
    return {app: {"id": PROVIDER_ID, "name": PROVIDER_NAME, "settingsConfig": configs[app]}
            for app in ("claude", "codex")}


# ------------------------------------------------------------------------------------- the command line

def cli_handover(triple: Triple, machine: Machine, options: PlanOptions, found: Store | None = None
                 ) -> ccswitch_cli.Handover:
    """Which apps `cc-switch provider add` takes where the command line is installed (ccswitch_cli)."""
    command = ccswitch_cli.find(machine)
    if command is None:
        return ccswitch_cli.Handover(None)
    return ccswitch_cli.handover(command, found or store(machine), read(machine).files["settings"].data,
                                 {app: endpoint(triple, app) for app in apps(triple, options)}, PROVIDER_ID)


def add_with_cli(handover: ccswitch_cli.Handover, triple: Triple, env: dict[str, str]
                 ) -> tuple[list[str], list[str], list[UndoStep]]:
    """Add TaoToken for each app of `handover`: (the apps added, what failed, how to revert what was added)."""
    added, failed, steps = [], [], []
    assert handover.command is not None
    configs = settings_configs(triple)
    for app in handover.cli_apps:
        problem = ccswitch_cli.add(handover.command, app, configs[app], name=PROVIDER_NAME, provider_id=PROVIDER_ID,
                                   homepage=homepage(triple), env=env)
        if problem is None:
            added.append(app)
            steps.append(ccswitch_cli.undo_step(handover.command, app, PROVIDER_ID))
        else:
            failed.append(_("{app}: {problem}").format(app=APP_LABELS[app], problem=problem))
    return added, failed, steps


def codex_config_text(triple: Triple) -> str:
    return (f'model_provider = "{PROVIDER_ID}"\nmodel = "{triple.model}"\n\n[model_providers.{PROVIDER_ID}]\n'
            f'name = "{PROVIDER_NAME}"\nbase_url = "{endpoint(triple, "codex")}"\nwire_api = "responses"\n'
            "requires_openai_auth = true\n")


def _plan_legacy(triple: Triple, where: CCSwitchPaths) -> Plan:
    result = Plan()
    file = read_json(where.legacy_config)
    file.check()
    data = copy.deepcopy(file.data)
    if data.get("version") != 2:
        raise ConfigFileError(str(where.legacy_config), None, None,
                              _("is a CC Switch config of version {version}, not the v2 shape").format(
                                  version=repr(data.get("version"))),
                              _("start CC Switch once so it migrates the file, then run init again"))
    summary = []
    now_ms = int(time.time() * 1000)
    for app, entry in provider_entries(triple).items():
        manager = data.setdefault(app, {"providers": {}, "current": ""})
        if not isinstance(manager, dict) or not isinstance(manager.setdefault("providers", {}), dict):
            raise ConfigFileError(str(where.legacy_config), None, None,
                                  _("{name} is not an object").format(name=f'"{app}.providers"'),
                                  _("let CC Switch repair the file (start it once), then run init again"))
        providers = manager["providers"]
        old = providers.get(PROVIDER_ID)
        if isinstance(old, dict):
            secret = old.get("settingsConfig", {})
            result.secrets.extend(v for v in _strings(secret) if v.startswith("sk-"))
            if all(old.get(k) == v for k, v in entry.items()):
                continue
            merged = {**old, **entry}
        else:
            merged = {**entry, "websiteUrl": homepage(triple), "category": "custom", "createdAt": now_ms}
        providers[PROVIDER_ID] = merged
        summary.append((_("updated provider {provider} for {app} (not selected: choose it in CC Switch to activate "
                          "it)") if old else
                        _("added provider {provider} for {app} (not selected: choose it in CC Switch to activate it)"))
                       .format(provider=repr(PROVIDER_ID), app=app))
    if data != file.data:
        _refuse_while_running(where, result)
    result.add(json_change(file, data, target=NAME, summary=summary, secret=True))
    return result


def _refuse_while_running(where: CCSwitchPaths, result: Plan) -> None:
    """CC Switch < 3.8 holds config.json in memory and writes the whole of it on every save: an entry added
    while it runs is invisible to it and erased at its next save."""
    # the CC Switch that would erase the entry is the one whose home holds this config.json (~/.cc-switch/)
    running = processes.find(PROCESS_NAMES, home=where.legacy_config.parent.parent)
    if running is None:
        result.warnings.append(_("could not tell whether CC Switch is running: quit it before applying, or it erases "
                                 "TaoToken's entry in {path} at its next save").format(path=where.legacy_config))
    elif running:
        which = listed(f"pid {p.pid} {p.name}" for p in running)
        raise TaotokenError(
            _("CC Switch is running ({processes}): it keeps {path} in memory and rewrites the whole file when it "
              "saves, which would erase TaoToken's entry; nothing was written").format(processes=which,
                                                                                       path=where.legacy_config),
            Fix.of(_("quit CC Switch (tray menu → Quit; closing its window leaves it running), then run the same "
                     "{command} again"), command=Command("taotoken init")), Exit.FAILURE)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []
