"""MCP servers whose `env` block carries the gateway variables (clients.envvars): the guides put the triple there
too. Read from every file a client keeps MCP servers in (reference §1.1, §2, §4.4):

  Claude Code  ~/.claude.json `mcpServers` and `projects.<path>.mcpServers`; the project's `.mcp.json`
  Codex        `[mcp_servers.<name>]` `env` in $CODEX_HOME/config.toml and a project `.codex/config.toml`
  Cline        the 4.x/CLI `~/.cline/data/settings/cline_mcp_settings.json` (CLINE_MCP_SETTINGS_PATH), and each
               editor's pre-4.0 `<User>/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json`

As an init target (NAME "mcp") it only updates the gateway variables a server already has, and only in servers
that point at TaoToken (envvars.read_env); it never adds a server or a variable, and never writes a key into a
file git tracks. Its files are also written by other clients (~/.claude.json by claude-code, config.toml by
codex), so it is planned last, over what they planned (`plan_over`): one change per file.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taotoken_cli.core.base.i18n import N_, _, listed
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import claude_code, cline, codex, project_env
from taotoken_cli.core.clients.base import (
    ClientState,
    ConfigFile,
    Detection,
    Machine,
    PlanOptions,
    Triple,
    json_change,
    parse_config,
    parse_toml_doc,
    read_json,
    read_toml,
    text_change,
)
from taotoken_cli.core.clients.envvars import (
    ELSEWHERE,
    KEY,
    MIXED,
    TAOTOKEN,
    VARIABLES,
    EnvCopy,
    left_alone,
    read_env,
    taotoken_hosts,
    updates,
)
from taotoken_cli.core.files import gitrepo
from taotoken_cli.core.files.fileplan import Plan
from taotoken_cli.core.files.fsutil import resolve_target

NAME = "mcp"
LABEL = N_("MCP servers")  # shown as _(LABEL)


@dataclass(frozen=True)
class McpFile:
    """A file that holds MCP server definitions."""

    client: str  # "Claude Code" | "Codex" | "Cline"
    path: Path
    kind: str  # "json" | "toml"
    project: bool = False  # a project file: it may be committed


@dataclass(frozen=True)
class McpServer:
    file: McpFile
    location: tuple[str, ...]  # keys from the top of the file to the server's table
    copy: EnvCopy

    @property
    def name(self) -> str:
        return self.location[-1]

    @property
    def short(self) -> str:
        """The name, with the project for a per-project server of ~/.claude.json."""
        if self.location[0] == "projects":
            return _("{name} (project {project})").format(name=self.name, project=self.location[1])
        return self.name

    @property
    def label(self) -> str:
        """`gh (Claude Code: /home/me/.claude.json, project /repo)`: what a message names."""
        if self.location[0] == "projects":
            return _("{name} ({client}: {path}, project {project})").format(
                name=self.name, client=self.file.client, path=self.file.path, project=self.location[1])
        return f"{self.name} ({self.file.client}: {self.file.path})"

    def where_left_alone(self, hosts: frozenset[str]) -> str:
        """Why a sync leaves this server alone (it does not point at TaoToken only)."""
        others = listed(self.copy.other_hosts(hosts))
        if self.copy.points == MIXED:
            return _("points partly at TaoToken and partly at {hosts}").format(hosts=others)
        if self.copy.points == ELSEWHERE:
            return _("points at {hosts}").format(hosts=others)
        return _("sets {names} but no TaoToken URL").format(names=listed(self.copy.names))

    def from_environment(self, name: str) -> str:
        """How this client's file takes `name` from the environment instead of holding it."""
        if self.file.kind == "toml":
            return _("{setting} in {table} (Codex passes the variable through)").format(
                setting=f'env_vars = ["{name}"]', table=f"[mcp_servers.{self.name}]")
        return _("{setting} (Claude Code expands it from the environment)").format(
            setting=f'"{name}": "${{{name}}}"')


@dataclass
class Scan:
    """Every MCP file that exists (parsed; parse errors kept) and the servers in them carrying gateway variables."""

    files: list[tuple[McpFile, ConfigFile]]
    servers: list[McpServer]
    hosts: frozenset[str]

    @property
    def broken(self) -> list[ConfigFile]:
        return [file for _, file in self.files if file.error is not None]


