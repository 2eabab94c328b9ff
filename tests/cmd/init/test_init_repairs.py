"""init ends in a working state or says why not (issue 23, item 3): a Codex legacy profile is moved in the same
plan (shown, applied with --yes, undone by --undo); one that cannot be moved is named instead of "next: check"."""

from __future__ import annotations

import pytest

from taotoken_cli.core.base.masking import mask_key
from tests.conftest import SENTINEL_KEY, write

LEGACY = 'model = "o3"\nprofile = "work"  # the one I use\n\n[profiles.work]\nmodel = "gpt-5"  # fast\n'


def init_codex(cli):
    return cli("init", "--yes", "--base-url", "http://127.0.0.1:9/api", "--model", "gpt-4o-mini", "--key-stdin",
               "--target", "codex", "--codex-auth", "auth-json", input=SENTINEL_KEY).assert_clean()


def test_init_moves_codexs_legacy_profile_and_ends_working(cli, home):
    config = write(home / ".codex" / "config.toml", LEGACY, 0o644)
    result = init_codex(cli)
    assert result.returncode == 0, result.output
    text = config.read_text()
    assert "[profiles" not in text and "profile =" not in text and 'model_provider = "taotoken"' in text
    moved = (home / ".codex" / "work.config.toml").read_text()
    assert moved.startswith("# moved from [profiles.work]") and 'model = "gpt-5"  # fast' in moved
    assert "next: taotoken check" in result.stdout
    assert "refuses to start" not in result.output.replace("Codex 0.134+ refuses", "")
    undo = cli("init", "--undo").assert_clean()
    assert undo.returncode == 0 and config.read_text() == LEGACY
    assert not (home / ".codex" / "work.config.toml").exists()


def test_init_says_why_not_when_the_profile_cannot_be_moved(cli, home):
    write(home / ".codex" / "config.toml", LEGACY, 0o644)
    write(home / ".codex" / "work.config.toml", "# mine already\n", 0o644)  # init does not overwrite it
    result = init_codex(cli)
    assert result.returncode == 1, result.output
    assert "next: taotoken check" not in result.output
    assert "not working yet: Codex will refuse to start" in " ".join(result.stderr.split())


# ------------------------------------------------------------------------------ Claude Code (its env block)

LOOPBACK = "http://127.0.0.1:9/api"


def init_claude(cli, base: str = LOOPBACK, *extra: str, **env: str):
    return cli("init", "--yes", "--base-url", base, "--model", "gpt-4o-mini", "--key-stdin", "--target", "claude-code",
               *extra, input=SENTINEL_KEY, env=env or None).assert_clean()


def claude_env(home) -> dict:
    import json

    return json.loads((home / ".claude" / "settings.json").read_text())["env"]


def test_a_proxy_claude_code_would_use_for_a_loopback_gateway_gets_no_proxy_in_the_same_block(cli, home):
    write(home / ".claude" / "settings.json", '{"env": {"HTTPS_PROXY": "http://127.0.0.1:7890", '
                                              '"NO_PROXY": "corp.example"}}\n')
    result = init_claude(cli)
    assert result.returncode == 0 and "next: taotoken check" in result.stdout, result.output
    env = claude_env(home)
    assert env["NO_PROXY"] == "corp.example,127.0.0.1" and env["HTTPS_PROXY"] == "http://127.0.0.1:7890"
    assert "HTTPS_PROXY=http://127.0.0.1:7890 would carry Claude Code's requests" in " ".join(result.stdout.split())
    again = init_claude(cli)  # the repair holds: nothing more to change
    assert "already up to date" in again.stdout, again.output


def test_a_shell_proxy_is_exempted_for_claude_code_too_but_a_remote_gateway_is_left_to_the_proxy(cli, home):
    init_claude(cli, LOOPBACK, HTTP_PROXY="http://10.0.0.2:3128")  # Claude Code takes HTTP_PROXY for any gateway
    assert claude_env(home)["NO_PROXY"] == "127.0.0.1"
    (home / ".claude" / "settings.json").unlink()
    init_claude(cli, "https://taotoken.net/api", HTTPS_PROXY="http://127.0.0.1:7890")
    assert "NO_PROXY" not in claude_env(home)  # going through a proxy to a remote gateway is the user's choice


def test_a_provider_switch_in_the_env_block_is_removed(cli, home):
    write(home / ".claude" / "settings.json", '{"env": {"CLAUDE_CODE_USE_VERTEX": "true", "OTHER": "1"}}\n')
    result = init_claude(cli)
    assert result.returncode == 0, result.output
    assert "CLAUDE_CODE_USE_VERTEX" not in claude_env(home) and claude_env(home)["OTHER"] == "1"
    assert "removed env.CLAUDE_CODE_USE_VERTEX ('true'): with it Claude Code talks to Google Vertex AI" in " ".join(
        result.stdout.split())


