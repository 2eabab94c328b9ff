"""Stable exit codes: a documented contract for scripts (README "Exit codes")."""

from __future__ import annotations

from enum import IntEnum

from taotoken_cli.core.base.i18n import N_, _


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


def class_name(status: Exit) -> str:
    """The failure class an exit status names, for a person: `not_found` in English (the contract's own word,
    docs/exit-codes.md), 未找到 in Chinese. Scripts read the number, and --json says `not_found` in every language."""
    return _(_CLASS_NAMES.get(status, status.name.lower()))


# i18n: the failure classes of the exit statuses (docs/exit-codes.md), as `taotoken explain` names them
_CLASS_NAMES = {Exit.OK: N_("ok"), Exit.FAILURE: N_("failure"), Exit.USAGE: N_("usage"), Exit.CONFIG: N_("config"),
                Exit.AUTH: N_("auth"), Exit.NOT_FOUND: N_("not_found"), Exit.RATE_QUOTA: N_("rate_quota"),
                Exit.NETWORK: N_("network"), Exit.BAD_RESPONSE: N_("bad_response"), Exit.SERVER: N_("server"),
                Exit.INTERRUPTED: N_("interrupted")}
