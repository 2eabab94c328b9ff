"""One truth for the triple: taotoken's own config and every client file `init` wrote hold the same base URL,
key and model, and every later change reaches all of them.

`init` records which targets it wrote (`copies.json` beside config.toml, written through the same plan, so
`taotoken init --undo` restores it too). `config set`, `config sync`, `init` again and `doctor --fix` re-plan
every recorded copy from the one triple: a copy is stale exactly when re-planning it would change its file.
Nothing here writes: callers show, confirm and apply the Plan through fileplan (backups, undo).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from taotoken_cli.core.base.errors import ConfigFileError, TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.i18n import _, listed, ngettext
from taotoken_cli.core.base.masking import mask_key, remember_secret
from taotoken_cli.core.clients import CLIENTS, project_env
from taotoken_cli.core.clients.base import LayeredClient, Machine, PlanOptions, Triple, read_text, text_change
from taotoken_cli.core.clients.envvars import host_key, key_mark, taotoken_hosts
from taotoken_cli.core.files import fileplan
from taotoken_cli.core.files.fileplan import FileChange, Plan
from taotoken_cli.core.files.fsutil import resolve_target
from taotoken_cli.core.settings import Settings, config_path, profile_table, read_config_file
from taotoken_cli.core.settings.edit import OWN_MERGE, render_config_update
from taotoken_cli.core.settings.origins import tilde

RECORD_FILE = "copies.json"
OWN = fileplan.OWN_TARGET  # the target name of taotoken's own config.toml in plans


@dataclass(frozen=True)
class Record:
    """Which targets hold the triple of which profile, and how init wrote them."""

    profile: str
    targets: tuple[str, ...]
    options: PlanOptions = PlanOptions()

    def to_json(self) -> str:
        data = {"version": 1, "profile": self.profile, "targets": self.targets,
                "options": dataclasses.asdict(self.options)}  # json writes tuples as lists
        return json.dumps(data, indent=2) + "\n"


def record_path(machine: Machine) -> Path:
    return machine.config_dir / RECORD_FILE


def read_record(machine: Machine) -> Record | None:
    """The record init left, or None (never run, or a file this version cannot read: then nothing is synced)."""
    try:
        data = json.loads(record_path(machine).read_text(encoding="utf-8"))
        targets = tuple(t for t in data["targets"] if t in CLIENTS)
        options = PlanOptions(**{field.name: _option(field.type, data["options"][field.name])
                                 for field in dataclasses.fields(PlanOptions) if field.name in data.get("options", {})})
        return Record(str(data["profile"]), targets, options)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _option(kind: object, value: object) -> object:
    """One recorded option as PlanOptions holds it (a JSON list becomes a tuple of strings)."""
    if str(kind).startswith("tuple"):
        if not isinstance(value, list):
            raise TypeError("a list was expected")  # never shown: the record is then ignored
        return tuple(str(item) for item in value)
    if not isinstance(value, str):
        raise TypeError("a string was expected")
    return value


def record_change(record: Record, machine: Machine) -> FileChange:
    current = read_text(record_path(machine))
    return text_change(current, record.to_json(), target=OWN,
                       summary=[_("remember the copies of profile {profile}: {targets}").format(
                           profile=repr(record.profile), targets=listed(record.targets))])


def own_config_change(triple: Triple, profile: str, machine: Machine) -> FileChange:
    path = config_path(machine.env)
    read_config_file(path)  # a broken file stops the run with line:column
    current = read_text(path)
    text = current.text or ""
    new_text = render_config_update(text, path, profile, {"base_url": triple.base_url, "api_key": triple.api_key,
                                                          "model": triple.model})
    summary = [_("profile {profile}: {values}").format(
        profile=repr(profile), values=f"base_url = {triple.base_url!r}, api_key = {mask_key(triple.api_key)}, "
                                      f"model = {triple.model!r}")]
    change = text_change(current, new_text, target=OWN, summary=summary, secret=True)
    change.merge = OWN_MERGE  # an undo keeps later edits (route set, config set lang): only these values go back
    return change


def written_keys(options: PlanOptions, machine: Machine, profile: str | None) -> tuple[str, ...]:
    """The marks (envvars.key_mark) of the keys taotoken wrote: those init recorded, and the key taotoken's own
    config holds for `profile` now (before this run writes): a copy holding one of them is TaoToken's."""
    marks = list(options.written_keys)
    if profile is not None:
        try:
            key = profile_table(read_config_file(config_path(machine.env)), profile).get("api_key")
        except ConfigFileError:
            key = None
        if isinstance(key, str) and key.strip():
            marks.append(key_mark(key))
    return tuple(dict.fromkeys(marks))


