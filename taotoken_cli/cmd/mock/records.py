"""What the mock saw for each request, and the one log line it prints for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from taotoken_cli.core.base.i18n import N_, _
from taotoken_cli.core.base.masking import mask_unknown_keys
from taotoken_cli.core.term.output import json_line

JSON_SCHEMA = 1  # the --json log's lines: listening, request, summary (docs/json.md)

# The usual client mistakes the mock recognises, with the hint its log prints (English here; shown with _()).
FLAG_HINTS = {
    "doubled-v1": N_("the path has /v1 twice: the client's base URL already ends in /v1 and it added /v1 again "
                     "(Claude Code wants the bare root; OpenAI-style clients want root + /v1 and add nothing)"),
    "missing-v1": N_("no /v1 before the endpoint: OpenAI-style clients (SDKs, Codex, Cline) need a base URL "
                     "ending in /v1"),
    "endpoint-in-base": N_("the endpoint appears twice: the base URL was set to a full endpoint URL"),
    "query-in-base": N_("the base URL carried a query string (e.g. ?utm_…) and the client appended the endpoint "
                        "after it"),
    "no-key": N_("no key was sent (the env var holding it is empty or unset, or a proxy stripped the header)"),
    "wrong-key": N_("the key is not the one this gateway expects"),
    "bearer-in-key": N_("the key itself starts with 'Bearer ': the client adds that prefix, store only sk-…"),
    "key-whitespace": N_("the key contains whitespace (a pasted space, tab or newline)"),
    "key-quoted": N_("the key is wrapped in quotes: remove them"),
    "key-ok-when-cleaned": N_("after removing that mistake the key matches"),
    "unknown-model": N_("this gateway serves no such model: pick an id from GET <root>/v1/models (ids are "
                        "case-sensitive)"),
}


@dataclass
class RequestRecord:
    """One request as the mock received and answered it. `key_masked` is never the whole key."""

    seq: int
    method: str
    path: str  # path without the query string
    query: str
    endpoint: str  # chat | responses | messages | count_tokens | models | model | status | page | unknown
    auth_kind: str  # bearer | x-api-key | bearer+x-api-key | authorization | none
    key_masked: str
    model: str | None
    response_model: str | None
    stream: bool
    status: int | None = None  # None while in flight or when stalled
    flags: list[str] = field(default_factory=list)
    injected: str | None = None  # e.g. "fail:429", "fault:reset"
    outcome: str = "ok"  # ok | reset | stalled | truncated | client-closed
    request_id: str = ""
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names; auth values masked
    body: Any = None  # parsed JSON body (None when empty or not JSON)
    received_at: float = 0.0  # loop time when the request was complete
    headers_at: float | None = None  # loop time when the response headers were written
    finished_at: float | None = None

    @property
    def latency_ms(self) -> float | None:
        """From the full request to the response headers (the mock's own delay, measured)."""
        return None if self.headers_at is None else (self.headers_at - self.received_at) * 1000

    @property
    def duration_ms(self) -> float | None:
        return None if self.finished_at is None else (self.finished_at - self.received_at) * 1000

    def hints(self) -> list[str]:
        return [f"{flag}: {_(FLAG_HINTS[flag])}" for flag in self.flags if flag in FLAG_HINTS]

    def log_line(self) -> str:
        """`POST /api/v1/chat/completions bearer sk-ab…wxyz model=m stream=yes -> 200 12ms [flags]`."""
        target = self.path + ("?" + self.query if self.query else "")
        key = " " + (self.key_masked or _("(empty)")) if self.auth_kind != "none" else ""
        status = "---" if self.status is None else str(self.status)
        if self.outcome != "ok":
            status += f" {self.outcome}"
        if self.injected:
            status += f" ({self.injected})"
        took = f" {self.duration_ms:.0f}ms" if self.duration_ms is not None else ""
        model = self.model if self.model is not None else "-"
        if self.response_model and self.response_model != self.model:
            model += f"->{self.response_model}"
        line = (f"{self.method} {target} {self.auth_kind}{key} model={model} "
                f"stream={'yes' if self.stream else 'no'} -> {status}{took}")
        if self.flags:
            line += "  !! " + ", ".join(self.flags)
        return mask_unknown_keys(line)

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)  # shallow: asdict() deep-copies and costs more than the request itself
        data["latency_ms"] = self.latency_ms
        data["duration_ms"] = self.duration_ms
        return data

    def to_json(self) -> str:
        """The --json log's line for this request (docs/json.md: `event` "request")."""
        return mask_unknown_keys(json_line({"event": "request", **self.to_dict()}, schema=JSON_SCHEMA))
