"""CC Switch from 3.7 to 3.20: the import links, handing them over one at a time, the store read only (real
SQLite databases with CC Switch's own `providers` schema at several user_versions, a locked one, an older one,
a legacy config.json), and never writing config.json while a real process called cc-switch runs.

The only stand-ins: `xdg-open` (no desktop here) is a script that records the link it gets, and the running
CC Switch is a copy of `sleep` named cc-switch (its comm and argv[0] are what a real one shows on Linux).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote_to_bytes, urlsplit

import pytest

from taotoken_cli.core.clients import ccswitch
from taotoken_cli.core.clients.base import Machine, Triple
from taotoken_cli.core.clients.ccswitch_store import paths_under, read_store
from taotoken_cli.core.platform import processes
from taotoken_cli.core.settings import tomllib
from tests.conftest import SENTINEL_KEY, PtySession, flat, needs_posix, write
from tests.core.files.test_fileplan import snapshot

ROOT = "https://taotoken.net/api"
MODEL = "gpt-4o-mini"
OTHER_KEY = "sk-OTHERkeyOTHERkeyOTHER9876"

# database/schema.rs (3.20.0): the providers table as CC Switch creates it
PROVIDERS_DDL = """CREATE TABLE IF NOT EXISTS providers (
    id TEXT NOT NULL, app_type TEXT NOT NULL, name TEXT NOT NULL, settings_config TEXT NOT NULL,
    website_url TEXT, category TEXT, created_at INTEGER, sort_index INTEGER, notes TEXT, icon TEXT,
    icon_color TEXT, meta TEXT NOT NULL DEFAULT '{}', is_current BOOLEAN NOT NULL DEFAULT 0,
    in_failover_queue BOOLEAN NOT NULL DEFAULT 0, PRIMARY KEY (id, app_type))"""
# an older shape: no is_current, meta, icon_color or in_failover_queue column
OLD_PROVIDERS_DDL = """CREATE TABLE providers (id TEXT NOT NULL, app_type TEXT NOT NULL, name TEXT NOT NULL,
    settings_config TEXT NOT NULL, website_url TEXT, category TEXT, created_at INTEGER, sort_index INTEGER,
    notes TEXT, icon TEXT, PRIMARY KEY (id, app_type))"""


# -- seeding CC Switch's store ------------------------------------------------------------------------------

def claude_row(pid: str, name: str, base: str, key: str = SENTINEL_KEY, model: str = MODEL,
               current: bool = False) -> dict:
    env = {"ANTHROPIC_AUTH_TOKEN": key, "ANTHROPIC_BASE_URL": base, "ANTHROPIC_MODEL": model}
    return {"id": pid, "app_type": "claude", "name": name, "settings_config": json.dumps({"env": env}),
            "is_current": current}


def codex_row(pid: str, name: str, base: str, key: str = SENTINEL_KEY, model: str = MODEL, wire_api: str = "responses",
              current: bool = False) -> dict:
    # what the deep link builds (deeplink/provider.rs)
    config = (f'model_provider = "custom"\nmodel = "{model}"\nmodel_reasoning_effort = "high"\n'
              f'disable_response_storage = true\n\n[model_providers.custom]\nname = "{name}"\nbase_url = "{base}"\n'
              f'wire_api = "{wire_api}"\nrequires_openai_auth = true\n')
    settings = {"auth": {"OPENAI_API_KEY": key}, "config": config}
    return {"id": pid, "app_type": "codex", "name": name, "settings_config": json.dumps(settings),
            "is_current": current}


def make_db(home: Path, user_version: int, rows: list[dict], ddl: str = PROVIDERS_DDL) -> Path:
    path = home / ".cc-switch" / "cc-switch.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(ddl)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(providers)")}
    for row in rows:
        row = {k: v for k, v in row.items() if k in columns}
        conn.execute(f"INSERT INTO providers ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                     list(row.values()))
    conn.execute(f"PRAGMA user_version = {user_version}")
    conn.commit()
    conn.close()
    return path


def legacy_config(home: Path, claude: dict | None = None, current: str = "work") -> Path:
    claude = claude or {"work": {"id": "work", "name": "Work", "settingsConfig": {
        "env": {"ANTHROPIC_AUTH_TOKEN": "sk-workWORKworkWORK1234", "ANTHROPIC_BASE_URL": "https://work.example"}}}}
    data = {"version": 2, "claude": {"providers": claude, "current": current},
            "codex": {"providers": {}, "current": ""}, "mcp": {"servers": {}}}
    return write(home / ".cc-switch" / "config.json", json.dumps(data, indent=2) + "\n")


def fake_opener(home: Path) -> dict[str, str]:
    """xdg-open replaced by a script that records each link it is handed (no desktop here)."""
    bin_dir = home / "bin"
    write(bin_dir / "xdg-open", f"#!/bin/sh\nprintf '%s\\n' \"$1\" >> {home}/opened\n", 0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


def opened(home: Path) -> list[str]:
    path = home / "opened"
    return path.read_text().splitlines() if path.exists() else []


def init(cli, *args: str, key: str = SENTINEL_KEY, env: dict | None = None):
    return cli("init", "--allow-unlisted",
               "--target", "cc-switch", "--key-stdin", "--model", MODEL, "--yes", *args, input=key, env=env)


def query_pairs(link: str) -> dict[str, str]:
    """The query as CC Switch reads it: url's `query_pairs()` (application/x-www-form-urlencoded: `+` is a
    space, then %XX decoded as UTF-8), collected into a HashMap (a repeated name: the last wins)."""
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("ccswitch", "v1", "/import")

    def decode(text: str) -> str:
        return unquote_to_bytes(text.replace("+", " ")).decode("utf-8", "replace")

    pairs = {}
    for piece in parts.query.split("&"):
        if piece:
            name, _, value = piece.partition("=")
            pairs[decode(name)] = decode(value)
    return pairs


# -- the links ------------------------------------------------------------------------------------------------

def test_links_carry_homepage_and_survive_cc_switchs_query_parser() -> None:
    key, model = "sk-ab+cd/ef==gh+ij kl", "my model+v2/α"
    links = ccswitch.import_links(Triple(ROOT, key, model))
    claude, codex = query_pairs(links["claude"]), query_pairs(links["codex"])
    assert claude == {"app": "claude", "resource": "provider", "name": "TaoToken", "homepage": "https://taotoken.net",
                      "endpoint": ROOT, "apiKey": key, "model": model, "haikuModel": model}
    assert codex == {"app": "codex", "resource": "provider", "name": "TaoToken", "homepage": "https://taotoken.net",
                     "endpoint": ROOT + "/v1", "apiKey": key, "model": model}
    for link in links.values():
        query = urlsplit(link).query
        assert "+" not in query and " " not in query  # `+` would arrive as a space
        assert "apiKey=sk-ab%2Bcd%2Fef%3D%3Dgh%2Bij%20kl" in query and "enabled" not in query
        assert key not in ccswitch.mask_link(link, key) and "sk-ab…j kl" in ccswitch.mask_link(link, key)


def test_a_key_with_plus_slash_and_equals_survives_init_and_is_never_printed(cli, home: Path) -> None:
    key = "sk-Ab+Cd/Ef=Gh+Ij/Kl=Mn0123"
    result = init(cli, key=key).assert_clean(secret=key)
    assert result.returncode == 0, result.output
    assert "sk-Ab%2BCd" not in result.output and "sk-Ab…Mn0123"[:6] in result.output
    lines = (home / ".config/taotoken/cc-switch-import.txt").read_text().splitlines()
    links = [line for line in lines if line.startswith("ccswitch://")]
    assert [query_pairs(link)["apiKey"] for link in links] == [key] * (len(ccswitch.LINK_APPS) - 1)  # Gemini CLI
    # is not a target here: no Gemini link


def test_the_files_hint_run_by_a_shell_yields_exactly_the_link(cli, home: Path) -> None:
    needs_posix("sh running the file's xdg-open hint (Windows' hint is PowerShell's Start-Process)")
    init(cli).assert_clean()
    path = home / ".config/taotoken/cc-switch-import.txt"
    text = path.read_text()
    links = {query_pairs(line)["app"]: line for line in text.splitlines() if line.startswith("ccswitch://")}
    hint = next(line for line in text.splitlines() if line.startswith("#") and "xdg-open" in line and "grep" in line)
    command = hint.lstrip("#").strip().replace("xdg-open", "printf '%s\\n'", 1)
    for app in ("claude", "codex"):
        shown = subprocess.run(["sh", "-c", command.replace("app=claude", f"app={app}")], capture_output=True,
                               text=True, check=True).stdout
        assert shown == links[app] + "\n"


# -- handing them over ----------------------------------------------------------------------------------------

def test_open_without_a_terminal_hands_over_one_link_and_says_how_to_hand_over_the_next(cli, home: Path) -> None:
    env = fake_opener(home)
    first = init(cli, "--open", env=env).assert_clean()
    assert first.returncode == 0, first.output
    assert [query_pairs(link)["app"] for link in opened(home)] == ["claude"]
    assert query_pairs(opened(home)[0])["apiKey"] == SENTINEL_KEY
    assert "then hand over the Codex link with: taotoken init --target cc-switch --open-app codex" in flat(first.stdout)
    second = init(cli, "--open-app", "codex", env=env).assert_clean()
    assert second.returncode == 0, second.output
    assert [query_pairs(link)["app"] for link in opened(home)] == ["claude", "codex"]
    assert "--open-app" not in second.stdout.split("handed the Codex")[1]


def test_open_app_names_one_app(cli, home: Path) -> None:
    result = init(cli, "--open-app", "codex", env=fake_opener(home)).assert_clean()
    assert [query_pairs(link)["app"] for link in opened(home)] == ["codex"]
    bad = init(cli, "--open-app", "hermes").assert_clean()
    assert bad.returncode == 2 and "use one of: claude, codex, gemini, opencode, openclaw" in bad.stderr
    assert result.returncode == 0


def test_open_on_a_terminal_waits_for_enter_between_the_links(home: Path) -> None:
    """A real pseudo-terminal: the Claude link goes over, then nothing until Enter, then the Codex link."""
    env = {"TAOTOKEN_API_KEY": SENTINEL_KEY, "TAOTOKEN_MODEL": MODEL, "PATH": f"{home}/bin:/usr/bin:/bin"}
    fake_opener(home)
    with PtySession(["init", "--allow-unlisted",
                    "--allow-unlisted", "--target", "cc-switch", "--yes", "--open"], cwd=home, env=env) as session:
        session.expect(b"Confirm the Claude Code import in CC Switch; next: the Codex link \xe2\x80\x94 press Enter")
        assert [query_pairs(link)["app"] for link in opened(home)] == ["claude"]
        session.send(b"\n")
        for app, next_app in (("Codex", "OpenCode"), ("OpenCode", "OpenClaw")):
            session.expect(f"Confirm the {app} import in CC Switch; next: the {next_app} link".encode())
            session.send(b"\n")
        session.expect(b"handed the OpenClaw import link to CC Switch")
    assert session.exit_code == 0, session.seen
    assert [query_pairs(link)["app"] for link in opened(home)] == ["claude", "codex", "opencode", "openclaw"]
    assert SENTINEL_KEY.encode() not in session.seen


def test_a_provider_with_the_same_endpoint_is_not_imported_again(cli, home: Path) -> None:
    db = make_db(home, 17, [claude_row("taotoken-1732000000000", "TaoToken", ROOT + "/"),
                            claude_row("official", "Claude Official", "https://api.anthropic.com", current=True)])
    before = snapshot(home / ".cc-switch")
    result = init(cli, "--open", env=fake_opener(home)).assert_clean()
    assert result.returncode == 0, result.output
    assert "CC Switch already has a Claude Code provider with endpoint https://taotoken.net/api: 'TaoToken' " \
           "(taotoken-1732000000000); not handing over the Claude Code link again" in flat(result.stdout)
    assert [query_pairs(link)["app"] for link in opened(home)] == ["codex"]  # no terminal: one link a run
    assert "CC Switch 3.20 or newer keeps its providers in " + str(db) + " (schema 17, read-only)" in \
        flat(result.stdout)
    assert snapshot(home / ".cc-switch") == before  # read only: no journal, no change


def test_a_duplicate_holding_an_old_key_is_named(home: Path) -> None:
    make_db(home, 5, [codex_row("tt", "TaoToken", ROOT + "/v1", key=OTHER_KEY)])
    triple = Triple(ROOT, SENTINEL_KEY, MODEL)
    links, notes = ccswitch.pending_links(triple, Machine.of({"HOME": str(home)}), ccswitch.import_links(triple))
    assert list(links) == ["claude", "gemini", "opencode", "openclaw"]
    assert "it holds another key: paste the current one into it in CC Switch" in notes[0]


@contextlib.contextmanager
def exclusive_lock(db: Path):
    """Another process holding an exclusive lock, as CC Switch does while it writes. (In this process, any
    close of the file, even by a reader, would drop the lock: POSIX locks belong to the process.)"""
    holder = subprocess.Popen([sys.executable, "-c", "import sqlite3, sys\n"
                               f"conn = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
                               "conn.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\nsys.stdin.read()\n"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        yield
    finally:
        holder.communicate("", timeout=30)


def test_a_locked_database_still_gives_its_version_and_the_links_go_over(cli, home: Path) -> None:
    db = make_db(home, 9, [claude_row("taotoken-1", "TaoToken", ROOT)])
    claude_file(home)
    with exclusive_lock(db):
        store = read_store(paths_under(home))
        assert (store.kind, store.schema, store.version, store.providers) == ("sqlite", 9, "3.10–3.19", ())
        assert "locked" in store.problem
        result = init(cli, "--open-app", "claude", env=fake_opener(home)).assert_clean()
        checks = doctor(cli)
    assert result.returncode == 0, result.output
    assert "could not check CC Switch's Claude Code providers for this endpoint (the database is locked" \
           in result.stdout
    assert len(opened(home)) == 1
    managed = checks["ccswitch.managed"]
    assert managed["status"] == "warn" and "current Claude Code provider is unknown: the database is locked" \
        in managed["message"]
    assert f"CC Switch 3.10–3.19 keeps its providers in {db} (schema 9, read-only)" in managed["details"][0]
    assert checks["ccswitch.claude"]["status"] == "skipped"


@pytest.mark.parametrize(("user_version", "version"), [(0, "3.8 or newer"), (1, "3.8.0"), (2, "3.8.x"), (3, "3.9.x"),
                                                       (4, "3.10–3.19"), (16, "3.10–3.19"), (17, "3.20 or newer"),
                                                       (23, "3.20 or newer")])
def test_the_version_comes_from_user_version(home: Path, user_version: int, version: str) -> None:
    make_db(home, user_version, [claude_row("a", "A", "https://a.example", current=True)])
    store = read_store(paths_under(home))
    assert (store.schema, store.version, store.problem) == (user_version, version, None)
    assert [p.id for p in store.providers] == ["a"] and store.current("claude", {}) == ("a", "database is_current")


def test_an_older_schema_is_read_with_the_columns_it_has(home: Path) -> None:
    make_db(home, 1, [claude_row("tt", "TaoToken", ROOT, current=True)], ddl=OLD_PROVIDERS_DDL)
    store = read_store(paths_under(home))
    assert store.problem is None and store.providers[0].endpoint == ROOT and not store.providers[0].is_current
    assert store.current("claude", {"currentProviderClaude": "tt"}) == ("tt", "settings.json currentProviderClaude")
    assert store.current("claude", {}) == (None, "database is_current")


def test_a_file_that_is_no_database_is_reported_not_raised(cli, home: Path) -> None:
    write(home / ".cc-switch/cc-switch.db", "SQLite format 3\0")
    write(home / ".cc-switch/config.json", '{"version": 2}\n')
    before = snapshot(home / ".cc-switch")
    result = init(cli).assert_clean()
    assert result.returncode == 0, result.output
    assert snapshot(home / ".cc-switch") == before
    assert "not a usable SQLite database" in result.stdout


# -- the legacy config.json (CC Switch 3.0–3.7) ---------------------------------------------------------------

def start_cc_switch(folder: Path, home: Path) -> subprocess.Popen:
    """A real process whose comm and argv[0] are `cc-switch` (a copy of sleep under that name), running with HOME
    `home`: the CC Switch of that home."""
    binary = folder / "cc-switch"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", binary)
    proc = subprocess.Popen([str(binary), "120"], env={**os.environ, "HOME": str(home)})
    deadline = time.monotonic() + 10
    while Path(f"/proc/{proc.pid}/comm").read_text().strip() != "cc-switch" and time.monotonic() < deadline:
        time.sleep(0.01)  # until exec has replaced the forked child
    return proc


@pytest.fixture
def running_cc_switch(tmp_path: Path, home: Path):
    proc = start_cc_switch(tmp_path, home)
    yield proc
    proc.kill()
    proc.wait()


def test_the_legacy_config_json_gets_a_provider_entry(cli, home: Path) -> None:
    path = legacy_config(home)
    result = init(cli).assert_clean()
    assert result.returncode == 0, result.output
    data = json.loads(path.read_text())
    assert data["claude"]["current"] == "work" and data["claude"]["providers"]["work"]["name"] == "Work"
    entry = data["claude"]["providers"]["taotoken"]
    assert entry["settingsConfig"] == {"env": {"ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY, "ANTHROPIC_BASE_URL": ROOT,
                                               "ANTHROPIC_MODEL": MODEL, "ANTHROPIC_DEFAULT_HAIKU_MODEL": MODEL}}
    assert entry["websiteUrl"] == "https://taotoken.net"
    codex_entry = data["codex"]["providers"]["taotoken"]["settingsConfig"]
    assert codex_entry["auth"] == {"OPENAI_API_KEY": SENTINEL_KEY}
    assert tomllib.loads(codex_entry["config"])["model_providers"]["taotoken"]["base_url"] == ROOT + "/v1"
    assert "CC Switch 3.0–3.7 keeps its providers in " + str(path) in flat(result.stdout)
    assert "rewrites those files" in result.stderr and "sk-workWORKworkWORK1234" not in result.output
    # now that config.json has them, --open hands over nothing: both would be duplicates
    again = init(cli, "--open", env=fake_opener(home)).assert_clean()
    assert opened(home) == [] and flat(again.stdout).count("not handing over") == 2


@pytest.mark.skipif(not Path("/proc/self/comm").exists(), reason="the process scan under test reads /proc")
def test_the_legacy_config_json_is_never_written_while_cc_switch_runs(cli, home: Path, running_cc_switch) -> None:
    path = legacy_config(home)
    before = snapshot(home)
    result = init(cli).assert_clean()
    assert result.returncode == 1, result.output
    assert f"CC Switch is running (pid {running_cc_switch.pid} cc-switch)" in result.stderr
    assert "quit CC Switch (tray menu → Quit; closing its window leaves it running), then run the same " \
           "taotoken init again" in result.stderr
    assert snapshot(home) == before and path.exists()


@pytest.mark.skipif(not Path("/proc/self/comm").exists(), reason="the process scan under test reads /proc")
def test_the_process_scan_finds_cc_switch_by_its_name_only(running_cc_switch, tmp_path: Path, home: Path) -> None:
    found = processes.find(ccswitch.PROCESS_NAMES, home=home)
    assert [p.pid for p in found or []] == [running_cc_switch.pid]
    other = tmp_path / "cc-switcher"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", other)
    with subprocess.Popen([str(other), "120"]) as near_miss, \
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "cc-switch"]) as in_args:
        try:
            time.sleep(0.2)
            assert [p.pid for p in processes.find(["CC Switch"], home=home) or []] == [running_cc_switch.pid]
        finally:
            near_miss.kill()
            in_args.kill()
    assert processes.normalise("/Applications/CC Switch.app/Contents/MacOS/CC Switch") == "ccswitch"


@pytest.mark.skipif(not Path("/proc/self/comm").exists(), reason="the process scan under test reads /proc")
def test_a_cc_switch_of_another_home_neither_stops_init_nor_is_named(cli, home: Path, tmp_path: Path) -> None:
    """It keeps another home's config.json (another test's, when the suite runs in parallel; on a shared machine,
    another account's session under the same user): this home's file is safe to write."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "bin").mkdir(parents=True)
    other = start_cc_switch(elsewhere / "bin", elsewhere)
    try:
        assert other.pid in [p.pid for p in processes.find(ccswitch.PROCESS_NAMES) or []]  # it is there
        assert other.pid not in [p.pid for p in processes.find(ccswitch.PROCESS_NAMES, home=home) or []]
        legacy_config(home)
        result = init(cli).assert_clean()
        assert result.returncode == 0 and "CC Switch is running" not in result.output, result.output
    finally:
        other.kill()
        other.wait()
    assert processes.normalise(r"C:\Program Files\CC Switch\cc-switch.exe") == "ccswitch"


