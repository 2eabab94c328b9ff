"""The config loader, `taotoken config`, and input hygiene."""

from __future__ import annotations

import stat

import pytest

from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.masking import Redactor, mask_key
from taotoken_cli.core.net.hygiene import clean_base_url, clean_key, clean_model
from taotoken_cli.core.settings import Overrides, load_settings
from tests.conftest import SENTINEL_KEY


@pytest.mark.parametrize("raw, root", [
    ("https://taotoken.net/api", "https://taotoken.net/api"),
    ("https://taotoken.net/api/", "https://taotoken.net/api"),
    ("https://taotoken.net/api/v1", "https://taotoken.net/api"),
    ("https://taotoken.net/api/v1/v1/", "https://taotoken.net/api"),
    ("https://taotoken.net/api?utm_source=blog&utm_medium=x", "https://taotoken.net/api"),
    ("https://taotoken.net/api/v1#section", "https://taotoken.net/api"),
    ("https://taotoken.net/api/v1/chat/completions", "https://taotoken.net/api"),
    ("  'https://taotoken.net/api'\n", "https://taotoken.net/api"),
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
])
def test_base_url_is_reduced_to_the_root_and_every_change_is_reported(raw: str, root: str) -> None:
    cleaned = clean_base_url(raw)
    assert cleaned.value == root
    if raw != root:
        assert cleaned.changes, "a change to the URL must be reported"
    assert not cleaned.warnings


@pytest.mark.parametrize("raw, root", [("https://taotoken.net:8443/api", "https://taotoken.net:8443/api"),
                                       ("https://taotoken.net:/api", "https://taotoken.net/api"),
                                       ("http://[::1]:3000/api/v1", "http://[::1]:3000/api"),
                                       ("https://例子.测试/api", "https://例子.测试/api"),
                                       ("http://gw_internal:3000/api", "http://gw_internal:3000/api")])
def test_ports_and_hosts_that_httpx_accepts_are_kept(raw: str, root: str) -> None:
    import httpx

    assert clean_base_url(raw).value == root
    httpx.URL(root + "/v1/models")  # what the gateway client will request must parse


def test_a_bad_port_is_an_input_error_before_anything_is_written(home, run) -> None:
    # in-process: refused before anything is written (tests/app/test_parse.py: the parse-only seam)
    result = run("config", "set", "base_url", "https://taotoken.net:abc/api").assert_clean()
    assert result.returncode == 2 and "invalid port 'abc'" in result.stderr and "1 to 65535" in result.stderr
    assert not (home / ".config/taotoken/config.toml").exists()
    result = run("init", "--yes", "--base-url", "https://taotoken.net:99999/api", "--key-stdin", "--model", "m",
                 input=SENTINEL_KEY).assert_clean()
    assert result.returncode == 2 and "invalid port '99999'" in result.stderr
    assert not (home / ".config").exists()


def test_plain_http_to_a_remote_host_warns() -> None:
    assert any("unencrypted" in w for w in clean_base_url("http://gateway.example.com/api").warnings)
    assert not clean_base_url("http://localhost:3000").warnings


@pytest.mark.parametrize("raw", ["ftp://x/api", "taotoken.net/api", "", "https://", "https://user:pw@h/api",
                                 "https://taotoken.net/a pi", "https://taotoken.net:abc/api",
                                 "https://taotoken.net:99999/api", "https://taotoken.net:0/api",
                                 "https://taotoken.net:-1/api", "https://999.1.1.1/api", "https://tao..net/api",
                                 "https://-bad.example/api", "http://[::zz]:3000/api"])
def test_unusable_base_urls_are_refused_with_a_fix(raw: str) -> None:
    with pytest.raises(InputError) as info:
        clean_base_url(raw)
    assert info.value.fix


