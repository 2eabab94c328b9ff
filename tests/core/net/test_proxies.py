"""The proxy a request goes through: taotoken's answer must be httpx's own, for every spelling users have.

The oracle is a real `httpx.Client(trust_env=True)` in a child process whose environment is exactly the case's
(httpx reads os.environ itself), asked which transport it would use for the gateway URL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from taotoken_cli.core.net.proxies import environment_proxies, proxy_for

P1, P2, P3 = "http://127.0.0.1:7890", "http://10.0.0.2:3128", "http://proxy.corp:8080"
CASES = [
    ({}, "https://taotoken.net/api"),
    ({"HTTPS_PROXY": P1}, "https://taotoken.net/api"),
    ({"HTTPS_PROXY": P1}, "http://taotoken.net/api"),
    ({"HTTP_PROXY": P1}, "http://gw.local:3000/api"),
    ({"HTTP_PROXY": P1, "http_proxy": P2}, "http://gw.local:3000/api"),  # lower case wins
    ({"HTTPS_PROXY": P1, "https_proxy": ""}, "https://taotoken.net/api"),  # an empty lower-case one unsets
    ({"ALL_PROXY": P1}, "https://taotoken.net/api"),
    ({"ALL_PROXY": P1, "HTTPS_PROXY": P2}, "https://taotoken.net/api"),  # the scheme's own beats ALL_PROXY
    ({"https_proxy": "127.0.0.1:7890"}, "https://taotoken.net/api"),  # no scheme: http:// is assumed
    ({"HTTPS_PROXY": P1, "NO_PROXY": "taotoken.net"}, "https://taotoken.net/api"),
    ({"HTTPS_PROXY": P1, "NO_PROXY": "taotoken.net"}, "https://api.taotoken.net/api"),
    ({"HTTPS_PROXY": P1, "NO_PROXY": ".taotoken.net"}, "https://taotoken.net/api"),  # only subdomains
    ({"HTTPS_PROXY": P1, "NO_PROXY": ".taotoken.net"}, "https://api.taotoken.net/api"),
    ({"HTTPS_PROXY": P1, "NO_PROXY": "ken.net"}, "https://taotoken.net/api"),  # not a suffix match
    ({"HTTPS_PROXY": P1, "no_proxy": "*"}, "https://taotoken.net/api"),
    ({"HTTPS_PROXY": P1, "NO_PROXY": "localhost,127.0.0.1"}, "https://127.0.0.1:8443/api"),
    ({"HTTP_PROXY": P1, "NO_PROXY": "192.168.0.0/16"}, "http://192.168.1.5/api"),  # CIDR is not understood
    ({"HTTPS_PROXY": P1, "NO_PROXY": "taotoken.net:8443"}, "https://taotoken.net:8443/api"),
    ({"HTTPS_PROXY": P1, "NO_PROXY": "taotoken.net:8443"}, "https://taotoken.net/api"),
    ({"HTTPS_PROXY": P1, "NO_PROXY": "taotoken.net:443"}, "https://taotoken.net/api"),  # default port: no match
    ({"HTTPS_PROXY": P1, "NO_PROXY": "::1"}, "https://[::1]:8443/api"),
    ({"HTTPS_PROXY": P3, "NO_PROXY": "https://taotoken.net"}, "https://taotoken.net/api"),
    ({"HTTP_PROXY": P1, "REQUEST_METHOD": "GET"}, "http://gw.local/api"),  # CGI: HTTP_PROXY is ignored
    ({"socks_proxy": "socks5://127.0.0.1:1080"}, "https://taotoken.net/api"),  # not a scheme httpx reads
]

ORACLE = """
import json, sys, httpx
url = sys.argv[1]
with httpx.Client(trust_env=True) as client:
    transport = client._transport_for_url(httpx.URL(url))
    proxy = getattr(getattr(transport, "_pool", None), "_proxy_url", None)
    print(json.dumps(None if proxy is None else str(httpx.URL(
        scheme=proxy.scheme.decode(), host=proxy.host.decode(), port=proxy.port))))
"""


def httpx_choice(env: dict[str, str], url: str) -> str | None:
    clean = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy") and k != "REQUEST_METHOD"}
    proc = subprocess.run([sys.executable, "-c", ORACLE, url], env={**clean, **env}, capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout)


def normalised(proxy: str | None) -> str | None:
    import httpx

    if proxy is None:
        return None
    url = httpx.URL(proxy)
    return str(httpx.URL(scheme=url.scheme, host=url.host, port=url.port))


@pytest.mark.parametrize("env, url", CASES, ids=[f"{i}" for i in range(len(CASES))])
def test_proxy_for_is_what_httpx_does(env: dict[str, str], url: str) -> None:
    assert normalised(proxy_for(url, env)) == httpx_choice(env, url), (env, url)


def test_the_process_environment_is_read_by_urllib_itself(monkeypatch) -> None:
    for name in [n for n in os.environ if n.lower().endswith("_proxy")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HTTPS_PROXY", P1)
    monkeypatch.setenv("https_proxy", P2)
    assert environment_proxies() == environment_proxies(dict(os.environ)) == {"https": P2}
    assert proxy_for("https://taotoken.net/api") == P2
