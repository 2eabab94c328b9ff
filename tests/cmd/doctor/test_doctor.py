"""`taotoken doctor`: one scenario per trap, each a temporary HOME seeded with the broken setup, run as the
real CLI (subprocess) against a real local gateway (pytest-httpserver on 127.0.0.1).

Each scenario asserts the check id, its status and the exact fix line printed. Scenarios pass `--check`
to run the sections they are about (the full run, devices included, is exercised by the healthy test).
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import time
from pathlib import Path

import pytest
from werkzeug import Request, Response

from taotoken_cli.cmd.doctor import DEFAULT_TIMEOUT_S
from tests.conftest import SENTINEL_KEY, in_users_shell, own_config, write
from tests.rawserver import RawServer
from tests.timing import assert_within, judged, startup_s

MODEL = "gpt-4o-mini"
MODELS = [MODEL, "gpt-4.1", "claude-sonnet-4-5"]


@pytest.fixture(autouse=True)
def _one_line_findings(one_line_findings: None) -> None:
    """These tests read each finding (and its fixes) as one line."""


# -- the local gateway ----------------------------------------------------------------------------------

def _gateway_handler(request: Request) -> Response:
    """Answers like an OpenAI/Anthropic-compatible gateway under /api/v1, Bearer auth required."""
    if request.headers.get("Authorization") != f"Bearer {SENTINEL_KEY}":
        # new-api's own answer for a key it does not know
        return Response(json.dumps({"error": {"message": "无效的令牌 (request id: 2026)", "type": "new_api_error"}}),
                        401, content_type="application/json")
    path = request.path
    if path == "/api/v1/models" and request.method == "GET":
        return Response(json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in MODELS]}),
                        content_type="application/json")
    body = request.get_json(silent=True) or {}
    if body.get("model") not in MODELS and path != "/api/v1/models":
        return Response(json.dumps({"error": {"message": f"model {body.get('model')} not found",
                                              "type": "invalid_request_error", "code": "model_not_found"}}), 404,
                        content_type="application/json")
    if path == "/api/v1/chat/completions" and body.get("stream"):
        chunks = [{"id": "c1", "object": "chat.completion.chunk", "model": MODEL,
                   "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}
                  for word in ("O", "K")]
        chunks.append({"id": "c1", "object": "chat.completion.chunk", "model": MODEL,
                       "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        events = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return Response(events, content_type="text/event-stream")
    if path == "/api/v1/chat/completions":
        return Response(json.dumps({"id": "c1", "object": "chat.completion", "model": MODEL,
                                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"},
                                                 "finish_reason": "length"}],
                                    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}),
                        content_type="application/json")
    if path == "/api/v1/messages":
        return Response(json.dumps({"id": "m1", "type": "message", "role": "assistant", "model": MODEL,
                                    "content": [{"type": "text", "text": "OK"}], "stop_reason": "max_tokens",
                                    "usage": {"input_tokens": 3, "output_tokens": 1}}),
                        content_type="application/json")
    if path == "/api/v1/responses":
        return Response(json.dumps({"id": "r1", "object": "response", "status": "completed", "model": MODEL,
                                    "output": [{"type": "message", "role": "assistant",
                                                "content": [{"type": "output_text", "text": "OK"}]}],
                                    "usage": {"input_tokens": 3, "output_tokens": 1}}),
                        content_type="application/json")
    return Response(json.dumps({"error": {"message": f"Invalid URL ({request.method} {path})"}}), 404,
                    content_type="application/json")


@pytest.fixture
def gateway(httpserver) -> str:
    httpserver.expect_request(re.compile(r"/.*")).respond_with_handler(_gateway_handler)
    return f"http://127.0.0.1:{httpserver.port}/api"


@pytest.fixture
def html_gateway(httpserver) -> str:
    """A base URL whose every path answers the dashboard's HTML page with 200 (one-api/new-api SPA)."""
    page = "<!doctype html><html><head><title>TaoToken Console</title></head><body><div id=root></div></body></html>"
    httpserver.expect_request(re.compile(r"/.*")).respond_with_data(page, content_type="text/html")
    return f"http://127.0.0.1:{httpserver.port}/api"


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- seeding a HOME ---------------------------------------------------------------------------------------

