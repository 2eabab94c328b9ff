"""Byte-faithful edits (issue 17): every writer of a user's file (init's client plans, each `doctor --fix`
repair) changes only the values it means to change. Hypothesis writes the files the way people do — comments
(`//`, `/* */` where the client reads JSONC; `#` in TOML), number spellings (`1e5`, `-0.0`, a 21-digit integer),
escapes (`\\u00e9` or `é`), spacing, tabs, trailing commas, CRLF, no final newline, a BOM — and the test checks
that every entry outside the intended paths keeps its key, value and indentation byte for byte, every comment
stays, the line endings stay, and `taotoken init --undo` (fileplan.undo_last) brings back the original bytes.

Real files in a temporary HOME; the writers and checks are the real ones, called in-process for speed.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.core.clients import claude_code, cline, codex, opencode, qwen_code
from taotoken_cli.core.clients.base import Machine, PlanOptions, Triple
from taotoken_cli.core.files import fileplan
from taotoken_cli.core.settings import Overrides
from tests.faithful import Writer, assert_faithful, extra_tree, layout, tree

EXAMPLES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROOT = "https://taotoken.net/api"
KEY = "sk-FAITHFULkey0123456789abcdefWXYZ"
TRIPLE = Triple(ROOT, KEY, "gpt-4o-mini")


def machine(home: Path) -> Machine:
    return Machine.of({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "PATH": "/usr/bin:/bin"},
                      cwd=home)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def apply_and_undo(plan, home: Path, originals: dict[Path, bytes]) -> None:
    """Apply through fileplan (backups, atomic writes), then undo: every file has its original bytes again."""
    config_dir = machine(home).config_dir
    fileplan.apply(plan, config_dir, command="test")
    fileplan.undo_last(config_dir)
    for path, data in originals.items():
        assert path.read_bytes() == data, path


@st.composite
def document(draw, planted: dict, comments: bool = False) -> str:
    """A file holding `planted` (plain data, in a drawn spelling) among unrelated members, in a drawn style."""
    members = [(k, draw(extra_tree())) for k in draw(st.lists(st.sampled_from(["a", "permissions", "z", "café"]),
                                                              max_size=3, unique=True))]
    planted_members = [(k, tree(v, draw)) for k, v in planted.items()]
    position = draw(st.integers(0, len(members)))
    node = ("obj", members[:position] + planted_members + members[position:])
    return Writer(draw, draw(layout(comments))).document(node)


ENV_VALUES = st.sampled_from([ROOT, ROOT + "/v1", "https://other.example/api", KEY, " " + KEY + "\n", "gpt-4.1", ""])


@EXAMPLES
@given(data=st.data(), env=st.dictionaries(st.sampled_from([claude_code.BASE_URL, claude_code.AUTH_TOKEN,
                                                            claude_code.API_KEY, claude_code.MODEL, "OTHER_VAR",
                                                            claude_code.SMALL_FAST_MODEL]), ENV_VALUES, max_size=5),
       with_env=st.booleans(), onboarding=st.sampled_from([None, True, False, 1]))
def test_claude_code_plan_changes_only_its_variables(data, env, with_env, onboarding) -> None:
    settings_text = data.draw(document({"env": env} if with_env else {}))
    global_text = data.draw(document({} if onboarding is None else {claude_code.ONBOARDING: onboarding}))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        settings_path = write(home / ".claude" / "settings.json", settings_text)
        global_path = write(home / ".claude.json", global_text)
        plan = claude_code.plan(TRIPLE, machine(home))
        after = {c.path: c.after.decode("utf-8") for c in plan.changes}
        wanted = [("env", n) for n in (claude_code.BASE_URL, claude_code.AUTH_TOKEN, claude_code.MODEL,
                                       claude_code.HAIKU_MODEL, claude_code.API_KEY)]
        assert_faithful(settings_text, after[settings_path], wanted if with_env else [("env",)])
        assert_faithful(global_text, after[global_path], [(claude_code.ONBOARDING,)])
        block = json.loads(after[settings_path].lstrip("\ufeff"))["env"]
        assert block[claude_code.BASE_URL] == ROOT and block[claude_code.AUTH_TOKEN] == KEY
        assert block.get(claude_code.API_KEY, "") == ""  # no second credential ("" is unset to Claude Code: kept)
        assert json.loads(after[global_path].lstrip("\ufeff"))[claude_code.ONBOARDING] is True
        if onboarding is True:
            assert after[global_path] == global_text  # nothing to change: the same bytes
        apply_and_undo(plan, home, {settings_path: settings_text.encode(), global_path: global_text.encode()})


@EXAMPLES
@given(data=st.data(), settings_=st.fixed_dictionaries({}, optional={
    "provider": st.just("openai-compatible"), "apiKey": st.sampled_from([KEY, "sk-old0123456789abcdefghij"]),
    "baseUrl": st.sampled_from([ROOT + "/v1", ROOT]), "headers": st.just({"X-Team": "é"}), "timeout": st.just(30)}),
       others=st.booleans())
def test_cline_plan_changes_only_its_provider(data, settings_, others) -> None:
    providers = {"openai-compatible": {"settings": settings_, "tokenSource": "manual"}} if settings_ else {}
    if others:
        providers["anthropic"] = {"settings": {"provider": "anthropic", "apiKey": "sk-ant-x", "model": "m"}}
    text = data.draw(document({"version": 1, "lastUsedProvider": "anthropic", "providers": providers}))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = write(home / ".cline" / "data" / "settings" / "providers.json", text)
        plan = cline.plan(TRIPLE, machine(home))
        after = plan.changes[0].after.decode("utf-8")
        assert_faithful(text, after, [("lastUsedProvider",), ("providers", "openai-compatible")])
        entry = json.loads(after.lstrip("\ufeff"))["providers"]["openai-compatible"]["settings"]
        assert entry["baseUrl"] == ROOT + "/v1" and entry["apiKey"] == KEY
        apply_and_undo(plan, home, {path: text.encode()})


@EXAMPLES
@given(data=st.data(), auth=st.fixed_dictionaries({}, optional={
    "auth_mode": st.sampled_from(["chatgpt", "apikey"]), "OPENAI_API_KEY": st.sampled_from([None, KEY, "sk-x"]),
    "tokens": st.just({"id_token": "e30", "refresh_token": "r"}), "last_refresh": st.just("2026-08-01T00:00:00Z")}))
def test_codex_auth_json_changes_only_the_key_fields(data, auth) -> None:
    text = data.draw(document(auth))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = write(home / ".codex" / "auth.json", text)
        plan = codex.plan(TRIPLE, machine(home), PlanOptions(codex_auth="auth-json"))
        change = next(c for c in plan.changes if c.path == path)
        after = change.after.decode("utf-8")
        assert_faithful(text, after, [("auth_mode",), ("OPENAI_API_KEY",)])
        assert json.loads(after.lstrip("\ufeff"))["OPENAI_API_KEY"] == KEY
        apply_and_undo(plan, home, {path: text.encode()})


# ------------------------------------------------------------------------------------------ doctor --fix

def context(home: Path) -> DoctorContext:
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "PATH": "/usr/bin:/bin"}
    return DoctorContext(env=env, cwd=home, overrides=Overrides(base_url=ROOT, api_key=KEY), offline=True)


def repaired(check, ctx: DoctorContext, path: Path) -> str:
    """The file after every repair `check` offers for it, applied in order as `doctor --fix` does."""
    text = path.read_bytes().decode("utf-8")
    for repair in check(ctx).repairs:
        if repair.path == path:
            text = repair.transform(text)
    return text


@EXAMPLES
@given(data=st.data(), env=st.dictionaries(st.sampled_from([claude_code.BASE_URL, claude_code.AUTH_TOKEN,
                                                            claude_code.API_KEY, claude_code.SMALL_FAST_MODEL,
                                                            "OTHER_VAR"]),
                                           st.sampled_from([ROOT + "/v1", ROOT + "/", " " + KEY + "\n", KEY,
                                                            "'" + KEY + "'", "gpt-4.1"]), min_size=1, max_size=4))
def test_claude_repairs_change_only_what_they_name(data, env) -> None:
    from taotoken_cli.cmd.doctor.checks.clients import claude_code as checks

    text = data.draw(document({"env": env}))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = write(home / ".claude" / "settings.json", text)
        for check in (checks.claude_base_url, checks.claude_key, checks.claude_models):
            after = repaired(check, context(home), path)
            assert_faithful(text, after, [("env", n) for n in (claude_code.BASE_URL, claude_code.AUTH_TOKEN,
                                                               claude_code.API_KEY, claude_code.SMALL_FAST_MODEL,
                                                               claude_code.HAIKU_MODEL)])


SETTING = "claudeCode.environmentVariables"


@EXAMPLES
@given(data=st.data(), url=st.sampled_from([ROOT + "/v1", ROOT, ROOT + "/v1/"]),
       key=st.sampled_from([KEY, " " + KEY + "\n", "'" + KEY + "'"]), cline_keys=st.booleans())
def test_vscode_settings_repairs_keep_comments_and_trailing_commas(data, url, key, cline_keys) -> None:
    from taotoken_cli.cmd.doctor.checks.clients.cline import cline_vscode
    from taotoken_cli.cmd.doctor.checks.clients.vscode import claude_vscode

    planted = {SETTING: [{"name": "ANTHROPIC_BASE_URL", "value": url}, {"name": "OTHER", "value": "1e5"},
                         {"name": "ANTHROPIC_AUTH_TOKEN", "value": key}]}
    if cline_keys:
        planted.update({"cline.apiProvider": "openai", "cline.openAiBaseUrl": url})
    text = data.draw(document(planted, comments=True))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = write(home / ".config" / "Code" / "User" / "settings.json", text)
        after = repaired(claude_vscode, context(home), path)
        assert_faithful(text, after, [(SETTING, 0, "value"), (SETTING, 2, "value")], allow_comments=True)
        after = repaired(cline_vscode, context(home), path)
        assert_faithful(text, after, [("cline.apiProvider",), ("cline.openAiBaseUrl",)], allow_comments=True)


# ------------------------------------------------------------------------------------------------- TOML

@EXAMPLES
@given(data=st.data(), provider=st.sampled_from([None, "taotoken", "other"]),
       mode=st.sampled_from(codex.AUTH_MODES))
def test_codex_plan_changes_only_its_provider(data, provider, mode) -> None:
    from tests.faithful import assert_toml_faithful, toml_document

    text = data.draw(toml_document(provider))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = write(home / ".codex" / "config.toml", text)
        plan = codex.plan(TRIPLE, machine(home), PlanOptions(codex_auth=mode))
        after = next(c for c in plan.changes if c.path == path).after.decode("utf-8")
        assert_toml_faithful(text, after, [("model",), ("model_provider",), ("model_providers", "taotoken")])
        from taotoken_cli.core.settings import tomllib

        provider_table = tomllib.loads(after)["model_providers"]["taotoken"]
        assert provider_table["base_url"] == ROOT + "/v1" and provider_table["wire_api"] == "responses"
        assert codex.plan(TRIPLE, machine(home), PlanOptions(codex_auth=mode)).changes[0].before == text.encode()
        apply_and_undo(plan, home, {path: text.encode()})


@EXAMPLES
@given(data=st.data(), provider=st.sampled_from(["taotoken", "other"]))
def test_codex_repairs_change_only_the_value_they_fix(data, provider) -> None:
    from taotoken_cli.cmd.doctor.checks.clients import codex as checks
    from tests.faithful import assert_toml_faithful, toml_document

    text = data.draw(toml_document(provider))
    text = 'model_provider = "' + provider + '"' + ("\r\n" if "\r\n" in text else "\n") + text
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = write(home / ".codex" / "config.toml", text)
        for check, key in ((checks.codex_base_url, "base_url"), (checks.codex_wire_api, "wire_api")):
            after = repaired(check, context(home), path)
            assert_toml_faithful(text, after, [("model_providers", provider, key)])


@EXAMPLES
@given(lines=st.lists(st.sampled_from(["export PATH=$HOME/bin:$PATH", "# comment", "", "alias ll='ls -l'",
                                       "[ -f /old ] && . /old  # taotoken-env (added by taotoken init)"]),
                      max_size=6),
       newline=st.sampled_from(["\n", "\r\n"]), final=st.booleans())
def test_shell_rc_changes_only_the_marked_line(lines, newline, final) -> None:
    from taotoken_cli.core.clients.shell import MARKER, with_marked_line

    text = newline.join(lines) + (newline if final and lines else "")
    line = f"[ -f /new ] && . /new  {MARKER} (added by taotoken init)"
    after = with_marked_line(text, line)
    old_lines, new_lines = text.splitlines(keepends=True), after.splitlines(keepends=True)
    marked = [i for i, old in enumerate(old_lines) if MARKER in old]
    if marked:
        assert len(new_lines) == len(old_lines)
        for index, (old, new) in enumerate(zip(old_lines, new_lines, strict=True)):
            assert new == old if index != marked[0] else new == line + old[len(old.rstrip("\r\n")):]
    else:
        assert after.startswith(text) and after.count(MARKER) == 1
        assert after.endswith("\n") == (text.endswith("\n") or not text)
        if "\n" in text and newline == "\r\n":  # (a one-line file without a newline shows no line ending)
            assert "\n" not in after.replace("\r\n", "")
    assert with_marked_line(after, line) == after


@EXAMPLES
@given(data=st.data(), entry=st.fixed_dictionaries({}, optional={
    "npm": st.just("@ai-sdk/openai-compatible"), "name": st.just("My TaoToken"),
    "options": st.fixed_dictionaries({}, optional={"baseURL": st.sampled_from([ROOT, ROOT + "/v1"]),
                                                   "apiKey": st.sampled_from([KEY, "sk-old0123456789abcdefghij"]),
                                                   "timeout": st.just(30)}),
    "models": st.just({"gpt-4.1": {"name": "é"}})}), others=st.booleans(), model=st.sampled_from([None, "x/y"]))
def test_opencode_plan_changes_only_its_provider_and_model(data, entry, others, model) -> None:
    providers = {"taotoken": entry} if entry else {}
    if others:
        providers["ollama"] = {"options": {"baseURL": "http://localhost:11434/v1"}, "models": {"llama3": {}}}
    planted = {"provider": providers, **({"model": model} if model else {})}
    text = data.draw(document(planted, comments=True))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = write(home / ".config" / "opencode" / "opencode.json", text)
        plan = opencode.plan(TRIPLE, machine(home))
        after = {c.path: c.after.decode("utf-8") for c in plan.changes}
        assert_faithful(text, after[path], [("provider", "taotoken"), ("model",)], allow_comments=True)
        apply_and_undo(plan, home, {path: text.encode()})


@EXAMPLES
@given(data=st.data(), env=st.dictionaries(st.sampled_from(["TAOTOKEN_API_KEY", "DASHSCOPE_API_KEY"]),
                                           st.sampled_from([KEY, "sk-old0123456789abcdefghij"]), max_size=2),
       entries=st.lists(st.sampled_from([
           {"id": "qwen3-coder-plus", "baseUrl": "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "envKey": "DASHSCOPE_API_KEY"},
           {"id": "gpt-4o-mini", "baseUrl": ROOT, "envKey": "TAOTOKEN_API_KEY"}]), max_size=2, unique_by=str),
       auth=st.sampled_from([None, {"selectedType": "qwen-oauth"}, {"selectedType": "openai", "apiKey": "sk-x"}]),
       version=st.booleans())
def test_qwen_code_plan_changes_only_its_entries(data, env, entries, auth, version) -> None:
    planted = {**({"$version": 4} if version else {}), "env": env, "modelProviders": {"openai": entries},
               **({"security": {"auth": auth}} if auth else {}), "model": {"name": "qwen3-coder-plus"}}
    text = data.draw(document(planted, comments=True))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        path = write(home / ".qwen" / "settings.json", text)
        plan = qwen_code.plan(TRIPLE, machine(home))
        after = plan.changes[0].after.decode("utf-8")
        assert_faithful(text, after, [("$version",), ("env", "TAOTOKEN_API_KEY"), ("modelProviders", "openai"),
                                      ("security", "auth", "selectedType"), ("model", "name"), ("model", "baseUrl")],
                        allow_comments=True)
        apply_and_undo(plan, home, {path: text.encode()})
