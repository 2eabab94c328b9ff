"""What `taotoken models` found: the listed models that match, how the profile uses them, and the stable --json."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.diagnosis.classify import Diagnosis
from taotoken_cli.core.diagnosis.listing import ListedModel


@dataclass
class ModelRow:
    """One listed model that matches the filter, and how the profile uses it."""

    model: ListedModel
    configured: bool = False  # the profile's model
    routes: list[str] = field(default_factory=list)  # routing-table keys that send requests to it

    @property
    def uses(self) -> str:
        """e.g. "model, route cuda, gpu": the profile's model, and the routes that choose it (for the table, in the
        user's language; --json has `configured` and `routes`)."""
        # i18n: the USED AS column of `taotoken models`: the profile's model …
        uses = [_("model")] if self.configured else []
        if self.routes:
            # i18n: … and the routes that send requests to it: "route cuda, gpu"
            uses.append(_("route {routes}").format(routes=listed(self.routes)))
        return listed(uses)

    def to_dict(self) -> dict[str, Any]:
        return {**self.model.to_dict(), "configured": self.configured, "routes": self.routes}


@dataclass
class Unlisted:
    """A model the profile uses (as its model or in a route) that the gateway does not list."""

    use: str  # "model" | "route"
    route: str | None
    model: str
    close_matches: list[str] = field(default_factory=list)
    # the instruction that changes it where it is set (`route set`, or where the model comes from)
    fix: Fix = field(default_factory=lambda: Fix.prose(""))

    def to_dict(self) -> dict[str, Any]:
        return {"use": self.use, "route": self.route, "model": self.model, "close_matches": self.close_matches,
                "fix": str(self.fix), "fix_step": self.fix.to_dict()}


@dataclass
class ModelsReport:
    pattern: str | None = None
    profile: str | None = None
    base_url: str | None = None
    key: str = "(not set)"  # masked
    proxy: str | None = None
    url: str | None = None
    status: int | None = None
    latency_ms: float | None = None
    configured_model: str | None = None
    routes: dict[str, str] = field(default_factory=dict)
    listed: list[ListedModel] = field(default_factory=list)  # everything the gateway listed
    rows: list[ModelRow] = field(default_factory=list)  # the listed models that match the filter
    close_matches: list[str] = field(default_factory=list)  # when the filter matched nothing
    unlisted: list[Unlisted] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # `note: …`/`warning: …` from the configured values' hygiene
    diagnosis: Diagnosis | None = None

    @property
    def no_match(self) -> bool:
        return self.diagnosis is None and bool(self.pattern) and not self.rows

    @property
    def exit_code(self) -> int:
        if self.diagnosis is not None:
            return int(self.diagnosis.entry.exit)
        return int(Exit.FAILURE) if self.no_match else int(Exit.OK)

    @property
    def configured_listed(self) -> bool | None:
        if self.diagnosis is not None or not self.configured_model:
            return None
        return self.configured_model in {m.id for m in self.listed}

    def to_dict(self) -> dict[str, Any]:
        """Stable keys: every key is always present (null when it does not apply)."""
        return {
            "ok": self.exit_code == 0,
            "exit_code": self.exit_code,
            "code": self.diagnosis.code if self.diagnosis else None,
            "profile": self.profile,
            "base_url": self.base_url,
            "url": self.url,
            "status": self.status,
            "latency_ms": None if self.latency_ms is None else round(self.latency_ms, 1),
            "key": self.key,
            "proxy": self.proxy,
            "filter": self.pattern,
            "count": len(self.listed),
            "matched": len(self.rows),
            "configured_model": self.configured_model,
            "configured_listed": self.configured_listed,
            "routes": self.routes,
            "models": [row.to_dict() for row in self.rows],
            "close_matches": self.close_matches,
            "unlisted": [item.to_dict() for item in self.unlisted],
            "notes": self.notes,
            "error": self.diagnosis.to_dict() if self.diagnosis else None,
        }