def claude_settings(home: Path, env: dict[str, str], onboarding: bool = True) -> Path:
    if onboarding:
        write(home / ".claude.json", json.dumps({"hasCompletedOnboarding": True}, indent=2) + "\n")
    return write(home / ".claude" / "settings.json", json.dumps({"env": env}, indent=2) + "\n")


def claude_ok(home: Path, base: str) -> Path:
    return claude_settings(home, {"ANTHROPIC_BASE_URL": base, "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY,
                                  "ANTHROPIC_MODEL": MODEL, "ANTHROPIC_DEFAULT_HAIKU_MODEL": MODEL})


def codex_config(home: Path, base_url: str, wire_api: str = "responses", extra: str = "") -> Path:
    return write(home / ".codex" / "config.toml",
                 f'model = "{MODEL}"\nmodel_provider = "taotoken"\n{extra}\n[model_providers.taotoken]\n'
                 f'name = "TaoToken"\nbase_url = "{base_url}"\nenv_key = "TAOTOKEN_API_KEY"\n'
                 f'wire_api = "{wire_api}"\n')


def cline_providers(home: Path, base_url: str) -> Path:
    data = {"version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
            "providers": {"openai-compatible": {"settings": {"provider": "openai-compatible", "apiKey": SENTINEL_KEY,
                                                             "model": MODEL, "baseUrl": base_url},
                                                "updatedAt": "2026-08-22T00:00:00.000Z", "tokenSource": "manual"}}}
    return write(home / ".cline" / "data" / "settings" / "providers.json", json.dumps(data, indent=2) + "\n")


def healthy_home(home: Path, base: str) -> None:
    own_config(home, base)
    claude_ok(home, base)
    codex_config(home, base + "/v1")
    cline_providers(home, base + "/v1")


# -- reading the output ----------------------------------------------------------------------------------

MARK = {"ok": "[✓]", "warn": "[!]", "fail": "[✗]", "skipped": "[-]"}


def finding(result, check_id: str) -> dict:
    """The check's entry from a --json run."""
    data = json.loads(result.stdout)
    return next(c for c in data["checks"] if c["id"] == check_id)


