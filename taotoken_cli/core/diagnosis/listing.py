"""The models a key can use, as the gateway lists them: fetched through the one Gateway and classified on failure.

Shared by `check` (is the configured model listed?), `models` (the list itself), `init` (pick a model) and
`route set` (is a routed model listed?), so every command reads the list, its failures and its filter the same way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from taotoken_cli import DEFAULT_BASE_URL
from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.diagnosis.catalogue import CATALOGUE, get
from taotoken_cli.core.diagnosis.classify import Diagnosis, classify
from taotoken_cli.core.diagnosis.context import DiagnosisContext, context_for
from taotoken_cli.core.net.gateway import Gateway, Observation
from taotoken_cli.core.settings import Settings
from taotoken_cli.core.settings.origins import outside_config

GLOB_CHARACTERS = "*?["


@dataclass(frozen=True)
class ListedModel:
    """One entry of the list: its ID, and who owns it and when it was created when the gateway says so."""

    id: str
    owned_by: str | None = None
    created: int | None = None  # Unix seconds (OpenAI's `created`, or Anthropic's `created_at` converted)

    @property
    def created_date(self) -> str | None:
        if not self.created or self.created < 0:
            return None
        try:
            return datetime.fromtimestamp(self.created, tz=timezone.utc).strftime("%Y-%m-%d")
        except (OverflowError, OSError, ValueError):  # a value no calendar holds
            return None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "owned_by": self.owned_by, "created": self.created}


@dataclass
class ModelListing:
    """What GET <root>/v1/models gave: the observation, its diagnosis when it failed, and the models."""

    observation: Observation
    diagnosis: Diagnosis | None
    models: list[ListedModel] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.diagnosis is None

    @property
    def ids(self) -> list[str]:
        return [model.id for model in self.models]


def listed_models(data: Any) -> list[ListedModel]:
    """The entries of a model list (OpenAI `{"data": [{"id", "owned_by", "created"}]}` or Anthropic's shape with
    `created_at`), in the gateway's order, each ID once."""
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    found: dict[str, ListedModel] = {}
    for item in items:
        if not isinstance(item, dict) or not item.get("id") or str(item["id"]) in found:
            continue
        owner = item.get("owned_by")
        found[str(item["id"])] = ListedModel(str(item["id"]), owner if isinstance(owner, str) and owner else None,
                                             _created(item))
    return list(found.values())


def _created(item: dict[str, Any]) -> int | None:
    created = item.get("created")
    if isinstance(created, int | float) and not isinstance(created, bool):
        return int(created)
    stamp = item.get("created_at")
    if isinstance(stamp, str):
        try:
            return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())
        except ValueError:
            return None
    return None


def fetch_model_list(gateway: Gateway, context: DiagnosisContext | None = None) -> ModelListing:
    """GET the list once; a failure is classified like any other request (the same codes and exit statuses)."""
    if context is None:
        context = context_for(base=gateway.endpoints.root)
    observation = gateway.list_models()
    diagnosis = classify(observation, expect="models", context=context)
    models = listed_models(observation.json()) if diagnosis is None else []
    return ModelListing(observation, diagnosis, models)


def is_pattern(text: str) -> bool:
    return any(ch in text for ch in GLOB_CHARACTERS)


def match_models(models: list[ListedModel], pattern: str | None) -> list[ListedModel]:
    """The models whose ID contains `pattern` (case-insensitive), or matches it as a glob (`gpt-4*`)."""
    if not pattern:
        return list(models)
    import fnmatch

    wanted = pattern.lower()
    if is_pattern(pattern):
        return [m for m in models if fnmatch.fnmatchcase(m.id.lower(), wanted)]
    return [m for m in models if wanted in m.id.lower()]


def config_diagnosis(exc: TaotokenError, settings: Settings | None = None,
                     env: Mapping[str, str] | None = None) -> Diagnosis:
    """A configuration problem found before any request, in the same shape as a gateway failure.

    With the settings that were loaded, a catalogue fix `taotoken config set NAME VALUE` names the place the
    value really comes from (a flag, a variable); VALUE is TaoToken's own URL, since the configured one is the
    problem."""
    code = exc.code if exc.code in CATALOGUE else "config.invalid"
    context = context_for(base=DEFAULT_BASE_URL)
    if settings is not None:
        context.sources = outside_config(settings, os.environ if env is None else env)
    return Diagnosis(code, get(code), server_message=None, details=[exc.message], context=context,
                     first_fix=exc.fix)
