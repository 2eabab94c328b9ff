"""The parse-only seam (`parse` in tests/conftest.py): the real app parses in-process and hands over the options
object its command built, without running the work. Usage errors through it end as users see them; the few
subprocess tests that prove the real entry point behaves the same stay beside the commands' own tests
(e.g. tests/cmd/check/test_check.py::test_typer_handles_help_and_usage_errors)."""

from __future__ import annotations

import pytest

from taotoken_cli.cmd.check.fastpath import parse_fast
from taotoken_cli.cmd.check.run import CheckOptions
from taotoken_cli.core.base.exitcodes import Exit


@pytest.mark.parametrize("argv", [[], ["-q"], ["--json"], ["--code", "-t", "2.5"], ["--chat", "--model", "m1"],
                                  ["--stream", "--no-proxy", "--allow-unlisted"], ["--timeout=3"],
                                  ["--profile", "work", "--base-url", "http://127.0.0.1:9/api", "-q"]])
def test_checks_two_parsers_build_the_same_options(parse, argv: list[str]) -> None:
    """`check` has a fast path that skips Typer (taotoken_cli.cmd.check.fastpath): both must build the same
    CheckOptions from the same arguments, or a shell start-up line behaves unlike the documented command."""
    fast = parse_fast(argv)
    assert fast is not None, argv
    parsed = parse("check", *argv)
    assert parsed.result.returncode == 0, parsed.result.output
    assert parsed.options == CheckOptions(**fast)


def test_bench_options_are_built_from_the_flags(parse) -> None:
    parsed = parse("bench", "-m", "a", "-m", "b", "-n", "5", "-c", "2", "--rate", "7.5", "--stream", "--json")
    assert parsed.result.returncode == 0 and parsed.result.output == ""  # nothing ran, nothing was printed
    options = parsed.options
    assert (options.requests, options.concurrency, options.rate, options.stream) == ("5", "2", 7.5, True)
    assert options.models == ["a", "b"] and options.json_out is True


@pytest.mark.parametrize("args, words", [(["check", "--timeout", "abc"], "Input should be a valid number"),
                                         (["check", "--qiuet"], "No such option: --qiuet"),
                                         (["doctor", "--timeout", "601"], "at most 600"),
                                         (["bench", "-n"], "Option '-n' requires an argument"),
                                         (["models", "--bogus"], "No such option: --bogus")])
def test_usage_errors_stop_before_the_command_builds_anything(parse, args: list[str], words: str) -> None:
    parsed = parse(*args).result.assert_clean()
    assert parse(*args).options is None
    assert parsed.returncode == Exit.USAGE and parsed.stdout == ""
    assert words in " ".join(parsed.stderr.replace("│", " ").split()), parsed.stderr


@pytest.mark.parametrize("args, words", [(["check", "--json", "--timeout", "inf"], "at most 86400 seconds"),
                                         (["check", "--json", "--timeout", "1e308"], "at most 86400 seconds"),
                                         (["bench", "--json", "-n"], "Option '-n' requires an argument"),
                                         (["doctor", "--json", "--qiuet"], "No such option: --qiuet"),
                                         (["models", "--json", "--timeout", "abc"], "valid number")])
def test_usage_errors_under_json_are_one_json_object_on_stdout(parse, args: list[str], words: str) -> None:
    """A script reading `--json` gets an object there for a usage error too (Click prints those on stderr only):
    exit 2, code input.invalid, the message, and the command's --help as the fix; the text stays on stderr."""
    import json

    parsed = parse(*args).result.assert_clean()
    assert parsed.returncode == Exit.USAGE and parse(*args).options is None
    data = json.loads(parsed.stdout)
    assert (data["schema"], data["exit_code"], data["ok"], data["code"]) == (1, 2, False, "input.invalid")
    assert words in data["message"] and data["fix"] == f"taotoken {args[0]} --help"
    assert words in " ".join(parsed.stderr.replace("│", " ").split()), parsed.stderr
