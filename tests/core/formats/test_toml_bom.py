"""A TOML file with a byte-order mark (issue 22, item 10): Codex's config.toml saved by Notepad was refused
("line 1, column 0"). It is read, edited, and keeps its mark; taotoken's own config.toml too.

Real parts: real files in a temporary HOME, the real CLI in-process.
"""

from __future__ import annotations

from tests.conftest import SENTINEL_KEY, write

BOM = "\ufeff"


def test_a_codex_config_with_a_bom_is_edited_and_keeps_it(run, home) -> None:
    config = write(home / ".codex" / "config.toml", BOM + '# my codex\nmodel = "o3"\n')
    result = run("init", "--allow-unlisted", "--target", "codex", "--codex-auth", "auth-json", "--yes", "--base-url",
                 "https://taotoken.net/api", "--model", "gpt-4o-mini", "--key-stdin", input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 0, result.output
    text = config.read_text(encoding="utf-8")
    assert text.startswith(BOM + "# my codex\n") and text.count(BOM) == 1, text[:40]
    assert 'model = "gpt-4o-mini"' in text
    assert run("init", "--undo").assert_clean().returncode == 0
    assert config.read_text(encoding="utf-8") == BOM + '# my codex\nmodel = "o3"\n'


def test_taotokens_own_config_with_a_bom(run, home) -> None:
    own = write(home / ".config" / "taotoken" / "config.toml", BOM + 'default_profile = "default"\n\n'
                '[profiles.default]\nbase_url = "https://taotoken.net/api"\nmodel = "m"\n')
    assert run("config", "show").assert_clean().returncode == 0
    assert run("config", "set", "model", "gpt-4o-mini").assert_clean().returncode == 0
    text = own.read_text(encoding="utf-8")
    assert text.startswith(BOM + "default_profile") and 'model = "gpt-4o-mini"' in text, text


def test_a_read_only_settings_file_is_named_before_it_is_replaced(run, home) -> None:
    """Issue 22, item 10: a 0444 settings.json was rewritten without a word."""
    import json

    settings = write(home / ".claude" / "settings.json", json.dumps({"theme": "dark"}) + "\n", mode=0o444)
    dry = run("init", "--allow-unlisted",
              "--target", "claude-code", "--dry-run", "--base-url", "https://taotoken.net/api", "--model",
              "gpt-4o-mini", "--key-stdin", input=SENTINEL_KEY).assert_clean()
    assert "the file is read-only (mode 0444)" in " ".join(dry.output.split()), dry.output
    assert json.loads(settings.read_text()) == {"theme": "dark"}
