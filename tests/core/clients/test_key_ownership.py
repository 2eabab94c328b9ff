"""One rule for key variables (issue 22, item 1): in an env block that points at TaoToken, a key variable is
TaoToken's only when its own URL variable points at TaoToken, when it is TAOTOKEN_API_KEY, or when it holds a key
taotoken wrote before. Any other key is the user's key for another service: init, `config set` and `config sync`
never replace it (that destroyed the user's key and sent TaoToken's to that service), and doctor says why it is
left alone. A server that is TaoToken's is kept in step by every init, whatever targets were named.

Real parts: real files in a temporary HOME, the real CLI in-process.
"""

from __future__ import annotations

import json
from pathlib import Path

from taotoken_cli.core.clients.base import Triple
from taotoken_cli.core.clients.envvars import key_mark, read_env, taotoken_hosts, updates
from tests.conftest import SENTINEL_KEY, write

ROOT = "https://taotoken.net/api"
MODEL = "gpt-4o-mini"
OLD_KEY = "sk-OLDoldOLDold0123456789abcdefQRST"  # the key taotoken wrote before
USERS_ANTHROPIC = "sk-ant-api03-USERSownANTHROPICkey0123456789xyz"  # the user's own key for Anthropic
NEW_KEY = "sk-ROTATEDrotated0123456789abcdEFGH"


def mixed_server(home: Path) -> Path:
    return write(home / ".claude.json", json.dumps({"mcpServers": {"both": {"command": "both-mcp", "env": {
        "OPENAI_BASE_URL": ROOT + "/v1", "OPENAI_API_KEY": OLD_KEY, "ANTHROPIC_API_KEY": USERS_ANTHROPIC}}}},
        indent=2) + "\n")


def env_of(path: Path, server: str = "both") -> dict:
    return json.loads(path.read_text())["mcpServers"][server]["env"]


def clean(result, *secrets: str):
    for secret in (SENTINEL_KEY, OLD_KEY, USERS_ANTHROPIC, NEW_KEY, *secrets):
        result.assert_clean(secret)
    return result


