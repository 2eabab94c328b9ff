"""A model ID is checked against the gateway's own list before it is written (`config set model`, `init --model`),
with "did you mean" from the one matcher (core/diagnosis/model_ids.py); `models PATTERN` finds near matches, not only
substrings; every fix printed here is run as printed and does what it says.

Real parts: the mock gateway on 127.0.0.1 lists the models, init writes real client files in a temporary HOME, the
CLI runs as a subprocess the way a shell runs it.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.conftest import SENTINEL_KEY
from tests.rawserver import closed_port

MODEL, OTHER = "gpt-4o-mini", "deepseek-chat"
TYPO = "gpt-4o-mnii"


def client_files(home: Path) -> dict[Path, bytes]:
    files = [home / ".claude/settings.json", home / ".codex/config.toml",
             home / ".cline/data/settings/providers.json", home / ".config/taotoken/config.toml"]
    return {path: path.read_bytes() for path in files if path.exists()}


@pytest.fixture
def setup(cli, home: Path, mock_gateway):
    mock = mock_gateway(models=(MODEL, OTHER), any_key=True)
    result = cli("init", "--all", "--yes", "--base-url", mock.url, "--model", MODEL, "--key-stdin",
                 input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 0, result.output
    return mock


def printed_command(text: str, command: str) -> list[str]:
    """`command` as the output prints it (wrapping undone), split as a shell would, without `taotoken`."""
    assert command in " ".join(text.split()), text
    return shlex.split(command)[1:]


def test_config_set_model_refuses_a_typo_and_writes_nothing(cli, home, setup):
    before = client_files(home)
    assert len(before) == 4
    result = cli("config", "set", "model", TYPO, "--yes").assert_clean()
    assert result.returncode == 5, result.output
    assert f"'{TYPO}' is not in the gateway's model list" in result.stderr
    assert f"did you mean {MODEL}? taotoken config set model {MODEL}" in " ".join(result.stderr.split())
    assert client_files(home) == before  # not one client got the typo


def test_the_printed_fixes_work_as_printed(cli, home, setup):
    result = cli("config", "set", "model", "gpt-4o-minx").assert_clean()  # a typo of MODEL, MODEL already set
    assert result.returncode == 5
    args = printed_command(result.stderr, "taotoken config set model gpt-4o-mini")
    followed = cli(*args, "--yes").assert_clean()
    assert followed.returncode == 0 and "nothing changed" in followed.stdout
    # the escape hatch it prints for a gateway that hides models works as printed too
    keep = printed_command(result.stderr, "taotoken config set model gpt-4o-minx --allow-unlisted")
    kept = cli(*keep, "--no-sync").assert_clean()
    assert kept.returncode == 0 and "set model = gpt-4o-minx" in kept.stdout


def test_a_listed_model_is_set_everywhere(cli, home, setup):
    result = cli("config", "set", "model", OTHER, "--yes").assert_clean()
    assert result.returncode == 0, result.output
    assert all(OTHER.encode() in text for text in client_files(home).values())


def test_no_list_to_ask_sets_the_value_as_before(cli, home, monkeypatch):
    env = {"TAOTOKEN_BASE_URL": f"http://127.0.0.1:{closed_port()}/api", "TAOTOKEN_API_KEY": SENTINEL_KEY}
    result = cli("config", "set", "model", "anything-at-all", env=env).assert_clean()
    assert result.returncode == 0, result.output
    assert "set model = anything-at-all" in result.stdout


def test_init_refuses_an_unlisted_model_and_its_fix_works(cli, home, mock_gateway):
    mock = mock_gateway(models=(MODEL, OTHER), any_key=True)
    args = ["init", "--all", "--yes", "--base-url", mock.url, "--key-stdin"]
    result = cli(*args, "--model", TYPO, input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 5, result.output
    assert client_files(home) == {}
    flat = " ".join(result.stderr.split())
    assert f"did you mean {MODEL}? run init again with --model {MODEL}" in flat and "add --allow-unlisted" in flat
    again = cli(*args, "--model", MODEL, input=SENTINEL_KEY).assert_clean()
    assert again.returncode == 0 and len(client_files(home)) == 4
    anyway = cli(*args, "--model", "hidden-model", "--allow-unlisted", input=SENTINEL_KEY).assert_clean()
    assert anyway.returncode == 0, anyway.output


@pytest.mark.parametrize("pattern,expected", [("deepsek", OTHER), ("mni", None), ("gpt-4o-mnii", MODEL),
                                              ("dep-seek", OTHER)])
def test_models_pattern_finds_near_matches(run, home, mock_gateway, monkeypatch, pattern, expected):
    mock = mock_gateway(models=(MODEL, OTHER))
    monkeypatch.setenv("TAOTOKEN_BASE_URL", mock.url)
    monkeypatch.setenv("TAOTOKEN_API_KEY", SENTINEL_KEY)
    result = run("models", pattern)
    assert result.returncode == 1
    if expected:
        assert f"close: {expected}" in result.stderr, result.stderr
    else:  # three letters are within one edit of too much: no guess
        assert "close:" not in result.stderr
