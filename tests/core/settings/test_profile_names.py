"""Profile names checked at input by every command (issue 22, item 7): `init --profile 'a b'` (or `../../etc`, or
300 characters) was stored as the default profile, and every later `config set` refused it; a Codex profile named
`../../../x` made `doctor --fix` write outside CODEX_HOME.

Real parts: real files in a temporary HOME and CODEX_HOME, the real CLI in-process.
"""

from __future__ import annotations

import pytest

from tests.conftest import SENTINEL_KEY, flat, write

BAD = ["a b", "../../etc", "x" * 300, "a/b", ""]


@pytest.mark.parametrize("name", [n for n in BAD if n])
def test_every_command_refuses_a_bad_profile_name_at_input(run, home, monkeypatch, name: str) -> None:
    init = run("init", "--yes", "--profile", name, "--base-url", "https://taotoken.net/api", "--model", "m",
               "--key-stdin", input=SENTINEL_KEY).assert_clean()
    assert init.returncode == 2 and "is not allowed (from --profile)" in flat(init.stderr), init.output
    assert not (home / ".config" / "taotoken" / "config.toml").exists()  # nothing was stored
    monkeypatch.setenv("TAOTOKEN_PROFILE", name)
    for args in (["check"], ["config", "show"], ["models"], ["config", "set", "model", "m"]):
        result = run(*args).assert_clean()
        assert result.returncode == 2 and "(from TAOTOKEN_PROFILE)" in flat(result.stderr), (args, result.output)


@pytest.mark.parametrize("name", ["../../etc", "a b"])
def test_a_bad_default_profile_written_by_hand_is_named_with_the_command_that_replaces_it(run, home, name) -> None:
    """A default_profile edited into config.toml by hand is checked too: each command stops with where it is (exit
    3, config.unparsable) instead of using it ("no API key configured (profile '../../etc')"), and the fix it
    prints works as printed: `config set default_profile` does not read the value it replaces."""
    import json

    config = home / ".config" / "taotoken" / "config.toml"
    write(config, f'default_profile = "{name}"\n\n[profiles.default]\nbase_url = "http://127.0.0.1:9/api"\n'
                  f'api_key = "{SENTINEL_KEY}"\nmodel = "m"\n')
    for args in (["check"], ["models"], ["config", "set", "model", "m2"]):
        result = run(*args).assert_clean()
        assert result.returncode == 3 and f"(default_profile in {config})" in flat(result.output), (args, result.output)
        assert "taotoken config set default_profile default" in flat(result.output)
    as_json = json.loads(run("check", "--json").assert_clean().stdout)
    assert as_json["exit_code"] == 3 and as_json["code"] == "config.unparsable"
    fixed = run("config", "set", "default_profile", "default").assert_clean()
    assert fixed.returncode == 0 and 'default_profile = "default"' in config.read_text(), fixed.output
    assert run("config", "set", "model", "m2").assert_clean().returncode == 0


def test_a_codex_profile_name_never_takes_doctor_fix_outside_codex_home(run, home, monkeypatch) -> None:
    codex = home / ".codex"
    write(codex / "config.toml", 'model = "o3"\n\n[profiles."../../../x"]\nmodel = "gpt-4o-mini"\n')
    monkeypatch.setenv("CODEX_HOME", str(codex))
    result = run("doctor", "--offline", "--check", "codex.profiles", "--fix", "--yes").assert_clean()
    assert "rename each profile whose name is not a plain file name" in flat(result.output), result.output
    outside = (codex / "../../../x.config.toml").resolve()
    assert not outside.exists(), f"{outside} was written, outside CODEX_HOME"
