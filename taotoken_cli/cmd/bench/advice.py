"""Fixes that fit the run: the catalogue's advice for a limit, rewritten with the load bench really
used (never "-c 1" to someone already at -c 1)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _, current, use

T = TypeVar("T")

# "最多同时进行 5 个请求" (new-api), "max parallel requests: 5", "concurrency limit of 5"
_LIMIT_RES = (re.compile(r"最多同时进行\s*(\d+)\s*个"), re.compile(r"(?:parallel|concurrent)[^0-9]{0,30}(\d+)", re.I),
              re.compile(r"(\d+)\s*(?:parallel|concurrent)", re.I))


def concurrency_limit(message: str | None) -> int | None:
    for pattern in _LIMIT_RES:
        match = pattern.search(message or "")
        if match and int(match.group(1)) > 0:
            return int(match.group(1))
    return None


def in_english(make: Callable[[], T]) -> T:
    """`make()` with English messages: the report's data (--json, the HTML's embedded report) is English in
    every language, while the text report shows the same fixes in the reader's language."""
    lang = current()
    if lang == "en":
        return make()
    use("en")
    try:
        return make()
    finally:
        use(lang)


def _replaced(fix: Fix | str) -> bool:
    """A catalogue fix bench replaces by its own: one whose command is a `taotoken bench` or a longer check."""
    return any(c.line.startswith(("taotoken bench", "taotoken check --timeout")) for c in Fix.coerce(fix).commands)


def fitted_fixes(code: str, fixes: list[Fix], *, concurrency: int, rate: float | None, timeout: float,
                 ok_per_s: float | None, retry_after_s: float | None, server_message: str | None) -> list[Fix]:
    # the catalogue's generic load advice is replaced, the rest kept
    rest = [f for f in fixes if not _replaced(f)]
    if code == "rate.limited":
        if rate:
            first = Fix.of(_("lower the rate: {command}   (this run: --rate {rate:g})"),
                           command=Command(f"taotoken bench --rate {rate / 2:g}"), rate=rate)
        elif concurrency > 1:
            first = Fix.of(_("lower the concurrency: {command}   (this run: -c {concurrency})"),
                           command=Command(f"taotoken bench -c {max(1, concurrency // 2)}"), concurrency=concurrency)
        else:
            pace = (ok_per_s * 0.8 if ok_per_s else (1.0 / retry_after_s if retry_after_s else 1.0))
            first = Fix.of(_("even one request at a time exceeds the limit: pace the requests, e.g. {command}"),
                           command=Command(f"taotoken bench --rate {pace:.2g} -c 1"))
        return [first, *rest]
    if code == "rate.concurrency":
        limit = concurrency_limit(server_message)
        if limit is not None and limit < concurrency:
            first = Fix.of(_("stay within the gateway's limit of {limit} in flight: {command}"), limit=limit,
                           command=Command(f"taotoken bench -c {limit}"))
        elif concurrency > 1:
            first = Fix.of(_("lower the concurrency: {command}   (this run: -c {concurrency})"),
                           command=Command(f"taotoken bench -c {concurrency // 2}"), concurrency=concurrency)
        else:
            first = Fix.prose(_("this run already sends one request at a time: other clients are using this key's "
                                "slots; stop them or use another key"))
        return [first, *rest]
    if code in ("net.timeout", "net.connect_timeout"):
        return [*rest, Fix.of(_("allow more time: {command}   (this run: {timeout:g} s)"),
                              command=Command(f"taotoken bench --timeout {timeout * 2:g}"), timeout=timeout)]
    return fixes
