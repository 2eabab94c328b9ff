"""Where the docs' examples run: the setups (what HOME holds, which gateway answers) and their copies.

A setup is built once per test run — seed files, the real `taotoken init`, then `prepare` — and copied
into each block's own temporary directory (see `Worlds`). Used by tests/doc_examples.py.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from taotoken_cli.core.clients import CLIENTS, ON_REQUEST, gemini_cli
from tests.conftest import REPO, netguard_env
from tests.conftest import SENTINEL_KEY as KEY

COMMAND_TIMEOUT_S = 90.0

CLAUDE_SETTINGS = ('{\n  "model": "opus",\n  "env": {\n'
                   '    "ANTHROPIC_API_KEY": "sk-ant-api03-oldkey0123456789abcd1234"\n  }\n}\n')
CODEX_CONFIG = ('# my codex settings\nmodel = "gpt-5-codex"  # default\napproval_policy = "on-request"\n\n'
                '[mcp_servers.docs]\ncommand = "npx"\n')
SEED = {".claude/settings.json": CLAUDE_SETTINGS, ".codex/config.toml": CODEX_CONFIG}
MODEL = "gpt-4o-mini"
# The default gateway: the demo's models, a dated alias, a remapped name and a model without a channel.
GATEWAY = dict(models=(MODEL, "claude-sonnet-4-5", "gpu-a100-qwen25-72b-fp16", "cpu-llama3-8b-int8"),
               aliases={"gpt-4o": "gpt-4o-2024-08-06", "qwen-coder": "qwen2.5-coder-32b-instruct"},
               no_channel=("gpu-h100-llama3-70b",))


@dataclass
class Setup:
    """A world an example runs in: which gateway, and what HOME holds before the first command."""

    gateway: dict | None = field(default_factory=lambda: dict(GATEWAY))  # MockOptions fields; None: no mock
    init: bool = True  # `taotoken init --all --yes` ran, and this shell sourced its env.sh
    prepare: Callable[[Path, dict[str, str]], None] | None = None  # more files/variables, after init
    traffic: Callable[[str], int] | None = None  # sends requests to the block's `taotoken mock`; how many


def _break_everything(home: Path, env: dict[str, str]) -> None:
    """The broken setup on docs/doctor.md: each line is one of the mistakes listed there."""
    config = home / ".config/taotoken/config.toml"
    text = config.read_text()
    text = text.replace(f'api_key = "{KEY}"', f'api_key = "{KEY}\\n"').replace(f'"{MODEL}"', '"gpt-4o-mnii"')
    config.write_text(text)
    settings = home / ".claude/settings.json"
    settings.write_text(settings.read_text().replace('/api",', '/api/v1",'))
    (home / ".claude/.credentials.json").write_text('{"claudeAiOauth": {"accessToken": "sk-ant-oat01-x"}}\n')
    codex = home / ".codex/config.toml"
    codex.write_text(codex.read_text().replace('wire_api = "responses"', 'wire_api = "chat"'))
    vscode = home / ".config/Code/User"
    vscode.mkdir(parents=True)
    (vscode / "settings.json").write_text('{\n  "cline.apiProvider": "openai",\n'
                                          '  "cline.openAiBaseUrl": "https://taotoken.net/api/v1",\n'
                                          '  "editor.fontSize": 14\n}\n')
    shutil.rmtree(home / ".cline")
    for name in [n for n in env if n.startswith(("TAOTOKEN_", "OPENAI_"))]:
        del env[name]  # a shell that never sourced env.sh


def _mock_traffic(root: str) -> int:
    """What docs/mock.md says was sent: an OpenAI SDK, Claude Code, Codex, then the usual mistakes."""
    import httpx

    origin = root.removesuffix("/api")
    chat = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    claude = {"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
    bearer = {"Authorization": f"Bearer {KEY}"}
    requests = [
        ("GET", root + "/v1/models", bearer, None),
        ("POST", root + "/v1/chat/completions", bearer, {**chat, "stream": True}),
        ("POST", root + "/v1/messages?beta=true", {**bearer, "anthropic-version": "2023-06-01"},
         {**claude, "stream": True}),
        ("POST", root + "/v1/responses", bearer, {"model": MODEL, "input": "hi", "stream": True}),
        ("POST", root + "/v1/v1/messages?beta=true", {"x-api-key": KEY, "anthropic-version": "2023-06-01"}, claude),
        ("POST", origin + "/chat/completions", bearer, chat),
        ("POST", root + "/v1/chat/completions", {"Authorization": f"Bearer Bearer {KEY}"}, chat),
        ("POST", root + "/v1/chat/completions", {"Authorization": "Bearer sk-old0123456789abcdefghijQRST"}, chat),
        ("POST", root + "/v1/chat/completions", {}, chat),
        ("POST", root + "/v1/chat/completions", bearer, {**chat, "model": "gpt-5"}),
    ]
    with httpx.Client(timeout=10, trust_env=False) as http:
        for method, url, headers, body in requests:
            http.request(method, url, headers=headers, json=body)
    return len(requests)


SETUPS: dict[str, Setup] = {
    "configured": Setup(),  # after `taotoken init`, in a new shell
    "fresh": Setup(init=False),  # Claude Code and Codex configured by hand, taotoken not yet
    "quota": Setup(gateway={**GATEWAY, "fail": "quota", "fail_style": "openai"}),  # out of credit, said as a 429
    "broken": Setup(prepare=_break_everything),
    "mock-traffic": Setup(gateway=None, traffic=_mock_traffic),
    "no-gateway": Setup(gateway=None),  # the block starts its own mock (`taotoken mock … &`)
}


def base_env(home: Path, tmp: Path, shim_dir: Path) -> dict[str, str]:
    env = {
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
        "TMPDIR": str(tmp), "PATH": os.pathsep.join([str(shim_dir), "/usr/bin", "/bin"]),
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "NO_COLOR": "1", "COLUMNS": "1000", "TERM": "dumb",
        "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8", "KEY": KEY,
        **netguard_env(),  # the running test's network guard (tests/netguard)
        # The pages show the default gateway's URL; commands that ask it get what an offline machine gets, and
        # nothing leaves the machine
        "NETGUARD_OFFLINE": "taotoken.net",
    }
    if "SYSTEMROOT" in os.environ:  # pragma: no cover - Windows
        env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    return env


def write_shim(directory: Path) -> None:
    """`taotoken` on PATH: this checkout's package under this interpreter."""
    directory.mkdir(parents=True, exist_ok=True)
    shim = directory / "taotoken"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m taotoken_cli "$@"\n')
    shim.chmod(0o755)


