"""doctor's proxy claims follow each client's real rule (core/clients/proxy_rules.py, checked against the real
clients in tests/real_clients): an HTTPS_PROXY that taotoken's own requests to an http:// gateway ignore is still
the proxy Claude Code sends them through."""

from __future__ import annotations

import json
import socket

from tests.conftest import flat, own_config, write


def dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_dead_https_proxy_fails_for_claude_code_on_a_loopback_gateway(cli, home, mock_gateway):
    mock = mock_gateway()
    own_config(home, mock.url)
    (home / ".claude").mkdir()
    proxy = f"http://127.0.0.1:{dead_port()}"
    result = cli("doctor", "--check", "env.proxy", "--check", "net.proxy", "-v", "--json",
                 env={"HTTPS_PROXY": proxy}).assert_clean()
    found = {f["id"]: f for f in json.loads(result.stdout)["checks"]}
    assert found["env.proxy"]["status"] == "warn"
    assert f"Claude Code sends requests to 127.0.0.1 through {proxy}" in found["env.proxy"]["message"]
    assert found["net.proxy"]["status"] == "fail"
    assert "Claude Code use it for 127.0.0.1" in found["net.proxy"]["message"]
    assert any("NO_PROXY=127.0.0.1" in fix for fix in found["net.proxy"]["fixes"])


def test_codex_takes_http_proxy_for_an_http_gateway_not_https_proxy(cli, home, mock_gateway):
    mock = mock_gateway()
    own_config(home, mock.url)
    (home / ".codex").mkdir()
    result = cli("doctor", "--check", "env.proxy", "-v", env={"HTTPS_PROXY": "http://127.0.0.1:7890"}).assert_clean()
    assert "Codex sends" not in flat(result.stdout)


def test_claude_settings_proxy_used_for_a_loopback_gateway_is_a_failure(cli, home, mock_gateway):
    """The issue's case: settings.json's env holds HTTPS_PROXY to a proxy that is not running."""
    mock = mock_gateway()
    own_config(home, mock.url)
    port = dead_port()
    write(home / ".claude" / "settings.json", json.dumps({"env": {
        "ANTHROPIC_BASE_URL": mock.url, "HTTPS_PROXY": f"http://127.0.0.1:{port}"}}))
    result = cli("doctor", "--check", "claude.proxy", "--json").assert_clean()
    finding = json.loads(result.stdout)["checks"][0]
    assert finding["status"] == "fail", finding
    assert f"127.0.0.1:{port}" in finding["message"] and "local proxy failed" in finding["message"]
    assert any('"NO_PROXY": "127.0.0.1"' in fix for fix in finding["fixes"])


def _checks(result) -> dict:
    return {f["id"]: f for f in json.loads(result.stdout)["checks"]}


def test_a_bashrc_proxy_for_a_loopback_gateway_is_said_for_codex_and_cline_and_fix_exempts_it_in_env_sh(cli, home,
                                                                                                   mock_gateway):
    """env.sh written before init exempted a gateway on this machine (the two OPENAI_* exports only), and
    HTTP_PROXY in ~/.bashrc: Codex's and Cline's real rules send the requests to the proxy. doctor says so, for
    each, with the line; --fix adds the exemption to env.sh (the key line untouched); then both go direct."""
    mock = mock_gateway()
    own_config(home, mock.url)
    (home / ".codex").mkdir()
    (home / ".cline" / "data" / "settings").mkdir(parents=True)
    write(home / ".bashrc", "export HTTP_PROXY=http://127.0.0.1:7890\n"
                            "[ -f ~/.config/taotoken/env.sh ] && . ~/.config/taotoken/env.sh  # taotoken-env\n", 0o644)
    old = "export OPENAI_BASE_URL=http://127.0.0.1:9/v1\nexport OPENAI_API_KEY=sk-envSHkey0123456789abcdef\n"
    env_sh = write(home / ".config" / "taotoken" / "env.sh", old, 0o600)
    found = _checks(cli("doctor", "--check", "codex.proxy", "--check", "cline.proxy", "--json").assert_clean())
    for check, label in (("codex.proxy", "Codex"), ("cline.proxy", "Cline")):
        assert found[check]["status"] == "warn", found[check]
        assert (f"{label} sends its requests to the gateway on this machine through http://127.0.0.1:7890 "
                "(HTTP_PROXY, ~/.bashrc:1)") in found[check]["message"], found[check]
    fixed = cli("doctor", "--check", "codex.proxy", "--check", "cline.proxy", "--fix", "--yes").assert_clean()
    assert fixed.returncode in (0, 1), fixed.output
    text = env_sh.read_text()
    assert text.startswith(old) and "*,127.0.0.1,*" in text, text
    assert text.count("# The gateway is on this machine") == 1, text  # both repairs: added once
    found = _checks(cli("doctor", "--check", "codex.proxy", "--check", "cline.proxy", "--json").assert_clean())
    assert {found[c]["status"] for c in ("codex.proxy", "cline.proxy")} == {"ok"}, found
    assert "env.sh adds 127.0.0.1 to NO_PROXY" in found["codex.proxy"]["message"]


