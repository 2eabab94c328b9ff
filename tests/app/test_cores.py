"""Each command's core called directly, with in-memory I/O (as `gh` tests its `*Run` functions apart from the
flag parsing); the black-box CLI tests elsewhere keep the contracts (exit codes, -q, --code, secrets).

Real parts all the same: a real temporary HOME, real config files, the real mock gateway on 127.0.0.1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.settings import Overrides
from taotoken_cli.core.term.iostreams import ConfirmationNeeded, IOStreams
from tests.conftest import SENTINEL_KEY

MODEL = "gpt-4o-mini"


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "PATH": "/usr/bin:/bin"}


def own_config(home: Path, base_url: str) -> None:
    path = home / ".config/taotoken/config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[profiles.default]\nbase_url = "{base_url}"\napi_key = "{SENTINEL_KEY}"\nmodel = "{MODEL}"\n')


def test_check_core_renders_each_mode_into_the_streams(home, env, mock_gateway) -> None:
    from taotoken_cli.cmd.check.run import CheckOptions, run

    own_config(home, mock_gateway(models=(MODEL,)).url)
    line = IOStreams.memory(env=env, cwd=home)
    assert run(CheckOptions(), line) == Exit.OK
    assert line.written()[0].startswith("OK 200 GET ") and f"model {MODEL} listed" in line.written()[0]
    code = IOStreams.memory(env=env, cwd=home)
    assert run(CheckOptions(mode="code"), code) == Exit.OK and code.written() == ("200\n", "")
    quiet = IOStreams.memory(env={**env, "TAOTOKEN_API_KEY": "sk-wrongWRONGwrong0123"}, cwd=home)
    assert run(CheckOptions(mode="quiet"), quiet) == Exit.AUTH
    out, err = quiet.written()
    assert out == "" and err.startswith("taotoken: auth.invalid_key:") and SENTINEL_KEY not in err


def test_init_core_dry_run_then_confirmation_through_the_prompter(home, env, mock_gateway) -> None:
    from taotoken_cli.cmd.init.plan import InitRequest
    from taotoken_cli.cmd.init.run import InitOptions, run

    request = InitRequest(base_url=mock_gateway().url, api_key=SENTINEL_KEY, model=MODEL, targets=["cline"])
    dry = IOStreams.memory(env=env, cwd=home)
    assert run(InitOptions(request, dry_run=True), dry) == Exit.OK
    assert "dry run: nothing was written" in dry.written()[0] and not (home / ".config").exists()
    with pytest.raises(ConfirmationNeeded):  # no terminal, no --yes: refused before anything is written
        run(InitOptions(request), IOStreams.memory(env=env, cwd=home))
    declined = IOStreams.memory("n\n", env=env, cwd=home, tty=True)
    assert run(InitOptions(request), declined) == Exit.FAILURE and not (home / ".cline").exists()
    assert "Apply these changes? [y/N] " in declined.written()[1]
    accepted = IOStreams.memory("y\n", env=env, cwd=home, tty=True)
    assert run(InitOptions(request), accepted) == Exit.OK
    providers = json.loads((home / ".cline/data/settings/providers.json").read_text())
    assert providers["providers"]["openai-compatible"]["settings"]["apiKey"] == SENTINEL_KEY


def test_a_doctor_check_called_directly_with_its_context(home, env) -> None:
    from taotoken_cli.cmd.doctor.checks.clients.claude_code import claude_base_url
    from taotoken_cli.cmd.doctor.context import DoctorContext
    from taotoken_cli.cmd.doctor.model import Status

    settings = home / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"env": {"ANTHROPIC_BASE_URL": "https://taotoken.net/api/v1"}}))
    ctx = DoctorContext(env=env, cwd=home, overrides=Overrides(base_url="https://taotoken.net/api"), offline=True)
    result = claude_base_url(ctx)
    assert result.status is Status.FAIL and "ends in /v1" in result.message
    assert [r.description for r in result.repairs] == ["set env.ANTHROPIC_BASE_URL to https://taotoken.net/api"]
    assert result.repairs[0].transform(settings.read_text()).count("https://taotoken.net/api\"") == 1


def test_doctor_core_lists_and_runs_offline(home, env) -> None:
    from taotoken_cli.cmd.doctor.run import DoctorOptions, run

    listing = IOStreams.memory(env=env, cwd=home)
    assert run(DoctorOptions(list_checks=True, json_out=True), listing) == Exit.OK
    assert {"config.file", "claude.base_url", "gateway.key"} <= {c["id"] for c in
                                                                 json.loads(listing.written()[0])["checks"]}
    report = IOStreams.memory(env=env, cwd=home)
    code = run(DoctorOptions(offline=True, json_out=True, only=["config"]), report)
    data = json.loads(report.written()[0])
    assert code == data["exit_code"] == 1 and data["offline"] is True
    assert {c["id"]: c["status"] for c in data["checks"]}["config.api_key"] == "fail"


def test_route_core_sets_and_lists_the_table(home, env) -> None:
    from taotoken_cli.cmd.route.run import list_routes, set_routes

    edit = IOStreams.memory(env=env, cwd=home)
    assert set_routes(edit, ["cuda=gpu-model", "cpu=cpu-model"], None) == Exit.OK
    assert "set route cuda = gpu-model" in edit.written()[0]
    shown = IOStreams.memory(env=env, cwd=home)
    assert list_routes(shown, json_out=True, profile=None) == Exit.OK
    assert [r["key"] for r in json.loads(shown.written()[0])["routes"]] == ["cuda", "cpu"]


def test_explain_core_fills_placeholders_from_the_profile(home, env) -> None:
    from taotoken_cli.cmd.explain.run import ExplainOptions, run

    own_config(home, "https://gw.example.com/api")
    out = IOStreams.memory(env=env, cwd=home)
    assert run(ExplainOptions(code="url.doubled_v1"), out) == Exit.OK
    assert "https://gw.example.com/api/v1" in out.written()[0]


def test_init_wizard_core_lists_narrows_and_picks_through_the_prompter(home, env, mock_gateway) -> None:
    """The wizard with in-memory terminal streams: 25 models (20 shown), narrowed by a glob, picked by number."""
    from taotoken_cli.cmd.init.plan import InitRequest
    from taotoken_cli.cmd.init.run import InitOptions, run

    served = tuple(f"gpu-model-{n:02d}" for n in range(20)) + tuple(f"cpu-model-{n}" for n in range(5))
    mock = mock_gateway(models=served)
    answers = f"{SENTINEL_KEY}\ncpu-*\n9\n3\ny\n"
    io = IOStreams.memory(answers, env=env, cwd=home, tty=True)
    request = InitRequest(base_url=mock.url, targets=["cline"])
    assert run(InitOptions(request), io) == Exit.OK
    out, err = io.written()
    assert "25 models listed" in err and "  20) gpu-model-19" in err and "… 5 more: type part of a name" in err
    assert "5 of 25 match:" in err and "  3) cpu-model-2" in err
    assert "there is no number 9 in the list shown (1-5)" in err
    providers = json.loads((home / ".cline/data/settings/providers.json").read_text())
    assert providers["providers"]["openai-compatible"]["settings"]["model"] == "cpu-model-2"
    assert out.rstrip().endswith("next: taotoken check   (one request: base URL, key and model)")
    assert SENTINEL_KEY not in out + err


@pytest.mark.parametrize("query, kind, first", [
    ("429", "status", "rate.limited"), ("503", "status", "model.no_channel"),
    ("无效的令牌", "message", "auth.invalid_key"),
    ("Invalid token", "message", "auth.invalid_key"), ("401 无效的令牌", "message", "auth.invalid_key"),
    ("分组 default 下模型 gpt-5 无可用渠道（distributor）", "message", "model.no_channel"),
    ("You exceeded your current quota, please check your plan", "message", "quota.exhausted"),
    # the status as users copy it, and new-api's Chinese phrasings
    ("HTTP 429", "status", "rate.limited"), ("http 401", "status", "auth.invalid_key"),
    ("HTTP/1.1 429 Too Many Requests", "status", "rate.limited"), ("状态码：401", "status", "auth.invalid_key"),
    ("您的请求过于频繁，请稍后再试", "message", "rate.limited"), ("429 您的请求过于频繁", "message", "rate.limited"),
    ("令牌额度不足", "message", "quota.key_exhausted"), ("额度不足", "message", "quota.exhausted"),
    ("该令牌无权访问任何模型", "message", "auth.forbidden_model"),
])
def test_explain_reads_a_status_or_a_servers_message(home, env, query, kind, first) -> None:
    from taotoken_cli.cmd.explain.run import ExplainOptions, run

    out = IOStreams.memory(env=env, cwd=home)
    assert run(ExplainOptions(code=query, json_out=True), out) == Exit.OK
    data = json.loads(out.written()[0])
    assert data["kind"] == kind and data["codes"][0]["code"] == first and data["query"] == query


def test_explain_refuses_what_it_cannot_read(home, env) -> None:
    from taotoken_cli.cmd.explain.run import ExplainOptions, run
    from taotoken_cli.core.base.errors import InputError

    for query in ("hello there", "999", "auth.invalid_kye"):
        with pytest.raises(InputError):
            run(ExplainOptions(code=query), IOStreams.memory(env=env, cwd=home))


def test_every_status_meaning_is_a_catalogue_code_and_every_fallback_status_is_listed() -> None:
    from taotoken_cli.core.diagnosis.catalogue import CATALOGUE, STATUS_MEANINGS
    from taotoken_cli.core.diagnosis.classify import STATUS_FALLBACK

    assert {code for codes in STATUS_MEANINGS.values() for code in codes} <= set(CATALOGUE)
    for status, code in STATUS_FALLBACK.items():
        assert code in STATUS_MEANINGS[status], (status, code)