# -- doctor ---------------------------------------------------------------------------------------------------

def own_config(home: Path) -> Path:
    return write(home / ".config/taotoken/config.toml",
                 f'[profiles.default]\nbase_url = "{ROOT}"\napi_key = "{SENTINEL_KEY}"\nmodel = "{MODEL}"\n')


def claude_file(home: Path) -> Path:
    return write(home / ".claude/settings.json", "{}\n")


def codex_file(home: Path) -> Path:
    return write(home / ".codex/config.toml", 'model = "gpt-5"\n')


def doctor(cli, secret: str = SENTINEL_KEY) -> dict[str, dict]:
    result = cli("doctor", "--check", "ccswitch", "--json").assert_clean(secret=secret)
    return {c["id"]: c for c in json.loads(result.stdout)["checks"]}


def test_doctor_reads_is_current_and_checks_only_the_apps_whose_files_exist(cli, home: Path) -> None:
    own_config(home)
    claude_file(home)  # no Codex file: CC Switch writes nothing Codex reads here
    make_db(home, 17, [claude_row("taotoken-1", "TaoToken", ROOT, current=True),
                       claude_row("official", "Claude Official", "https://api.anthropic.com"),
                       codex_row("openai", "OpenAI", "https://api.openai.com/v1", current=True)])
    before = snapshot(home / ".cc-switch")
    checks = doctor(cli)
    assert snapshot(home / ".cc-switch") == before
    managed = checks["ccswitch.managed"]
    assert (managed["status"], managed["message"]) == ("ok", "TaoToken is CC Switch's current provider for Claude Code")
    assert managed["details"][1] == "current Claude Code provider: taotoken-1 (from database is_current)"
    claude = checks["ccswitch.claude"]
    assert claude["status"] == "ok" and f"'TaoToken' (taotoken-1): {ROOT} (bare root" in claude["message"]
    assert "key sk-SE…WXYZ" in claude["message"]
    assert (checks["ccswitch.codex"]["status"], checks["ccswitch.codex"]["message"]) == \
        ("skipped", "CC Switch manages no Codex file here")


