"""Record real LiteLLM proxy error responses as test fixtures (tests/fixtures/litellm/*.json).

The suite replays these files and never needs LiteLLM; this script is only for (re-)recording them.
It installs nothing. Put LiteLLM in a throwaway venv first:

    python -m venv /tmp/litellm-venv && /tmp/litellm-venv/bin/pip install 'litellm[proxy]'
    python scripts/record_litellm_fixtures.py [--litellm /tmp/litellm-venv/bin/litellm] [--out DIR]

Everything runs offline on 127.0.0.1: every model is a `mock_response` deployment (LiteLLM never
calls a provider), and LITELLM_LOCAL_MODEL_COST_MAP keeps it from fetching its price list.

Two proxies are started, one after the other:
- "master-key": a master key and no database, LiteLLM's own auth. Bad key, no key, invalid model,
  a deployment's 500, an upstream 429, and the router's model-level 429s come from here.
- "virtual-keys": LiteLLM keeps virtual keys in Postgres through Prisma, and Prisma downloads its query
  engine at first use, which cannot happen offline. So the keys come from LiteLLM's documented
  `custom_auth` hook (a function returning `UserAPIKeyAuth` objects with `models`, `rpm_limit`,
  `model_max_budget`, `expires`), with `custom_auth_run_common_checks` and
  `enable_post_custom_auth_checks` on: LiteLLM's own model-access, expiry and per-model budget checks
  and its own rate limiter produce the answers. Not recordable this way (they need the database): the
  401 "Invalid proxy server token passed" for an unknown key (here: 400 "No connected db.") and the
  key-wide `max_budget` answer "Budget has been exceeded! Key=…"; their shapes are tested from
  shared/reference/gateway-errors.md instead.

Each fixture holds the LiteLLM version, the setup, the request (method, path, headers, JSON body)
and the response (status, headers without Date, body as the raw text received).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
MASTER_KEY = "sk-fixture-master-0000"
# Fixture keys (not secrets): what each virtual key may do.
KEY_RESTRICTED = "sk-fixture-only-mini-1111"  # may use gpt-4o-mini only
KEY_RPM1 = "sk-fixture-rpm-one-2222"  # one request per minute
KEY_BROKE = "sk-fixture-budget-3333"  # a budget of $0.000001 for gpt-4o-mini, used up by one request
KEY_EXPIRED = "sk-fixture-expired-4444"  # expired on 2024-01-01
KEY_WRONG = "sk-fixture-wrong-9999"  # known to nobody

MOCK = {"api_key": "sk-not-used", "mock_response": "Hello from a LiteLLM mock deployment."}


def _deployment(name: str, model: str, **params: Any) -> dict[str, Any]:
    return {"model_name": name, "litellm_params": {"model": model, **MOCK, **params}}


MODEL_LIST = [
    _deployment("gpt-4o-mini", "openai/gpt-4o-mini"),
    _deployment("gpt-4o", "openai/gpt-4o"),
    _deployment("claude-3-haiku", "anthropic/claude-3-haiku-20240307"),
    # a deployment that fails with a 500
    _deployment("flaky-model", "openai/flaky-model", mock_response="litellm.InternalServerError"),
    # the provider behind it answers 429 every time (LiteLLM passes it on)
    _deployment("busy-model", "openai/busy-model", mock_response="litellm.RateLimitError"),
    # one request per minute for the whole model (all keys): the router's own model-level limit
    _deployment("tiny-model", "openai/tiny-model", rpm=1),
    # two deployments that fail with 429: both go into cooldown, then the router has none left
    _deployment("cooled-model", "openai/cooled-a", mock_response="litellm.RateLimitError"),
    _deployment("cooled-model", "openai/cooled-b", mock_response="litellm.RateLimitError"),
]

CUSTOM_AUTH = f'''
"""Virtual keys without a database (see scripts/record_litellm_fixtures.py)."""
from fastapi import Request
from litellm.proxy._types import UserAPIKeyAuth

KEYS = {{
    {MASTER_KEY!r}: dict(key_alias="fixture-admin"),
    {KEY_RESTRICTED!r}: dict(key_alias="fixture-only-mini", models=["gpt-4o-mini"]),
    {KEY_RPM1!r}: dict(key_alias="fixture-rpm-one", rpm_limit=1),
    {KEY_BROKE!r}: dict(key_alias="fixture-budget",
                        model_max_budget={{"gpt-4o-mini": {{"max_budget": 0.000001, "budget_duration": "1d"}}}}),
    {KEY_EXPIRED!r}: dict(key_alias="fixture-expired", expires="2024-01-01T00:00:00+00:00"),
}}


async def user_api_key_auth(request: Request, api_key: str) -> UserAPIKeyAuth:
    key = api_key.removeprefix("Bearer ").strip()
    if key not in KEYS:
        raise Exception("unknown key")
    return UserAPIKeyAuth(api_key=key, token=key, **KEYS[key])
'''


@dataclass
class Scenario:
    name: str
    setup: str  # "master-key" | "virtual-keys"
    description: str
    method: str = "POST"
    path: str = "/v1/chat/completions"
    key: str | None = MASTER_KEY
    body: dict[str, Any] | None = None
    warmup: int = 0  # identical requests sent first (to use up a limit or trip a cooldown)
    pause_s: float = 0.0  # wait after the warm-up (spend is counted after the answer is sent)
    extra_headers: dict[str, str] = field(default_factory=dict)


def chat(model: str, **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": "Say OK"}], "max_tokens": 1, **extra}


SCENARIOS = [
    # --- master key, no database ------------------------------------------------------------------
    Scenario("models-ok", "master-key", "GET /v1/models with the master key: every model", "GET", "/v1/models"),
    Scenario("chat-ok", "master-key", "a working chat completion", body=chat("gpt-4o-mini")),
    Scenario("bad-key", "master-key", "a key the proxy does not know", key=KEY_WRONG, body=chat("gpt-4o-mini")),
    Scenario("bad-key-models", "master-key", "GET /v1/models with a key the proxy does not know", "GET",
             "/v1/models", key=KEY_WRONG),
    Scenario("no-key", "master-key", "no Authorization header at all", key=None, body=chat("gpt-4o-mini")),
    Scenario("invalid-model", "master-key", "a model name the proxy does not have (typo)",
             body=chat("gpt-4o-mni")),
    Scenario("deployment-500", "master-key", "the model's only deployment fails with a 500",
             body=chat("flaky-model")),
    Scenario("deployment-500-stream", "master-key", "the same, for a streamed request (fails before the stream)",
             body=chat("flaky-model", stream=True)),
    Scenario("upstream-429", "master-key", "the provider behind the model answers 429 (passed on by LiteLLM)",
             body=chat("busy-model")),
    Scenario("model-rpm-no-deployments", "master-key",
             "the model's only deployment has rpm=1 and was used: the router has no deployment left",
             body=chat("tiny-model"), warmup=1),
    Scenario("cooldown-no-deployments", "master-key",
             "both deployments of the model failed with 429 and are cooling down", body=chat("cooled-model"),
             warmup=2),
    Scenario("unknown-path", "master-key", "a path the proxy does not serve", "GET", "/v1/v1/models"),
    # --- virtual keys (custom_auth + LiteLLM's common checks) -------------------------------------
    Scenario("restricted-models", "virtual-keys", "GET /v1/models with a key limited to gpt-4o-mini", "GET",
             "/v1/models", key=KEY_RESTRICTED),
    Scenario("forbidden-model", "virtual-keys", "a key limited to gpt-4o-mini asks for gpt-4o",
             key=KEY_RESTRICTED, body=chat("gpt-4o")),
    Scenario("forbidden-model-typo", "virtual-keys", "a key limited to gpt-4o-mini asks for a typo of it",
             key=KEY_RESTRICTED, body=chat("gpt-4o-mni")),
    Scenario("expired-key", "virtual-keys", "a key whose expiry date has passed", key=KEY_EXPIRED,
             body=chat("gpt-4o-mini")),
    Scenario("key-rpm-limit", "virtual-keys", "a key with rpm_limit=1 sends its second request in the minute",
             key=KEY_RPM1, body=chat("gpt-4o-mini"), warmup=1),
    Scenario("budget-exceeded", "virtual-keys",
             "a key whose budget for the model is used up by the previous request", key=KEY_BROKE,
             body=chat("gpt-4o-mini"), warmup=1, pause_s=3),
]

KEPT_OUT_HEADERS = {"date"}  # changes on every run; nothing in it matters


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_config(folder: Path, setup: str) -> Path:
    config: dict[str, Any] = {
        "model_list": MODEL_LIST,
        "router_settings": {"num_retries": 0, "allowed_fails": 0, "cooldown_time": 60,
                            "enable_pre_call_checks": True},
        "litellm_settings": {"num_retries": 0, "request_timeout": 10, "telemetry": False},
        "general_settings": {"master_key": MASTER_KEY},
    }
    if setup == "virtual-keys":
        (folder / "fixture_auth.py").write_text(CUSTOM_AUTH)
        config["general_settings"].update(custom_auth="fixture_auth.user_api_key_auth",
                                          custom_auth_run_common_checks=True)
        config["litellm_settings"]["enable_post_custom_auth_checks"] = True
    path = folder / f"{setup}.yaml"
    path.write_text(json.dumps(config, indent=2))  # JSON is YAML
    return path


class Proxy:
    def __init__(self, litellm: str, config: Path, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower() and not k.startswith("DATABASE")}
        env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_TELEMETRY="False", NO_PROXY="*",
                   PYTHONPATH=str(config.parent))
        self.log = log.open("wb")
        self.process = subprocess.Popen([litellm, "--config", str(config), "--host", "127.0.0.1", "--port",
                                         str(self.port), "--num_workers", "1"], cwd=config.parent, env=env,
                                        stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"litellm exited with {self.process.returncode}; see {self.log.name}")
            try:
                if httpx.get(self.url + "/health/liveliness", timeout=1, trust_env=False).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise SystemExit(f"litellm did not answer within {timeout:.0f} s; see {self.log.name}")

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()


def send(client: httpx.Client, base: str, scenario: Scenario) -> tuple[dict[str, Any], httpx.Response]:
    headers = {"Content-Type": "application/json", **scenario.extra_headers}
    if scenario.key is not None:
        headers["Authorization"] = f"Bearer {scenario.key}"
    request = {"method": scenario.method, "path": scenario.path, "headers": headers}
    if scenario.body is not None:
        request["json"] = scenario.body
    for _ in range(scenario.warmup):
        client.request(scenario.method, base + scenario.path, headers=headers, json=scenario.body)
    time.sleep(scenario.pause_s)
    response = client.request(scenario.method, base + scenario.path, headers=headers, json=scenario.body)
    return request, response


def record(scenario: Scenario, request: dict[str, Any], response: httpx.Response, version: str) -> dict[str, Any]:
    return {
        "name": scenario.name,
        "description": scenario.description,
        "litellm_version": version,
        "setup": scenario.setup,
        "recorded_with": "scripts/record_litellm_fixtures.py",
        "request": request,
        "response": {
            "status": response.status_code,
            "headers": {k.lower(): v for k, v in response.headers.items() if k.lower() not in KEPT_OUT_HEADERS},
            "body": response.text,
        },
    }


def litellm_version(litellm: str) -> str:
    python = Path(litellm).with_name("python")
    out = subprocess.run([str(python), "-c", "from importlib.metadata import version; print(version('litellm'))"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--litellm", default="/tmp/litellm-venv/bin/litellm", help="the litellm executable")
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "fixtures" / "litellm")
    parser.add_argument("--only", nargs="*", help="record only these scenario names")
    args = parser.parse_args()
    if not Path(args.litellm).exists():
        print(f"no litellm at {args.litellm}; install it as the docstring says", file=sys.stderr)
        return 2
    version = litellm_version(args.litellm)
    args.out.mkdir(parents=True, exist_ok=True)
    chosen = [s for s in SCENARIOS if not args.only or s.name in args.only]
    with tempfile.TemporaryDirectory(prefix="litellm-fixtures-") as tmp:
        for setup in ("master-key", "virtual-keys"):
            todo = [s for s in chosen if s.setup == setup]
            if not todo:
                continue
            proxy = Proxy(args.litellm, write_config(Path(tmp), setup), Path(tmp) / f"{setup}.log")
            try:
                proxy.wait_ready()
                with httpx.Client(timeout=30, trust_env=False) as client:
                    for scenario in todo:
                        request, response = send(client, proxy.url, scenario)
                        path = args.out / f"{scenario.name}.json"
                        path.write_text(json.dumps(record(scenario, request, response, version), indent=2,
                                                   ensure_ascii=False) + "\n")
                        print(f"{response.status_code}  {scenario.name:<28} {response.text[:100]}")
            finally:
                proxy.close()
                if os.environ.get("LITELLM_FIXTURES_KEEP_LOG"):
                    print((Path(tmp) / f"{setup}.log").read_text(errors="replace")[-5000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
