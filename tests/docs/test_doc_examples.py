"""The docs quote real output, and the quotes stay true: every console example in README.md and docs/*.md
is run (temporary HOME, the mock gateway on 127.0.0.1) and compared with what the docs show.

How examples are written, marked and normalised: tests/doc_examples.py. When a test here fails, the
message shows what the command prints now; `python -m tests.doc_examples FILE [LINE]` prints it too.
"""

from __future__ import annotations

import re
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from tests import doc_examples as ex

BLOCKS = ex.checked_blocks()
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.fixture(scope="module")
def block_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The selected examples, run concurrently (each is mostly waiting for subprocesses)."""
    wanted = {item.callspec.params["block"].id for item in request.session.items
              if getattr(item, "callspec", None) and isinstance(item.callspec.params.get("block"), ex.Block)}
    worlds = ex.Worlds(tmp_path_factory.mktemp("setups"))
    futures: dict[str, Future] = {}
    # The demo is the longest example: start it first.
    order = sorted(enumerate(BLOCKS), key=lambda nb: not nb[1].steps[0].command.startswith("taotoken demo"))
    with ThreadPoolExecutor(max_workers=4) as pool:
        for n, block in order:
            if block.id in wanted:
                futures[block.id] = pool.submit(ex.run_block, block, worlds, tmp_path_factory.mktemp(f"doc{n}"))
        yield futures
    worlds.close()


# One xdist worker runs them all (tests/conftest.py, DOC_EXAMPLES): each worker that runs one of these tests builds
# `block_runs`, which runs every selected block.
@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_example_prints_what_the_docs_show(block: ex.Block, block_runs) -> None:
    problems = ex.compare(block_runs[block.id].result())
    assert not problems, f"{block.id} (setup {block.setup}):\n" + "\n".join(problems)


def test_the_examples_are_one_xdist_unit(request: pytest.FixtureRequest) -> None:
    """tests/conftest.py sends the examples to one xdist worker by their node ID's prefix: it names this test."""
    from tests.conftest import DOC_EXAMPLES

    here = request.node.nodeid.split("::")[0]
    assert f"{here}::{test_example_prints_what_the_docs_show.__name__}[" == DOC_EXAMPLES


def test_every_documented_command_parses() -> None:
    """Console and shell blocks, opted-out ones too: the commands and options shown exist. A line that ends in the
    comment `# a usage error` shows one on purpose (docs/json.md): it must not parse."""
    bad, seen = [], 0
    for block in ex.all_blocks():
        if block.lang not in ex.SHELL_LANGS:
            continue
        for line, command in ex.shell_lines(block):
            meant = command.rstrip().endswith("# a usage error")
            for args in ex.taotoken_invocations(command):
                seen += 1
                error = ex.parse_error(args) if args else None
                where = f"{block.path.relative_to(ex.REPO)}:{line}: taotoken {' '.join(args)}"
                if error and not meant:
                    bad.append(f"{where}\n  {error}")
                elif meant and not error:
                    bad.append(f"{where}\n  parses, though the line says it is a usage error")
    assert seen > 50, "the docs show fewer commands than expected: is the collector broken?"
    assert not bad, "\n".join(bad)


def test_markers_and_blocks_are_well_formed() -> None:
    problems = [p for block in ex.all_blocks() for p in block.problems]
    problems += [p for path in ex.DOC_FILES for p in ex.stray_markers(path)]
    problems += [f"{b.id}: unknown setup {b.setup!r} (known: {', '.join(ex.SETUPS)})"
                 for b in ex.all_blocks() if b.setup not in ex.SETUPS]
    assert not problems, "\n".join(problems)
    assert len(BLOCKS) >= 20, "most examples should be checked"


