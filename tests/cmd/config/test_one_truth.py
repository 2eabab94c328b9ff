"""One truth for the triple: after `taotoken init`, every change of base URL, key or model reaches every copy init
wrote — or the tool names the stale copies and the one command that syncs them — and every printed fix, followed
as printed on a setup made by init, makes its problem go away.

Real parts: init writes real files in a temporary HOME, the mock gateway answers on 127.0.0.1, shells are real
(`bash -c '. env.sh …'`), and fixes are followed through the real CLI (a pseudo-terminal where they ask).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from taotoken_cli.core.settings import tomllib
from tests.conftest import SENTINEL_KEY, PtySession, needs_posix

MODEL, OTHER = "gpt-4o-mini", "claude-sonnet-4-5"
NEW_KEY = "sk-NEWkeyNEWkey0123456789abcdefXYZW"


@pytest.fixture
def setup(cli, home: Path, mock_gateway):
    """A machine set up by `taotoken init --all`, and the values each client now holds."""
    mock = mock_gateway(models=(MODEL, OTHER), any_key=True)
    result = cli("init", "--all", "--yes", "--base-url", mock.url, "--model", MODEL, "--key-stdin",
                 input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 0, result.output
    return mock


def held(home: Path) -> dict[str, tuple[str | None, str | None]]:
    """(model, key) as each copy holds them."""
    claude = json.loads((home / ".claude/settings.json").read_text())["env"]
    codex = tomllib.loads((home / ".codex/config.toml").read_text())
    cline = json.loads((home / ".cline/data/settings/providers.json").read_text())["providers"]["openai-compatible"]
    own = tomllib.loads((home / ".config/taotoken/config.toml").read_text())["profiles"]["default"]
    links = (home / ".config/taotoken/cc-switch-import.txt").read_text()
    env_sh = shell_env(home)
    return {"own": (own["model"], own["api_key"]),
            "claude": (claude["ANTHROPIC_MODEL"], claude["ANTHROPIC_AUTH_TOKEN"]),
            "codex": (codex["model"], env_sh.get(codex["model_providers"]["taotoken"]["env_key"])),
            "cline": (cline["settings"]["model"], cline["settings"]["apiKey"]),
            "links": (MODEL if f"model={MODEL}&" in links else OTHER if f"model={OTHER}" in links else None,
                      SENTINEL_KEY if SENTINEL_KEY in links else NEW_KEY if NEW_KEY in links else None)}


def shell_env(home: Path) -> dict[str, str]:
    """The variables a new shell has after its ~/.bashrc (which init made source env.sh)."""
    needs_posix("bash sourcing ~/.bashrc (on Windows init's shell target is the user environment and PowerShell)")
    out = subprocess.run(["bash", "-c", f". {home}/.bashrc >/dev/null 2>&1; env -0"], capture_output=True,
                         env={"HOME": str(home), "PATH": os.environ["PATH"]}, check=True).stdout.decode()
    return dict(item.split("=", 1) for item in out.split("\0") if "=" in item)


def test_config_set_with_yes_reaches_every_copy_and_undo_restores_them(cli, home, setup) -> None:
    before = held(home)
    assert set(before.values()) == {(MODEL, SENTINEL_KEY)}
    result = cli("config", "set", "model", OTHER, "--yes").assert_clean()
    assert result.returncode == 0, result.output
    assert all(model == OTHER for model, _ in held(home).values()), held(home)
    assert "undo everything this run changed: taotoken init --undo" in result.stdout
    assert cli("init", "--undo").assert_clean().returncode == 0
    assert held(home) == before


def test_without_a_terminal_only_the_own_config_changes_and_the_stale_copies_are_named(cli, home, setup) -> None:
    result = cli("config", "set", "model", OTHER).assert_clean()  # a script: no terminal, no --yes
    assert result.returncode == 0, result.output
    assert held(home)["own"][0] == OTHER and held(home)["claude"][0] == MODEL
    assert "copies still hold the old values: ~/.claude/settings.json" in result.stderr
    assert "taotoken config sync --yes" in result.stderr
    doctor = json.loads(cli("doctor", "--json", "--offline", "--check", "config.copies").stdout)
    assert doctor["checks"][0]["status"] == "warn" and "taotoken config sync" in doctor["checks"][0]["fixes"][0]
    synced = cli("config", "sync", "--yes").assert_clean()  # the one command the warning named
    assert synced.returncode == 0, synced.output
    assert all(model == OTHER for model, _ in held(home).values()), held(home)
    assert "nothing to do" in " ".join(cli("config", "sync").assert_clean().stdout.split())  # wrapped to the width
    doctor = json.loads(cli("doctor", "--json", "--offline", "--check", "config.copies").stdout)
    assert doctor["checks"][0]["status"] == "ok"


def test_a_new_key_typed_on_a_terminal_reaches_every_copy_after_one_confirmation(home, setup) -> None:
    with PtySession(["config", "set", "api_key", "-"], cwd=home) as session:
        session.expect(b"API key (input hidden): ")
        session.send(NEW_KEY.encode() + b"\n")
        session.expect(b"Apply these changes? [y/N] ")
        session.send(b"y\n")
        session.expect(b"undo everything this run changed")
    assert session.exit_code == 0, session.seen
    assert NEW_KEY.encode() not in session.seen and SENTINEL_KEY.encode() not in session.seen
    assert all(key == NEW_KEY for _, key in held(home).values()), held(home)
    assert b"open shells still have the old variables" in session.seen


def test_env_sh_never_shadows_a_later_change(cli, home, setup) -> None:
    old_shell = shell_env(home)  # a shell opened right after init
    assert not [name for name in old_shell if name.startswith("TAOTOKEN_")]
    assert cli("config", "set", "model", OTHER, "--yes").assert_clean().returncode == 0
    # The same old shell: taotoken follows the change at once.
    env = {name: old_shell[name] for name in old_shell if name.startswith(("OPENAI_", "HOME"))}
    shown = cli("config", "show", "--json", env=env).assert_clean()
    assert json.loads(shown.stdout)["values"]["model"]["value"] == OTHER


def test_init_again_keeps_every_recorded_copy_in_step(cli, home, setup) -> None:
    result = cli("init", "--target", "cline", "--yes", "-v", "--model", OTHER).assert_clean()
    assert result.returncode == 0, result.output
    assert "claude-code: written by an earlier init, kept in step" in result.stdout
    assert all(model == OTHER for model, _ in held(home).values()), held(home)


def test_doctor_fix_of_the_config_reaches_the_copies(cli, home, setup) -> None:
    config = home / ".config/taotoken/config.toml"
    config.write_text(config.read_text().replace(f'model = "{MODEL}"', f'model = " {OTHER} "'))
    fixed = cli("doctor", "--check", "config", "--fix", "--yes").assert_clean()  # the gateway lists OTHER: safe to sync
    assert "bring in step with taotoken's config" in fixed.stdout, fixed.stdout
    assert all(model == OTHER for model, _ in held(home).values()), held(home)


def test_a_typo_in_the_config_is_never_spread_into_working_copies(cli, home, setup) -> None:
    config = home / ".config/taotoken/config.toml"
    config.write_text(config.read_text().replace(f'model = "{MODEL}"', 'model = "gpt-4o-mnii"'))
    before = held(home)
    report = json.loads(cli("doctor", "--json", "--check", "config.copies").stdout)
    finding = report["checks"][0]
    assert finding["status"] == "warn" and "not synced" in finding["message"] and not finding["repairs"]
    assert "does not list taotoken's model gpt-4o-mnii" in finding["message"]
    cli("doctor", "--check", "config", "--check", "gateway", "--fix", "--yes").assert_clean()
    assert {k: v for k, v in held(home).items() if k != "own"} == {k: v for k, v in before.items() if k != "own"}
    offline = json.loads(cli("doctor", "--json", "--offline", "--check", "config.copies").stdout)["checks"][0]
    assert "not synced" in offline["message"] and not offline["repairs"]  # offline nothing is known


def test_a_removed_client_is_not_recreated_by_a_sync(cli, home, setup) -> None:
    import shutil

    shutil.rmtree(home / ".cline")
    assert cli("config", "set", "model", OTHER, "--yes").assert_clean().returncode == 0
    assert not (home / ".cline").exists()
    synced = cli("config", "sync", "--yes").assert_clean()
    assert "providers.json no longer exists: not recreated (`taotoken init --target cline`" in synced.stderr
    assert not (home / ".cline").exists()


def test_an_export_in_bashrc_is_named_by_the_fix_and_following_it_ends_the_override(cli, home, setup) -> None:
    needs_posix("~/.bashrc, which init's shell target writes (on Windows: the user environment and PowerShell)")
    bashrc = home / ".bashrc"
    bashrc.write_text(f'export TAOTOKEN_MODEL={OTHER}\n' + bashrc.read_text())
    env = {"TAOTOKEN_MODEL": OTHER}  # what a new shell now has
    report = json.loads(cli("doctor", "--json", "--offline", "--check", "env.taotoken", env=env).stdout)
    finding = report["checks"][0]
    assert finding["status"] == "warn" and "TAOTOKEN_MODEL" in finding["message"]
    fix = next(f for f in finding["fixes"] if "TAOTOKEN_MODEL" in f)
    assert "~/.bashrc:1" in fix and "delete that line" in fix
    # Follow the fix as printed: delete the line, open a new shell.
    bashrc.write_text("".join(bashrc.read_text().splitlines(keepends=True)[1:]))
    new_env = {"TAOTOKEN_MODEL": shell_env(home).get("TAOTOKEN_MODEL")}
    assert new_env["TAOTOKEN_MODEL"] is None
    report = json.loads(cli("doctor", "--json", "--offline", "--check", "env.taotoken", env=new_env).stdout)
    assert report["checks"][0]["status"] == "ok"


def test_a_rejected_key_from_an_export_is_fixed_where_it_is_exported(cli, home, mock_gateway) -> None:
    """check's 401 names the export that really supplies the key — not `config set api_key -`, which would not
    win over it — and following that fix as printed makes the check pass."""
    mock = mock_gateway(models=(MODEL,))
    assert cli("init", "--yes", "--base-url", mock.url, "--model", MODEL, "--key-stdin",
               input=SENTINEL_KEY).assert_clean().returncode == 0
    bashrc = home / ".bashrc"
    bashrc.write_text("export TAOTOKEN_API_KEY=sk-oldOLDoldOLD0123456789\n")
    failed = cli("check", env=shell_env(home)).assert_clean()
    assert failed.returncode == 4 and "auth.invalid_key" in failed.stderr
    assert "~/.bashrc:1" in failed.stderr and "config set api_key" not in failed.stderr, failed.stderr
    # Follow it: set the right key there (or delete the line), then a new shell.
    bashrc.write_text(f"export TAOTOKEN_API_KEY={SENTINEL_KEY}\n")
    assert cli("check", env=shell_env(home)).assert_clean().returncode == 0
