"""A small HTTP proxy for tests and benchmarks (asyncio, loopback only), and a TLS front.

`ProxyServer` does what Clash/Squid-style proxies do for the clients we care about: CONNECT tunnels
(https targets) and absolute-form forwarding (http targets, one request after another on a
keep-alive connection), and it can fail the way proxies fail: ask for credentials (407), refuse
CONNECT, or answer 502 itself. `TLSFront` terminates TLS in front of a plain-http server (the
mock), so CONNECT + TLS can be tested end to end with a throw-away certificate (`make_certificate`).

In tests they run on a background thread (`with ProxyThread(ProxyServer()) as proxy: proxy.url`);
benchmarks run them in their own process, so the proxy's CPU is not the client's:

    python -m tests.proxyserver [--auth user:pass]     # prints "PORT <n>", serves until killed
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import shutil
import ssl
import subprocess
import threading
from pathlib import Path
from urllib.parse import urlsplit


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):  # already gone
            writer.close()


GATEWAY_NAME = "gateway.test"  # the mock by a name, not loopback (RFC 6761 reserves .test; tests/netguard maps it)


def _address(host: str) -> str:
    """Where the proxy connects for `host`: GATEWAY_NAME is the mock on this machine's loopback (taotoken never sends
    a loopback target through a proxy, so proxy tests name the gateway this way; also where no network guard maps
    it), any other as is."""
    return "127.0.0.1" if host.lower().rstrip(".") == GATEWAY_NAME else host


async def _read_head(reader: asyncio.StreamReader) -> bytes | None:
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None


class ProxyServer:
    def __init__(self, *, auth: str | None = None, connect_status: int | None = None,
                 forward_status: int | None = None, loopback_only: bool = False) -> None:
        """auth "user:pass" requires Proxy-Authorization; connect_status (e.g. 403, 502) refuses every
        CONNECT with it; forward_status (e.g. 502) answers every forwarded request itself with it; loopback_only
        answers 502 for any other host without looking its name up (clients' telemetry, update checks)."""
        self.loopback_only = loopback_only
        self.auth = "Basic " + base64.b64encode(auth.encode()).decode() if auth else None
        self.connect_status = connect_status
        self.forward_status = forward_status
        self.connects = 0  # CONNECT tunnels opened
        self.forwarded = 0  # absolute-form requests forwarded
        self.server: asyncio.base_events.Server | None = None
        self.port = 0

    async def start(self, port: int = 0) -> ProxyServer:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", port)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _refuse(self, writer: asyncio.StreamWriter, status: int, reason: str, extra: str = "") -> None:
        body = b"" if status == 407 else f"<html><body><h1>{status} {reason}</h1></body></html>".encode()
        kind = "" if not body else "Content-Type: text/html\r\n"
        writer.write(f"HTTP/1.1 {status} {reason}\r\nServer: test-proxy\r\n{extra}{kind}Content-Length: {len(body)}\r\n"
                     f"Connection: close\r\n\r\n".encode() + body)
        writer.close()

    def _authorised(self, head: bytes, writer: asyncio.StreamWriter) -> bool:
        if self.auth is None:
            return True
        for line in head.decode("latin-1").split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "proxy-authorization" and value.strip() == self.auth:
                return True
        self._refuse(writer, 407, "Proxy Authentication Required", 'Proxy-Authenticate: Basic realm="test"\r\n')
        return False

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await _read_head(reader)
        if head is None:
            writer.close()
            return
        method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
        if not self._authorised(head, writer):
            return
        host = target.rpartition(":")[0] if method == "CONNECT" else urlsplit(target).hostname or ""
        if self.loopback_only and _address(host).strip("[]") not in ("127.0.0.1", "localhost", "::1"):
            self._refuse(writer, 502, "Bad Gateway")
            return
        if method == "CONNECT":
            await self.tunnel(target, reader, writer)
        else:
            await self.forward(head, reader, writer)

    async def tunnel(self, target: str, reader, writer) -> None:
        if self.connect_status is not None:
            self._refuse(writer, self.connect_status, "Forbidden" if self.connect_status == 403 else "Bad Gateway")
            return
        host, _, port = target.rpartition(":")
        try:
            up_reader, up_writer = await asyncio.open_connection(_address(host).strip("[]"), int(port))
        except OSError:
            self._refuse(writer, 502, "Bad Gateway")
            return
        self.connects += 1
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    async def forward(self, head: bytes, reader, writer) -> None:
        """Absolute-form requests, one after another on the client's connection; answers relayed as bytes."""
        if self.forward_status is not None:
            self._refuse(writer, self.forward_status, "Bad Gateway")
            return
        url = urlsplit(head.split(b" ", 2)[1].decode("latin-1"))
        try:
            up_reader, up_writer = await asyncio.open_connection(_address(url.hostname or ""), url.port or 80)
        except OSError:
            self._refuse(writer, 502, "Bad Gateway")
            return
        back = asyncio.ensure_future(_pipe(up_reader, writer))
        try:
            while head is not None:
                self.forwarded += 1
                up_writer.write(self._origin_form(head))
                length = 0
                for line in head.decode("latin-1").split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                if length:
                    up_writer.write(await reader.readexactly(length))
                await up_writer.drain()
                head = await _read_head(reader)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        up_writer.close()
        await back

    @staticmethod
    def _origin_form(head: bytes) -> bytes:
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ", 2)
        parts = urlsplit(target)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        hop = ("proxy-authorization:", "proxy-connection:")
        kept = [line for line in lines[1:] if not line.lower().startswith(hop)]
        return "\r\n".join([f"{method} {path} {version}", *kept]).encode("latin-1")


class TLSFront:
    """TLS on `port`, plain bytes to 127.0.0.1:`backend_port`."""

    def __init__(self, backend_port: int, certfile: Path, keyfile: Path) -> None:
        self.backend_port = backend_port
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(certfile, keyfile)
        self.port = 0

    async def start(self) -> TLSFront:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0, ssl=self.context)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def handle(self, reader, writer) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.backend_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost (openssl); trust it with SSL_CERT_FILE."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    if shutil.which("openssl") is None:  # Windows has no openssl program
        import pytest

        pytest.skip("needs the openssl program to make a certificate")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


class ServerThread:
    """Runs servers (ProxyServer, TLSFront) on an event loop of their own in a background thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def start(self, server):
        return asyncio.run_coroutine_threadsafe(server.start(), self.loop).result(10)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--auth")
    parser.add_argument("--tls-front", type=int, metavar="BACKEND_PORT",
                        help="also serve TLS in front of 127.0.0.1:BACKEND_PORT (prints TLS <port> and CA <file>)")
    args = parser.parse_args()

    async def serve() -> None:
        proxy = await ProxyServer(auth=args.auth).start(args.port)
        print(f"PORT {proxy.port}", flush=True)
        if args.tls_front:
            import tempfile

            cert, key = make_certificate(Path(tempfile.mkdtemp()))
            front = await TLSFront(args.tls_front, cert, key).start()
            print(f"TLS {front.port}", flush=True)
            print(f"CA {cert}", flush=True)
        await asyncio.Event().wait()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


if __name__ == "__main__":
    main()
