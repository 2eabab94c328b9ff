"""Keeping the API key secret in everything the tool prints, logs or diffs."""

from __future__ import annotations

import re

from taotoken_cli.core.base.i18n import _

ELLIPSIS = "…"
_MIN_SECRET_LEN = 6


def mask_key(key: str | None) -> str:
    """`sk-abcdef…wxyz` -> `sk-ab…wxyz`; short keys reveal at most their last two characters."""
    if not key:
        return _("(not set)")
    if len(key) >= 12:
        return f"{key[:5]}{ELLIPSIS}{key[-4:]}"
    if len(key) >= 6:
        return f"{ELLIPSIS}{key[-2:]}"
    return ELLIPSIS


class Redactor:
    """Replaces known secrets in text with their masked form.

    Every printed line goes through one, because servers echo keys back in error bodies
    (LiteLLM, one-api) and exceptions can carry URLs or headers.
    """

    def __init__(self, *secrets: str | None) -> None:
        self._secrets: list[str] = []
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= _MIN_SECRET_LEN and secret not in self._secrets:
            self._secrets.append(secret)
            # The stripped form too: a key pasted with a newline is still that key.
            stripped = secret.strip().strip("'\"")
            if stripped != secret and len(stripped) >= _MIN_SECRET_LEN:
                self._secrets.append(stripped)
            self._secrets.sort(key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, mask_key(secret))
        return text


# Bearer tokens and sk- style keys that we do not know about (e.g. in a file we read).
_TOKEN_RE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,})")


def mask_unknown_keys(text: str) -> str:
    return _TOKEN_RE.sub(lambda m: mask_key(m.group(1)), text)


# Every secret the process has loaded. Output and the top-level error handler mask these, so a
# key cannot reach the terminal even through an exception message or a server's echo.
SECRETS = Redactor()


def remember_secret(secret: str | None) -> None:
    SECRETS.add(secret)