def test_no_shell_proxy_codex_goes_direct_and_a_remote_gateway_is_skipped(cli, home, mock_gateway):
    mock = mock_gateway()
    own_config(home, mock.url)
    (home / ".codex").mkdir()
    found = _checks(cli("doctor", "--check", "codex.proxy", "--json").assert_clean())["codex.proxy"]
    assert found["status"] == "ok" and "go direct" in found["message"], found
    own_config(home, "https://gateway.example/api")
    found = _checks(cli("doctor", "--check", "codex.proxy", "--json", "--offline",
                        env={"HTTP_PROXY": "http://127.0.0.1:7890"}).assert_clean())["codex.proxy"]
    assert found["status"] == "skipped", found


# The clients added after Codex and Cline: each its own <client>.proxy check from the same body, named like its other
# checks (qwen.settings -> qwen.proxy), skipped as they are when the client is not installed.
NEWER = {"gemini.proxy": ("Gemini CLI", ".gemini", "no ~/.gemini"), "openclaw.proxy": ("OpenClaw", ".openclaw",
                                                                                      "no ~/.openclaw"),
         "opencode.proxy": ("OpenCode", ".config/opencode", "no ~/.config/opencode"),
         "qwen.proxy": ("Qwen Code", ".qwen", "no ~/.qwen")}


def _doctor(cli, *args: str, env: dict | None = None) -> dict:
    checks = [arg for check in NEWER for arg in ("--check", check)]
    return _checks(cli("doctor", *checks, "--json", *args, env=env).assert_clean())


def test_each_newer_client_has_its_proxy_check_skipped_warned_and_fixed(cli, home, mock_gateway):
    mock = mock_gateway()
    own_config(home, mock.url)
    found = _doctor(cli)
    for check, (label, _folder, where) in NEWER.items():  # none installed: skipped, saying where doctor looked
        assert found[check]["status"] == "skipped", found[check]
        assert f"{label} not found ({where}" in found[check]["message"], found[check]
    for _label, folder, _where in NEWER.values():
        (home / folder).mkdir(parents=True)
    found = _doctor(cli)  # installed, no proxy anywhere: direct
    assert {found[c]["status"] for c in NEWER} == {"ok"}, found
    write(home / ".bashrc", "export HTTP_PROXY=http://127.0.0.1:7890\nexport NO_PROXY=corp.example\n", 0o644)
    found = _doctor(cli)  # a proxy in ~/.bashrc and no env.sh: each warned, with the command keeping corp.example
    for check, (label, _folder, _where) in NEWER.items():
        assert found[check]["status"] == "warn", found[check]
        assert (f"{label} sends its requests to the gateway on this machine through http://127.0.0.1:7890 "
                "(HTTP_PROXY, ~/.bashrc:1)") in found[check]["message"], found[check]
        commands = [c["line"] for step in found[check]["fix_steps"] for c in step["commands"]]
        assert commands == ["taotoken init --target shell", "export NO_PROXY=corp.example,127.0.0.1"], commands
    fish = _doctor(cli, env={"SHELL": "/usr/bin/fish"})["qwen.proxy"]  # the user's shell's syntax
    assert [c["line"] for step in fish["fix_steps"] for c in step["commands"]][-1] == \
        "set -gx NO_PROXY corp.example,127.0.0.1", fish
    write(home / ".bashrc", "export HTTP_PROXY=http://127.0.0.1:7890\n"
                            "[ -f ~/.config/taotoken/env.sh ] && . ~/.config/taotoken/env.sh  # taotoken-env\n", 0o644)
    write(home / ".config" / "taotoken" / "env.sh", "export OPENAI_API_KEY=sk-envSHkey0123456789abcdef\n", 0o600)
    fixed = cli("doctor", *[a for c in NEWER for a in ("--check", c)], "--fix", "--yes").assert_clean()
    assert fixed.returncode in (0, 1), fixed.output
    found = _doctor(cli)
    assert {found[c]["status"] for c in NEWER} == {"ok"}, found
    assert "env.sh adds 127.0.0.1 to NO_PROXY" in found["opencode.proxy"]["message"]


def test_every_client_started_from_a_shell_has_a_proxy_check(run, home):
    """One list (proxy_rules.proxied_clients, from the proxy rules and the clients' labels) and the checks agree."""
    from taotoken_cli.cmd.doctor.registry import all_checks
    from taotoken_cli.core.clients.proxy_rules import proxied_clients

    prefix = {"gemini-cli": "gemini", "qwen-code": "qwen"}
    ids = {check.id for check in all_checks() if check.id.endswith(".proxy")}
    assert {f"{prefix.get(name, name)}.proxy" for name in proxied_clients()} | {"claude.proxy", "env.proxy",
                                                                                  "net.proxy"} == ids
    assert list(proxied_clients().values()) == ["Codex", "Cline", "Gemini CLI", "OpenClaw", "OpenCode", "Qwen Code"]
