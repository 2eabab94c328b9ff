"""`taotoken models`: the real mock gateway on 127.0.0.1, real config files in a temporary HOME.

The core is called with in-memory streams (a terminal or a pipe, as `IOStreams.memory(tty=…)` says); the CLI
tests keep the contracts: one ID a line when piped, exit codes as `check`'s, stable --json keys, no key leaks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.diagnosis.listing import ListedModel, listed_models, match_models
from taotoken_cli.core.term.iostreams import IOStreams
from tests.conftest import SENTINEL_KEY, flat, in_users_shell
from tests.rawserver import closed_port

MODEL = "gpt-4o-mini"
LONG = "accounts/fireworks/models/llama-v3p1-405b-instruct-long-name"
SERVED = (MODEL, "gpt-4o", "claude-sonnet-4-5", "gpu-llama-3.1-8b", "cpu-qwen2.5-0.5b", LONG)
JSON_KEYS = {"schema", "ok", "exit_code", "code", "profile", "base_url", "url", "status", "latency_ms", "key", "proxy",
             "filter", "count", "matched", "configured_model", "configured_listed", "routes", "models",
             "close_matches", "unlisted", "notes", "error"}


def own_config(home: Path, base_url: str, *, model: str = MODEL, routes: dict[str, str] | None = None) -> None:
    path = home / ".config/taotoken/config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f'[profiles.default]\nbase_url = "{base_url}"\napi_key = "{SENTINEL_KEY}"\nmodel = "{model}"\n'
    if routes:
        text += "\n[profiles.default.routes]\n" + "".join(f'{k} = "{v}"\n' for k, v in routes.items())
    path.write_text(text)


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "PATH": "/usr/bin:/bin",
            "NO_COLOR": "1"}


@pytest.fixture
def served(home: Path, module_mock_gateway) -> str:
    """The profile points at a mock listing SERVED; the cuda route at a listed model, cpu at a typo of one."""
    url = module_mock_gateway(models=SERVED).url
    own_config(home, url, routes={"cuda": "gpu-llama-3.1-8b", "gpu": "gpu-llama-3.1-8b", "cpu": "cpu-qwne2.5-0.5b"})
    return url


# ------------------------------------------------------------------------------------------------ core

def test_core_on_a_terminal_prints_a_table_that_fits_80_columns(home, env, served) -> None:
    from taotoken_cli.cmd.models.run import ModelsOptions, run

    io = IOStreams.memory(env={**env, "COLUMNS": "80"}, cwd=home, tty=True)
    assert run(ModelsOptions(), io) == Exit.OK
    out, err = io.written()
    lines = out.splitlines()
    assert lines[0] == "6 models for key sk-SE…WXYZ (profile 'default')"
    assert lines[1].startswith(f"from {served}/v1/models in ")
    table = lines[3:]
    assert table[0].split() == ["ID", "USED", "AS", "OWNED", "BY", "CREATED"]
    assert f"* {MODEL} " in out and "model" in next(line for line in table if MODEL in line)
    assert "route cuda, gpu" in next(line for line in table if "gpu-llama" in line)
    assert all(len(line) <= 80 for line in lines[2:] if LONG not in line)
    assert f"  {LONG}\n" in out  # a long ID is never cut: it gets its own line, its columns follow under it
    assert "* the configured model" in out
    assert "warning: route cpu -> 'cpu-qwne2.5-0.5b' is not listed (close: cpu-qwen2.5-0.5b); " \
           "fix: taotoken route set cpu=cpu-qwen2.5-0.5b" in flat(err)  # stderr's lines fit 80 columns too
    assert all(len(line) <= 80 for line in err.splitlines()), err
    assert SENTINEL_KEY not in out + err


def test_core_in_a_pipe_prints_one_id_a_line(home, env, served) -> None:
    from taotoken_cli.cmd.models.run import ModelsOptions, run

    io = IOStreams.memory(env=env, cwd=home)
    assert run(ModelsOptions(), io) == Exit.OK
    assert io.written() == ("\n".join(SERVED) + "\n", "")


def test_narrow_terminals_drop_columns_before_cutting_ids(home, env, served) -> None:
    from taotoken_cli.cmd.models.run import ModelsOptions, run

    io = IOStreams.memory(env={**env, "COLUMNS": "50"}, cwd=home, tty=True)
    run(ModelsOptions(), io)
    lines = io.written()[0].splitlines()
    assert lines[3].split() == ["ID", "USED", "AS", "OWNED", "BY"]  # CREATED went first
    assert all(len(line) <= 50 for line in lines[2:] if LONG not in line)
    assert "claude-sonnet-4-5" in io.written()[0]


@pytest.mark.parametrize("pattern,expected", [
    ("GPT", [MODEL, "gpt-4o"]),  # case-insensitive substring
    ("gpt-4*", [MODEL, "gpt-4o"]),  # a glob matches the whole ID
    ("*-4o", ["gpt-4o"]),
    ("qwen", ["cpu-qwen2.5-0.5b"]),
    ("", list(SERVED)),
])
def test_filter(pattern: str, expected: list[str]) -> None:
    models = [ListedModel(m) for m in SERVED]
    assert [m.id for m in match_models(models, pattern)] == expected


def test_both_list_shapes_are_read_with_owner_and_creation_time() -> None:
    openai = {"object": "list", "data": [{"id": "a", "object": "model", "created": 1735689600, "owned_by": "openai"},
                                         {"id": "a"}, {"id": ""}, "junk", {"object": "model"}]}
    assert listed_models(openai) == [ListedModel("a", "openai", 1735689600)]
    anthropic = {"data": [{"type": "model", "id": "claude-x", "created_at": "2025-01-01T00:00:00Z"}]}
    [model] = listed_models(anthropic)
    assert model == ListedModel("claude-x", None, 1735689600) and model.created_date == "2025-01-01"
    assert listed_models({"error": "x"}) == [] and listed_models(None) == []
    assert ListedModel("x", created=10 ** 20).created_date is None


# ------------------------------------------------------------------------------------------------- CLI

def test_cli_pipes_into_grep_and_filters(run, served) -> None:
    result = run("models").assert_clean()
    assert result.returncode == 0 and result.stdout.splitlines() == list(SERVED) and result.stderr == ""
    assert run("models", "gpt-4*").stdout.splitlines() == [MODEL, "gpt-4o"]


def test_no_match_exits_1_with_close_matches(run, served) -> None:
    result = run("models", "gpt-4o-mnii").assert_clean()
    assert result.returncode == Exit.FAILURE and result.stdout == ""
    assert "no listed model matches 'gpt-4o-mnii' (6 listed); close: gpt-4o-mini" in result.stderr
    data = json.loads(run("models", "gpt-4o-mnii", "--json").stdout)
    assert data["ok"] is False and data["exit_code"] == 1 and data["matched"] == 0
    assert data["close_matches"][0] == MODEL


def test_json_has_stable_keys_and_marks_the_profile_uses(run, served) -> None:
    result = run("models", "--json").assert_clean()
    data = json.loads(result.stdout)
    assert result.returncode == 0 and set(data) == JSON_KEYS
    assert data["count"] == data["matched"] == 6 and data["key"] == "sk-SE…WXYZ" and data["error"] is None
    assert data["configured_model"] == MODEL and data["configured_listed"] is True
    by_id = {m["id"]: m for m in data["models"]}
    assert by_id[MODEL] == {"id": MODEL, "owned_by": "openai", "created": 1735689600, "configured": True,
                            "routes": []}
    assert by_id["gpu-llama-3.1-8b"]["routes"] == ["cuda", "gpu"]
    assert data["unlisted"] == [{"use": "route", "route": "cpu", "model": "cpu-qwne2.5-0.5b",
                                 "close_matches": ["cpu-qwen2.5-0.5b"],
                                 "fix": "taotoken route set cpu=cpu-qwen2.5-0.5b",
                                 "fix_step": {"text": "taotoken route set cpu=cpu-qwen2.5-0.5b", "where": None,
                                              "commands": [{"line": "taotoken route set cpu=cpu-qwen2.5-0.5b",
                                                            "argv": ["taotoken", "route", "set",
                                                                     "cpu=cpu-qwen2.5-0.5b"]}]}}]


def test_failures_exit_like_check(run, home, mock_gateway, monkeypatch) -> None:
    own_config(home, mock_gateway(models=SERVED).url)
    monkeypatch.setenv("TAOTOKEN_API_KEY", "sk-wrongWRONGwrong0123456")
    rejected = run("models").assert_clean()
    assert rejected.returncode == Exit.AUTH and rejected.stdout == ""
    assert rejected.stderr.startswith("FAIL 401 GET ") and "auth.invalid_key" in rejected.stderr
    data = json.loads(run("models", "--json").stdout)
    assert data["code"] == "auth.invalid_key" and data["exit_code"] == Exit.AUTH and set(data) == JSON_KEYS
    refused = run("models", "--base-url", f"http://127.0.0.1:{closed_port()}/api").assert_clean()
    assert refused.returncode == Exit.NETWORK and "net." in refused.stderr


def test_without_a_key_it_is_a_config_error(run, home) -> None:
    result = run("models").assert_clean()
    assert result.returncode == Exit.CONFIG and "auth.missing_key" in result.stderr
    assert "taotoken init" in result.stderr
    assert json.loads(run("models", "--json").stdout)["code"] == "auth.missing_key"


def test_profile_base_url_and_no_proxy_options(run, home, mock_gateway, monkeypatch) -> None:
    served = mock_gateway(models=("only-model",)).url
    own_config(home, f"http://127.0.0.1:{closed_port()}/api")
    assert run("models", "--base-url", served + "/v1").stdout == "only-model\n"
    from tests.proxyserver import GATEWAY_NAME

    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("NO_PROXY", "")
    assert run("models", "--base-url", served).stdout == "only-model\n"  # a loopback gateway: never proxied
    monkeypatch.setenv("TAOTOKEN_ALLOW_HTTP", "1")
    blocked = run("models", "--base-url", served.replace("127.0.0.1", GATEWAY_NAME)).assert_clean()
    assert blocked.returncode == Exit.NETWORK and "proxy" in blocked.stderr
    assert run("models", "--base-url", served, "--no-proxy").stdout == "only-model\n"
    path = home / ".config/taotoken/config.toml"
    path.write_text(path.read_text() + f'\n[profiles.other]\nbase_url = "{served}"\napi_key = "{SENTINEL_KEY}"\n')
    assert run("models", "--profile", "other", "--no-proxy").stdout == "only-model\n"


def test_an_empty_list_says_so_on_a_terminal(home, env, httpserver) -> None:
    from taotoken_cli.cmd.models.run import ModelsOptions, run

    httpserver.expect_request("/api/v1/models").respond_with_json({"object": "list", "data": []})
    own_config(home, httpserver.url_for("/api"))
    io = IOStreams.memory(env=env, cwd=home, tty=True)
    assert run(ModelsOptions(), io) == Exit.OK
    out, err = io.written()
    assert "the gateway lists no models for key sk-SE…WXYZ" in out and "taotoken check --allow-unlisted" in out
    assert "warning: the configured model 'gpt-4o-mini' is not listed; fix: taotoken config set model <a listed ID>" \
        in flat(err)


def test_the_fix_for_an_unlisted_model_names_where_it_is_set(run, served, monkeypatch) -> None:
    monkeypatch.setenv("TAOTOKEN_MODEL", "gpt-4o-mnii")
    data = json.loads(run("models", "--json").stdout)
    [model] = [item for item in data["unlisted"] if item["use"] == "model"]
    assert model["close_matches"] == [MODEL]
    assert model["fix"].startswith(in_users_shell(f"export TAOTOKEN_MODEL={MODEL}"))