def paths(machine: Machine) -> list[McpFile]:
    files = [McpFile("Claude Code", claude_code.paths(machine).global_config, "json"),
             McpFile("Claude Code", project_env.paths(machine).root / ".mcp.json", "json", project=True),
             McpFile("Codex", codex.paths(machine).config, "toml")]
    project_codex = codex.project_config(machine)
    if project_codex is not None:
        files.append(McpFile("Codex", project_codex, "toml", project=True))
    files += [McpFile("Cline", path, "json") for path in cline.mcp_settings_paths(machine)]
    unique: dict[Path, McpFile] = {}
    for file in files:
        unique.setdefault(resolve_target(file.path), file)
    return list(unique.values())


def _server_tables(mcp_file: McpFile, data: Any) -> list[tuple[tuple[str, ...], Any]]:
    if not isinstance(data, Mapping):
        return []
    if mcp_file.kind == "toml":
        return [(("mcp_servers",), data.get("mcp_servers"))]
    tables = [(("mcpServers",), data.get("mcpServers"))]
    projects = data.get("projects")
    if mcp_file.client == "Claude Code" and isinstance(projects, Mapping):
        tables += [(("projects", str(where), "mcpServers"), project.get("mcpServers"))
                   for where, project in projects.items() if isinstance(project, Mapping)]
    return tables


def servers_in(mcp_file: McpFile, data: Any, hosts: frozenset[str], written: tuple[str, ...] = ()) -> list[McpServer]:
    """The servers of one parsed file whose `env` carries at least one gateway variable (`written`: the marks of
    the keys taotoken wrote, envvars.read_env)."""
    found = []
    for prefix, table in _server_tables(mcp_file, data):
        if not isinstance(table, Mapping):
            continue
        for name, server in table.items():
            env = server.get("env") if isinstance(server, Mapping) else None
            copy_ = read_env(env, hosts, written) if isinstance(env, Mapping) else None
            if copy_ is not None:
                found.append(McpServer(mcp_file, (*prefix, str(name)), copy_))
    return found


def _read(mcp_file: McpFile) -> ConfigFile:
    return read_toml(mcp_file.path) if mcp_file.kind == "toml" else read_json(mcp_file.path)


def scan(machine: Machine, hosts: frozenset[str], written: tuple[str, ...] = ()) -> Scan:
    """Read every MCP file; `hosts` are TaoToken's (envvars.taotoken_hosts), `written` the marks of its keys."""
    files = [(mcp_file, _read(mcp_file)) for mcp_file in paths(machine)]
    files = [(mcp_file, file) for mcp_file, file in files if file.exists or file.error is not None]
    servers = [server for mcp_file, file in files if file.error is None
               for server in servers_in(mcp_file, file.data, hosts, written)]
    return Scan(files, servers, hosts)


def detect(machine: Machine) -> Detection:
    """Found when some MCP server carries gateway variables (only those pointing at TaoToken are ever changed)."""
    servers = scan(machine, frozenset()).servers
    if not servers:
        return Detection(False, [])
    names = listed(dict.fromkeys(server.label for server in servers))
    return Detection(True, [_("MCP servers with gateway variables: {servers}").format(servers=names)])


def read(machine: Machine) -> ClientState:
    found = scan(machine, frozenset())
    files = {str(mcp_file.path): file for mcp_file, file in found.files}
    detection = Detection(bool(found.servers), [server.label for server in found.servers])
    return ClientState(NAME, detection, files)


def plan(triple: Triple, machine: Machine, options: PlanOptions = PlanOptions()) -> Plan:
    return plan_over(triple, machine, options, {})


