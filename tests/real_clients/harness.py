"""Inside a network namespace that has only `lo`: bring lo up, start the mock gateway on a fixed port, run one
real client through the runner `taotoken doctor --live` uses, and print what happened as one JSON object.

    unshare -n python -m tests.real_clients.harness SPEC.json

SPEC: {"client": "codex", "cwd": "...", "env": {...}, "mock": {MockOptions fields}, "timeout_s": 60,
       "use_shell": false, "extra_path": "<the clients' commands>", "forward_proxy_port": 18767}
(forward_proxy_port: a forwarding proxy there, the requests it carried reported as "proxied").
A fresh namespace has every port free, so the port is fixed (PORT) and the test can write the client's
config before the namespace exists.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

PORT = 18765
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


def loopback_up() -> None:
    """`ip link set lo up` without iproute2: a new namespace's lo starts down."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | _IFF_UP))


def _proxy(listener: socket.socket, hits: list[str], stop: threading.Event) -> None:
    """Record the request line of every connection (clients also call their vendors: telemetry, updates); end the
    run once a generation request for the gateway comes through (CONNECT to it, or a POST in absolute form)."""
    while not stop.is_set():
        conn, _address = listener.accept()
        conn.settimeout(2)
        try:
            line = conn.recv(4096).decode("latin-1").split("\r\n", 1)[0]
        except OSError:
            line = ""
        conn.close()
        hits.append(line)
        if f"127.0.0.1:{PORT}" in line and not line.startswith("HEAD"):
            stop.set()


GENERATION = ("messages", "responses", "chat", "gemini")


def main(spec_path: str) -> int:
    from taotoken_cli.cmd.mock import MockGateway, MockOptions
    from taotoken_cli.core.clients import live

    spec = json.loads(Path(spec_path).read_text())
    loopback_up()
    mock_options = dict(spec.get("mock", {}))
    for name in ("models", "no_channel"):
        if name in mock_options:
            mock_options[name] = tuple(mock_options[name])
    proxy_hits: list[str] = []
    stop = threading.Event()
    if spec.get("proxy_port"):  # a proxy that records the first connection and ends the run: no retry waits
        listener = socket.create_server(("127.0.0.1", spec["proxy_port"]))
        threading.Thread(target=_proxy, args=(listener, proxy_hits, stop), daemon=True).start()
    forwarding = None
    if spec.get("forward_proxy_port"):  # a real proxy (tests/proxyserver.py) that forwards to the mock and counts
        import asyncio

        from tests.proxyserver import ProxyServer, ServerThread

        forwarding = ProxyServer(loopback_only=True)
        asyncio.run_coroutine_threadsafe(forwarding.start(spec["forward_proxy_port"]), ServerThread().loop).result(10)
    with MockGateway(MockOptions(port=PORT, **mock_options), on_request=lambda record: stop.set()
                     if spec.get("stop_on_request") and record.endpoint in GENERATION else None) as mock:
        if "taotoken" in spec:  # the CLI itself (doctor --live, check --client) against the mock
            env = dict(spec["env"], PATH=spec["extra_path"] + os.pathsep + spec["env"]["PATH"],
                       PYTHONPATH=str(Path(__file__).resolve().parents[2]))
            command = [sys.executable, "-m", "taotoken_cli", *spec["taotoken"]]
            if spec.get("use_shell"):  # typed in a terminal: the shell's start-up files ran first
                command = [env["SHELL"], "-i", "-c", 'exec "$@"', "taotoken", *command]
            proc = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, start_new_session=True,
                                  cwd=spec["cwd"], capture_output=True, text=True, timeout=spec.get("timeout_s", 60))
            json.dump({"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
                       "records": [record.to_dict() for record in mock.requests]}, sys.stdout, default=str)
            return 0
        run = live.run_client(live.BY_NAME[spec["client"]], spec["env"], Path(spec["cwd"]),
                              timeout_s=spec.get("timeout_s", 60), use_shell=spec.get("use_shell", False),
                              extra_path=spec.get("extra_path"), prompt=spec.get("prompt", live.PROMPT), stop=stop)
        records = [record.to_dict() for record in mock.requests]
    state, status = live.outcome(run)
    json.dump({"exit_code": run.exit_code, "timed_out": run.timed_out, "elapsed_s": run.elapsed_s,
               "stdout": run.stdout, "stderr": run.stderr, "reply": run.reply, "error": run.error, "ok": run.ok,
               "outcome": state, "status": status, "shell": run.shell, "path": run.path,
               "env": {k: v for k, v in run.env.items() if not k.endswith("KEY") and "TOKEN" not in k},
               "records": records, "proxy_hits": proxy_hits,
               "proxied": forwarding.forwarded + forwarding.connects if forwarding else None}, sys.stdout, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
