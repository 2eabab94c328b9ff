"""Which proxy a request goes through, decided exactly as httpx decides it (httpx is what taotoken, the OpenAI
and Anthropic SDKs and most Python clients use), so what doctor reports is what requests do.

httpx reads the proxy variables with `urllib.request.getproxies()` — on Linux that is the environment with the
lower-case variable winning over the upper-case one (`http_proxy` over `HTTP_PROXY`), and an empty lower-case
variable removing the upper-case one; on macOS and Windows the system settings when no variable is set. It then
turns them into URL patterns ("http://", "https://", "all://" for ALL_PROXY) and NO_PROXY entries into
patterns of its own (not `urllib.request.proxy_bypass`): `example.com` exempts example.com and its
subdomains, `.example.com` only the subdomains, an IP address or `localhost` only itself, `host:port` only
that port, `*` everything; CIDR ranges are not understood. The most specific pattern wins.

One rule is taotoken's own, as browsers have it: a loopback target (`localhost`, `*.localhost`, 127.0.0.0/8, ::1)
never goes through a proxy. A proxy on another machine would carry the key in clear across the network (a
plain-http loopback gateway is allowed without opting in precisely because the key never leaves the machine), and
would connect to *its own* loopback, not the user's; one on this machine (Clash, mitmproxy) only adds a hop that can
be down, and the key in clear still reaches another program. Tests of proxy behaviour use a gateway name under
`.test` that the test proxy resolves to the mock (tests/proxyserver.py), never loopback through a proxy.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

PROXY_SCHEMES = ("http", "https", "all")


def environment_proxies(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`urllib.request.getproxies()`: {"http": …, "https": …, "all": …, "no": …}.

    For the process's own environment this is urllib's function itself; for another mapping (a test, a
    client's settings file) the same rules as urllib's `getproxies_environment` are applied to it.
    """
    if env is None or env is os.environ:
        import urllib.request

        return dict(urllib.request.getproxies())
    proxies: dict[str, str] = {}
    for name, value in env.items():
        if value and name.lower().endswith("_proxy"):
            proxies[name.lower()[:-6]] = value
    if "REQUEST_METHOD" in env:  # a CGI script: HTTP_PROXY may come from the client's Proxy: header
        proxies.pop("http", None)
    for name, value in env.items():  # the lower-case spelling wins, and an empty one removes the variable
        if name.endswith("_proxy"):
            if value:
                proxies[name.lower()[:-6]] = value
            else:
                proxies.pop(name.lower()[:-6], None)
    return proxies


@dataclass(frozen=True)
class _Pattern:
    """One of httpx's URL patterns (httpx._utils.URLPattern): scheme, host (with `*` wildcards) and port."""

    scheme: str  # "" = any
    host: str  # "" = any
    port: int | None
    proxy: str | None  # None: go direct

    @classmethod
    def parse(cls, pattern: str, proxy: str | None) -> _Pattern:
        scheme, _, rest = pattern.partition("://")
        rest = rest.split("/", 1)[0]
        host, port = rest, None
        match = re.fullmatch(r"(.*?)(?::(\d+))?", rest)
        if match and not rest.endswith("]"):
            host, port = match.group(1), int(match.group(2)) if match.group(2) else None
        host = host.strip("[]").lower()
        return cls("" if scheme == "all" else scheme, "" if host == "*" else host, port, proxy)

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        if self.scheme and self.scheme != scheme:
            return False
        if self.host:
            if self.host.startswith("*."):
                if not re.fullmatch(r".+\." + re.escape(self.host[2:]), host):
                    return False
            elif self.host.startswith("*"):
                if not re.fullmatch(r"(.+\.)?" + re.escape(self.host[1:]), host):
                    return False
            elif host != self.host:
                return False
        return self.port is None or self.port == port

    @property
    def priority(self) -> tuple[int, int, int]:
        return (0 if self.port is not None else 1, -len(self.host), -len(self.scheme))


def _patterns(proxies: Mapping[str, str]) -> list[_Pattern]:
    """httpx's `get_environment_proxies()`, as patterns sorted most specific first."""
    found: dict[str, str | None] = {}
    for scheme in PROXY_SCHEMES:
        value = proxies.get(scheme)
        if value:
            found[f"{scheme}://"] = value if "://" in value else f"http://{value}"
    for entry in (item.strip() for item in proxies.get("no", "").split(",")):
        if entry == "*":
            return []
        if not entry:
            continue
        if "://" in entry:
            found[entry] = None
        elif _is_ip(entry, 4):
            found[f"all://{entry}"] = None
        elif _is_ip(entry, 6):
            found[f"all://[{entry}]"] = None
        elif entry.lower() == "localhost":
            found[f"all://{entry}"] = None
        else:
            found[f"all://*{entry}"] = None
    return sorted((_Pattern.parse(key, value) for key, value in found.items()), key=lambda p: p.priority)


def _is_ip(text: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(text.split("/")[0]).version == version
    except ValueError:
        return False


def is_loopback(host: str) -> bool:
    """`localhost`, a name under it, or a loopback address (127.0.0.0/8, ::1, ::ffff:127.x)."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def proxy_for(url: str, env: Mapping[str, str] | None = None) -> str | None:
    """The proxy URL a request to `url` goes through under `env` (None: direct), as httpx would choose it — except
    that a loopback target never goes through a proxy (is_loopback)."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL (`http://[::1`): nothing is sent to it, through a proxy or not
        return None
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    if port == {"http": 80, "https": 443}.get(scheme):
        port = None  # as httpx normalises it: a pattern with :443 does not match https://host
    host = (parts.hostname or "").lower()
    for pattern in _patterns(environment_proxies(env)):
        if pattern.matches(scheme, host, port):
            if pattern.proxy is not None and is_loopback(host):
                return None
            return pattern.proxy
    return None


def _proxy_host(proxy: str) -> str:
    """The proxy's host ("" for a value that is no URL, `http://[::1`: httpx refuses it when the client is made,
    and the failure is reported there)."""
    try:
        return (urlsplit(proxy if "://" in proxy else "http://" + proxy).hostname or "").lower()
    except ValueError:
        return ""


def proxy_variables(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """[(variable, value)] for every proxy variable set, in both spellings, as the user wrote them."""
    names = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
    return [(name, env[name].strip()) for name in names if env.get(name, "").strip()]