def test_a_provider_switch_exported_in_a_startup_file_is_named_by_line_and_init_says_not_working(cli, home):
    write(home / ".bashrc", "export PATH=$PATH:~/bin\nexport CLAUDE_CODE_USE_BEDROCK=1\n", 0o644)
    dry = cli("init", "--dry-run", "--base-url", LOOPBACK, "--model", "m", "--key-stdin", "--target", "claude-code",
              input=SENTINEL_KEY).assert_clean()
    assert "not working yet: Claude Code started from a new terminal talks to Amazon Bedrock" in " ".join(
        dry.stderr.split())  # said before anything is written
    result = init_claude(cli)
    text = " ".join(result.output.split())
    assert result.returncode == 1 and "next: taotoken check" not in text, result.output
    assert "CLAUDE_CODE_USE_BEDROCK=1 is exported in ~/.bashrc:2; fix: delete that line" in text
    assert (home / ".bashrc").read_text().endswith("export CLAUDE_CODE_USE_BEDROCK=1\n")  # the user's file: named only


def test_a_provider_switch_in_this_shell_is_named_with_its_fix(cli, home):
    result = init_claude(cli, LOOPBACK, CLAUDE_CODE_USE_FOUNDRY="yes")
    text = " ".join(result.output.split())
    assert result.returncode == 1 and "Claude Code talks to Microsoft Foundry, not the gateway" in text
    assert "`unset CLAUDE_CODE_USE_FOUNDRY` in the shell that starts Claude Code" in text


# ------------------------------------------------------- start-up lines that outvote env.sh (Codex reads its key there)

OLD_KEY = "sk-OLDkeyFROMbashrc0123456789abcdEF"


def init_codex_shell(cli, *targets: str):
    return cli("init", "--yes", "--base-url", LOOPBACK, "--model", "gpt-4o-mini", "--key-stdin",
               *(arg for target in targets for arg in ("--target", target)), input=SENTINEL_KEY,
               env={"SHELL": "/bin/bash"}).assert_clean(OLD_KEY)


def test_a_later_bashrc_export_of_an_old_key_is_commented_out_and_undo_puts_it_back(cli, home):
    """The marked line an earlier init added, then the user's old export below it: every new shell would give Codex
    the old key. init comments that one line out (named by file and line), keeps every other byte, and the undo
    brings it back."""
    rc = home / ".bashrc"
    assert init_codex_shell(cli, "codex", "shell").returncode == 0
    mine = rc.read_text() + f"alias ll='ls -l'\nexport OPENAI_API_KEY={OLD_KEY}  # work\n"
    write(rc, mine, 0o644)
    number = mine.splitlines().index(f"export OPENAI_API_KEY={OLD_KEY}  # work") + 1
    result = init_codex_shell(cli, "codex", "shell")
    text = " ".join(result.output.split())
    assert result.returncode == 0 and "next: taotoken check" in result.stdout, text
    assert f"commented out ~/.bashrc:{number} (OPENAI_API_KEY={mask_key(OLD_KEY)})" in text, text
    lines = rc.read_text().splitlines()
    assert lines[number - 1].startswith(f"# export OPENAI_API_KEY={OLD_KEY}  # work  # taotoken-off")
    assert lines[:number - 1] == mine.splitlines()[:number - 1]
    assert cli("init", "--undo").assert_clean(OLD_KEY).returncode == 0
    assert rc.read_text() == mine


def test_an_export_init_cannot_comment_out_is_a_failure_for_codex_named_by_file_and_line(cli, home):
    """A key computed by the shell (`$(…)`) below the line that loads env.sh: init leaves it, and says that Codex
    started from a new terminal fails, where, and how to fix it; no "next: check", exit 1."""
    rc = home / ".bashrc"
    assert init_codex_shell(cli, "codex", "shell").returncode == 0
    write(rc, rc.read_text() + 'export OPENAI_API_KEY="$(cat ~/.openai-key)"\n', 0o644)
    number = len(rc.read_text().splitlines())
    before = rc.read_bytes()
    result = init_codex_shell(cli, "codex", "shell")
    text = " ".join(result.output.split())
    assert result.returncode == 1 and "next: taotoken check" not in result.output, text
    assert (f"Codex started from a new terminal fails: ~/.bashrc:{number} exports OPENAI_API_KEY=…, which new shells "
            "use instead of TaoToken's; fix: delete that line") in text, text
    assert rc.read_bytes() == before