def test_key_hygiene() -> None:
    assert clean_key(SENTINEL_KEY + "\n").value == SENTINEL_KEY
    assert "newline" in clean_key(SENTINEL_KEY + "\r\n").changes[0]
    assert clean_key(f'"{SENTINEL_KEY}"').value == SENTINEL_KEY
    with pytest.raises(InputError) as info:
        clean_key("Bearer " + SENTINEL_KEY)
    assert "Bearer" in info.value.message and "only the key" in (info.value.fix or "")
    with pytest.raises(InputError):
        clean_key("sk-abc def")
    with pytest.raises(InputError):
        clean_key("sk-abc“def”")
    assert clean_key("abcdefghijklmnopqrstu").warnings  # unexpected shape
    assert any("channel" in w for w in clean_key("sk-abcdefghijklmnop-3").warnings)


def test_model_hygiene() -> None:
    assert clean_model(" gpt-4o \n").value == "gpt-4o"
    with pytest.raises(InputError):
        clean_model("gpt 4o")
    with pytest.raises(InputError):
        clean_model("  ")
    assert clean_model("qwen/通义千问-max").value == "qwen/通义千问-max"  # any printable text is an ID


@pytest.mark.parametrize("clean", [clean_model, clean_base_url])
@pytest.mark.parametrize("odd", ["\udcff", "\x01", "\x1b[31m"])
def test_bytes_that_are_not_text_are_refused_at_input(clean, odd: str) -> None:
    """A variable set from a file in another encoding holds bytes Python keeps as U+DC80-U+DCFF: written into a
    config file they crashed init (UnicodeEncodeError, found by tests/sweeps/test_sweep_fuzz_commands.py)."""
    value = ("https://taotoken.net/api" if clean is clean_base_url else "gpt-4o") + odd
    with pytest.raises(InputError) as info:
        clean(value)
    assert "not text" in info.value.message and ascii(value) in info.value.message  # shown escaped


