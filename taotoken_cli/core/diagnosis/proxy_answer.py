"""Did the proxy answer a request itself (its own 403, 502 or error page) instead of passing on the gateway's answer?

An error status alone does not tell: through a proxy the gateway's own 403 ("the key lacks a permission") arrives
with the same status as the proxy's ("this host is blocked"). What tells them apart is who wrote the answer:
  - the gateway's fingerprints: a JSON object body (every gateway answers errors as JSON), its own headers
    (request ids, rate-limit headers, OpenAI/Anthropic/new-api/LiteLLM headers), a CDN in front of it;
  - the proxy's: a `Server` naming a proxy (squid, privoxy, tinyproxy, mihomo, clash…), `Proxy-Agent`,
    `X-Squid-Error`, `Proxy-Status` (RFC 9209), `Via` on a non-JSON answer without another `Server`, an error
    page naming the proxy, or, for https through an HTTP proxy, a CONNECT the proxy answered with an error
    status (httpcore raises ProxyError("403 Forbidden")).
This is the one place that decides it, from one Observation; the classifier can absorb it as a rule
(`if obs.proxy and evidence(obs): CODE`).
"""

from __future__ import annotations

import re

from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.net.gateway import Observation

CODE = "proxy.refused"  # the catalogue entry for an answer the proxy gave itself
_PROXY_PRODUCTS = re.compile(r"squid|privoxy|proxy|mihomo|clash|polipo|v2ray|xray|sing-box|surge|bluecoat|zscaler",
                             re.IGNORECASE)  # "proxy" also covers tinyproxy, ccproxy, 3proxy, mitmproxy…
_PROXY_HEADERS = ("proxy-agent", "x-squid-error", "proxy-status")
# Headers that only the far side writes: the gateway (or a CDN in front of it) answered, whatever proxy passed it on.
_UPSTREAM_HEADER_PREFIXES = ("x-oneapi", "x-new-api", "x-litellm", "openai-", "anthropic-", "x-ratelimit-",
                             "x-request-id", "request-id", "cf-ray", "x-amzn-", "x-openrouter")
_CONNECT_STATUS = re.compile(r"^\s*(\d{3})\b")


def evidence(obs: Observation) -> list[str]:
    """What shows that the proxy in `obs.proxy` answered the request itself (empty: it did not, or no proxy), in
    the user's language (header lines as the proxy sent them)."""
    if not obs.proxy:
        return []
    if obs.error is not None:
        match = _CONNECT_STATUS.match(str(obs.error))
        if type(obs.error).__name__ == "ProxyError" and match and match.group(1) != "407":  # 407: a login
            return [_("the proxy answered the tunnel request (CONNECT) with {answer}").format(
                answer=str(obs.error).strip())]
        return []
    if obs.status is None or obs.status < 400:
        return []
    headers = obs.headers
    if any(name.startswith(_UPSTREAM_HEADER_PREFIXES) for name in headers) or isinstance(obs.json(), dict):
        return []
    found = []
    if obs.status == 407:
        found.append(_("407 Proxy Authentication Required is the proxy's own status"))
    server = headers.get("server", "")
    if _PROXY_PRODUCTS.search(server):
        found.append(f"Server: {server}")
    found += [f"{name.title()}: {headers[name]}" for name in _PROXY_HEADERS if name in headers]
    if "via" in headers and (not server or found):  # a forwarding proxy adds Via to the gateway's answers too
        found.append(f"Via: {headers['via']}")
    named = _PROXY_PRODUCTS.search(obs.text(2000))
    if named and not found:
        found.append(_("the error page names {product}").format(product=named.group(0)))
    return found
