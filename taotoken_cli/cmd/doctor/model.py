"""What a doctor check is and what it returns: plain data, no I/O, no rendering."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from taotoken_cli.core.base.fix import Fix, texts
from taotoken_cli.core.base.i18n import N_, _

if TYPE_CHECKING:
    from taotoken_cli.cmd.doctor.context import DoctorContext


class Status(str, enum.Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    SKIPPED = "skipped"


# Sections in display order. The English names are the stable ones (--check, --json); views show _(section).
SECTIONS = (N_("Configuration"), N_("Environment"), N_("Clients"), N_("Network"), N_("Gateway"), N_("Devices"))


@dataclass
class Repair:
    """A safe, mechanical edit of one file that `doctor --fix` may offer.

    `transform` maps the file's current text to the repaired text; it is applied to what is on
    disk at fix time (not what was read during the check), so a file edited in between is handled.
    """

    path: Path
    description: str
    transform: Callable[[str], str]
    secret: bool = False  # the file holds the key: keep it 0600
    whole_file: bool = False  # writes the whole file anew (a sync): it waits when another repair edits the file


@dataclass
class Result:
    status: Status
    message: str  # one line
    details: list[str] = field(default_factory=list)
    fixes: list[Fix | str] = field(default_factory=list)  # concrete commands or edits (a str is prose)
    repairs: list[Repair] = field(default_factory=list)
    code: str | None = None  # catalogue code, when the finding is a classified gateway failure
    latency_ms: float | None = None
    timed_out: bool = False
    # For a skip caused by another check's finding: that check's id. When that check is not part of the
    # run (--check), the skip would hide a problem, so the runner turns it into a failure.
    blocked_by: str | None = None

    @classmethod
    def ok(cls, message: str, **kw: Any) -> Result:
        return cls(Status.OK, message, **kw)

    @classmethod
    def warn(cls, message: str, **kw: Any) -> Result:
        return cls(Status.WARN, message, **kw)

    @classmethod
    def fail(cls, message: str, **kw: Any) -> Result:
        return cls(Status.FAIL, message, **kw)

    @classmethod
    def skipped(cls, message: str, **kw: Any) -> Result:
        return cls(Status.SKIPPED, message, **kw)


@dataclass(frozen=True)
class Check:
    id: str  # stable: a public contract for --check, --json and scripts
    section: str  # English, one of SECTIONS; shown as _(section)
    title: str  # English, marked with N_() where the check is registered; shown as _(title)
    run: Callable[[DoctorContext], Result]
    network: bool = False  # does network I/O (skipped with --offline, bounded by the deadline)


@dataclass
class Finding:
    """A check together with its result, as the runner produced it."""

    check: Check
    result: Result
    elapsed_s: float = 0.0

    @property
    def status(self) -> Status:
        return self.result.status


@dataclass
class Report:
    findings: list[Finding]
    elapsed_s: float
    deadline_s: float
    offline: bool
    profile: str | None
    config_path: str | None
    triple: dict[str, str | None]
    strict: bool = False

    def count(self, status: Status) -> int:
        return sum(1 for f in self.findings if f.status is status)

    @property
    def timed_out(self) -> list[str]:
        return [f.check.id for f in self.findings if f.result.timed_out]

    @property
    def verdict(self) -> Status:
        if self.count(Status.FAIL):
            return Status.FAIL
        if self.count(Status.WARN):
            return Status.WARN
        return Status.OK

    @property
    def exit_code(self) -> int:
        if self.count(Status.FAIL) or (self.strict and self.count(Status.WARN)):
            return 1
        return 0


def and_more(text: str, more: int) -> str:
    """`text` and how many more things it stands for: "Codex wire_api (+5 more)"."""
    return _("{text} (+{n} more)").format(text=text, n=more) if more else text


def folded(messages: list[str]) -> str:
    """One line for several problems: the first, and how many more there are."""
    return and_more(messages[0], len(messages) - 1)


@dataclass
class Issues:
    """Collects several problems inside one check; the worst decides the status, the first of it the message."""

    items: list[tuple[Status, str]] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    fixes: list[Fix | str] = field(default_factory=list)
    repairs: list[Repair] = field(default_factory=list)

    def add(self, status: Status, message: str, fixes: list[Fix | str] | None = None,
            repairs: list[Repair] | None = None) -> None:
        self.items.append((status, message))
        self.fixes.extend(f for f in (fixes or []) if str(f) not in texts(self.fixes))
        self.repairs.extend(repairs or [])

    def fail(self, message: str, fixes: list[Fix | str] | None = None, repairs: list[Repair] | None = None) -> None:
        self.add(Status.FAIL, message, fixes, repairs)

    def warn(self, message: str, fixes: list[Fix | str] | None = None, repairs: list[Repair] | None = None) -> None:
        self.add(Status.WARN, message, fixes, repairs)

    def add_result(self, result: Result) -> None:
        """Keep a finding another helper returned as a Result (an ok one adds nothing)."""
        if result.status in (Status.FAIL, Status.WARN):
            self.add(result.status, result.message, result.fixes, result.repairs)

    def result(self, ok_message: str) -> Result:
        if not self.items:
            return Result.ok(ok_message, details=self.details)
        worst = Status.FAIL if any(s is Status.FAIL for s, _message in self.items) else Status.WARN
        ordered = [m for s, m in self.items if s is worst] + [m for s, m in self.items if s is not worst]
        return Result(worst, folded(ordered), details=ordered[1:] + self.details, fixes=self.fixes,
                      repairs=self.repairs)