@dataclass
class World:
    root: Path
    home: Path
    env: dict[str, str]
    ports: list[int]
    setup: Setup

    @property
    def port(self) -> int | None:
        return self.ports[-1] if self.ports else None


class Worlds:
    """Mock gateways and prepared HOMEs, each made once and copied for every block that uses it.

    A setup's HOME is built once (seed files, the real `taotoken init`, `prepare`) and then copied into
    each block's own directory, with the template's path rewritten in the files that name it (the
    `.bashrc` line, init's backup manifest), so blocks never share state and `init` runs once per setup.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.own_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="taotoken-docs-")) if root is None else root
        self._lock = threading.Lock()
        self._gateways: dict[str, object] = {}
        self._templates: dict[str, World] = {}
        self._template_locks = {name: threading.Lock() for name in SETUPS}
        write_shim(self.root / "bin")

    def gateway(self, options: dict):
        from taotoken_cli.cmd.mock import MockGateway, MockOptions

        key = repr(sorted(options.items()))
        with self._lock:
            if key not in self._gateways:
                self._gateways[key] = MockGateway(MockOptions(key=KEY, **options)).start()
            return self._gateways[key]

    def world(self, setup_name: str, root: Path) -> World:
        """A fresh copy of the setup's HOME under `root`."""
        with self._template_locks[setup_name]:
            if setup_name not in self._templates:
                self._templates[setup_name] = self._build(setup_name, self.root / f"setup-{setup_name}")
        template = self._templates[setup_name]
        home, tmp = root / "home", root / "tmp"
        tmp.mkdir(parents=True)
        shutil.copytree(template.home, home, symlinks=True)
        old, new = str(template.home).encode(), str(home).encode()
        for path in home.rglob("*"):
            if path.is_file() and not path.is_symlink() and old in (data := path.read_bytes()):
                path.write_bytes(data.replace(old, new))
        env = {name: value.replace(str(template.home), str(home)).replace(str(template.root / "tmp"), str(tmp))
               for name, value in template.env.items()}
        env.update(netguard_env())  # this block's test, not the one that built the template
        return World(root, home, env, list(template.ports), template.setup)

    def _build(self, setup_name: str, root: Path) -> World:
        setup = SETUPS[setup_name]
        home, tmp = root / "home", root / "tmp"
        home.mkdir(parents=True)
        tmp.mkdir()
        env = base_env(home, tmp, self.root / "bin")
        for rel, text in SEED.items():
            (home / rel).parent.mkdir(parents=True, exist_ok=True)
            (home / rel).write_text(text)
        (home / ".cline").mkdir()
        ports: list[int] = []
        base_url = "https://taotoken.net/api"  # written, never contacted: blocks without a gateway start one
        if setup.gateway is not None:
            mock = self.gateway(setup.gateway)
            ports.append(mock.port)
            base_url = mock.url
        if setup.init:
            # Without a gateway nothing may be asked: not the model list, and not the Gemini API (Gemini CLI is left
            # out then, as init leaves it out for a gateway it cannot ask)
            targets = (["--all"] if setup.gateway is not None else
                       ["--allow-unlisted", *(arg for name in CLIENTS if name not in (gemini_cli.NAME, *ON_REQUEST)
                                              for arg in ("--target", name))])
            proc = subprocess.run([str(self.root / "bin/taotoken"), "init", *targets, "--yes", "--base-url", base_url,
                                   "--model", MODEL, "--key-stdin"], input=KEY, capture_output=True, text=True,
                                  env=env, cwd=home, timeout=COMMAND_TIMEOUT_S)
            if proc.returncode != 0:
                raise RuntimeError(f"init for setup {setup_name!r} failed:\n{proc.stdout}{proc.stderr}")
            env.update(_sourced(home / ".config/taotoken/env.sh", env))
        if setup.prepare is not None:
            setup.prepare(home, env)
        return World(root, home, env, ports, setup)

    def close(self) -> None:
        for mock in self._gateways.values():
            mock.close()
        if self.own_root:
            shutil.rmtree(self.root, ignore_errors=True)


def _sourced(path: Path, env: dict[str, str]) -> dict[str, str]:
    proc = subprocess.run(["sh", "-c", '. "$1" && env -0', "sh", str(path)], capture_output=True, env=env,
                          check=True)
    after = dict(item.split("=", 1) for item in proc.stdout.decode().split("\0") if "=" in item)
    return {k: v for k, v in after.items() if k.startswith(("TAOTOKEN_", "OPENAI_"))}
