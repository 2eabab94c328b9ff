"""A Diagnosis as indented text lines (server words, details, causes, fixes), shared by `check` and `models`.

Plain strings, no rich: `check` renders with it at shell start-up. Lines fit `width` columns with hanging
indents, commands kept whole (taotoken_cli.core.term.layout). Labels and the catalogue's words are in the user's
language; the server's words are shown as they came.
"""

from __future__ import annotations

from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.diagnosis.classify import Diagnosis
from taotoken_cli.core.term.layout import wrap

UNBOUNDED = 10**6  # no width given: every item on one line

_RED, _RESET = "\033[31m", "\033[0m"


def failure_lines(diagnosis: Diagnosis, *, request: str = "", responded: bool, proxy: str | None = None,
                  color: bool = False, width: int = UNBOUNDED) -> list[str]:
    """`FAIL <request>  code: title` and what follows it; `request` is e.g. `401 GET https://… 35 ms`."""
    # i18n: the mark that starts a failure's first line (check, models): "FAIL 401 GET https://… auth.invalid_key: …"
    mark = _("FAIL")
    lines = wrap(f"{request + '  ' if request else ''}{diagnosis.code}: {diagnosis.title}", width, mark + " ", "  ")
    if color:
        lines[0] = f"{_RED}{mark}{_RESET}" + lines[0][len(mark):]
    return [*lines, *diagnosis_lines(diagnosis, responded=responded, proxy=proxy, width=width)]


def diagnosis_lines(diagnosis: Diagnosis, *, responded: bool, proxy: str | None = None,
                    width: int = UNBOUNDED) -> list[str]:
    """What follows a failure's headline; `responded`: a server answered (its words are "server said")."""
    lines = []
    if diagnosis.server_message:
        lines += wrap(diagnosis.server_message, width, "  " + (_("server said: ") if responded else _("error: ")))
    for detail in diagnosis.details:
        lines += wrap(detail, width, "  ", "    ")
    if diagnosis.retry_after_s is not None:
        lines.append("  " + _("retry after: {seconds} s").format(seconds=f"{diagnosis.retry_after_s:g}"))
    if proxy:
        lines += wrap(proxy, width, "  " + _("proxy: "))
    causes = diagnosis.causes()
    if causes:
        # i18n: one numbered cause in the `likely:` line, "1) the key was copied incompletely; 2) …"
        numbered = [_("{number}) {cause}").format(number=i, cause=cause) for i, cause in enumerate(causes, 1)]
        lines += wrap(_("; ").join(numbered), width, "  " + _("likely: "))
    for fix in diagnosis.fixes():
        lines += wrap(fix, width, "  " + _("fix: "))
    lines.append("  " + _("more: taotoken explain {code}").format(code=diagnosis.code))
    return lines
