"""CC Switch's own store, read only: where it keeps its providers (which says which version runs here), the
providers it holds, which one is current per app, and the client files it rewrites (reference §3, ccswitch.md).

- 3.8+: SQLite `~/.cc-switch/cc-switch.db`, opened through a `mode=ro` URI (never created, never written,
  never locked for writing). `PRAGMA user_version` gives the version: 1 = 3.8.0, 3 = 3.9.x, >= 4 = 3.10.0+,
  17 = 3.20. A locked database still gives its version (from the file header); an older one is read with the
  columns it has.
- 3.0-3.7: `~/.cc-switch/config.json`, `{"version": 2, "claude": {"providers": {id: {...}}, "current": id}}`.
The current provider per app: `settings.json` `currentProvider<App>` when set, else `is_current` in the
database, else the legacy `<app>.current` (settings.rs `get_current_provider`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taotoken_cli.core.base.i18n import N_, _
from taotoken_cli.core.clients.base import read_json
from taotoken_cli.core.formats.tomlerrors import toml_message

APPS = ("claude", "codex")  # the apps whose live files doctor checks against CC Switch's current provider
# Every app taotoken hands CC Switch a provider for (deeplink/provider.rs builds each app's settings_config; 3.20
# also has grokbuild and hermes, clients taotoken does not write).
LINK_APPS = (*APPS, "gemini", "opencode", "openclaw")
APP_LABELS = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI", "opencode": "OpenCode",
              "openclaw": "OpenClaw"}
LOCK_WAIT_S = 0.5  # how long to wait for CC Switch to finish a write before reading around it
SQLITE_MAGIC = b"SQLite format 3\x00"
REQUIRED = {"id", "app_type", "settings_config"}  # the providers columns every version has
_FIRST_SCHEMA_OF = ((17, N_("3.20 or newer")), (4, "3.10–3.19"), (3, "3.9.x"), (2, "3.8.x"), (1, "3.8.0"))


@dataclass(frozen=True)
class CCSwitchPaths:
    home: Path  # ~/.cc-switch (CC Switch ignores CLAUDE_CONFIG_DIR / CODEX_HOME)
    db: Path  # 3.8+: the source of truth
    legacy_config: Path  # <= 3.7: config.json, v2 shape
    settings: Path  # device settings (currentProviderClaude, claudeConfigDir, …)


def paths_under(home_dir: Path) -> CCSwitchPaths:
    home = home_dir / ".cc-switch"
    return CCSwitchPaths(home, home / "cc-switch.db", home / "config.json", home / "settings.json")


@dataclass(frozen=True)
class StoredProvider:
    """One provider row (database) or entry (config.json), with what the app reads from it."""

    app: str  # claude | codex | gemini | opencode | openclaw (LINK_APPS)
    id: str
    name: str
    settings: dict  # settings_config / settingsConfig ({} when it is not a JSON object)
    is_current: bool = False  # the database's is_current column
    problem: str | None = None  # why `settings` is empty although the row has some

    @property
    def env(self) -> dict:
        env = self.settings.get("env")
        return env if isinstance(env, dict) else {}

    def codex_config(self) -> tuple[dict, str | None]:
        """The Codex `config` TOML text, parsed: (document, None) or ({}, why it does not parse)."""
        from taotoken_cli.core.settings import tomllib

        text = self.settings.get("config")
        if not isinstance(text, str):
            return {}, _("holds no config text")
        try:
            return tomllib.loads(text), None
        except tomllib.TOMLDecodeError as exc:
            return {}, _("config text is not valid TOML ({error})").format(error=toml_message(str(exc)))

    def codex_provider(self) -> tuple[str | None, dict]:
        """(model_provider, the [model_providers.<it>] table or {}) from the Codex config text."""
        doc, _ = self.codex_config()
        chosen = doc.get("model_provider")
        tables = doc.get("model_providers") if isinstance(doc.get("model_providers"), dict) else {}
        table = tables.get(chosen) if isinstance(chosen, str) else None
        return (chosen if isinstance(chosen, str) else None), (table if isinstance(table, dict) else {})

    @property
    def options(self) -> dict:  # OpenCode's provider options (baseURL, apiKey)
        options = self.settings.get("options")
        return options if isinstance(options, dict) else {}

    @property
    def endpoint(self) -> str | None:
        value = {"claude": lambda: self.env.get("ANTHROPIC_BASE_URL"),
                 "codex": lambda: self.codex_provider()[1].get("base_url"),
                 "gemini": lambda: self.env.get("GOOGLE_GEMINI_BASE_URL"),
                 "opencode": lambda: self.options.get("baseURL"),
                 "openclaw": lambda: self.settings.get("baseUrl")}.get(self.app, lambda: None)()
        return value if isinstance(value, str) and value.strip() else None

    @property
    def api_key(self) -> str | None:
        if self.app == "claude":
            value = self.env.get("ANTHROPIC_AUTH_TOKEN") or self.env.get("ANTHROPIC_API_KEY")
        elif self.app == "codex":
            auth = self.settings.get("auth")
            value = auth.get("OPENAI_API_KEY") if isinstance(auth, dict) else None
        else:
            value = {"gemini": self.env.get("GEMINI_API_KEY"), "opencode": self.options.get("apiKey"),
                     "openclaw": self.settings.get("apiKey")}.get(self.app)
        return value if isinstance(value, str) and value else None

    @property
    def model(self) -> str | None:
        if self.app in ("opencode", "openclaw"):  # a catalogue: {id: {name}} or [{id, name}]
            models = self.settings.get("models")
            value = next(iter(models), None) if isinstance(models, dict) else \
                next((m.get("id") for m in models if isinstance(m, dict)), None) if isinstance(models, list) else None
        else:
            value = {"claude": lambda: self.env.get("ANTHROPIC_MODEL"),
                     "codex": lambda: self.codex_config()[0].get("model"),
                     "gemini": lambda: self.env.get("GEMINI_MODEL")}[self.app]()
        return value if isinstance(value, str) and value else None

    def describe(self) -> str:
        return f"{self.name!r} ({self.id})" if self.name and self.name != self.id else repr(self.id)


@dataclass(frozen=True)
class Store:
    """What CC Switch keeps here, as far as it can be read without writing anything."""

    paths: CCSwitchPaths
    kind: str  # "sqlite" (3.8+), "legacy-json" (3.0-3.7 config.json is live) or "none" (never started)
    schema: int | None = None  # the database's PRAGMA user_version
    providers: tuple[StoredProvider, ...] = ()
    legacy_current: Mapping[str, str] = field(default_factory=dict)  # config.json <app>.current
    problem: str | None = None  # why the providers could not be read (locked, not a database, …)

    @property
    def path(self) -> Path | None:
        return {"sqlite": self.paths.db, "legacy-json": self.paths.legacy_config}.get(self.kind)

    @property
    def version(self) -> str:
        """The CC Switch versions that keep this store."""
        if self.kind == "legacy-json":
            return "3.0–3.7"
        if self.kind == "none":
            return _("not started yet")
        for first, versions in _FIRST_SCHEMA_OF:
            if self.schema is not None and self.schema >= first:
                return _(versions)
        return _("3.8 or newer")

    def describe(self) -> str:
        """Which store is used, and how it was read (for init's notes and doctor's details)."""
        if self.kind == "none":
            return _("CC Switch has not been started here yet (no cc-switch.db or config.json in {directory})").format(
                directory=self.paths.home)
        if self.kind == "legacy-json":
            text = _("CC Switch {version} keeps its providers in {path} (legacy config.json)").format(
                version=self.version, path=self.paths.legacy_config)
        else:
            schema = _("unknown") if self.schema is None else self.schema
            text = _("CC Switch {version} keeps its providers in {path} (schema {schema}, read-only)").format(
                version=self.version, path=self.paths.db, schema=schema)
        return text + (f"; {self.problem}" if self.problem else "")

    def providers_for(self, app: str) -> list[StoredProvider]:
        return [p for p in self.providers if p.app == app]

    def same_endpoint(self, app: str, endpoint: str) -> list[StoredProvider]:
        """The app's providers whose endpoint is `endpoint` (CC Switch trims spaces and a trailing /)."""
        wanted = endpoint.strip().rstrip("/")
        return [p for p in self.providers_for(app) if p.endpoint and p.endpoint.strip().rstrip("/") == wanted]

    def current(self, app: str, settings: Mapping[str, Any] | None) -> tuple[str | None, str]:
        """(the app's current provider id, where that came from), as CC Switch decides it."""
        key = f"currentProvider{app.capitalize()}"
        value = (settings or {}).get(key)
        if isinstance(value, str) and value:
            return value, f"settings.json {key}"
        if self.kind == "sqlite":
            return next((p.id for p in self.providers_for(app) if p.is_current), None), "database is_current"
        if self.kind == "legacy-json":
            return self.legacy_current.get(app) or None, f"config.json {app}.current"
        return None, _("no store")


