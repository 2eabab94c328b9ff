"""init ends in a working state or says why not (issue 23, item 3): a Codex legacy profile is moved in the same
plan (shown, applied with --yes, undone by --undo); one that cannot be moved is named instead of "next: check"."""

from __future__ import annotations

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
