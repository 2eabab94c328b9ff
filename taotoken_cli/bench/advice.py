"""Fixes that fit the run: the catalogue's advice for a limit, rewritten with the load bench really
used (never "-c 1" to someone already at -c 1)."""

from __future__ import annotations

import re

# "最多同时进行 5 个请求" (new-api), "max parallel requests: 5", "concurrency limit of 5"
_LIMIT_RES = (re.compile(r"最多同时进行\s*(\d+)\s*个"), re.compile(r"(?:parallel|concurrent)[^0-9]{0,30}(\d+)", re.I),
              re.compile(r"(\d+)\s*(?:parallel|concurrent)", re.I))


def concurrency_limit(message: str | None) -> int | None:
    for pattern in _LIMIT_RES:
        match = pattern.search(message or "")
        if match and int(match.group(1)) > 0:
            return int(match.group(1))
    return None


def fitted_fixes(code: str, fixes: list[str], *, concurrency: int, rate: float | None, timeout: float,
                 ok_per_s: float | None, retry_after_s: float | None, server_message: str | None) -> list[str]:
    # the catalogue's generic load advice is replaced, the rest kept
    rest = [f for f in fixes if "taotoken bench" not in f and "taotoken check --timeout" not in f]
    if code == "rate.limited":
        if rate:
            first = f"lower the rate: taotoken bench --rate {rate / 2:g}   (this run: --rate {rate:g})"
        elif concurrency > 1:
            first = (f"lower the concurrency: taotoken bench -c {max(1, concurrency // 2)}   "
                     f"(this run: -c {concurrency})")
        else:
            pace = (ok_per_s * 0.8 if ok_per_s else (1.0 / retry_after_s if retry_after_s else 1.0))
            first = (f"even one request at a time exceeds the limit: pace the requests, "
                     f"e.g. taotoken bench --rate {pace:.2g} -c 1")
        return [first, *rest]
    if code == "rate.concurrency":
        limit = concurrency_limit(server_message)
        if limit is not None and limit < concurrency:
            first = f"stay within the gateway's limit of {limit} in flight: taotoken bench -c {limit}"
        elif concurrency > 1:
            first = f"lower the concurrency: taotoken bench -c {concurrency // 2}   (this run: -c {concurrency})"
        else:
            first = ("this run already sends one request at a time: other clients are using this key's "
                     "slots; stop them or use another key")
        return [first, *rest]
    if code in ("net.timeout", "net.connect_timeout"):
        return [*rest, f"allow more time: taotoken bench --timeout {timeout * 2:g}   (this run: {timeout:g} s)"]
    return fixes