def read_store(paths: CCSwitchPaths) -> Store:
    if paths.db.exists():
        return _read_database(paths)
    if paths.legacy_config.exists():
        return _read_legacy(paths)
    return Store(paths, "none")


def header_version(db: Path) -> int | None:
    """PRAGMA user_version straight from the file header (bytes 60-63), which no lock keeps from being read."""
    try:
        with db.open("rb") as handle:
            header = handle.read(100)
    except OSError:
        return None
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        return None
    return int.from_bytes(header[60:64], "big")


def read_only_query(db: Path) -> str:
    """The URI query that opens `db` for reading without leaving anything behind. A WAL-mode database opened with
    `mode=ro` alone gets `-wal` and `-shm` files created next to it, left there after we close it. When no `-wal`
    exists, every committed page is in the file itself: `immutable=1` reads it without those files (and without
    locks). When one exists, CC Switch has (or had) it open: those files are its own, and the normal read-only mode
    with its locking is used; so is it for a rollback-journal database, which a reader leaves no file for."""
    try:
        with open(db, "rb") as handle:
            wal_mode = handle.read(20)[18:19] == b"\x02"  # the header's write version: 2 = WAL
    except OSError:
        wal_mode = False
    return "?mode=ro&immutable=1" if wal_mode and not Path(str(db) + "-wal").exists() else "?mode=ro"


