"""`init --undo` after `route set` (issue 23, item 7): route set writes taotoken's own config at once, so the undo saw
an edited file and refused; its only way out, --force, threw the routes (and any other later edit) away. Now the undo
puts back only the values the run wrote into taotoken's config, where they still hold them, and keeps everything
changed there since. A client file edited since still stops the undo, as before.

Real parts: the real CLI in-process, real files in a temporary HOME.
"""

from __future__ import annotations

from pathlib import Path

from taotoken_cli.core.settings import tomllib
from taotoken_cli.core.settings.edit import revert_own_change
from tests.conftest import SENTINEL_KEY, flat, own_config

ROOT = "http://127.0.0.1:9/api"
OLD_KEY = "sk-OLDkeyBEFOREinit0123456789abcd"


def init(run, model: str = "gpt-4o-mini"):
    result = run("init", "--yes", "--base-url", ROOT, "--model", model, "--key-stdin", "--target", "claude-code",
                 "--allow-unlisted", input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 0, result.output
    return result


def config(home: Path) -> dict:
    return tomllib.loads((home / ".config" / "taotoken" / "config.toml").read_text())


def test_undo_after_route_set_keeps_the_routes_and_removes_what_init_created(run, home) -> None:
    init(run)
    assert run("route", "set", "cpu=gpt-4o-mini", "--no-check").returncode == 0
    undo = run("init", "--undo").assert_clean()
    assert undo.returncode == 0, undo.output
    assert "that run's values put back; what changed there since (routes, other settings) kept" in flat(undo.stdout)
    data = config(home)
    assert data["profiles"]["default"] == {"routes": {"cpu": "gpt-4o-mini"}}, data
    assert not (home / ".claude" / "settings.json").exists()  # the client files go back exactly, as before


def test_undo_puts_back_the_values_init_replaced_and_keeps_later_ones(run, home) -> None:
    path = own_config(home, "https://taotoken.net/api", key=OLD_KEY, model="gpt-4o")
    path.write_text("# my notes\n" + path.read_text())
    init(run)
    assert run("config", "set", "lang", "zh").returncode == 0  # a later edit of another setting
    assert run("config", "set", "model", "qwen-max", "--allow-unlisted").returncode == 0  # one init wrote, changed
    undo = run("init", "--undo").assert_clean(OLD_KEY)
    assert undo.returncode == 0, undo.output
    data = config(home)
    assert data["lang"] == "zh" and data["profiles"]["default"] == {
        "base_url": "https://taotoken.net/api", "api_key": OLD_KEY, "model": "qwen-max"}, data
    assert path.read_text().startswith("# my notes\n")


def test_a_client_file_edited_since_still_stops_the_undo_and_nothing_is_written(run, home) -> None:
    init(run)
    assert run("route", "set", "cpu=gpt-4o-mini", "--no-check").returncode == 0
    settings = home / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace("{", '{"theme": "dark",', 1))
    before = (home / ".config" / "taotoken" / "config.toml").read_bytes()
    undo = run("init", "--undo").assert_clean()
    assert undo.returncode == 1 and "init.undo_conflict" in undo.stderr
    assert str(settings) in flat(undo.stderr) and "config.toml" not in flat(undo.stderr)
    assert (home / ".config" / "taotoken" / "config.toml").read_bytes() == before  # nothing written


def test_revert_needs_three_readable_files() -> None:
    after = b'[profiles.default]\nmodel = "m"\n'
    assert revert_own_change(None, after, b"[profiles.default\n") is None  # a broken file: the undo says "edited"
    assert revert_own_change(None, after, after) == b""  # nothing else in it: the file the run created goes
    assert revert_own_change(b'[profiles.default]\nmodel = "a"\n', after,
                             b'[profiles.default]\nmodel = "m"\n[x]\ny = 1\n') == \
        b'[profiles.default]\nmodel = "a"\n[x]\ny = 1\n'