def test_doctor_prefers_settings_json_over_is_current(cli, home: Path) -> None:
    own_config(home)
    claude_file(home)
    write(home / ".cc-switch/settings.json", json.dumps({"currentProviderClaude": "official"}))
    make_db(home, 5, [claude_row("taotoken-1", "TaoToken", ROOT, current=True),
                      claude_row("official", "Claude Official", "https://api.anthropic.com")])
    managed = doctor(cli)["ccswitch.managed"]
    assert managed["status"] == "warn"
    assert managed["message"].startswith(f"CC Switch manages {home}/.claude/settings.json: its next provider switch")
    assert managed["fixes"] == ["select TaoToken for Claude Code in CC Switch"]
    assert "current Claude Code provider: official (from settings.json currentProviderClaude)" in managed["details"]


def test_doctor_says_how_to_add_a_missing_taotoken_provider(cli, home: Path) -> None:
    own_config(home)
    codex_file(home)
    make_db(home, 3, [codex_row("openai", "OpenAI", "https://api.openai.com/v1", current=True)])
    checks = doctor(cli)
    assert checks["ccswitch.managed"]["fixes"] == [
        "add TaoToken to CC Switch for Codex: taotoken init --target cc-switch --open-app codex (then select it there)"]
    assert checks["ccswitch.codex"]["status"] == "skipped"


