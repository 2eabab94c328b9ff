"""docs/SECURITY.md names, for every promise, the test that holds it (issue 22, item 11): each named test file exists
and each named test function is defined in it, so a renamed or deleted test cannot leave a promise unheld."""

from __future__ import annotations

import re

from tests.conftest import REPO

PAGE = REPO / "docs" / "SECURITY.md"


def promises() -> list[tuple[str, str]]:
    """(promise, test cell) for each row of the table at the end of the page."""
    table = PAGE.read_text(encoding="utf-8").split("## Promises and the tests that hold them", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| Promise")]
    return [tuple(cell.strip() for cell in row.strip("|").rsplit("|", 1)) for row in rows]  # type: ignore[misc]


def test_every_promise_names_tests_that_exist() -> None:
    rows = promises()
    assert len(rows) >= 20, rows
    for promise, cell in rows:
        references = re.findall(r"`((?:tests/|::)[^`]+)`", cell)
        assert references, f"no test named for: {promise}"
        current = None
        for reference in references:
            path, _, name = reference.partition("::")
            if path:  # `::name` continues the file named before it
                current = REPO / path
                assert current.is_file(), reference
            assert current is not None, reference
            if name:
                assert re.search(rf"^def {re.escape(name)}\(", current.read_text(encoding="utf-8"), re.M), reference