def test_init_names_a_model_variable_that_holds_bytes_not_text(run, home, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAOTOKEN_MODEL", "gpt\udcff")
    result = run("init", "--yes", "--all", "--key-stdin", "--base-url", "http://127.0.0.1:9/api", input=SENTINEL_KEY)
    assert result.returncode == 2, result.output  # input.invalid, before anything is written
    assert "TAOTOKEN_MODEL" in result.stderr and "not text" in result.stderr and "internal error" not in result.output
    assert not (home / ".config" / "taotoken").exists()
    result.assert_clean()


def test_masking() -> None:
    assert mask_key("sk-abcdefghijwxyz") == "sk-ab…wxyz"
    assert mask_key("short") == "…"
    assert "SENTINEL" not in Redactor(SENTINEL_KEY)(f"error: key {SENTINEL_KEY} rejected")


def test_precedence_flag_env_file_default(home, cli, monkeypatch) -> None:
    cli("config", "set", "base_url", "https://file.example/api").assert_clean()
    settings = load_settings()
    assert settings.base_url.value == "https://file.example/api" and settings.base_url.origin.kind == "file"
    monkeypatch.setenv("TAOTOKEN_BASE_URL", "https://env.example/api/v1")
    settings = load_settings()
    assert (settings.base_url.value, settings.base_url.origin.detail) == ("https://env.example/api",
                                                                          "TAOTOKEN_BASE_URL")
    assert settings.base_url.notes
    settings = load_settings(Overrides(base_url="https://flag.example/api"))
    assert settings.base_url.origin.kind == "flag"
    monkeypatch.delenv("TAOTOKEN_BASE_URL")
    (home / ".config/taotoken/config.toml").unlink()
    settings = load_settings()
    assert settings.base_url.value == "https://taotoken.net/api" and settings.base_url.origin.kind == "default"


def test_profiles_and_taotoken_config_override(home, cli, monkeypatch, tmp_path) -> None:
    cli("config", "set", "model", "gpt-4o-mini").assert_clean()
    cli("config", "set", "model", "cpu-llama3-8b-int8", "--profile", "cpu").assert_clean()
    assert load_settings().model.value == "gpt-4o-mini"
    monkeypatch.setenv("TAOTOKEN_PROFILE", "cpu")
    assert load_settings().model.value == "cpu-llama3-8b-int8"
    result = cli("config", "profiles").assert_clean()
    assert "* cpu" in result.stdout and "  default" in result.stdout
    other = tmp_path / "elsewhere.toml"
    monkeypatch.setenv("TAOTOKEN_CONFIG", str(other))
    assert cli("config", "path").stdout.strip() == str(other)


def test_config_set_key_from_stdin_is_0600_masked_and_preserves_comments(home, cli) -> None:
    path = home / ".config/taotoken/config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("# my notes\ndefault_profile = \"default\"\n\n[profiles.default]\nmodel = \"m1\"  # keep\n")
    path.chmod(0o600)
    result = cli("config", "set", "api_key", "-", input=SENTINEL_KEY + "\n").assert_clean()
    assert "sk-SE…WXYZ" in result.stdout
    text = path.read_text()
    assert "# my notes" in text and 'model = "m1"  # keep' in text and SENTINEL_KEY in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    shown = cli("config", "show", "--origin").assert_clean()
    assert "sk-SE…WXYZ" in shown.stdout and "m1" in shown.stdout
    again = cli("config", "set", "api_key", "-", input=SENTINEL_KEY).assert_clean()
    assert "nothing changed" in again.stdout


def test_config_set_key_on_a_terminal_asks_hidden_instead_of_waiting_for_ctrl_d(home) -> None:
    """A real pseudo-terminal: the prompt appears, the typed key is not echoed, one Enter ends it."""
    from tests.conftest import PtySession

    with PtySession(["config", "set", "api_key", "-"], cwd=home) as session:
        session.expect(b"API key (input hidden): ")
        session.send(SENTINEL_KEY.encode() + b"\n")
        session.expect(b"set api_key = sk-SE")
    assert session.exit_code == 0, session.seen
    assert SENTINEL_KEY.encode() not in session.seen  # neither echoed nor printed
    assert SENTINEL_KEY in (home / ".config/taotoken/config.toml").read_text()


def test_config_set_key_from_memory_streams_goes_through_the_prompter(home) -> None:
    """The core called directly with in-memory I/O: a pipe gives the whole key, a terminal one hidden line."""
    from taotoken_cli.cmd.config.run import set_value
    from taotoken_cli.core.term.iostreams import IOStreams

    piped = IOStreams.memory(SENTINEL_KEY + "\n", env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".c")})
    set_value(piped, "api_key", "-", None)
    assert "sk-SE…WXYZ" in piped.written()[0]
    typed = IOStreams.memory("sk-TYPEDkey0123456789abcdWXYZ\n", env=piped.env, tty=True)
    set_value(typed, "api_key", "-", None)
    out, err = typed.written()
    assert "API key (input hidden): " in err and "sk-TY…WXYZ" in out
    assert "sk-TYPEDkey0123456789abcdWXYZ" in (home / ".c/taotoken/config.toml").read_text()


def test_broken_config_file_names_line_and_column(home, cli) -> None:
    path = home / ".config/taotoken/config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('[profiles.default]\nmodel = "unterminated\n')
    result = cli("config", "show").assert_clean()
    assert result.returncode == 3
    assert f"{path}:2:" in result.stderr and "fix:" in result.stderr


def test_bearer_prefix_refused_without_traceback(home, cli) -> None:
    result = cli("config", "set", "api_key", "-", input="Bearer " + SENTINEL_KEY).assert_clean()
    assert result.returncode == 2 and "Bearer" in result.stderr


def test_config_show_json_is_stable_and_masked(home, cli, monkeypatch) -> None:
    import json

    result = cli("config", "show", "--json", env={"TAOTOKEN_API_KEY": SENTINEL_KEY}).assert_clean()
    data = json.loads(result.stdout)
    assert set(data) == {"schema", "exit_code", "profile", "profile_origin", "config_path", "config_exists", "values",
                         "routes", "profiles"}
    assert data["values"]["api_key"] == {"value": "sk-SE…WXYZ", "origin": "env", "origin_detail": "TAOTOKEN_API_KEY",
                                         "notes": [], "error": None}
