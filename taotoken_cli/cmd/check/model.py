"""What `taotoken check` found: the requests it made and the verdict, with the stable --json shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.diagnosis.classify import Diagnosis


@dataclass
class Probe:
    """One request the check made."""

    name: str  # "models" | "chat"
    method: str
    url: str
    status: int | None
    latency_ms: float
    ok: bool

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "method": self.method, "url": self.url, "status": self.status,
                "latency_ms": round(self.latency_ms, 1), "ok": self.ok}


@dataclass
class CheckResult:
    profile: str | None = None
    base_url: str | None = None
    key: str = "(not set)"  # masked
    proxy: str | None = None
    model: str | None = None  # the model checked against the list (configured, or --model)
    model_explicit: bool = False  # given with --model: a miss is a failure
    models_count: int | None = None
    model_listed: bool | None = None
    unlisted_allowed: bool = False  # not listed, and --allow-unlisted said that is fine
    close_matches: list[str] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    chat_reply: str | None = None
    diagnosis: Diagnosis | None = None
    notes: list[str] = field(default_factory=list)  # hygiene notes from the config (what was cleaned)
    labelled_notes: list[str] = field(default_factory=list)  # the same as `note: base URL: …` / `warning: …`

    @property
    def ok(self) -> bool:
        return self.diagnosis is None

    @property
    def exit_code(self) -> int:
        return int(Exit.OK) if self.diagnosis is None else int(self.diagnosis.entry.exit)

    @property
    def last_status(self) -> int | None:
        return self.probes[-1].status if self.probes else None

    @property
    def url(self) -> str | None:
        return self.probes[0].url if self.probes else None

    @property
    def latency_ms(self) -> float | None:
        return self.probes[0].latency_ms if self.probes else None

    def to_dict(self) -> dict[str, Any]:
        """Stable keys: every key is always present (null when it does not apply)."""
        chat = next((p for p in self.probes if p.name == "chat"), None)
        return {
            "ok": self.ok,
            "exit_code": self.exit_code,
            "code": self.diagnosis.code if self.diagnosis else None,
            "status": self.last_status,
            "url": self.url,
            "latency_ms": None if self.latency_ms is None else round(self.latency_ms, 1),
            "profile": self.profile,
            "base_url": self.base_url,
            "key": self.key,
            "proxy": self.proxy,
            "model": self.model,
            "model_listed": self.model_listed,
            "close_matches": self.close_matches,
            "models_count": self.models_count,
            "chat": None if chat is None else {**chat.to_dict(), "reply": self.chat_reply},
            "probes": [p.to_dict() for p in self.probes],
            "notes": self.notes,
            "error": self.diagnosis.to_dict() if self.diagnosis else None,
        }