def _read_database(paths: CCSwitchPaths) -> Store:
    db = paths.db
    try:
        conn = sqlite3.connect(db.resolve().as_uri() + read_only_query(db), uri=True, timeout=LOCK_WAIT_S)
    except sqlite3.Error as exc:
        return Store(paths, "sqlite", header_version(db),
                     problem=_("the database cannot be opened ({error})").format(error=exc))
    try:
        schema = conn.execute("PRAGMA user_version").fetchone()[0]
        columns = {row[1] for row in conn.execute("PRAGMA table_info(providers)")}
        wanted = [c for c in ("id", "app_type", "name", "settings_config", "is_current") if c in columns]
        marks = ", ".join("?" for _app in LINK_APPS)
        rows = conn.execute(f"SELECT {', '.join(wanted)} FROM providers WHERE app_type IN ({marks}) "
                            "ORDER BY app_type, id", LINK_APPS).fetchall() if columns >= REQUIRED else None
    except sqlite3.OperationalError as exc:
        busy = "locked" in str(exc) or "busy" in str(exc)
        problem = (_("the database is locked (CC Switch is writing it): its providers were not read") if busy
                   else _("the database cannot be read ({error})").format(error=exc))
    except sqlite3.DatabaseError as exc:
        problem = _("not a usable SQLite database ({error})").format(error=exc)
    else:
        problem = None
    finally:
        conn.close()
    if problem:  # the header still tells the version (read after closing: no lock of ours is involved)
        return Store(paths, "sqlite", header_version(db), problem=problem)
    if rows is None:
        return Store(paths, "sqlite", schema, problem=_("the database has no providers table as CC Switch 3.8+ "
                                                        "writes it"))
    providers = []
    for row in rows:
        record = dict(zip(wanted, row, strict=True))
        settings, why = _json_object(record.get("settings_config"))
        providers.append(StoredProvider(str(record["app_type"]), str(record["id"]), str(record.get("name") or ""),
                                        settings, bool(record.get("is_current")), why))
    return Store(paths, "sqlite", schema, tuple(providers))


def _json_object(text: Any) -> tuple[dict, str | None]:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    return (value, None) if isinstance(value, dict) else ({}, _("settings_config is not a JSON object"))


def _read_legacy(paths: CCSwitchPaths) -> Store:
    file = read_json(paths.legacy_config)
    if file.error is not None:
        return Store(paths, "legacy-json", problem=file.error.message)
    data = file.data or {}
    if data.get("version") != 2:
        return Store(paths, "legacy-json", problem=_("config.json is of version {version}, not the v2 shape of CC "
                                                     "Switch 3.0–3.7").format(version=repr(data.get("version"))))
    providers, current = [], {}
    for app in APPS:
        manager = data.get(app) if isinstance(data.get(app), dict) else {}
        entries = manager.get("providers") if isinstance(manager.get("providers"), dict) else {}
        for pid, entry in entries.items():
            if isinstance(entry, dict):
                settings = entry.get("settingsConfig")
                providers.append(StoredProvider(app, str(pid), str(entry.get("name") or ""),
                                                settings if isinstance(settings, dict) else {}))
        if isinstance(manager.get("current"), str):
            current[app] = manager["current"]
    return Store(paths, "legacy-json", providers=tuple(providers), legacy_current=current)


def live_files(paths: CCSwitchPaths, home_dir: Path, settings: Mapping[str, Any] | None) -> dict[str, list[Path]]:
    """The client files CC Switch rewrites when it switches providers, per app (settings.json may move the
    directories with claudeConfigDir / codexConfigDir)."""
    def directory(key: str, default: str) -> Path:
        value = (settings or {}).get(key)
        if isinstance(value, str) and value.strip():
            value = value.strip()
            return home_dir / value[2:] if value.startswith("~/") else Path(value)
        return home_dir / default

    claude, codex = directory("claudeConfigDir", ".claude"), directory("codexConfigDir", ".codex")
    return {"claude": [claude / "settings.json"], "codex": [codex / "config.toml", codex / "auth.json"]}