def plan_copies(triple: Triple, targets: Iterable[str], options: PlanOptions, machine: Machine, *,
                own_profile: str | None = None, profile: str | None = None) -> Plan:
    """One Plan over every target's files (and taotoken's own config for `own_profile`, when given). Files that do
    not parse are all named, and nothing is planned. `profile` (default: own_profile) is the profile whose key the
    copies held so far (written_keys)."""
    plan = Plan()
    errors: list[ConfigFileError] = []
    options = dataclasses.replace(options, written_keys=written_keys(options, machine, profile or own_profile))
    if own_profile is not None:
        try:
            plan.add(own_config_change(triple, own_profile, machine))
        except ConfigFileError as exc:
            errors.append(exc)
    layered: list[LayeredClient] = []
    for target in targets:
        client = CLIENTS[target]
        if hasattr(client, "plan_over"):
            layered.append(client)  # type: ignore[arg-type]
            continue
        try:
            plan.extend(client.plan(triple, machine, options))
        except ConfigFileError as exc:
            errors.append(exc)
    for client in layered:  # last: over what the others planned, one change per file
        try:
            _merge(plan, client.plan_over(triple, machine, options,
                                          {resolve_target(c.path): c.after for c in plan.changes}))
        except ConfigFileError as exc:
            errors.append(exc)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise TaotokenError(
            ngettext("{count} file cannot be parsed; nothing was written:",
                     "{count} files cannot be parsed; nothing was written:", len(errors)).format(count=len(errors))
            + "".join("\n  " + e.message + "\n    " + _("fix: {fix}").format(fix=e.fix) for e in errors),
            _("fix each file at the position shown (or move it away), then run again"), Exit.CONFIG,
            code="config.unparsable")
    for secret in plan.secrets:
        remember_secret(secret)
    return plan


def _merge(plan: Plan, layered: Plan) -> None:
    """Add a layered client's plan: a file already planned takes the new content (it was planned over it)."""
    planned = {resolve_target(change.path): change for change in plan.changes}
    for change in layered.changes:
        earlier = planned.get(resolve_target(change.path))
        if earlier is None:
            plan.add(change)
        else:
            earlier.after = change.after
            earlier.summary = [*earlier.summary, *change.summary]
            earlier.secret = earlier.secret or change.secret
    plan.extend(Plan([], layered.notes, layered.warnings, layered.secrets))


def triple_of(settings: Settings) -> Triple | None:
    """The triple taotoken uses now (flags > environment > file), or None when a part is missing or unusable."""
    values = [settings.value(name) for name in ("base_url", "api_key", "model")]
    if not all(v.is_set for v in values):
        return None
    return Triple(*(v.value for v in values))  # type: ignore[arg-type]


@dataclass
class Sync:
    """What bringing the recorded copies in step with `triple` would change. A copy whose file is gone (the
    user removed the client) is not recreated: `gone` names it; only `init` creates files."""

    record: Record | None
    triple: Triple | None
    plan: Plan
    gone: list[FileChange] = field(default_factory=list)
    held: list[str] = field(default_factory=list)  # copies `admit` left out of this sync, and why
    foreign: list[str] = field(default_factory=list)  # copies taotoken does not write that hold other values
    # what the user removed from a copy (FileChange.held_back: a start-up line), left so: why, one line each
    held_back: list[str] = field(default_factory=list)

    @property
    def stale(self) -> list[FileChange]:
        """The copies that would change (the record's own update, when the plan carries one, is not a copy)."""
        return [change for change in self.plan.pending if change.target != OWN]