def block(output: str, check_id: str) -> str:
    """The text block of one problem: its headline (which ends with the id) and the indented lines below."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith(f"({check_id})") or f"({check_id}) [" in line:
            out = [line]
            for nxt in lines[i + 1:]:
                if nxt.startswith("      "):
                    out.append(nxt)
                else:
                    break
            return "\n".join(out)
    raise AssertionError(f"{check_id} not in output:\n{output}")


def assert_finding(result, check_id: str, status: str, fix: str | None = None) -> str:
    text = block(result.stdout, check_id)
    assert text.lstrip().startswith(MARK[status]), text
    if fix is not None:
        assert f"      fix: {fix}" in text.splitlines(), f"expected fix {fix!r} in:\n{text}"
    return text


# -- the healthy setup -----------------------------------------------------------------------------------

def test_healthy_setup_passes_clean(cli, run, home, gateway, monkeypatch):
    healthy_home(home, gateway)
    reference = startup_s(cli)
    started = time.monotonic()
    result = cli("doctor", env={"TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean()
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.output
    assert "[!]" not in result.stdout and "[✗]" not in result.stdout, result.stdout
    for title in ("Configuration", "Environment", "Clients", "Network", "Gateway", "Devices"):
        assert f"\n{title}\n" in result.stdout
    # each check alone is ok too (without the checks it would otherwise wait for); in-process, with a deadline
    # nothing can reach (a thread still running at the end would make doctor end the process: cli.py's _exit)
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    for check_id in ("gateway.layout", "gateway.key", "gateway.model", "gateway.chat", "gateway.stream",
                     "gateway.messages", "gateway.responses", "claude.base_url", "codex.wire_api",
                     "cline.providers", "config.api_key"):
        data = finding(run("doctor", "--json", "--timeout", "600", "--check", check_id).assert_clean(), check_id)
        assert data["status"] == "ok", data
    assert result.stdout.rstrip().splitlines()[-1].startswith("✓ No issues found")
    assert_within(elapsed, DEFAULT_TIMEOUT_S, reference)  # well inside the deadline nothing hit


# -- configuration and environment traps -------------------------------------------------------------------

def test_key_with_trailing_newline_in_env(cli, home, gateway):
    own_config(home, gateway)
    result = cli("doctor", "--check", "config", env={"TAOTOKEN_API_KEY": SENTINEL_KEY + "\n"}).assert_clean()
    assert_finding(result, "config.api_key", "warn",
                   "set TAOTOKEN_API_KEY without quotes or a newline: "
                   + in_users_shell("export TAOTOKEN_API_KEY=sk-…"))
    assert "removed a trailing newline from the key" in result.stdout
    assert result.returncode == 0  # a warning; --strict turns it into a failure
    assert cli("doctor", "--check", "config", "--strict", env={"TAOTOKEN_API_KEY": SENTINEL_KEY + "\n"}).returncode == 1


def test_utm_query_in_base_url(cli, home, gateway):
    own_config(home, gateway + "?utm_source=blog&utm_medium=post")
    result = cli("doctor", "--check", "config.base_url").assert_clean()
    text = assert_finding(result, "config.base_url", "warn", f"taotoken config set base_url {gateway}")
    assert "removed the query string ?utm_source=blog&utm_medium=post" in text


def test_base_url_on_localhost_with_nothing_listening(cli, home):
    own_config(home, f"http://127.0.0.1:{closed_port()}/api")
    result = cli("doctor", "--check", "config.base_url").assert_clean()
    text = assert_finding(result, "config.base_url", "fail", "taotoken config set base_url https://taotoken.net/api")
    assert "points at this machine, but nothing listens" in text
    assert result.returncode == 1


def test_http_proxy_on_a_closed_port(cli, home, gateway):
    from tests.proxyserver import GATEWAY_NAME

    own_config(home, gateway.replace("127.0.0.1", GATEWAY_NAME))  # a loopback gateway never goes through a proxy
    proxy = f"http://127.0.0.1:{closed_port()}"
    env = {"HTTP_PROXY": proxy, "TAOTOKEN_ALLOW_HTTP": "1"}
    result = cli("doctor", "--check", "net", "--check", "env.proxy", env=env).assert_clean()
    text = assert_finding(result, "net.proxy", "fail",
                          "or bypass it for the gateway: " + in_users_shell(f"export NO_PROXY={GATEWAY_NAME}"))
    assert "local proxy failed" in text
    assert_finding(result, "net.via_proxy", "fail",
                   in_users_shell(f"export NO_PROXY={GATEWAY_NAME}") + "   (bypass the proxy for the gateway)")
    assert result.returncode == 1
    gateway_only = cli("doctor", "--check", "gateway", env=env).assert_clean()
    text = assert_finding(gateway_only, "gateway.layout", "fail")
    assert "the proxy " + proxy + " refuses connections (see net.proxy)" in text
    assert gateway_only.returncode == 1


def test_socks_proxy_without_socksio(cli, home, gateway):
    pytest.importorskip("httpx")
    import importlib.util

    if importlib.util.find_spec("socksio") is not None:
        pytest.skip("socksio is installed here")
    from tests.proxyserver import GATEWAY_NAME

    own_config(home, gateway.replace("127.0.0.1", GATEWAY_NAME))  # a loopback gateway never goes through a proxy
    result = cli("doctor", "--check", "env.proxy", env={"ALL_PROXY": "socks5://127.0.0.1:7890",
                                                        "TAOTOKEN_ALLOW_HTTP": "1"}).assert_clean()
    # the command for the installer taotoken runs under: here this virtual environment's pip
    assert_finding(result, "env.proxy", "fail", f"{sys.executable} -m pip install 'httpx[socks]'   (in the Python "
                   "environment that runs the client)")


def test_both_anthropic_variables(cli, home, gateway):
    own_config(home, gateway)
    result = cli("doctor", "--check", "env", env={"ANTHROPIC_API_KEY": "sk-otherkey0123456789abcdef",
                                             "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY}).assert_clean()
    assert_finding(result, "env.anthropic_conflict", "fail",
                   "unset ANTHROPIC_API_KEY   (keep ANTHROPIC_AUTH_TOKEN: Claude Code sends it as Bearer)")


# -- client traps --------------------------------------------------------------------------------------------

def test_claude_code_base_url_ending_in_v1(cli, home, gateway):
    own_config(home, gateway)
    settings = claude_settings(home, {"ANTHROPIC_BASE_URL": gateway + "/v1", "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY})
    result = cli("doctor", "--check", "claude").assert_clean()
    text = assert_finding(result, "claude.base_url", "fail", f'set "ANTHROPIC_BASE_URL": "{gateway}" in {settings}')
    assert f"{gateway}/v1/v1/messages (404)" in text


def test_json_syntax_error_in_claude_settings(cli, home, gateway):
    own_config(home, gateway)
    settings = write(home / ".claude" / "settings.json",
                     '{\n  "env": {\n    "ANTHROPIC_BASE_URL": "x"\n    "ANTHROPIC_AUTH_TOKEN": "y"\n  }\n}\n')
    result = cli("doctor", "--check", "claude.settings", "--json").assert_clean()
    data = finding(result, "claude.settings")
    assert data["status"] == "fail"
    assert data["message"].startswith(f"{settings}:4:5: invalid JSON")
    assert data["fixes"][0].startswith("fix the JSON at line 4, column 5")
    text = cli("doctor", "--check", "claude.settings").stdout
    assert_finding_text = block(text, "claude.settings")
    assert f"{settings}:4:5" in assert_finding_text


def test_oauth_credentials_beside_custom_key(cli, home, gateway):
    own_config(home, gateway)
    claude_ok(home, gateway)
    write(home / ".claude" / ".credentials.json", json.dumps({"claudeAiOauth": {"accessToken": "sk-ant-oat01-x"}}))
    result = cli("doctor", "--check", "claude.login").assert_clean()
    text = assert_finding(result, "claude.login", "warn",
                          "in Claude Code run /logout (removes the stored login), then restart it")
    assert f"fix: or: rm {home}/.claude/.credentials.json" in text
    assert "OAuth token has expired" in text


def test_claude_api_key_instead_of_auth_token_and_no_onboarding(cli, home, gateway):
    own_config(home, gateway)
    settings = claude_settings(home, {"ANTHROPIC_BASE_URL": gateway, "ANTHROPIC_API_KEY": SENTINEL_KEY,
                                      "ANTHROPIC_SMALL_FAST_MODEL": MODEL}, onboarding=False)
    result = cli("doctor", "--check", "claude").assert_clean()
    assert_finding(result, "claude.key", "warn",
                   f'rename "ANTHROPIC_API_KEY" to "ANTHROPIC_AUTH_TOKEN" in {settings}')
    assert_finding(result, "claude.onboarding", "warn", f'set "hasCompletedOnboarding": true in {home}/.claude.json')
    assert_finding(result, "claude.models", "warn",
                   f'rename "ANTHROPIC_SMALL_FAST_MODEL" to "ANTHROPIC_DEFAULT_HAIKU_MODEL" in {settings}')


def test_codex_wire_api_chat(cli, home, gateway):
    own_config(home, gateway)
    config = codex_config(home, gateway + "/v1", wire_api="chat")
    result = cli("doctor", "--check", "codex", env={"TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean()
    assert_finding(result, "codex.wire_api", "fail",
                   f'set wire_api = "responses" in [model_providers.taotoken] of {config}')


def test_codex_legacy_profiles_auth_json_base_url_and_missing_env_key(cli, home, gateway):
    own_config(home, gateway)
    config = codex_config(home, gateway, extra='profile = "tao"\n\n[profiles.tao]\nmodel = "gpt-4.1"\n')
    write(home / ".codex" / "auth.json", json.dumps({"OPENAI_API_KEY": SENTINEL_KEY,
                                                     "OPENAI_BASE_URL": gateway + "/v1"}))
    result = cli("doctor", "--check", "codex").assert_clean()
    assert_finding(result, "codex.profiles", "fail", f"delete [profiles.tao], profile = 'tao' from {config}")
    assert_finding(result, "codex.base_url", "fail",
                   f'set base_url = "{gateway}/v1" in [model_providers.taotoken] of {config}')
    assert_finding(result, "codex.auth_json", "warn")
    assert_finding(result, "codex.env_key", "fail", "export TAOTOKEN_API_KEY=sk-…   (in ~/.bashrc or ~/.profile, so "
                   "IDE-launched Codex sees it too)")


def test_cline_keys_in_vscode_settings(cli, home, gateway):
    own_config(home, gateway)
    vscode = write(home / ".config" / "Code" / "User" / "settings.json",
                   '{\n  // my settings\n  "editor.fontSize": 14,\n  "cline.apiProvider": "openai",\n'
                   f'  "cline.openAiBaseUrl": "{gateway}/v1",\n}}\n', mode=0o644)
    (home / ".cline").mkdir()
    result = cli("doctor", "--check", "cline").assert_clean()
    text = assert_finding(result, "cline.vscode", "warn",
                          f"remove the cline.* lines from {vscode}; configure Cline in "
                          "~/.cline/data/settings/providers.json (taotoken init does it)")
    assert "cline.apiProvider (line 4), cline.openAiBaseUrl (line 5)" in text
    assert_finding(result, "cline.providers", "warn", "taotoken init")


def test_cline_providers_failing_the_schema(cli, home, gateway):
    own_config(home, gateway)
    providers = cline_providers(home, gateway + "/v1")
    data = json.loads(providers.read_text())
    data["providers"]["openai-compatible"]["settings"]["baseUrl"] = "taotoken.net/api/v1"  # no scheme: not a URL
    providers.write_text(json.dumps(data))
    result = cli("doctor", "--check", "cline.providers").assert_clean()
    text = assert_finding(result, "cline.providers", "fail",
                          f"move {providers} away and run taotoken init (Cline reads an invalid file as empty: "
                          "logged out)")
    assert "'taotoken.net/api/v1' is not a valid URL" in text
    # --json: the fix's command is a command there too, not words inside its text
    report = json.loads(cli("doctor", "--check", "cline.providers", "--json").assert_clean().stdout)
    check = next(c for c in report["checks"] if c["id"] == "cline.providers")
    assert check["fix_steps"][0]["commands"] == [{"line": "taotoken init", "argv": ["taotoken", "init"]}]


def test_cc_switch_managing_the_same_files(cli, home, gateway):
    own_config(home, gateway)
    claude_ok(home, gateway)
    write(home / ".cc-switch" / "cc-switch.db", "")
    write(home / ".cc-switch" / "settings.json", json.dumps({"currentProviderClaude": "anthropic-official"}))
    result = cli("doctor", "--check", "ccswitch").assert_clean()
    text = assert_finding(result, "ccswitch.managed", "warn")
    assert f"CC Switch manages {home}/.claude/settings.json" in text


# -- gateway traps -------------------------------------------------------------------------------------------

def test_model_typo(cli, home, gateway):
    own_config(home, gateway, model="gpt-4o-mnii")
    result = cli("doctor", "--check", "gateway").assert_clean()
    text = assert_finding(result, "gateway.model", "fail", "taotoken config set model gpt-4o-mini")
    assert "did you mean 'gpt-4o-mini'?" in text
    # one cause, one failure: the probes that need the model say why they did not run
    # (the default view folds checks skipped for the same reason into one line; -v lists each)
    folded = "[-] Chat completion (+1 more): gpt-4o-mnii is not offered by the gateway (see gateway.model)"
    assert folded in result.stdout
    assert result.returncode == 1
    verbose = cli("doctor", "--check", "gateway", "-v").assert_clean()
    for title in ("Chat completion", "Streamed completion"):
        assert f"[-] {title}: gpt-4o-mnii is not offered by the gateway (see gateway.model)" in verbose.stdout
    alone = cli("doctor", "--check", "gateway.chat").assert_clean()  # the explaining check is not in the run
    assert_finding(alone, "gateway.chat", "fail")
    assert alone.returncode == 1


def test_gateway_answering_html(cli, home, html_gateway):
    own_config(home, html_gateway)
    result = cli("doctor", "--check", "gateway").assert_clean()
    text = assert_finding(result, "gateway.layout", "fail",
                          "set the base URL to the gateway's API root (for TaoToken: taotoken config set base_url "
                          "https://taotoken.net/api)")
    assert "answers an HTML page, not the API" in text
    assert "more): the gateway's API was not found (see gateway.layout)" in result.stdout  # folded skips
    verbose = cli("doctor", "--check", "gateway", "-v").assert_clean()
    assert "[-] Chat completion: the gateway's API was not found (see gateway.layout)" in verbose.stdout


def test_wrong_key_is_a_failure(cli, home, gateway):
    own_config(home, gateway, key="sk-wrongkey0123456789abcdefXYZ")
    result = cli("doctor", "--check", "gateway", "--json").assert_clean("sk-wrongkey0123456789abcdefXYZ")
    data = finding(result, "gateway.key")
    assert data["status"] == "fail" and data["code"] == "auth.invalid_key", data
    assert finding(result, "gateway.chat")["status"] == "skipped"
    assert result.returncode == 1


# -- bounded time ----------------------------------------------------------------------------------------------

def test_hanging_gateway_ends_within_its_bound(cli, home):
    with RawServer("stall") as server:
        own_config(home, server.url + "/api")
        result, elapsed, reference = judged(cli, lambda url: ["doctor", "--check", "gateway", "--check", "net",
                                                              "--timeout", "2", "--base-url", url], server.url + "/api")
    result.assert_clean()
    assert_within(elapsed, 2, reference)
    assert result.returncode == 1
    text = assert_finding(result, "gateway.layout", "fail")
    # the probe's own timeout or the runner's cut at the deadline: either says it is doctor's limit, in one wording
    assert "The gateway did not answer in time: doctor's own time limit (2 s, --timeout) ran out before" in text


@pytest.mark.skipif(os.environ.get("TAOTOKEN_FAST_TESTS") == "1", reason="runs for the full default deadline")
def test_hanging_gateway_ends_within_the_default_deadline(cli, home):
    with RawServer("stall") as server:
        own_config(home, server.url + "/api")
        result, elapsed, reference = judged(cli, lambda url: ["doctor", "--json", "--base-url", url],
                                            server.url + "/api")
    result.assert_clean()
    assert_within(elapsed, DEFAULT_TIMEOUT_S, reference)
    data = json.loads(result.stdout)
    assert data["verdict"] == "fail"
    assert finding(result, "gateway.layout")["status"] == "fail"


# -- output contracts ------------------------------------------------------------------------------------------

def test_json_shape_is_stable_and_masks_the_key(cli, home, gateway):
    healthy_home(home, gateway)
    result = cli("doctor", "--json", "--offline", env={"TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean()
    data = json.loads(result.stdout)
    assert set(data) == {"schema", "version", "verdict", "exit_code", "strict", "offline", "profile", "config_path",
                         "triple", "deadline_s", "elapsed_s", "counts", "timed_out", "checks"}
    assert data["triple"] == {"base_url": gateway, "api_key": "sk-SE…WXYZ", "model": MODEL}
    assert set(data["counts"]) == {"ok", "warn", "fail", "skipped"}
    keys = {"id", "section", "title", "status", "message", "details", "fixes", "fix_steps", "repairs", "code",
            "latency_ms", "elapsed_ms", "timed_out"}
    assert all(set(c) == keys for c in data["checks"])
    # fix_steps: one per fix, the same text, each with its commands and where the value lives
    assert all([s["text"] for s in c["fix_steps"]] == c["fixes"] for c in data["checks"])
    assert all(set(s) == {"text", "commands", "where"} for c in data["checks"] for s in c["fix_steps"])
    assert len({c["id"] for c in data["checks"]}) == len(data["checks"])
    assert all(c["status"] == "skipped" for c in data["checks"] if c["section"] in ("Network", "Gateway"))
    assert data["exit_code"] == result.returncode == 0


def test_fix_with_json_is_refused_with_both_commands_in_the_fix(cli, home):
    refused = cli("doctor", "--fix", "--json").assert_clean()
    data = json.loads(refused.stdout)
    assert refused.returncode == data["exit_code"] == 2 and data["code"] == "input.invalid"
    assert [c["line"] for c in data["fix_step"]["commands"]] == ["taotoken doctor --json", "taotoken doctor --fix"]
    assert "fix: run taotoken doctor --json to read the findings, then taotoken doctor --fix" in refused.stderr


def test_list_and_unknown_check(run, home):
    # in-process: listing and refusing run no check (tests/app/test_parse.py: the parse-only seam)
    listing = run("doctor", "--list").assert_clean()
    assert listing.returncode == 0
    for check_id in ("config.base_url", "env.anthropic_conflict", "net.proxy", "gateway.model", "claude.login",
                     "codex.wire_api", "cline.vscode", "ccswitch.managed", "devices.opencl"):
        assert check_id in listing.stdout
    bad = run("doctor", "--check", "gateway.modle").assert_clean()
    assert bad.returncode == 2
    assert "did you mean gateway.model" in bad.stderr


def test_fix_with_json_is_a_usage_error(run, home):
    result = run("doctor", "--fix", "--json").assert_clean()
    assert result.returncode == 2
    assert "--fix" in result.stderr


def test_ascii_fallback_when_the_terminal_cannot_show_marks(cli, home, gateway):
    own_config(home, gateway)
    result = cli("doctor", "--check", "config", env={"PYTHONIOENCODING": "ascii"}).assert_clean()
    assert "[OK] Base URL" in result.stdout
    assert "✓" not in result.stdout


# -- --fix ---------------------------------------------------------------------------------------------------

def test_fix_repairs_then_rerun_is_clean(cli, home, gateway):
    config = own_config(home, gateway, key=SENTINEL_KEY + "\n")
    settings = claude_settings(home, {"ANTHROPIC_BASE_URL": gateway + "/v1", "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY,
                                      "ANTHROPIC_API_KEY": SENTINEL_KEY})
    codex = codex_config(home, gateway + "/v1", wire_api="chat")
    cline_providers(home, gateway + "/v1")
    vscode = write(home / ".config" / "Code" / "User" / "settings.json",
                   '{\n  "editor.fontSize": 14,\n  "cline.openAiBaseUrl": "x"\n}\n', mode=0o644)
    sections = ("--check", "config", "--check", "clients")
    env = {"TAOTOKEN_API_KEY": None}
    before = cli("doctor", *sections, env=env).assert_clean()
    assert before.returncode == 1
    dry = cli("doctor", *sections, "--fix", env=env).assert_clean()  # no terminal, no --yes: shows, writes nothing
    assert dry.returncode == 2 and "stdin is not a terminal (nothing was written)" in dry.stderr
    assert "re-run with --yes" in dry.stderr  # the same refusal as `taotoken init` without --yes
    assert f'-    "ANTHROPIC_BASE_URL": "{gateway}/v1",' in dry.stdout
    assert codex.read_text().count('wire_api = "chat"') == 1
    fixed = cli("doctor", *sections, "--fix", "--yes", env=env).assert_clean()
    assert "--fix: repaired 4 file(s)" in fixed.stdout, fixed.stdout
    assert json.loads(settings.read_text())["env"] == {"ANTHROPIC_BASE_URL": gateway,
                                                       "ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY}
    assert 'wire_api = "responses"' in codex.read_text()
    assert f'api_key = "{SENTINEL_KEY}"\n' in config.read_text()
    assert "cline." not in vscode.read_text() and json.loads(vscode.read_text()) == {"editor.fontSize": 14}
    assert oct(config.stat().st_mode & 0o777) == "0o600"
    after = cli("doctor", *sections, env={"TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean()
    assert after.returncode == 0, after.stdout
    assert "[!]" not in after.stdout and "[✗]" not in after.stdout
    undo = cli("init", "--undo").assert_clean()
    assert undo.returncode == 0, undo.output
    assert 'wire_api = "chat"' in codex.read_text()


def test_fix_ctrl_d_at_the_question_exits_130_with_nothing_written(home, gateway):
    from taotoken_cli.cmd.doctor.run import DoctorOptions, run
    from taotoken_cli.core.term.iostreams import IOStreams

    config = own_config(home, gateway, key=SENTINEL_KEY + "\n")
    before = config.read_bytes()
    io = IOStreams.memory("", env={**os.environ, "COLUMNS": "1000"}, cwd=home, tty=True)  # input ends at the question
    assert run(DoctorOptions(only=["config"], offline=True, fix=True), io) == 130  # was the checks' status
    out, err = io.written()
    assert "--fix will change 1 file(s)" in out and "Apply these changes? [y/N] " in err
    assert err.rstrip().endswith("cancelled: nothing was written")  # as init says it (was "interrupted")
    assert config.read_bytes() == before and not (home / ".config" / "taotoken" / "backups").exists()
    assert SENTINEL_KEY not in out + err


def test_fix_moves_legacy_codex_profile_into_its_own_file(cli, home, gateway):
    config = codex_config(home, gateway + "/v1", extra='profile = "tao"\n')
    config.write_text(config.read_text() + '\n[profiles.tao]\nmodel = "gpt-4.1"\nmodel_reasoning_effort = "high"\n')
    result = cli("doctor", "--check", "codex.profiles", "--fix", "--yes").assert_clean()
    assert "--fix: repaired 2 file(s)" in result.stdout, result.stdout
    moved = home / ".codex" / "tao.config.toml"
    assert 'model = "gpt-4.1"\nmodel_reasoning_effort = "high"\n' in moved.read_text()
    assert "profile" not in config.read_text()
    assert cli("doctor", "--check", "codex.profiles").returncode == 0
