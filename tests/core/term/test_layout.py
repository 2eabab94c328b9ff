"""The one wrapping rule (core.term.layout): hanging indents, commands/paths/URLs/`code` kept whole, CJK widths."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from taotoken_cli.core.base.fix import Command, Fix, config_set
from taotoken_cli.core.term.layout import cell_width, pad, table, terminal_width, wrap


def test_display_width_counts_wide_characters_twice_and_combining_marks_not_at_all() -> None:
    assert cell_width("abc") == 3
    assert cell_width("令牌管理") == 8
    assert cell_width("e\u0301") == 1  # e + combining acute accent
    assert cell_width("ＡＢ") == 4  # full-width Latin
    assert pad("令牌", 6) == "令牌  " and pad("令牌", 6, "r") == "  令牌"


def test_the_width_is_columns_then_the_terminal_then_80() -> None:
    assert terminal_width({"COLUMNS": "100"}, io.StringIO()) == 100
    assert terminal_width({"COLUMNS": "wide"}, io.StringIO()) == 80
    assert terminal_width({}, io.StringIO()) == 80  # a pipe or a file


def test_a_short_text_stays_one_line_and_a_long_one_hangs_under_its_text() -> None:
    assert wrap("all good", 80, "  [✓] ") == ["  [✓] all good"]
    lines = wrap("the gateway answered the request with a page of HTML instead of JSON from its API", 40,
                 "  [✗] ")
    assert lines[0].startswith("  [✗] the gateway")
    assert all(line.startswith("      ") and line[6] != " " for line in lines[1:])
    assert all(cell_width(line) <= 40 for line in lines)


def test_a_fix_command_is_never_split_and_moves_to_a_line_of_its_own() -> None:
    fix = Fix.of("copy the key again from the console, then: {command}", command=config_set("api_key", "-"))
    lines = wrap(fix, 50, "      fix: ")
    assert lines == ["      fix: copy the key again from the console,",
                     "           then: taotoken config set api_key -"]
    assert wrap(fix, 44, "      fix: ")[-1] == "           taotoken config set api_key -"
    alone = wrap(Fix.of("{command}   (gateway.model lists your models)", command=config_set("model", "<model-id>")),
                 50, "      fix: ")
    assert alone[0] == "      fix: taotoken config set model <model-id>"
    assert alone[1] == "           (gateway.model lists your models)"


def test_a_command_too_long_for_any_line_overflows_rather_than_breaks() -> None:
    line = 'export ANTHROPIC_AUTH_TOKEN="$ANTHROPIC_API_KEY"; unset ANTHROPIC_API_KEY'
    assert wrap(Fix.run(line), 60, "      fix: ") == ["      fix: " + line]
    after_prose = wrap(Fix.of("then run this in every shell: {command}", command=Command(line)), 60, "  ")
    assert after_prose == ["  then run this in every shell:", "  " + line]


def test_paths_urls_and_code_spans_stay_whole() -> None:
    path = "/home/me/.config/some-very-long-directory-name/with-hyphens/taotoken/config.toml"
    lines = wrap(f"no config file at {path} (config.file)", 50, "  ")
    assert "  " + path in lines
    url = "https://taotoken.net/api/v1/chat/completions?utm_source=a-very-long-campaign-name"
    assert any(line.strip() == url for line in wrap(f"the base URL {url} carries a query", 40))
    code = wrap("run `taotoken doctor --check ccswitch` again once CC Switch is idle", 30, "  ")
    assert "  `taotoken doctor --check ccswitch`" in code


def test_a_command_inside_parentheses_ends_with_them() -> None:
    text = Fix.of("{command}   (or: {command2}) and then restart the client", command=Command("taotoken init"),
                  command2=config_set("api_key", "-"))
    lines = wrap(text, 44, "fix: ")
    assert lines == ["fix: taotoken init   (or:", "     taotoken config set api_key -) and then",
                     "     restart the client"]


def test_a_plain_string_is_prose_even_where_it_reads_like_a_command() -> None:
    """Only a Fix says what is a command: a string wraps at its spaces, whatever its words."""
    lines = wrap("copy the key again from the console, then: taotoken config set api_key -", 30, "fix: ")
    assert all(cell_width(line) <= 30 for line in lines), lines  # the words split across lines like any prose
    assert not any("taotoken config set api_key -" in line for line in lines)


def test_prose_with_an_apostrophe_after_taotoken_does_not_glue_the_rest_into_a_command() -> None:
    for text in ("taotoken reads the client's file and then every other file the client reads at start-up",
                 "taotoken doctor's checks read the client's file and every other file it reads at start-up"):
        lines = wrap(text, 30)
        assert all(cell_width(line) <= 30 for line in lines), lines


def test_chinese_wraps_between_characters_at_two_columns_each_not_before_closing_marks() -> None:
    text = Fix.of("密钥已过期。请在控制台的令牌管理中延长密钥的有效期，或者创建一个新密钥，然后运行：{command}",
                  command=config_set("api_key", "-"))
    lines = wrap(text, 40, "fix: ")
    assert all(cell_width(line) <= 40 for line in lines), lines
    assert lines[-1] == "     taotoken config set api_key -"
    assert not any(line.strip()[0] in "，。：" for line in lines[1:])
    assert "".join(line.strip().removeprefix("fix: ") for line in lines[:-1]).startswith("密钥已过期。请在控制台")


def test_lines_of_the_text_stay_lines() -> None:
    assert wrap("one\ntwo", 80, "- ") == ["- one", "  two"]


words = st.text(alphabet="abcdefghij令牌-/", min_size=1, max_size=12)


@given(st.lists(words, min_size=1, max_size=40), st.integers(min_value=30, max_value=120))
def test_prose_always_fits_and_keeps_every_word_in_order(text_words: list[str], width: int) -> None:
    text = " ".join(text_words)
    lines = wrap(text, width, "    fix: ")
    assert all(cell_width(line) <= width for line in lines), lines
    assert "".join("".join(line.split()) for line in lines) == "fix:" + "".join(text_words)
    assert all(line.startswith("         ") for line in lines[1:])


def test_tables_align_by_display_width_drop_columns_then_wrap_the_last() -> None:
    rows = [["auth.invalid_key", "4", "The gateway rejected the key"], ["模型", "5", "短"]]
    lines = table(["code", "exit", "title"], rows, 80, indent="", align="lrl")
    assert lines[0] == "code              exit  title"
    assert lines[2] == "模型                 5  短"
    assert table(["a", "b", "c"], [["1", "2", "3"]], 6, indent="", drop=(1,)) == ["a  c", "1  3"]
    narrow = table(None, [["auth.invalid_key", "4", "The gateway rejected the key, which was copied with extra "
                                                    "characters or deleted in the console"]], 50, indent="",
                   align="lll")
    assert narrow[0].startswith("auth.invalid_key  4  The gateway")
    assert all(line.startswith(" " * 21) for line in narrow[1:]) and len(narrow) > 1
    assert all(cell_width(line) <= 50 for line in narrow)


# -- a typed Fix: the renderer knows its commands ------------------------------------------------------

def test_a_typed_fix_keeps_its_command_whole_on_a_line_of_its_own() -> None:
    fix = Fix.of("copy the key again from the console, then: {command}",
                 command=Command("taotoken config set api_key -"))
    assert wrap(fix, 50, "      fix: ") == ["      fix: copy the key again from the console,",
                                            "           then: taotoken config set api_key -"]
    assert wrap(fix, 44, "      fix: ")[-1] == "           taotoken config set api_key -"
    # any words: the producer said it is a command, nothing in the words decides
    odd = Fix.of("then: {command}", command=Command("frobnicate --all of these words together"))
    assert wrap(odd, 30, "fix: ") == ["fix: then:", "     frobnicate --all of these words together"]


def test_prose_in_a_typed_fix_wraps_even_when_it_reads_like_a_command() -> None:
    fix = Fix.prose("taotoken init writes the files every client reads at start-up, one by one")
    lines = wrap(fix, 30, "fix: ")
    assert all(cell_width(line) <= 30 for line in lines) and len(lines) > 2


def test_a_command_in_a_typed_fix_keeps_a_closing_mark_after_it_on_its_line() -> None:
    fix = Fix.of("{init}   (or: {set}) and then restart the client", init=Command("taotoken init"),
                 set=Command("taotoken config set api_key -"))
    assert wrap(fix, 44, "fix: ") == ["fix: taotoken init   (or:", "     taotoken config set api_key -) and then",
                                      "     restart the client"]


def test_a_command_in_chinese_prose_sits_between_wide_characters_and_stays_whole() -> None:
    fix = Fix.of("密钥已过期。请在控制台的令牌管理中延长密钥的有效期，或者创建一个新密钥，然后运行：{command}（示例）",
                 command=Command("taotoken config set api_key -"))
    lines = wrap(fix, 40, "fix: ")
    assert all(cell_width(line) <= 40 for line in lines), lines
    assert any(line.strip().startswith("taotoken config set api_key -") for line in lines)
    assert not any(line.strip()[0] in "，。：）" for line in lines[1:])
    assert "".join(line.strip().removeprefix("fix: ") for line in lines) == str(fix)


# -- one width rule: rich's; Chinese words and glossary terms never split ----------------------------------

def test_widths_are_richs_for_emoji_sequences_and_cjk() -> None:
    from rich.cells import cell_len

    for text in ("✅ ok", "⚠️ warn", "👨\u200d👩\u200d👧 family", "🇨🇳", "👍🏽", "令牌管理", "ｆｕｌｌ", "e\u0301",
                 "ascii"):
        assert cell_width(text) == cell_len(text), text
    assert cell_width("👨\u200d👩\u200d👧") == 2 and cell_width("⚠️") == 2  # a family once; VS16 widens


def test_an_emoji_sequence_is_never_split_by_a_line_break_or_a_cut() -> None:
    from taotoken_cli.core.term.layout import truncate

    family = "👨\u200d👩\u200d👧"
    lines = wrap("家" * 9 + family + "家" * 9, 21)
    assert any(family in line for line in lines), lines
    assert all(cell_width(line) <= 21 for line in lines)
    assert truncate("ab" + family + "cd", 4) == "ab…" and truncate("ab" + family + "cd", 5) == "ab" + family + "…"


def test_chinese_breaks_between_words_never_inside_a_glossary_term() -> None:
    text = "可能的原因：API 密钥已在控制台中被删除，或者配置档里的 Base URL 指向了另一个网关"
    for width in range(12, 60):
        lines = wrap(text, width, "  ")
        flat_text = "".join(line.strip() for line in lines)
        assert flat_text == text.replace(" ", "") or " ".join(line.strip() for line in lines).replace(" ", "") == \
            text.replace(" ", "")
        for line in lines:
            assert not line.rstrip().endswith(("API", "配", "配置", "密", "Base", "网")), (width, lines)
            assert not line.strip().startswith(("钥", "置档", "档", "URL", "关")), (width, lines)


def test_a_command_that_fits_the_terminal_but_not_the_hang_gets_a_line_of_its_own_from_column_0() -> None:
    line = "[ -f ~/.config/taotoken/env.sh ] && . ~/.config/taotoken/env.sh  # taotoken-env"
    lines = wrap(Fix.of("add this line to ~/.bashrc: {command}", command=Command(line)), 84, "      fix: ")
    assert lines == ["      fix: add this line to ~/.bashrc:", line]
    path = "/home/someone-with-a-long-name/.config/taotoken/backups/20261201T012154.979750Z"
    lines = wrap(Fix.of("{path}", path=Command(path)), 80, "backups of the previous versions: ", "  ")
    assert lines == ["backups of the previous versions:", path]
    # a word in prose keeps the hanging indent (it runs past the width rather than leave it)
    assert wrap(f"no file at {path}", 80, "    ")[-1] == "    " + path


def test_fold_breaks_a_model_id_longer_than_the_line_after_its_punctuation() -> None:
    model = "accounts/fireworks/models/llama-v3p1-405b-instruct-with-a-very-long-suffix-for-testing"
    lines = wrap(f"model {model}: sweep over concurrency", 40, hang="  ", fold=True)
    assert all(cell_width(line) <= 40 for line in lines), lines
    assert lines[0].startswith("model accounts/") and lines[0].endswith(("/", "-")), lines
    assert "".join(line.strip() for line in lines).startswith("model " + model)


def test_items_break_between_them_and_hang() -> None:
    from taotoken_cli.core.term.layout import wrap_items

    items = ["OK 200 GET http://127.0.0.1:38431/api/v1/models 19 ms", "4 models", "model gpt-4o-mini listed",
             "chat 200 16 ms"]
    assert wrap_items(items, 200) == [" · ".join(items)]
    assert wrap_items(items, 80, hang="   ") == ["OK 200 GET http://127.0.0.1:38431/api/v1/models 19 ms · 4 models ·",
                                               "   model gpt-4o-mini listed · chat 200 16 ms"]


def test_the_demo_steps_wrap_with_home_shown_as_tilde(tmp_path) -> None:
    from taotoken_cli.core.term.iostreams import IOStreams
    from taotoken_cli.core.term.layout import show_home_as_tilde

    home = tmp_path / ("a-long-temporary-directory-name" * 2) / "home"
    io = IOStreams.memory(env={"HOME": str(home), "COLUMNS": "60", "TAOTOKEN_HOME_AS_TILDE": "1"})
    try:
        io.out.wrapped(f"wrote {home}/.config/taotoken/config.toml and {home}/.claude/settings.json", hang="  ")
        io.out.line(f"as it is: {home}/.bashrc")
        out, _err = io.written()
        assert out == ("wrote ~/.config/taotoken/config.toml and\n  ~/.claude/settings.json\n"
                       "as it is: ~/.bashrc\n")
    finally:
        show_home_as_tilde({})  # what the next Output does: paths as they are again
    assert wrap(f"{home}/x", 200) == [f"{home}/x"]


def test_a_translated_word_after_a_space_in_a_template_loses_the_space() -> None:
    """`来自 {origin}` with origin `环境变量 X`: Chinese words take no space between them; runs of spaces (columns,
    `{command}   （…）`) and spaces next to Latin text stay."""
    assert wrap("提示：X 来自 环境变量 TAOTOKEN_MODEL", 80) == ["提示：X 来自环境变量 TAOTOKEN_MODEL"]
    assert wrap("连接   新建 2 个", 80) == ["连接   新建 2 个"]
