"""Model IDs as a gateway lists them, and finding the listed IDs a mistyped one was meant to be."""

from __future__ import annotations

from typing import Any


def close_model_matches(wanted: str, available: list[str], limit: int = 5) -> list[str]:
    """Listed IDs that look like `wanted`: case-insensitive equal, containing it, then by similarity."""
    import difflib

    low = wanted.lower()
    found = [m for m in available if m.lower() == low]
    found += [m for m in available if low in m.lower() and m not in found]
    by_lower = {m.lower(): m for m in available}
    for match in difflib.get_close_matches(low, list(by_lower), n=limit, cutoff=0.6):
        if by_lower[match] not in found:
            found.append(by_lower[match])
    return found[:limit]


def model_ids(data: Any) -> list[str]:
    """The IDs of a model list body, in the gateway's order (see `listing.listed_models`)."""
    from taotoken_cli.diagnosis.listing import listed_models

    return [model.id for model in listed_models(data)]
