"""`doctor --fix`: turn the repairs that checks offered into one fileplan Plan, show it, confirm, apply."""

from __future__ import annotations

from taotoken_cli.doctor.model import Report
from taotoken_cli.output import Output


def offer_repairs(out: Output, report: Report, *, assume_yes: bool) -> None:
    out.line("--fix: not available in this build yet")
