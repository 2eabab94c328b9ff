"""The gateway variables other programs read: an MCP server's `env` block, a project's `.env` file.

Which part of the triple each variable carries and in which form (OpenAI SDKs append /chat/completions to
OPENAI_BASE_URL, so it is root + /v1; the Anthropic SDK appends /v1/messages to ANTHROPIC_BASE_URL, so it is the
bare root; taotoken's own TAOTOKEN_BASE_URL is the root), and whether a set of them sends requests to TaoToken:
a URL on a host TaoToken has (the triple's, or one recorded by an earlier init), or a TAOTOKEN_* variable.
Only such sets are copies of the triple: a sync updates them, never one that points elsewhere.

Within such a set each variable is judged on its own (`owned`): a key variable is TaoToken's only when its own URL
variable points at TaoToken (OPENAI_API_KEY goes where OPENAI_BASE_URL says, ANTHROPIC_API_KEY and
ANTHROPIC_AUTH_TOKEN where ANTHROPIC_BASE_URL says; without one the SDK sends it to its vendor), when it is
taotoken's own TAOTOKEN_API_KEY, or when its value is a key taotoken wrote before (`key_mark`). Any other key is the
user's key for another service: replacing it would destroy it and send TaoToken's key to that service.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from taotoken_cli.core.base.i18n import N_, _
from taotoken_cli.core.clients.base import Triple
from taotoken_cli.core.net.urlform import BARE_ROOT, OPENAI_V1, Form

URL, KEY, MODEL = "url", "key", "model"
TAOTOKEN, ELSEWHERE, MIXED, NO_URL = "taotoken", "elsewhere", "mixed", "no-url"


@dataclass(frozen=True)
class GatewayVar:
    name: str
    role: str  # URL | KEY | MODEL
    suffix: str = ""  # URL: BARE_ROOT.suffix or OPENAI_V1.suffix (core.net.urlform)
    reader_text: str = ""  # URL: who reads it (English; `reader` is it in the user's language)
    reason_text: str = ""  # URL: why this form (what the reader appends to it)
    synced: bool = True  # MODEL: only taotoken's own variable is a copy; the others are the program's choice

    @property
    def form(self) -> Form:
        return Form(self.suffix)

    @property
    def reader(self) -> str:
        return _(self.reader_text)

    @property
    def reason(self) -> str:
        return _(self.reason_text)


VARIABLES: dict[str, GatewayVar] = {v.name: v for v in (
    GatewayVar("OPENAI_BASE_URL", URL, OPENAI_V1.suffix, N_("the OpenAI SDKs"),
               N_("the OpenAI SDKs append /chat/completions")),
    GatewayVar("OPENAI_API_BASE", URL, OPENAI_V1.suffix, N_("older OpenAI SDKs"),
               N_("older OpenAI SDKs append /chat/completions")),
    GatewayVar("ANTHROPIC_BASE_URL", URL, BARE_ROOT.suffix, N_("the Anthropic SDK"),
               N_("the Anthropic SDK appends /v1/messages")),
    GatewayVar("TAOTOKEN_BASE_URL", URL, BARE_ROOT.suffix, "taotoken", N_("taotoken takes the API root")),
    GatewayVar("GOOGLE_GEMINI_BASE_URL", URL, BARE_ROOT.suffix, N_("Gemini CLI and Google's GenAI SDK"),
               N_("Google's GenAI SDK appends /v1beta/models/…")),
    GatewayVar("OPENAI_API_KEY", KEY),
    GatewayVar("ANTHROPIC_AUTH_TOKEN", KEY),
    GatewayVar("ANTHROPIC_API_KEY", KEY),
    GatewayVar("TAOTOKEN_API_KEY", KEY),
    GatewayVar("GEMINI_API_KEY", KEY),
    GatewayVar("TAOTOKEN_MODEL", MODEL),
    *(GatewayVar(name, MODEL, synced=False) for name in (
        "OPENAI_MODEL", "GEMINI_MODEL", "ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL",
        "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_DEFAULT_FABLE_MODEL")),
)}


# The URL variables that decide where each key variable's requests go (the SDK that reads the key reads these).
KEY_URLS: dict[str, tuple[str, ...]] = {
    "OPENAI_API_KEY": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "ANTHROPIC_API_KEY": ("ANTHROPIC_BASE_URL",),
    "ANTHROPIC_AUTH_TOKEN": ("ANTHROPIC_BASE_URL",),
    "TAOTOKEN_API_KEY": ("TAOTOKEN_BASE_URL",),
    "GEMINI_API_KEY": ("GOOGLE_GEMINI_BASE_URL",),
}
# Who sends a key to its vendor when its URL variable is not set (English; shown translated).
_DEFAULT_READER = {"OPENAI_API_KEY": N_("the OpenAI SDKs send it to api.openai.com"),
                   "ANTHROPIC_API_KEY": N_("the Anthropic SDK sends it to api.anthropic.com"),
                   "ANTHROPIC_AUTH_TOKEN": N_("the Anthropic SDK sends it to api.anthropic.com"),
                   "GEMINI_API_KEY": N_("Gemini CLI sends it to generativelanguage.googleapis.com")}


def key_mark(key: str) -> str:
    """A key's fingerprint as copies.json records it (a key taotoken wrote, recognised later without storing it)."""
    return hashlib.sha256(key.strip().encode("utf-8", "surrogateescape")).hexdigest()[:24]