def test_each_key_follows_its_own_url_variable() -> None:
    hosts = taotoken_hosts(ROOT)
    triple = Triple(ROOT, SENTINEL_KEY, MODEL)
    copy = read_env({"OPENAI_BASE_URL": ROOT + "/v1", "OPENAI_API_KEY": OLD_KEY,
                     "ANTHROPIC_API_KEY": USERS_ANTHROPIC, "ANTHROPIC_AUTH_TOKEN": "sk-other0123456789"}, hosts)
    assert updates(copy, triple) == {"OPENAI_API_KEY": SENTINEL_KEY}
    assert set(copy.foreign) == {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"}
    # ANTHROPIC_BASE_URL at TaoToken makes both Anthropic keys TaoToken's, and leaves OPENAI_API_KEY alone
    copy = read_env({"ANTHROPIC_BASE_URL": ROOT, "ANTHROPIC_AUTH_TOKEN": OLD_KEY,
                     "OPENAI_API_KEY": "sk-openai0123456789", "TAOTOKEN_API_KEY": OLD_KEY}, hosts)
    assert updates(copy, triple) == {"ANTHROPIC_AUTH_TOKEN": SENTINEL_KEY, "TAOTOKEN_API_KEY": SENTINEL_KEY}
    # a key taotoken wrote is TaoToken's wherever it is; an unusable URL variable is never taken over
    copy = read_env({"TAOTOKEN_MODEL": "m", "OPENAI_API_KEY": OLD_KEY, "OPENAI_BASE_URL": "not a url"}, hosts,
                    (key_mark(OLD_KEY),))
    assert updates(copy, triple) == {"OPENAI_API_KEY": SENTINEL_KEY, "TAOTOKEN_MODEL": MODEL}


def test_init_config_set_and_sync_never_replace_another_services_key(run, home) -> None:
    path = mixed_server(home)
    result = clean(run("init", "--allow-unlisted",
                       "--target", "mcp", "--yes", "--base-url", ROOT, "--model", MODEL, "--key-stdin",
                       input=SENTINEL_KEY))
    assert result.returncode == 0, result.output
    assert env_of(path) == {"OPENAI_BASE_URL": ROOT + "/v1", "OPENAI_API_KEY": SENTINEL_KEY,
                            "ANTHROPIC_API_KEY": USERS_ANTHROPIC}
    assert "ANTHROPIC_API_KEY is left alone: not TaoToken's key (no ANTHROPIC_BASE_URL is set, so the Anthropic " \
           "SDK sends it to api.anthropic.com)" in " ".join(result.output.split())

    result = clean(run("config", "set", "api_key", "-", "--yes", input=NEW_KEY))
    assert result.returncode == 0, result.output
    assert env_of(path)["OPENAI_API_KEY"] == NEW_KEY and env_of(path)["ANTHROPIC_API_KEY"] == USERS_ANTHROPIC

    data = json.loads(path.read_text())
    data["mcpServers"]["both"]["env"]["OPENAI_API_KEY"] = OLD_KEY  # pasted back from an old guide
    path.write_text(json.dumps(data, indent=2) + "\n")
    result = clean(run("config", "sync", "--yes"))
    assert result.returncode == 0, result.output
    assert env_of(path) == {"OPENAI_BASE_URL": ROOT + "/v1", "OPENAI_API_KEY": NEW_KEY,
                            "ANTHROPIC_API_KEY": USERS_ANTHROPIC}

    checks = {c["id"]: c for c in json.loads(clean(run("doctor", "--json", "--offline", "--check", "mcp")).stdout)
              ["checks"]}
    assert checks["mcp.key"]["status"] == "ok", checks["mcp.key"]  # the user's Anthropic key is not "stale"
    assert any("ANTHROPIC_API_KEY is left alone: not TaoToken's key" in d for d in checks["mcp.servers"]["details"])


def test_a_key_taotoken_wrote_is_followed_whatever_variable_holds_it(run, home) -> None:
    assert clean(run("init", "--allow-unlisted",
                     "--yes", "--base-url", ROOT, "--model", MODEL, "--key-stdin", input=OLD_KEY)) \
        .returncode == 0  # taotoken wrote OLD_KEY (its own config only)
    path = write(home / ".claude.json", json.dumps({"mcpServers": {"pasted": {"command": "x", "env": {
        "TAOTOKEN_MODEL": MODEL, "ANTHROPIC_API_KEY": OLD_KEY}}}}))  # the user pasted it there later
    result = clean(run("config", "set", "api_key", "-", "--yes", input=NEW_KEY))
    assert result.returncode == 0, result.output
    assert env_of(path, "pasted")["ANTHROPIC_API_KEY"] == NEW_KEY  # it held taotoken's key: it is TaoToken's


def test_init_for_one_client_keeps_a_taotoken_mcp_server_in_step(run, home) -> None:
    path = write(home / ".claude.json", json.dumps({"mcpServers": {"tt": {"command": "tt-mcp", "env": {
        "TAOTOKEN_BASE_URL": ROOT, "TAOTOKEN_API_KEY": OLD_KEY}}}}, indent=2) + "\n")
    result = clean(run("init", "--allow-unlisted",
                       "--target", "claude-code", "--yes", "--base-url", ROOT, "--model", MODEL,
                       "--key-stdin", input=SENTINEL_KEY))
    assert result.returncode == 0, result.output
    assert "mcp: added: MCP servers pointing at TaoToken hold other values" in " ".join(result.output.split())
    assert env_of(path, "tt") == {"TAOTOKEN_BASE_URL": ROOT, "TAOTOKEN_API_KEY": SENTINEL_KEY}
    assert clean(run("init", "--undo")).returncode == 0
    assert env_of(path, "tt")["TAOTOKEN_API_KEY"] == OLD_KEY


def test_a_project_env_variable_pointed_elsewhere_stays_the_users(run, home) -> None:
    assert clean(run("init", "--allow-unlisted",
                     "--target", "project-env", "--yes", "--base-url", ROOT, "--model", MODEL, "--key-stdin",
                     input=SENTINEL_KEY)).returncode == 0
    env_file = home / ".env.taotoken"
    text = env_file.read_text().replace(f"export OPENAI_BASE_URL={ROOT}/v1",
                                        "export OPENAI_BASE_URL=https://api.openai.com/v1")
    text = text.replace(f"export OPENAI_API_KEY={SENTINEL_KEY}", "export OPENAI_API_KEY=sk-proj-USERS0123456789")
    assert "api.openai.com" in text and "sk-proj-USERS" in text, text
    env_file.write_text(text)
    result = clean(run("config", "set", "api_key", "-", "--yes", input=NEW_KEY))
    assert result.returncode == 0, result.output
    after = env_file.read_text()
    assert "export OPENAI_API_KEY=sk-proj-USERS0123456789" in after and "https://api.openai.com/v1" in after
    assert f"export TAOTOKEN_API_KEY={NEW_KEY}" in after


def test_config_set_keeps_a_taotoken_mcp_server_in_step_when_no_init_recorded_it(run, home) -> None:
    """No init ever ran (the triple was set with `config set`): a server pointing at TaoToken is a copy all the same,
    and it follows the key and each base URL change (the host it is on is the one taotoken used until now)."""
    for name, value in (("base_url", ROOT), ("model", MODEL)):
        assert clean(run("config", "set", name, value)).returncode == 0
    assert clean(run("config", "set", "api_key", "-", input=OLD_KEY)).returncode == 0
    path = write(home / ".claude.json", json.dumps({"mcpServers": {"tt": {"command": "tt-mcp", "env": {
        "TAOTOKEN_BASE_URL": ROOT, "TAOTOKEN_API_KEY": OLD_KEY}}}}, indent=2) + "\n")
    assert not (home / ".config" / "taotoken" / "copies.json").exists()
    result = clean(run("config", "set", "api_key", "-", "--yes", input=NEW_KEY))
    assert result.returncode == 0 and env_of(path, "tt")["TAOTOKEN_API_KEY"] == NEW_KEY, result.output
    for root in ("https://gw-b.example/api", "https://gw-c.example/api"):  # each change moves it on
        assert clean(run("config", "set", "base_url", root, "--yes")).returncode == 0
        assert env_of(path, "tt")["TAOTOKEN_BASE_URL"] == root
    # without a terminal and without --yes only taotoken's own file changes, and the stale copy is named
    result = clean(run("config", "set", "api_key", "-", input=SENTINEL_KEY))
    assert env_of(path, "tt")["TAOTOKEN_API_KEY"] == NEW_KEY
    assert "1 copy still holds the old values: ~/.claude.json" in " ".join(result.stderr.split())


def test_a_projects_own_env_file_is_named_as_stale_never_written(run, home) -> None:
    """.env is the user's (often committed): init and `config set` never write it, but a TaoToken key left there is
    named in the run's output."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(home)], check=True)
    dotenv = write(home / ".env", f"OPENAI_BASE_URL={ROOT}/v1\nOPENAI_API_KEY={OLD_KEY}\nDEBUG=1\n", 0o644)
    before = dotenv.read_bytes()
    result = clean(run("init", "--allow-unlisted", "--target", "claude-code", "--yes", "--base-url", ROOT,
                       "--model", MODEL, "--key-stdin", input=OLD_KEY))
    assert result.returncode == 0 and ".env:" not in result.output  # it holds the key init writes: in step
    result = clean(run("config", "set", "api_key", "-", "--yes", input=NEW_KEY))
    text = " ".join(result.output.split())
    assert f"{dotenv}: OPENAI_API_KEY still holds the old value; taotoken does not write this file" in text, text
    result = clean(run("init", "--allow-unlisted", "--target", "claude-code", "--yes", "--base-url", ROOT,
                       "--model", MODEL, "--key-stdin", input=NEW_KEY))
    assert f"{dotenv}: OPENAI_API_KEY still holds the old value" in " ".join(result.output.split())
    assert dotenv.read_bytes() == before


# ------------------------------------------------------------------ Gemini CLI and OpenClaw follow the same rule

USERS_GOOGLE = "AIzaSyUSERSownGOOGLEkey0123456789abcdefgh"  # the user's own Gemini API key for Google


def _gemini_and_openclaw(home: Path, base: str, key: str, *, openclaw_base: str | None = None) -> tuple[Path, Path]:
    gemini = write(home / ".gemini" / ".env", f"# mine\nGOOGLE_GEMINI_BASE_URL={base}\nGEMINI_API_KEY={key}\n", 0o600)
    write(home / ".gemini" / "settings.json", json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}},
                                                          "model": {"name": MODEL}}) + "\n")
    openclaw = write(home / ".openclaw" / "openclaw.json", json.dumps({"models": {"providers": {
        "taotoken": {"baseUrl": openclaw_base or base + "/v1", "apiKey": key, "api": "openai-completions",
                     "models": [{"id": MODEL, "name": MODEL}]},
        "openai": {"baseUrl": "https://api.openai.com/v1", "apiKey": "sk-proj-USERS0123456789"}}},
        "agents": {"defaults": {"model": {"primary": f"taotoken/{MODEL}"}}}}, indent=2) + "\n", 0o600)
    return gemini, openclaw


def _gemini_key(path: Path) -> str | None:
    from taotoken_cli.core.formats import dotenv

    return dotenv.values(path.read_text()).get("GEMINI_API_KEY")


def _openclaw_provider(path: Path, name: str = "taotoken") -> dict:
    return json.loads(path.read_text())["models"]["providers"][name]


def test_gemini_cli_and_openclaw_files_pointing_at_taotoken_are_kept_in_step_with_no_init_record(run, home,
                                                                                                mock_gateway):
    """Written by hand from the guides (no init ever ran): a file pointing at TaoToken is a copy all the same, and a
    key change reaches it; the user's other provider and lines stay as they were."""
    from taotoken_cli.cmd.mock import MockOptions

    mock = mock_gateway(MockOptions(any_key=True))
    for name, value in (("base_url", mock.url), ("model", MODEL)):
        assert clean(run("config", "set", name, value)).returncode == 0
    assert clean(run("config", "set", "api_key", "-", input=OLD_KEY)).returncode == 0
    gemini, openclaw = _gemini_and_openclaw(home, mock.url, OLD_KEY)
    assert not (home / ".config" / "taotoken" / "copies.json").exists()
    result = clean(run("config", "set", "api_key", "-", "--yes", input=NEW_KEY))
    assert result.returncode == 0, result.output
    assert _gemini_key(gemini) == NEW_KEY and gemini.read_text().startswith("# mine\n")
    assert _openclaw_provider(openclaw)["apiKey"] == NEW_KEY
    assert _openclaw_provider(openclaw, "openai")["apiKey"] == "sk-proj-USERS0123456789"


def test_gemini_cli_and_openclaw_pointed_elsewhere_since_init_are_left_alone_and_named(run, home, mock_gateway):
    """init wrote both; then the user pointed Gemini CLI at Google with their own key and OpenClaw's provider at
    another service. config set, config sync and an init of other targets leave those keys alone (replacing them
    would destroy the user's key and send TaoToken's to that service) and say so; naming the target writes it."""
    from taotoken_cli.cmd.mock import MockOptions

    mock = mock_gateway(MockOptions(any_key=True))
    result = clean(run("init", "--yes", "--target", "gemini-cli", "--target", "openclaw", "--base-url", mock.url,
                       "--model", MODEL, "--key-stdin", input=OLD_KEY))
    assert result.returncode == 0, result.output
    gemini = write(home / ".gemini" / ".env", f"GEMINI_API_KEY={USERS_GOOGLE}\n", 0o600)  # Google's own endpoint
    openclaw = home / ".openclaw" / "openclaw.json"
    data = json.loads(openclaw.read_text())
    data["models"]["providers"]["taotoken"].update(baseUrl="https://api.other.example/v1", apiKey=USERS_ANTHROPIC)
    openclaw.write_text(json.dumps(data, indent=2) + "\n")
    before = gemini.read_bytes(), openclaw.read_bytes()
    for argv, stdin in ((("config", "set", "api_key", "-", "--yes"), NEW_KEY), (("config", "sync", "--yes"), ""),
                        (("init", "--yes", "--target", "claude-code", "--base-url", mock.url, "--model", MODEL,
                          "--key-stdin"), NEW_KEY)):
        result = clean(run(*argv, input=stdin), USERS_GOOGLE)
        text = " ".join(result.output.split())
        assert result.returncode == 0, text
        assert (gemini.read_bytes(), openclaw.read_bytes()) == before, argv
        assert (f"{gemini}: GEMINI_API_KEY is left alone: not TaoToken's key (no GOOGLE_GEMINI_BASE_URL is set, so "
                "Gemini CLI sends it to generativelanguage.googleapis.com)") in text, (argv, text)
        assert (f"{openclaw}: models.providers.taotoken.apiKey is left alone: not TaoToken's key (baseUrl = "
                "'https://api.other.example/v1' does not point at TaoToken)") in text, (argv, text)
    # named: the user asks for TaoToken there again
    result = clean(run("init", "--yes", "--target", "gemini-cli", "--base-url", mock.url, "--model", MODEL,
                       "--key-stdin", input=NEW_KEY), USERS_GOOGLE)
    assert result.returncode == 0 and _gemini_key(gemini) == NEW_KEY, result.output


def test_gemini_variables_in_an_mcp_server_follow_the_rule() -> None:
    hosts = taotoken_hosts(ROOT)
    triple = Triple(ROOT, SENTINEL_KEY, MODEL)
    ours = read_env({"GOOGLE_GEMINI_BASE_URL": ROOT, "GEMINI_API_KEY": OLD_KEY}, hosts)
    assert updates(ours, triple) == {"GEMINI_API_KEY": SENTINEL_KEY}
    theirs = read_env({"OPENAI_BASE_URL": ROOT + "/v1", "OPENAI_API_KEY": OLD_KEY, "GEMINI_API_KEY": USERS_GOOGLE},
                      hosts)
    assert updates(theirs, triple) == {"OPENAI_API_KEY": SENTINEL_KEY} and set(theirs.foreign) == {"GEMINI_API_KEY"}
