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


def test_a_codex_profile_name_never_takes_doctor_fix_outside_codex_home(run, home, monkeypatch) -> None:
    codex = home / ".codex"
    write(codex / "config.toml", 'model = "o3"\n\n[profiles."../../../x"]\nmodel = "gpt-4o-mini"\n')
    monkeypatch.setenv("CODEX_HOME", str(codex))
    result = run("doctor", "--offline", "--check", "codex.profiles", "--fix", "--yes").assert_clean()
    assert "rename each profile whose name is not a plain file name" in flat(result.output), result.output
    outside = (codex / "../../../x.config.toml").resolve()
    assert not outside.exists(), f"{outside} was written, outside CODEX_HOME"
