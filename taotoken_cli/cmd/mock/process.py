"""The mock gateway in its own process, for benchmarks.

A MockGateway thread shares the GIL with the code under test: a busy client can hold it for the
interpreter's switch interval (5 ms), which shows up as extra latency that is not the gateway's.
`MockProcess` runs `python -m taotoken_cli mock --json` instead and rebuilds the RequestRecords
from its JSON log, with the same interface (`url`, `openai_base`, `requests`, `summary()`).
Loop times in the records are CLOCK_MONOTONIC, comparable with `time.monotonic()` here.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
from dataclasses import fields, replace
from pathlib import Path

from taotoken_cli.cmd.mock.options import MockOptions
from taotoken_cli.cmd.mock.records import RequestRecord
from taotoken_cli.cmd.mock.server import MockAddresses, Summary
from taotoken_cli.core.platform import processes

_RECORD_FIELDS = {f.name for f in fields(RequestRecord)}


def options_to_args(options: MockOptions) -> list[str]:
    """CLI flags for everything but the key (which travels in the environment, not in `ps`)."""
    o = options
    args = ["--port", str(o.port), "--host", o.host, "--latency-ms", repr(o.latency_ms),
            "--token-rate", repr(o.token_rate), "--tokens", str(o.tokens), "--fail-style", o.fail_style,
            "--fail-rate", repr(o.fail_rate), "--lang", o.lang]
    flags = {"--allow-remote": o.allow_remote, "--any-key": o.any_key, "--lenient-paths": o.lenient_paths}
    args += [flag for flag, on in flags.items() if on]
    if o.models:
        args += ["--models", ",".join(o.models)]
    for requested, answered in o.aliases.items():
        args += ["--alias", f"{requested}={answered}"]
    for model in o.no_channel:
        args += ["--no-channel", model]
    if o.fail is not None:
        args += ["--fail", str(o.fail)]
    if o.retry_after is not None:
        args += ["--retry-after", repr(o.retry_after)]
    if o.fault:
        args += ["--fault", o.fault]
    if o.slots is not None:
        args += ["--slots", str(o.slots)]
    if o.rate_limit is not None:
        args += ["--rate-limit", repr(o.rate_limit)]
    args += ["--keep", str(o.keep_requests)]
    for model, timing in o.model_timing.items():
        args += ["--model-timing", f"{model}={timing.spec()}"]
    for model, kind in o.model_fail.items():
        args += ["--model-fail", f"{model}={kind}"]
    return args


class MockProcess(MockAddresses):
    """`with MockProcess(MockOptions(key=k, latency_ms=50)) as mock: … mock.url, mock.requests`."""

    def __init__(self, options: MockOptions | None = None, *, log: bool = True, **changes: object) -> None:
        """`log=False` runs the server with `-q`: fastest, no `requests`, `summary()` still works."""
        self.log = log
        options = options or MockOptions()
        if changes:
            options = replace(options, **changes)
        self.options = options.validate()
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.host = "127.0.0.1" if options.host == "localhost" else options.host
        self._records: collections.deque[RequestRecord] = collections.deque(maxlen=max(1, options.keep_requests))
        self._chunks: list[bytes] = []
        self._tail = b""
        self._summary: dict | None = None
        self._reader: threading.Thread | None = None
        self.stderr = ""

    def start(self, timeout: float = 60.0) -> MockProcess:
        package_parent = str(Path(__file__).resolve().parents[3])
        env = dict(os.environ)
        env["PYTHONPATH"] = package_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        if self.options.key:
            env["TAOTOKEN_API_KEY"] = self.options.key
        quiet = [] if self.log else ["--quiet"]
        self.proc = subprocess.Popen([sys.executable, "-m", "taotoken_cli", "mock", "--json", *quiet,
                                      *options_to_args(self.options)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(self._read_first_line()), daemon=True)
        reader.start()
        reader.join(timeout)
        line = first[0] if first else ""
        if not line.startswith("{"):
            self.proc.kill()
            _, err = self.proc.communicate(timeout=5)
            raise RuntimeError(f"the mock process did not start: {(line + err).strip()[:500]}")
        self.port = json.loads(line)["port"]
        self._reader = threading.Thread(target=self._read_log, name="taotoken-mock-log", daemon=True)
        self._reader.start()
        return self

    def _read_first_line(self) -> str:
        """Byte by byte, so nothing after the first line is buffered away from `_read_log`."""
        fd = self.proc.stdout.fileno()
        data = b""
        while not data.endswith(b"\n"):
            byte = os.read(fd, 1)
            if not byte:
                break
            data += byte
        return data.decode("utf-8", errors="replace")

    def _read_log(self) -> None:
        # Raw chunks only: parsing waits until `requests` is read, so this thread takes as little
        # of the caller's GIL as possible while a benchmark runs.
        fd = self.proc.stdout.fileno()
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            self._chunks.append(chunk)

    def _parse_lines(self) -> None:
        if not self._chunks:
            return
        data = self._tail + b"".join(self._chunks)
        self._chunks.clear()
        *lines, self._tail = data.split(b"\n")
        for line in lines:
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if "summary" in item:
                self._summary = item["summary"]
            else:
                self._records.append(RequestRecord(**{k: v for k, v in item.items() if k in _RECORD_FIELDS}))

    def close(self, timeout: float = 10.0) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            processes.interrupt(proc)  # Ctrl-C: the mock prints its summary (Windows: terminated)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if self._reader is not None:
            self._reader.join(timeout)
        self.stderr = proc.stderr.read() if proc.stderr else ""
        self._parse_lines()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
        self.proc = None

    def __enter__(self) -> MockProcess:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def requests(self) -> list[RequestRecord]:
        """Records logged so far (they arrive through a pipe: allow a moment after the last answer)."""
        self._parse_lines()
        return list(self._records)

    def summary(self) -> Summary | None:
        """Available after close()."""
        self._parse_lines()
        if self._summary is None:
            return None
        s = self._summary
        return Summary(requests=s["requests"], seconds=s["seconds"], statuses=s["statuses"], flags=s["flags"])
