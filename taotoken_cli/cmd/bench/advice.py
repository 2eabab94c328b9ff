"""Fixes that fit the run: the catalogue's advice for a limit, rewritten with the load bench really
used (never "-c 1" to someone already at -c 1)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

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


def fitted_fixes(code: str, fixes: list[str], *, concurrency: int, rate: float | None, timeout: float,
                 ok_per_s: float | None, retry_after_s: float | None, server_message: str | None) -> list[str]:
    # the catalogue's generic load advice is replaced, the rest kept
    rest = [f for f in fixes if "taotoken bench" not in f and "taotoken check --timeout" not in f]
    if code == "rate.limited":
        if rate:
            first = _("lower the rate: taotoken bench --rate {half:g}   (this run: --rate {rate:g})").format(
                half=rate / 2, rate=rate)
        elif concurrency > 1:
            first = _("lower the concurrency: taotoken bench -c {half}   (this run: -c {concurrency})").format(
                half=max(1, concurrency // 2), concurrency=concurrency)
        else:
            pace = (ok_per_s * 0.8 if ok_per_s else (1.0 / retry_after_s if retry_after_s else 1.0))
            first = _("even one request at a time exceeds the limit: pace the requests, "
                      "e.g. taotoken bench --rate {pace:.2g} -c 1").format(pace=pace)
        return [first, *rest]
    if code == "rate.concurrency":
        limit = concurrency_limit(server_message)
        if limit is not None and limit < concurrency:
            first = _("stay within the gateway's limit of {limit} in flight: taotoken bench -c {limit}").format(
                limit=limit)
        elif concurrency > 1:
            first = _("lower the concurrency: taotoken bench -c {half}   (this run: -c {concurrency})").format(
                half=concurrency // 2, concurrency=concurrency)
        else:
            first = _("this run already sends one request at a time: other clients are using this key's "
                      "slots; stop them or use another key")
        return [first, *rest]
    if code in ("net.timeout", "net.connect_timeout"):
        return [*rest, _("allow more time: taotoken bench --timeout {longer:g}   (this run: {timeout:g} s)").format(
            longer=timeout * 2, timeout=timeout)]
    return fixes
