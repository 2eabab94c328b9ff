"""Model IDs as a gateway lists them, and finding the listed IDs a mistyped one was meant to be.

"Did you mean" must only offer a near-miss of what was typed, never a *different* model: a
different listed model is a different product (price, context, ability), and suggesting it as a
typo fix hides the real problem (a 403 for `gpt-4o` answered with "did you mean gpt-4o-mini?").
So an ID is a close match when it equals the wanted one ignoring case, separators or a provider
prefix, or when it differs only by a small typo inside the letters: the numbers (versions, sizes,
dates) must be the same, and the letters must line up run for run.
"""

from __future__ import annotations

import re
from typing import Any

_SEPARATORS = re.compile(r"[-_.:\s/]+")
_NUMBER = re.compile(r"\d+")


def _normalised(model_id: str) -> str:
    return _SEPARATORS.sub("", model_id.lower())


def _unprefixed(model_id: str) -> str:
    """`openai/gpt-4o` -> `gpt-4o` (LiteLLM and OpenRouter name models with a provider prefix)."""
    return model_id.lower().rsplit("/", 1)[-1]


def _shape(model_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(numbers, letter runs between them), separators ignored: `gpt-4o-mini` -> (('4',), ('gpt', 'omini'))."""
    flat = _normalised(model_id)
    return tuple(_NUMBER.findall(flat)), tuple(_NUMBER.split(flat))


def typo_distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) turning `a` into `b`."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, char_b in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def _typo_edits(wanted: str, candidate: str) -> int | None:
    """How many letter edits separate two IDs when one is plausibly a typo of the other; None when not."""
    if _normalised(wanted) == _normalised(candidate) or _unprefixed(wanted) == _unprefixed(candidate):
        return 0
    numbers_w, runs_w = _shape(wanted)
    numbers_c, runs_c = _shape(candidate)
    if numbers_w != numbers_c:
        return None  # another version, size or date: a different model, not a typo
    allowed = 1 if len(_normalised(wanted)) < 10 else 2
    edits = 0
    for run_w, run_c in zip(runs_w, runs_c, strict=True):
        if run_w == run_c:
            continue
        if max(len(run_w), len(run_c)) < 3:
            return None  # `4o` vs `4a`: too short to tell a typo from another model
        edits += typo_distance(run_w, run_c)
        if edits > allowed:
            return None
    return edits


def close_model_matches(wanted: str, available: list[str], limit: int = 5) -> list[str]:
    """Listed IDs `wanted` was probably meant to be: the same ID in another case first, then near-misses.

    Nothing when `wanted` itself is listed: then it is no typo.
    """
    if wanted in available:
        return []
    low = wanted.lower()
    scored: list[tuple[int, int, str]] = []
    for index, candidate in enumerate(dict.fromkeys(available)):
        edits = -1 if candidate.lower() == low else _typo_edits(wanted, candidate)
        if edits is not None:
            scored.append((edits, index, candidate))
    return [candidate for _, _, candidate in sorted(scored)[:limit]]


def substring_distance(pattern: str, text: str) -> int:
    """The fewest edits turning `pattern` into some part of `text` (free start and end: Sellers' algorithm)."""
    previous2: list[int] = []
    previous = [0] * (len(text) + 1)  # an empty pattern matches anywhere at no cost
    for i, char_p in enumerate(pattern, 1):
        current = [i] + [0] * len(text)
        for j, char_t in enumerate(text, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_p != char_t))
            if i > 1 and j > 1 and char_p == text[j - 2] and pattern[i - 2] == char_t:
                current[j] = min(current[j], previous2[j - 2] + 1)  # two neighbours swapped: one edit
        previous2, previous = previous, current
    return min(previous)


def near_matches(pattern: str, available: list[str], limit: int = 5) -> list[str]:
    """What a search for `pattern` probably meant when no ID contains it (`taotoken models deepsek`): the IDs it is a
    typo of (`close_model_matches`), then IDs holding a near-miss of it (`deepseek-chat`). A search may offer other
    models; "did you mean" for a configured ID uses `close_model_matches` alone."""
    found = close_model_matches(pattern, available, limit)
    wanted = _normalised(pattern)
    if len(wanted) < 4:
        return found  # `gp` is within one edit of nearly everything
    allowed = 1 if len(wanted) < 8 else 2
    scored = []
    for index, candidate in enumerate(dict.fromkeys(available)):
        if candidate in found:
            continue
        numbers = _NUMBER.findall(candidate)
        if any(number not in numbers for number in _NUMBER.findall(pattern)):
            continue  # `gpt-5` is not a near miss of `gpt-4o`: another version is another model
        distance = substring_distance(wanted, _normalised(candidate))
        if distance <= allowed:
            scored.append((distance, index, candidate))
    return (found + [candidate for _, _, candidate in sorted(scored)])[:limit]


def model_ids(data: Any) -> list[str]:
    """The IDs of a model list body, in the gateway's order (see `listing.listed_models`)."""
    from taotoken_cli.core.diagnosis.listing import listed_models

    return [model.id for model in listed_models(data)]
