"""Each client's real proxy rule, as data: which variables it reads for an http:// and an https:// gateway, whether
it honours NO_PROXY, and whether a loopback gateway (127.0.0.1, localhost, ::1) goes direct without it.

These are not httpx's rules (core.net.proxies decides taotoken's own requests): Claude Code, Cline and OpenCode are
Bun-compiled programs with their own proxy set-up, Codex is Rust (reqwest), Gemini CLI, OpenClaw and Qwen Code are
Node programs that each install an undici proxy agent in their own way. Each rule was checked against the
real client by tests/real_clients/test_proxy_rules.py (the client run with a proxy in its environment that only
records who connects, and the mock gateway on loopback; Gemini CLI and OpenClaw in the runs of
test_real_gemini_openclaw.py, through a forwarding proxy); docs/clients.md has the versions and the findings.
doctor's proxy claims for a client (claude.proxy, the <client>.proxy checks, the live runs) and init's come from here.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from taotoken_cli.core.clients.base import Machine


@dataclass(frozen=True)
class ProxyRule:
    client: str  # the init target name
    checked: str  # the client version the rule was checked against
    http: tuple[str, ...]  # variables read for an http:// gateway, the first set one wins
    https: tuple[str, ...]  # variables read for an https:// gateway
    no_proxy: tuple[str, ...]  # the exemption variables it honours (comma- or space-separated entries)
    loopback_direct: bool  # a loopback gateway goes direct even with no NO_PROXY entry for it
    # Its own settings hold environment variables that outrank the shell's (Claude Code's env block): init exempts a
    # loopback gateway there, so a shell proxy is that client's settings' business, not env.sh's
    own_env: bool = False

    def variable_for(self, url: str, env: Mapping[str, str]) -> str | None:
        """The variable whose proxy a request to `url` goes through under `env` (None: direct)."""
        parts = urlsplit(url)
        names = self.https if parts.scheme.lower() == "https" else self.http
        chosen = next((name for name in names if env.get(name, "").strip()), None)
        if chosen is None:
            return None
        host = (parts.hostname or "").lower()
        if self.loopback_direct and is_loopback(host):
            return None
        try:
            port = parts.port
        except ValueError:
            port = None
        for name in self.no_proxy:
            if env.get(name, "").strip():
                if exempts(env[name], host, port):
                    return None
                break  # the first set NO_PROXY spelling is the one read
        return chosen

    def proxy_for(self, url: str, env: Mapping[str, str]) -> str | None:
        """The proxy URL a request to `url` goes through (None: direct)."""
        name = self.variable_for(url, env)
        return env[name].strip() if name else None


def is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exempts(no_proxy: str, host: str, port: int | None) -> bool:
    """Does a NO_PROXY value exempt `host` (`*`; a name and its subdomains; `.name` subdomains; an IP; host:port)?"""
    for entry in no_proxy.replace(",", " ").split():
        entry = entry.strip().lower()
        if entry == "*":
            return True
        name, _, entry_port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if entry_port and port is not None and entry_port != str(port):
            continue
        name = name.strip("[]")
        if host == name.lstrip(".") or (name and host.endswith("." + name.lstrip("."))):
            return True
    return False


_CLAUDE = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
_NO_PROXY = ("NO_PROXY", "no_proxy")
_GEMINI = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")

RULES: dict[str, ProxyRule] = {
    # Claude Code sends every request (http:// gateways too) through HTTPS_PROXY, HTTP_PROXY or ALL_PROXY (its docs
    # leave ALL_PROXY out; 2.1.332 reads it); loopback is not exempt: a dead proxy in the env block hangs it until
    # its own timeout. NO_PROXY=127.0.0.1 exempts the gateway, also from its settings' env block when the proxy comes
    # from the shell (~/.bashrc: HTTPS_PROXY and NO_PROXY=corp.example, env block: NO_PROXY=127.0.0.1 goes direct).
    "claude-code": ProxyRule("claude-code", "2.1.332", _CLAUDE, _CLAUDE, _NO_PROXY, loopback_direct=False,
                             own_env=True),
    # Codex (reqwest's system proxy): http:// requests use HTTP_PROXY, https:// use HTTPS_PROXY, ALL_PROXY for both.
    "codex": ProxyRule("codex", "0.171.0", ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"),
                       ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"), _NO_PROXY, loopback_direct=False),
    # Cline CLI (Bun's fetch): the scheme's own variable.
    "cline": ProxyRule("cline", "3.0.65", ("HTTP_PROXY", "http_proxy"), ("HTTPS_PROXY", "https_proxy"), _NO_PROXY,
                       loopback_direct=False),
    # Gemini CLI: one proxy for every request, http:// gateways too (packages/cli config: HTTPS_PROXY, https_proxy,
    # HTTP_PROXY, http_proxy, the first set; core's setGlobalProxy installs undici's EnvHttpProxyAgent with it for
    # both schemes and NO_PROXY, else no_proxy). ALL_PROXY is not read.
    "gemini-cli": ProxyRule("gemini-cli", "0.61.0", _GEMINI, _GEMINI, _NO_PROXY, loopback_direct=False),
    # OpenClaw's model requests (provider-transport-fetch: shouldUseEnvHttpProxyForUrl, then undici's
    # EnvHttpProxyAgent): lower-case before upper-case; http:// uses http_proxy/HTTP_PROXY, https:// https_proxy/
    # HTTPS_PROXY then the http ones; no_proxy before NO_PROXY. ALL_PROXY is not read for them (2026.9.6 hands it
    # to some other agents, not to model requests: a run with ALL_PROXY alone went direct).
    "openclaw": ProxyRule("openclaw", "2026.9.6", ("http_proxy", "HTTP_PROXY"),
                          ("https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"), ("no_proxy", "NO_PROXY"),
                          loopback_direct=False),
    # OpenCode (a Bun-compiled binary, Bun's fetch): the scheme's own variable, like Cline.
    "opencode": ProxyRule("opencode", "1.18.33", ("HTTP_PROXY", "http_proxy"), ("HTTPS_PROXY", "https_proxy"),
                          _NO_PROXY, loopback_direct=False),
    # Qwen Code (a fork of Gemini CLI; undici's EnvHttpProxyAgent): --proxy, settings.json `proxy`, else the first set
    # of Gemini CLI's four, for http:// and https:// gateways alike; undici reads no_proxy before NO_PROXY.
    "qwen-code": ProxyRule("qwen-code", "0.24.4", _GEMINI, _GEMINI, ("no_proxy", "NO_PROXY"), loopback_direct=False),
}


def proxied_clients() -> dict[str, str]:
    """The init targets started from a shell that take its proxy variables and whose real rule does not exempt a
    gateway on this machine: name -> label (the client's own LABEL), in RULES' order. Not Claude Code (`own_env`):
    its settings' env block outranks the shell, and init exempts the gateway there. env.sh's and env.ps1's
    exemption, init's lines and doctor's `<client>.proxy` checks are for these."""
    from taotoken_cli.core.clients import CLIENTS

    return {name: CLIENTS[name].LABEL for name, rule in RULES.items()
            if name in CLIENTS and not rule.loopback_direct and not rule.own_env}


def proxied_labels(machine: Machine) -> list[str]:
    """The labels of proxied_clients() installed on `machine` (all of them when none is yet): whom a plan's line
    about the exemption names."""
    from taotoken_cli.core.clients import CLIENTS

    clients = proxied_clients()
    return [label for name, label in clients.items() if CLIENTS[name].detect(machine).found] or list(clients.values())


# The comment above the exemption in env.sh and env.ps1 (core.clients.shell, winshell). It names every client it is
# for, not only those installed now: the file stays the same whatever is installed later (never a stale copy).
def exemption_comment() -> str:
    return ("# The gateway is on this machine: no proxy may carry requests to it (these clients do not exempt\n"
            f"# loopback by themselves: {', '.join(proxied_clients().values())}). Your NO_PROXY entries are kept.\n")