def test_an_export_before_the_line_that_loads_env_sh_is_left_alone(cli, home):
    """Above init's line the old value is replaced by env.sh's in every new shell: nothing to say or do."""
    rc = write(home / ".bashrc", f"export OPENAI_API_KEY={OLD_KEY}\nexport OPENAI_BASE_URL=https://api.openai.com/v1\n",
               0o644)
    result = init_codex_shell(cli, "codex", "shell")
    assert result.returncode == 0 and "~/.bashrc:1" not in result.output and "~/.bashrc:2" not in result.output
    assert rc.read_text().startswith(f"export OPENAI_API_KEY={OLD_KEY}\n")


def test_a_later_base_url_export_is_commented_out_too(cli, home):
    rc = home / ".bashrc"
    assert init_codex_shell(cli, "shell").returncode == 0
    write(rc, rc.read_text() + "export OPENAI_BASE_URL=https://api.openai.com/v1\n", 0o644)
    result = init_codex_shell(cli, "shell")
    assert result.returncode == 0, result.output
    assert "OPENAI_BASE_URL='https://api.openai.com/v1'" in " ".join(result.output.split())
    assert rc.read_text().splitlines()[-1].startswith("# export OPENAI_BASE_URL=https://api.openai.com/v1  # taotoken")


# ------------------------------------------------------- Codex and Cline: a shell proxy and a gateway on this machine

def test_env_sh_exempts_a_loopback_gateway_and_keeps_the_shells_entries(cli, home):
    """Sourced by the real bash (twice, as a user who reruns it): NO_PROXY and no_proxy both hold the user's entries
    and the gateway's host once."""
    import subprocess

    write(home / ".bashrc", "export HTTPS_PROXY=http://127.0.0.1:7890\n", 0o644)
    result = init_codex_shell(cli, "codex", "shell")
    text = " ".join(result.output.split())
    assert result.returncode == 0, text
    assert ("Codex: HTTPS_PROXY=http://127.0.0.1:7890 (~/.bashrc:1) would carry its requests") not in text  # http://
    env_sh = home / ".config" / "taotoken" / "env.sh"
    shown = subprocess.run(["bash", "-c", '. "$1"; . "$1"; echo "$NO_PROXY|$no_proxy"', "-", str(env_sh)],
                           env={"PATH": "/usr/bin:/bin", "no_proxy": "corp.example"}, capture_output=True, text=True)
    assert shown.stdout.strip() == "corp.example,127.0.0.1|corp.example,127.0.0.1", shown


def test_without_the_shell_target_a_proxy_that_would_carry_clines_requests_is_a_warning_with_the_fix(cli, home):
    write(home / ".bashrc", "export HTTP_PROXY=http://127.0.0.1:7890\n", 0o644)
    result = cli("init", "--yes", "--base-url", LOOPBACK, "--model", "gpt-4o-mini", "--key-stdin", "--target", "cline",
                 input=SENTINEL_KEY).assert_clean()
    text = " ".join(result.output.split())
    assert result.returncode == 0, text
    assert ("warning: Cline: HTTP_PROXY=http://127.0.0.1:7890 (~/.bashrc:1) carries its requests to the gateway on "
            "this machine (Cline does not exempt loopback); fix: add --target shell (env.sh then adds 127.0.0.1 to "
            "NO_PROXY), or export NO_PROXY=127.0.0.1 in your shell start-up file") in text, text


def test_a_remote_gateway_through_a_proxy_is_the_users_choice(cli, home):
    write(home / ".bashrc", "export HTTPS_PROXY=http://127.0.0.1:7890\n", 0o644)
    result = cli("init", "--yes", "--base-url", "https://gateway.example/api", "--model", "gpt-4o-mini",
                 "--key-stdin", "--target", "cline", "--target", "shell", "--allow-unlisted", input=SENTINEL_KEY,
                 env={"TAOTOKEN_OFFLINE": "1"})
    assert result.returncode == 0, result.output
    assert "NO_PROXY" not in result.output and "NO_PROXY" not in (home / ".config/taotoken/env.sh").read_text()


# Every client started from a shell whose real rule does not exempt loopback (proxy_rules.proxied_clients), not only
# Codex and Cline: the ones added later, each named by its own label.
NEWER = {"gemini-cli": "Gemini CLI", "openclaw": "OpenClaw", "opencode": "OpenCode", "qwen-code": "Qwen Code"}


