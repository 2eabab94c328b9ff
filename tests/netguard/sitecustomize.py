"""The suite's network guard: nothing a test runs may contact a real gateway or the internet (docs/architecture.md
"Real parts"). tests/conftest.py installs it in the test process and puts this folder first on PYTHONPATH, so
every Python child (the CLI as a subprocess, the docs' console examples, the real-client harness) installs it at
start-up too; it is active only where NETGUARD_LOG names the log file of the running test.

A name lookup is the door: loopback (127.0.0.0/8, ::1, localhost) and the RFC 5737 documentation addresses (where
nothing answers) pass; the names RFC 2606/6761 reserve (.invalid, .test, .example, .localhost) never resolve
anywhere, so they fail here at once as a resolver answers them (tests of DNS failures use them); any other host is
refused, and written to the log, which fails the test. One name is this machine's, as a hosts-file entry would make
it: GATEWAY_NAME (gateway.test) is 127.0.0.1, so tests of proxy behaviour name the mock by it (taotoken never sends a
loopback target through a proxy; a name is not loopback, wherever it resolves) and it is still reachable directly.
Hosts named in NETGUARD_OFFLINE fail the same way without
being logged: the docs' examples show the default gateway's URL, taotoken.net, and what a machine without network
prints for it (tests/doc_setups.py).
"""

from __future__ import annotations

import ipaddress
import os
import socket

RESERVED = (".invalid", ".test", ".example", ".localhost")
GATEWAY_NAME = "gateway.test"  # this machine's, as in a hosts file (tests/proxyserver.py resolves it alike)
_real_getaddrinfo = socket.getaddrinfo


TEST_NETS = tuple(ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"))


def _loopback(host: str) -> bool:
    """Loopback, or an RFC 5737 documentation address (nothing answers there: tests use one as a dead proxy)."""
    if host.lower().rstrip(".") in ("localhost", ""):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return False
    return address.is_loopback or any(address in net for net in TEST_NETS)


def _guarded(host, port, *args, **kwargs):
    log = os.environ.get("NETGUARD_LOG")
    name = host.decode() if isinstance(host, bytes) else (host or "")
    if not log or _loopback(name):
        return _real_getaddrinfo(host, port, *args, **kwargs)
    if name.lower().rstrip(".") == GATEWAY_NAME:
        return _real_getaddrinfo("127.0.0.1", port, *args, **kwargs)
    offline = {h.strip().lower() for h in os.environ.get("NETGUARD_OFFLINE", "").split(",") if h.strip()}
    if not ("." + name.lower().rstrip(".")).endswith(RESERVED) and name.lower().rstrip(".") not in offline:
        try:
            with open(log, "a", encoding="utf-8") as file:
                file.write(f"{name}:{port} (pid {os.getpid()})\n")
        except OSError:
            pass
    raise socket.gaierror(socket.EAI_NONAME, f"blocked by the test suite's network guard: {name}")


def install() -> None:
    socket.getaddrinfo = _guarded


install()