def plan_over(triple: Triple, machine: Machine, options: PlanOptions, planned: Mapping[Path, bytes]) -> Plan:
    """Update the TaoToken servers' gateway variables. `planned` holds what other targets of the same run will
    write (by resolved path): a file among them is edited from that content, so the two edits become one."""
    result = Plan()
    hosts = taotoken_hosts(triple.base_url, options.taotoken_hosts)
    for mcp_file in paths(machine):
        file = _read(mcp_file)
        after = planned.get(resolve_target(mcp_file.path))
        if after is not None:
            file = parse_config(ConfigFile(mcp_file.path, mcp_file.kind, raw=after))  # as if read from disk
        if file.error is not None:
            result.warnings.append(_("{problem}: its MCP servers were left alone (fix: {fix})").format(
                problem=file.error.message, fix=file.error.fix))
            continue
        if not file.exists:
            continue
        found = servers_in(mcp_file, file.data, hosts, options.written_keys)
        result.secrets += [key for server in found for key in server.copy.of_role(KEY).values()]  # masked in diffs
        result.notes += [_("MCP server {server} {why}: left alone").format(server=server.label,
                                                                           why=server.where_left_alone(hosts))
                         for server in found if server.copy.points != TAOTOKEN]
        result.notes += [_("MCP server {server}: {why}").format(server=server.label, why=why)
                         for server in found if server.copy.points == TAOTOKEN for why in left_alone(server.copy)]
        ours = [server for server in found if server.copy.points == TAOTOKEN and updates(server.copy, triple)]
        if ours:
            result.extend(_plan_file(mcp_file, file, ours, triple))
    return result


def stale(triple: Triple, machine: Machine, options: PlanOptions) -> list[str]:
    """The servers pointing at TaoToken whose own variables differ from `triple` (labels): init adds the target
    whenever there is one, whatever targets were named, so a new key never leaves a TaoToken server on the old."""
    hosts = taotoken_hosts(triple.base_url, options.taotoken_hosts)
    found = scan(machine, hosts, options.written_keys)
    return [server.label for server in found.servers if server.copy.points == TAOTOKEN and updates(server.copy, triple)]


@dataclass
class _Edits:
    summary: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    holds_key: bool = False


def _plan_file(mcp_file: McpFile, file: ConfigFile, servers: list[McpServer], triple: Triple) -> Plan:
    result = Plan()
    tracked = mcp_file.project and gitrepo.tracked(mcp_file.path)
    edits = _Edits()
    if mcp_file.kind == "toml":
        from taotoken_cli.core.formats import tomledit

        doc = parse_toml_doc(file.text or "", mcp_file.path)
        for server in servers:
            _edit_env(_env_table(doc, server.location), server, triple, tracked, edits)
        new_text = tomledit.dumps(doc, file.text or "")
    else:
        data = copy.deepcopy(file.data)
        for server in servers:
            _edit_env(_env_table(data, server.location), server, triple, tracked, edits)
    result.secrets.extend(edits.secrets)
    result.warnings.extend(edits.warnings)
    secret = edits.holds_key and not tracked  # a tracked file gets no key; add_git_warnings must not say it does
    if mcp_file.kind == "toml":
        result.add(text_change(file, new_text, target=NAME, summary=edits.summary, secret=secret))
    else:
        result.add(json_change(file, data, target=NAME, summary=edits.summary, secret=secret))
    return result


def _env_table(root: Any, location: tuple[str, ...]) -> Any:
    table = root
    for key in location:
        table = table[key]
    return table["env"]


def _edit_env(env: Any, server: McpServer, triple: Triple, tracked: bool, edits: _Edits) -> None:
    for name, value in updates(server.copy, triple).items():
        old = server.copy.values[name]
        if VARIABLES[name].role == KEY:
            edits.secrets.append(old)
            if tracked:
                edits.warnings.append(_("MCP server {server}: {variable} not updated — git tracks the file, and a key "
                                        "there gets committed; take it from the environment instead: {how}").format(
                    server=server.label, variable=name, how=server.from_environment(name)))
                continue
            edits.holds_key = True
            line = _("MCP server {server}: set {name} = {value}").format(server=server.short, name=f"env.{name}",
                                                                         value=mask_key(value))
        else:
            line = _("MCP server {server}: set {name} = {value} (was {old})").format(
                server=server.short, name=f"env.{name}", value=repr(value), old=repr(old))
        env[name] = value
        edits.summary.append(line)
    edits.holds_key = edits.holds_key or bool(server.copy.of_role(KEY))