def is_reference(value: str) -> bool:
    """`${VAR}` (Claude Code's .mcp.json, dotenv interpolation): the value comes from the environment."""
    return "${" in value


def shown_host(key: str) -> str:
    """A host_key as messages show it: the port only when it is not the scheme's default."""
    return key.removesuffix(":443").removesuffix(":80")


def host_key(url: str | None) -> str | None:
    """`host:port` of an http(s) URL (the port spelled out), or None when it names no host."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    return f"{parts.hostname.lower()}:{port or (443 if parts.scheme.lower() == 'https' else 80)}"


def taotoken_hosts(triple_base_url: str | None, recorded: Iterable[str] = ()) -> frozenset[str]:
    """The hosts a copy of the triple points at: the triple's, and those earlier inits recorded (so a copy
    still on the old host is found, and moved, after the base URL changes)."""
    return frozenset(h for h in (*recorded, host_key(triple_base_url)) if h)


@dataclass(frozen=True)
class EnvCopy:
    """The gateway variables of one env block, and where they send requests."""

    values: dict[str, str]  # variable -> literal value
    references: dict[str, str]  # variable -> `${…}` taken from the environment
    hosts: dict[str, str | None]  # URL variable -> host:port (None: not a usable URL)
    points: str  # TAOTOKEN | ELSEWHERE | MIXED | NO_URL
    owned: frozenset[str] = frozenset()  # the literal variables that are TaoToken's (a sync may write only these)
    foreign: dict[str, str] = field(default_factory=dict)  # key variable -> why it is not TaoToken's (translated)

    @property
    def names(self) -> list[str]:
        return [*self.values, *self.references]

    def other_hosts(self, hosts: frozenset[str]) -> list[str]:
        return sorted({shown_host(h) for h in self.hosts.values() if h and h not in hosts})

    def of_role(self, role: str) -> dict[str, str]:
        return {name: value for name, value in self.values.items() if VARIABLES[name].role == role}


def read_env(env: Mapping[str, object], hosts: frozenset[str], written: Iterable[str] = ()) -> EnvCopy | None:
    """The gateway variables in `env` (string values only), or None when it carries none. `written` holds the
    key_mark of every key taotoken wrote (such a value is TaoToken's wherever it is)."""
    values: dict[str, str] = {}
    references: dict[str, str] = {}
    for name, value in env.items():
        if name in VARIABLES and isinstance(value, str):
            (references if is_reference(value) else values)[name] = value
    if not values and not references:
        return None
    urls = {name: host_key(value) for name, value in values.items() if VARIABLES[name].role == URL}
    ours = any(h in hosts for h in urls.values())
    named = any(name.startswith("TAOTOKEN_") for name in (*values, *references))
    others = any(h is not None and h not in hosts for h in urls.values())
    points = (MIXED if ours or named else ELSEWHERE) if others else TAOTOKEN if ours or named else NO_URL
    owned, foreign = _ownership(values, urls, hosts, frozenset(written))
    return EnvCopy(values, references, urls, points, owned, foreign)


def _ownership(values: Mapping[str, str], urls: Mapping[str, str | None], hosts: frozenset[str],
               written: frozenset[str]) -> tuple[frozenset[str], dict[str, str]]:
    """Which variables are TaoToken's, and why each key that is not is left alone."""
    owned: set[str] = set()
    foreign: dict[str, str] = {}
    for name, value in values.items():
        var = VARIABLES[name]
        if name.startswith("TAOTOKEN_") or (var.role == URL and urls.get(name) in hosts):
            owned.add(name)
        elif var.role == MODEL:
            owned.add(name)  # only TAOTOKEN_MODEL is ever synced (GatewayVar.synced)
        elif var.role == KEY:
            pointing = [url for url in KEY_URLS.get(name, ()) if url in values]
            if any(urls.get(url) in hosts for url in pointing) or key_mark(value) in written:
                owned.add(name)
            elif pointing:
                foreign[name] = _("{url} = {value} does not point at TaoToken").format(
                    url=pointing[0], value=repr(values[pointing[0]]))
            else:
                foreign[name] = _("no {url} is set, so {reader}").format(
                    url=KEY_URLS[name][0], reader=_(_DEFAULT_READER[name]))
    return frozenset(owned), foreign


def left_alone(copy: EnvCopy) -> list[str]:
    """One line per key variable a sync leaves alone because it is not TaoToken's key."""
    return [_("{name} is left alone: not TaoToken's key ({why})").format(name=name, why=why)
            for name, why in copy.foreign.items()]


def wanted(name: str, triple: Triple) -> str | None:
    """The value a copy of `triple` holds in `name` (None: a variable a sync leaves alone)."""
    var = VARIABLES[name]
    if var.role == URL:
        return triple.url_for(var.form)
    if var.role == KEY:
        return triple.api_key
    return triple.model if var.synced else None


def updates(copy: EnvCopy, triple: Triple) -> dict[str, str]:
    """What a sync writes into a copy that points at TaoToken: the variables it has that are TaoToken's (`owned`)
    whose value differs. It never adds a variable, never touches another service's key, and never touches a set
    pointing elsewhere (or partly elsewhere)."""
    if copy.points != TAOTOKEN:
        return {}
    changes = {}
    for name, value in copy.values.items():
        if name not in copy.owned:
            continue
        new = wanted(name, triple)
        if new is not None and new != value:
            changes[name] = new
    return changes
