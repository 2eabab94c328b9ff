"""A Diagnosis as indented text lines (server words, details, causes, fixes), shared by `check` and `models`.

Plain strings, no rich: `check` renders with it at shell start-up.
"""

from __future__ import annotations

from taotoken_cli.diagnosis.classify import Diagnosis

_RED, _RESET = "\033[31m", "\033[0m"


def failure_lines(diagnosis: Diagnosis, *, request: str = "", responded: bool, proxy: str | None = None,
                  color: bool = False) -> list[str]:
    """`FAIL <request>  code: title` and what follows it; `request` is e.g. `401 GET https://… 35 ms`."""
    fail = f"{_RED}FAIL{_RESET}" if color else "FAIL"
    head = f"{fail} {request + '  ' if request else ''}{diagnosis.code}: {diagnosis.entry.title}"
    return [head, *diagnosis_lines(diagnosis, responded=responded, proxy=proxy)]


def diagnosis_lines(diagnosis: Diagnosis, *, responded: bool, proxy: str | None = None) -> list[str]:
    """What follows a failure's headline; `responded`: a server answered (its words are "server said")."""
    lines = []
    if diagnosis.server_message:
        lines.append(f"  {'server said' if responded else 'error'}: {diagnosis.server_message}")
    lines.extend(f"  {detail}" for detail in diagnosis.details)
    if diagnosis.retry_after_s is not None:
        lines.append(f"  retry after: {diagnosis.retry_after_s:g} s")
    if proxy:
        lines.append(f"  proxy: {proxy}")
    causes = diagnosis.causes()
    if causes:
        lines.append("  likely: " + "; ".join(f"{i}) {cause}" for i, cause in enumerate(causes, 1)))
    lines.extend(f"  fix: {fix}" for fix in diagnosis.fixes())
    lines.append(f"  more: taotoken explain {diagnosis.code}")
    return lines