# Clients whose own file is a copy of the triple only while it points at TaoToken (their module's `claim`): a sync
# adds such a file nobody recorded, and leaves one that now holds another service's values alone, naming it.
CLAIMED = ("gemini-cli", "openclaw")


def claimed_targets(targets: Iterable[str], machine: Machine, hosts: frozenset[str], written: tuple[str, ...], *,
                    named: Iterable[str] = ()) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """`targets` with each CLAIMED client whose file points at TaoToken added and each whose file holds another
    service's values dropped (unless `named`: the user asked for it in this run); also the names added, and for
    each one left alone (target, why)."""
    chosen: list[str] = list(targets)
    added: list[str] = []
    left: list[tuple[str, str]] = []
    for name in CLAIMED:
        found = CLIENTS[name].claim(machine, hosts, written)  # type: ignore[attr-defined]
        if found.ours and name not in chosen:
            chosen.append(name)
            added.append(name)
        elif found.ours is False and name in chosen and name not in named:
            chosen.remove(name)
            left.extend((name, why) for why in found.why)
    return chosen, added, left


# Decides which recorded targets a sync writes, and with which options (diagnosis.gemini_api.admit: Gemini CLI only
# where the gateway answers the Gemini API); returns them and the warnings to show.
Admit = Callable[[Triple, tuple[str, ...], PlanOptions], tuple[list[str], PlanOptions, list[str]]]


def plan_sync(triple: Triple | None, profile: str, machine: Machine, *, admit: Admit | None = None,
              before: Triple | None = None) -> Sync:
    """Re-plan every copy recorded for `profile` from `triple`, and the MCP servers pointing at TaoToken even when no
    init recorded them (mcp.stale: a copy is a copy whoever wrote it). What `admit` learns (PlanOptions.gemini_root)
    goes into the record through the same plan. `before` is the triple taotoken used until now: a server still on
    its host is found (and moved) too. Copies taotoken does not write (a project's .env) are named in `foreign`."""
    record = read_record(machine)
    if triple is None or (record is not None and record.profile != profile):
        return Sync(record, triple, Plan())
    recorded = record.targets if record is not None else ()
    options = record.options if record is not None else PlanOptions()
    # The host taotoken used until now counts as TaoToken's for this re-plan only (never recorded: once moved, it
    # is no longer ours)
    old_host = host_key(before.base_url) if before is not None else None
    moved = (*options.taotoken_hosts, old_host) if old_host and old_host not in options.taotoken_hosts else ()
    hosts, written = taotoken_hosts(triple.base_url, moved or options.taotoken_hosts), written_keys(options, machine,
                                                                                                    profile)
    targets: Iterable[str] = recorded if "mcp" in recorded else (*recorded, "mcp")
    targets, _added, left = claimed_targets(targets, machine, hosts, written)
    foreign = [why for _name, why in left]
    held: list[str] = []
    if admit is not None:
        targets, options, held = admit(triple, tuple(targets), options)
    planned = dataclasses.replace(options, taotoken_hosts=moved) if moved else options
    plan = plan_copies(triple, targets, planned, machine, profile=profile)
    gone = [change for change in plan.changes if change.creates and change.target in recorded]
    held_back = [change.held_back for change in plan.changes if change.held_back and change.changed]
    plan.changes = [change for change in plan.changes if not change.creates and not change.held_back]
    if record is not None and options != record.options:
        plan.add(record_change(dataclasses.replace(record, options=options), machine))
    foreign += project_env.stale_copies(triple, machine, hosts, written)
    return Sync(record, triple, plan, gone, held, foreign, held_back)


SYNC_COMMAND = "taotoken config sync"


def stale_note(copies: Sync, env) -> str:
    """One line naming the copies that no longer hold the triple, and the one command that syncs them."""
    home = Path(env.get("HOME") or Path.home())
    files = listed(tilde(change.path, home) for change in copies.stale)
    count = len(copies.stale)
    return ngettext("{count} copy still holds the old values: {files}",
                    "{count} copies still hold the old values: {files}", count).format(count=count, files=files)
