"""Keeping the API key secret in everything the tool prints, logs or diffs."""

from __future__ import annotations

import re

from taotoken_cli.core.base.i18n import _

ELLIPSIS = "…"
_MIN_SECRET_LEN = 6


def unquoted_key(value: str) -> str:
    """The key as it was meant: without the whitespace, newline or quotes pasted around it."""
    return value.strip().strip("'\"")


def mask_key(key: str | None) -> str:
    """`sk-abcdef…wxyz` -> `sk-ab…wxyz`; short keys reveal at most their last two characters."""
    if not key:
        return _("(not set)")
    if len(key) >= 12:
        return f"{key[:5]}{ELLIPSIS}{key[-4:]}"
    if len(key) >= 6:
        return f"{ELLIPSIS}{key[-2:]}"
    return ELLIPSIS


# A run of this many characters of a key's secret part (the part after `sk-`, `sk-ant-api03-`, …) identifies it:
# a gateway that echoes the key without its prefix, or cut short, still must not show it. The masked form shows at
# most 5 + 4 characters, so it never matches again.
PARTIAL_RUN = 12
_PREFIX_RE = re.compile(r"^(?:[A-Za-z]{2,6}-(?:[A-Za-z0-9]{1,8}-)*)")
_RUN_RE = re.compile(rf"[A-Za-z0-9_\-]{{{PARTIAL_RUN},}}")


def secret_part(key: str) -> str:
    """The key without its vendor prefix: `sk-ant-api03-XYZ…` -> `XYZ…`."""
    return key[len(m.group(0)):] if (m := _PREFIX_RE.match(key)) and len(key) - len(m.group(0)) >= 8 else key


class Redactor:
    """Replaces known secrets in text with their masked form: the whole key, and any run of PARTIAL_RUN characters
    of its secret part (an echo without the prefix, or cut short).

    Every printed line goes through one, because servers echo keys back in error bodies
    (LiteLLM, one-api) and exceptions can carry URLs or headers.
    """

    def __init__(self, *secrets: str | None) -> None:
        self._secrets: list[str] = []
        self._runs: dict[str, str] = {}  # every PARTIAL_RUN-long piece of a secret part -> the key it is of
        # Aligned pieces of half that length: every PARTIAL_RUN-long window of a secret part holds one whole, so a
        # text holding none of them (plain substring tests, fast) cannot hold a partial echo.
        self._anchors: set[str] = set()
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= _MIN_SECRET_LEN and secret not in self._secrets:
            self._secrets.append(secret)
            # The stripped form too: a key pasted with a newline is still that key.
            stripped = unquoted_key(secret)
            if stripped != secret and len(stripped) >= _MIN_SECRET_LEN:
                self._secrets.append(stripped)
            self._secrets.sort(key=len, reverse=True)
            part = secret_part(stripped)
            for start in range(len(part) - PARTIAL_RUN + 1):
                self._runs.setdefault(part[start:start + PARTIAL_RUN], stripped)
            half = PARTIAL_RUN // 2
            if len(part) >= PARTIAL_RUN:
                self._anchors.update(part[start:start + half] for start in range(0, len(part) - half + 1, half))

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(self._secrets)

    def clear(self) -> None:
        """Forget every secret (a new run in the same process: the tests' in-process runs)."""
        self._secrets.clear()
        self._runs.clear()
        self._anchors.clear()

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, mask_key(secret))
        if self._runs and any(anchor in text for anchor in self._anchors):
            text = _RUN_RE.sub(self._mask_run, text)
        return text

    def _mask_run(self, match: re.Match[str]) -> str:
        """A word holding PARTIAL_RUN characters of a known key in a row is shown as that key, masked: the key it
        shares most runs with, when two known keys share a piece."""
        word = match.group(0)
        if _TOKEN_RE.fullmatch(word) and not any(word in secret for secret in self._secrets):
            # A whole `sk-…` key that is not a piece of a known one is a key of its own (another service's, an
            # old one) that merely shares a run with a known key: shown as itself, masked, whatever else is known.
            return mask_key(word)
        shared: dict[str, int] = {}
        for start in range(len(word) - PARTIAL_RUN + 1):
            key = self._runs.get(word[start:start + PARTIAL_RUN])
            if key is not None:
                shared[key] = shared.get(key, 0) + 1
        return mask_key(max(shared, key=shared.__getitem__)) if shared else word


# Bearer tokens and sk- style keys that we do not know about (e.g. in a file we read).
_TOKEN_RE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,})")


def mask_unknown_keys(text: str) -> str:
    return _TOKEN_RE.sub(lambda m: mask_key(m.group(1)), text)


# Every secret the process has loaded. Output and the top-level error handler mask these, so a
# key cannot reach the terminal even through an exception message or a server's echo.
SECRETS = Redactor()


def remember_secret(secret: str | None) -> None:
    SECRETS.add(secret)