def test_every_docs_page_is_linked_and_every_relative_link_resolves() -> None:
    readme = (ex.REPO / "README.md").read_text(encoding="utf-8")
    index = (ex.REPO / "docs/README.md").read_text(encoding="utf-8")
    pages = [p.name for p in ex.DOC_FILES if p.parent.name == "docs" and p.name != "README.md"]
    assert not [p for p in pages if f"docs/{p}" not in readme], "a docs page the README does not link"
    assert not [p for p in pages if f"({p}" not in index], "a docs page docs/README.md does not link"
    # Each README in another language is linked from the top of the English one, and links back.
    for translated in (p for p in ex.DOC_FILES if p.parent == ex.REPO and p.name != "README.md"):
        assert f"({translated.name})" in "\n".join(readme.splitlines()[:5]), f"README.md's top lacks {translated.name}"
        assert "(README.md)" in "\n".join(translated.read_text(encoding="utf-8").splitlines()[:5])
    broken = []
    for path in ex.DOC_FILES:
        for target in LINK.findall(path.read_text(encoding="utf-8")):
            if "://" in target or target.startswith(("#", "mailto:")):
                continue
            if not (path.parent / target.split("#")[0]).exists():
                broken.append(f"{path.relative_to(ex.REPO)}: {target}")
    assert not broken, "\n".join(broken)


# -- the checker's own parts -------------------------------------------------------------------------

def test_the_parser_accepts_real_commands_and_rejects_wrong_ones() -> None:
    assert ex.parse_error(["route", "--verify", "--all", "--samples", "2"]) is None
    assert ex.parse_error(["config", "set", "model", "x", "--profile", "cpu"]) is None
    assert ex.parse_error(["check", "--help"]) is None
    assert "--bogus" in ex.parse_error(["check", "--bogus"])
    assert ex.parse_error(["check", "--timeout", "soon"]) is not None
    assert ex.parse_error(["no-such-command"]) is not None
    assert ex.parse_error(["route", "set", "--no-such-option"]) is not None


def test_the_collector_finds_taotoken_wherever_the_shell_runs_it() -> None:
    found = ex.taotoken_invocations
    assert found('printf %s "$KEY" | taotoken init --key-stdin -m m --yes') == [["init", "--key-stdin", "-m", "m",
                                                                                  "--yes"]]
    assert found('eval "$(taotoken route --export)"; echo "$TAOTOKEN_MODEL"') == [["route", "--export"]]
    assert found("HTTP_PROXY=http://127.0.0.1:9 taotoken check -q   # a comment") == [["check", "-q"]]
    assert found("taotoken bench -n 10 --json > run.json --raw r.jsonl 2>/dev/null") == [
        ["bench", "-n", "10", "--json", "--raw", "r.jsonl"]]
    assert found("command -v taotoken >/dev/null 2>&1 || return 0") == []
    assert found("if taotoken check -q --timeout 2; then") == [["check", "-q", "--timeout", "2"]]
    assert found("taotoken check -q --timeout 2 && echo ok") == [["check", "-q", "--timeout", "2"]]


def test_the_matcher_allows_gaps_only_where_the_docs_say_so() -> None:
    actual = ["a", "b", "c", "d"]
    assert ex.mismatch(["a", "b", "c", "d"], actual) is None
    assert ex.mismatch(["a", "… more", "d"], actual) is None
    assert ex.mismatch(["…", "c", "d"], actual) is None
    assert ex.mismatch(["a", "…"], actual) is None
    assert ex.mismatch(["a", "c", "…"], actual) is not None  # b is not marked as left out
    assert ex.mismatch(["a", "b"], actual) is not None  # c, d are not marked as left out
    assert ex.mismatch(["…", "d", "c"], actual) is not None
    assert ex.mismatch(["a", "…", "b", "…", "d"], actual) is None


def test_normalising_touches_only_what_varies() -> None:
    line = "OK 200 GET http://127.0.0.1:41234/api/v1/models 44 ms · 5 models · chat 200 3ms  in 0.29 s"
    assert ex.normalise(line) == [
        "OK 200 GET http://127.0.0.1:PORT/api/v1/models # ms · 5 models · chat 200 #ms in # s"]
    assert ex.normalise("  requests/s      50.2     1,379.2   x20 3 models") == ["requests/s #.# #.# x20 3 models"]
    assert ex.normalise("backups: ~/x/20261201T011643.350481Z at 16:35:56") == ["backups: ~/x/<time> at HH:MM:SS"]
    assert ex.normalise("127.0.0.1 and 127.0.0.1:9 and v0.6.11") == ["127.0.0.1 and 127.0.0.1:9 and v0.6.11"]
