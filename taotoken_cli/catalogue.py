"""The failure catalogue, as data: one entry per stable code.

Codes are a public contract (`taotoken explain CODE`, `check --json`, bench's error breakdown,
doctor's findings): never rename one; add new ones instead. Fixes are concrete commands or edits.
`{base}`, `{openai_base}`, `{model}`, `{host}`, `{proxy}`, `{config}` in fixes are filled in by
`Diagnosis.fixes()` from the situation at hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from taotoken_cli.exitcodes import Exit


@dataclass(frozen=True)
class Entry:
    code: str
    title: str
    exit: Exit
    causes: tuple[str, ...]
    fixes: tuple[str, ...]
    retry: bool = False  # may the same request succeed if simply retried later?


_ENTRIES = (
    Entry("auth.missing_key", "No API key was sent", Exit.CONFIG,
          ("no key is configured for this profile", "the variable holding the key is empty in this shell",
           "a proxy stripped the Authorization header"),
          ("taotoken init   (or: taotoken config set api_key -)", "export TAOTOKEN_API_KEY=sk-…")),
)

CATALOGUE: dict[str, Entry] = {entry.code: entry for entry in _ENTRIES}


def get(code: str) -> Entry:
    return CATALOGUE[code]
