"""Stable exit codes: a documented contract for scripts (README "Exit codes")."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    FAILURE = 1  # doctor found a problem; generic failure
    USAGE = 2  # bad flags or arguments (Typer/Click use 2 as well)
    CONFIG = 3  # no key / no usable configuration, or a config file that cannot be parsed
    AUTH = 4  # key missing at the gateway, rejected, or not allowed (401/403)
    NOT_FOUND = 5  # wrong URL layout or unknown model (404, HTML page, no channel)
    RATE_QUOTA = 6  # 429 rate limit, exhausted quota or balance
    NETWORK = 7  # DNS, refused, reset, timeout, TLS, proxy
    BAD_RESPONSE = 8  # 2xx that is not a usable API answer (not JSON, no choices, broken stream)
    SERVER = 9  # 5xx from the gateway or its upstream
    INTERRUPTED = 130