@pytest.mark.parametrize("client", list(NEWER))
def test_a_shell_proxy_is_said_for_each_newer_client_and_env_sh_exempts_the_host(cli, home, loopback_gateway, client):
    import subprocess

    write(home / ".bashrc", "export HTTP_PROXY=http://127.0.0.1:7890\nexport NO_PROXY=corp.example\n", 0o644)
    result = cli("init", "--yes", "-v", "--base-url", loopback_gateway.url, "--model", "gpt-4o-mini", "--key-stdin",
                 "--target", client, "--target", "shell", input=SENTINEL_KEY).assert_clean()
    text = " ".join(result.output.split())
    assert result.returncode == 0, text
    label = NEWER[client]
    assert (f"{label}: HTTP_PROXY=http://127.0.0.1:7890 (~/.bashrc:1) would carry its requests to the gateway on this "
            f"machine ({label} does not exempt loopback): env.sh now adds 127.0.0.1 to NO_PROXY") in text
    assert "Codex:" not in text and "Cline:" not in text  # only the targets are named
    env_sh = home / ".config" / "taotoken" / "env.sh"
    assert label in env_sh.read_text()  # the comment names every client it is for
    shown = subprocess.run(["bash", "-c", '. ~/.bashrc; . "$1"; echo "$NO_PROXY|$no_proxy"', "-", str(env_sh)],
                           env={"PATH": "/usr/bin:/bin", "HOME": str(home)}, capture_output=True, text=True)
    assert shown.stdout.strip() == "corp.example,127.0.0.1|corp.example,127.0.0.1", shown


def test_the_exemption_names_the_installed_clients_it_is_for(cli, home, loopback_gateway):
    (home / ".qwen").mkdir()  # Qwen Code installed; none of the others
    write(home / ".bashrc", "export HTTP_PROXY=http://127.0.0.1:7890\n", 0o644)
    result = cli("init", "--yes", "-v", "--base-url", loopback_gateway.url, "--model", "gpt-4o-mini", "--key-stdin",
                 "--target", "shell", input=SENTINEL_KEY).assert_clean()
    assert ("the gateway is on this machine, and these clients do not exempt loopback from a proxy: Qwen Code"
            in " ".join(result.output.split())), result.output


@pytest.mark.parametrize(("shell_path", "command"), [
    ("/bin/bash", "export NO_PROXY=corp.example,127.0.0.1 in your shell start-up file"),
    ("/usr/bin/fish", "set -gx NO_PROXY corp.example,127.0.0.1 in your shell start-up file"),
])
def test_without_the_shell_target_the_fix_is_a_command_in_the_users_shell_keeping_its_entries(
        cli, home, loopback_gateway, shell_path, command):
    write(home / ".bashrc", "export HTTP_PROXY=http://127.0.0.1:7890\nexport NO_PROXY=corp.example\n", 0o644)
    result = cli("init", "--yes", "--base-url", loopback_gateway.url, "--model", "gpt-4o-mini", "--key-stdin",
                 "--target", "opencode", input=SENTINEL_KEY, env={"SHELL": shell_path}).assert_clean()
    text = " ".join(result.output.split())
    assert result.returncode == 0, text
    assert ("warning: OpenCode: HTTP_PROXY=http://127.0.0.1:7890 (~/.bashrc:1) carries its requests to the gateway on "
            "this machine (OpenCode does not exempt loopback); fix: add --target shell (env.sh then adds 127.0.0.1 "
            f"to NO_PROXY), or {command}") in text, text


def test_claude_code_gets_no_proxy_in_its_env_block_for_a_proxy_a_new_terminal_has(cli, home, loopback_gateway):
    """HTTPS_PROXY in ~/.bashrc only (this shell does not have it): Claude Code started from a new terminal takes it,
    and its env block outranks the shell, so init exempts the gateway there, keeping the terminal's entries. No
    shell-level line for Claude Code: env.sh is not what carries its exemption."""
    import json

    write(home / ".bashrc", "export HTTPS_PROXY=http://127.0.0.1:7890\nexport NO_PROXY=corp.example\n", 0o644)
    result = cli("init", "--yes", "--base-url", loopback_gateway.url, "--model", "gpt-4o-mini", "--key-stdin",
                 "--target", "claude-code", "--target", "shell", input=SENTINEL_KEY).assert_clean()
    text = " ".join(result.output.split())
    assert result.returncode == 0, text
    assert "set env.NO_PROXY = 'corp.example,127.0.0.1'" in text, text
    assert "Claude Code: HTTPS_PROXY" not in text
    env = json.loads((home / ".claude" / "settings.json").read_text())["env"]
    assert env["NO_PROXY"] == "corp.example,127.0.0.1" and "HTTPS_PROXY" not in env
