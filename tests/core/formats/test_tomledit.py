"""TOML edits keep what tomlkit alone would lose (issue 17): CRLF, a missing final newline, the spacing of
inline tables, the comment on a removed key's line, and the comments of a legacy Codex profile that
`doctor --fix` moves into its own file."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomlkit

from taotoken_cli.core.clients import codex
from taotoken_cli.core.clients.base import Machine, PlanOptions, Triple
from taotoken_cli.core.formats import tomledit
from taotoken_cli.core.settings.edit import render_config_update
from tests.conftest import SENTINEL_KEY

TRIPLE = Triple("https://taotoken.net/api", SENTINEL_KEY, "gpt-4o-mini")


def edited(text: str, edit) -> str:
    doc = tomlkit.parse(text)
    edit(doc)
    return tomledit.dumps(doc, text)


@pytest.mark.parametrize(("before", "after"), [
    ('p = { name = "x", base_url = "u" }\n', 'p = { name = "x", base_url = "u", wire_api = "responses" }\n'),
    ('p = {name="x",base_url="u"}\n', 'p = {name="x",base_url="u",wire_api="responses"}\n'),
    ("p = { }\n", 'p = { wire_api = "responses" }\n'),
    ("p = { a = 1, }\n", 'p = { a = 1, wire_api = "responses", }\n'),
])
def test_inline_tables_keep_their_spacing(before: str, after: str) -> None:
    # tomlkit alone: `{ name = "x", base_url = "u", wire_api = "responses"}` and `{name="x",base_url="u", wire_api …`
    assert edited(before, lambda d: tomledit.set_in(d, ("p", "wire_api"), "responses")) == after


def test_removing_from_an_inline_table_leaves_no_double_space() -> None:
    assert edited("p = { a = 1, b = 2 }\n", lambda d: tomledit.remove_in(d, ("p", "a"))) == "p = { b = 2 }\n"


def test_crlf_and_no_final_newline_survive_an_added_key() -> None:
    assert edited("a = 1\r\nb = 2", lambda d: tomledit.set_in(d, ("c",), 3)) == "a = 1\r\nb = 2\r\nc = 3"


def test_a_new_root_key_does_not_split_a_comment_from_its_table() -> None:
    text = 'model = "a"  # mine\n# the providers I use\n[model_providers.x]\nname = "X"\n'
    assert edited(text, lambda d: tomledit.set_in(d, ("model_provider",), "x")) == (
        'model = "a"  # mine\nmodel_provider = "x"\n# the providers I use\n[model_providers.x]\nname = "X"\n')


def test_a_removed_key_leaves_its_comment() -> None:
    text = '[t]\nenv_key = "OLD"  # from the wiki\nname = "T"\n'
    assert edited(text, lambda d: tomledit.remove_in(d, ("t", "env_key"))) == '[t]\n# from the wiki\nname = "T"\n'


def test_codex_plan_into_an_inline_provider_table(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_bytes(b'model = "o3"\r\nmodel_providers = { taotoken = { name = "TaoToken", wire_api = "chat" } }\r\n')
    plan = codex.plan(TRIPLE, Machine.of({"HOME": str(tmp_path), "CODEX_HOME": str(tmp_path)}),
                      PlanOptions(codex_auth="env"))
    assert plan.changes[0].after.decode() == (
        'model = "gpt-4o-mini"\r\nmodel_providers = { taotoken = { name = "TaoToken", wire_api = "responses", '
        'base_url = "https://taotoken.net/api/v1", env_key = "OPENAI_API_KEY" } }\r\nmodel_provider = "taotoken"\r\n')


def test_config_update_keeps_crlf_and_the_missing_newline() -> None:
    text = '# mine\r\ndefault_profile = "default"\r\n\r\n[profiles.default]\r\nbase_url = "https://x/api"  # old'
    after = render_config_update(text, Path("config.toml"), "default", {"base_url": "https://taotoken.net/api",
                                                                        "model": "m"})
    assert after == ('# mine\r\ndefault_profile = "default"\r\n\r\n[profiles.default]\r\n'
                     'base_url = "https://taotoken.net/api"  # old\r\nmodel = "m"')


CONFIG = ('model = "o3"\nprofile = "work"  # the one I use\n\n# ---- profiles ----\n[profiles.work]\n'
          '# my work account\nmodel = "gpt-4.1"  # pinned\nmodel_reasoning_effort = "high"\n\n'
          '[profiles.work.features]\nweb_search = true  # needs the beta\n')


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_fix_moves_a_legacy_profile_with_its_comments(cli, home, newline) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = CONFIG.replace("\n", newline).encode()
    config.write_bytes(original)
    result = cli("doctor", "--offline", "--check", "codex.profiles", "--fix", "--yes").assert_clean()
    assert "--fix: repaired 2 file(s)" in result.stdout, result.output
    moved = (home / ".codex" / "work.config.toml").read_bytes().decode()
    assert moved == (f"# moved from [profiles.work] of {config} by taotoken doctor --fix\n"
                     '# my work account\nmodel = "gpt-4.1"  # pinned\nmodel_reasoning_effort = "high"\n\n'
                     "[features]\nweb_search = true  # needs the beta\n").replace("\n", newline)
    assert config.read_bytes().decode() == ('model = "o3"\n# the one I use\n\n# ---- profiles ----\n'
                                            ).replace("\n", newline)
    assert cli("init", "--undo").assert_clean().returncode == 0
    assert config.read_bytes() == original and not (home / ".codex" / "work.config.toml").exists()
