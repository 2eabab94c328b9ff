"""A Diagnosis as indented text lines (server words, details, causes, fixes), shared by `check` and `models`.

Plain strings, no rich: `check` renders with it at shell start-up. Lines fit `width` columns with hanging
indents, commands kept whole (taotoken_cli.layout).
"""

from __future__ import annotations

from taotoken_cli.diagnosis.classify import Diagnosis
from taotoken_cli.layout import wrap

UNBOUNDED = 10**6  # no width given: every item on one line

_RED, _RESET = "\033[31m", "\033[0m"


def failure_lines(diagnosis: Diagnosis, *, request: str = "", responded: bool, proxy: str | None = None,
                  color: bool = False, width: int = UNBOUNDED) -> list[str]:
    """`FAIL <request>  code: title` and what follows it; `request` is e.g. `401 GET https://… 35 ms`."""
    lines = wrap(f"{request + '  ' if request else ''}{diagnosis.code}: {diagnosis.entry.title}", width, "FAIL ",
                 "  ")
    if color:
        lines[0] = f"{_RED}FAIL{_RESET}" + lines[0][len("FAIL"):]
    return [*lines, *diagnosis_lines(diagnosis, responded=responded, proxy=proxy, width=width)]


def diagnosis_lines(diagnosis: Diagnosis, *, responded: bool, proxy: str | None = None,
                    width: int = UNBOUNDED) -> list[str]:
    """What follows a failure's headline; `responded`: a server answered (its words are "server said")."""
    lines = []
    if diagnosis.server_message:
        lines += wrap(diagnosis.server_message, width, f"  {'server said' if responded else 'error'}: ")
    for detail in diagnosis.details:
        lines += wrap(detail, width, "  ", "    ")
    if diagnosis.retry_after_s is not None:
        lines.append(f"  retry after: {diagnosis.retry_after_s:g} s")
    if proxy:
        lines += wrap(proxy, width, "  proxy: ")
    causes = diagnosis.causes()
    if causes:
        lines += wrap("; ".join(f"{i}) {cause}" for i, cause in enumerate(causes, 1)), width, "  likely: ")
    for fix in diagnosis.fixes():
        lines += wrap(fix, width, "  fix: ")
    lines.append(f"  more: taotoken explain {diagnosis.code}")
    return lines