def test_doctor_reads_the_legacy_current(cli, home: Path) -> None:
    own_config(home)
    claude_file(home)
    legacy_config(home, {"taotoken": {"id": "taotoken", "name": "TaoToken", "settingsConfig": {"env": {
        "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY, "ANTHROPIC_BASE_URL": ROOT}}}}, current="taotoken")
    checks = doctor(cli)
    assert checks["ccswitch.managed"]["status"] == "ok"
    assert "current Claude Code provider: taotoken (from config.json claude.current)" in \
        checks["ccswitch.managed"]["details"]
    assert checks["ccswitch.managed"]["details"][0].startswith("CC Switch 3.0–3.7 keeps its providers in ")
    assert checks["ccswitch.claude"]["status"] == "ok"


def test_doctor_checks_what_the_taotoken_provider_stores(cli, home: Path) -> None:
    own_config(home)
    claude_file(home)
    codex_file(home)
    make_db(home, 17, [claude_row("taotoken-1", "TaoToken", ROOT + "/v1", key=OTHER_KEY, current=True),
                       codex_row("taotoken-2", "TaoToken", ROOT, key=OTHER_KEY, wire_api="chat", model="gpt-5",
                                 current=True)])
    checks = doctor(cli, secret=OTHER_KEY)
    claude, codex = checks["ccswitch.claude"], checks["ccswitch.codex"]
    assert claude["status"] == codex["status"] == "fail"
    assert "ANTHROPIC_BASE_URL = 'https://taotoken.net/api/v1' ends in /v1: Claude Code appends /v1/messages itself" \
        in claude["message"]
    assert claude["fixes"] == [
        "in CC Switch, edit the Claude Code provider 'TaoToken' (taotoken-1): API endpoint https://taotoken.net/api",
        "in CC Switch, edit the Claude Code provider 'TaoToken' (taotoken-1): paste the current key (sk-SE…WXYZ)"]
    assert "'TaoToken' (taotoken-1) ANTHROPIC_AUTH_TOKEN is sk-OT…9876, taotoken's key is sk-SE…WXYZ" in \
        claude["details"]
    codex_text = json.dumps(codex, ensure_ascii=False)
    assert "lacks /v1: Codex calls <base_url>/responses" in codex_text
    assert 'wire_api = \\"chat\\": Codex refuses to start' in codex_text
    assert "auth.OPENAI_API_KEY is sk-OT…9876" in codex_text
    assert "'TaoToken' (taotoken-2) model = gpt-5 (taotoken's model is gpt-4o-mini)" in codex["details"]
    assert "in CC Switch, edit the Codex provider 'TaoToken' (taotoken-2): API endpoint https://taotoken.net/api/v1" \
        in codex["fixes"]


def test_reading_a_wal_mode_database_leaves_no_wal_or_shm_behind(cli, home: Path) -> None:
    """Issue 22, item 10: opening a WAL-mode cc-switch.db read-only left -wal/-shm files next to it."""
    db = make_db(home, 9, [claude_row("taotoken-1", "TaoToken", ROOT)])
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    conn.close()  # a clean close checkpoints and removes -wal and -shm
    before = sorted(p.name for p in db.parent.iterdir())
    store = read_store(paths_under(home))
    assert store.schema == 9 and store.problem is None, store
    doctor(cli)
    assert sorted(p.name for p in db.parent.iterdir()) == before
