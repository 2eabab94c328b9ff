"""Map an Observation (status, headers, body, exception, URL) to a catalogue entry.

Reads the error shapes of OpenAI, one-api/new-api (Chinese messages included), LiteLLM,
OpenRouter and Anthropic (shared/reference/gateway-errors.md). `classify` returns None when the
observation is a success for the kind of call it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from taotoken_cli.catalogue import Entry, get
from taotoken_cli.gateway import Observation


@dataclass
class Diagnosis:
    code: str
    entry: Entry
    server_message: str | None = None  # what the server said, trimmed, key masked by the output layer
    retry_after_s: float | None = None
    details: list[str] = field(default_factory=list)
    context: dict[str, str] = field(default_factory=dict)

    def fixes(self) -> list[str]:
        out = []
        for fix in self.entry.fixes:
            try:
                out.append(fix.format(**self.context))
            except (KeyError, IndexError, ValueError):
                out.append(fix)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "title": self.entry.title, "exit_code": int(self.entry.exit),
                "retry": self.entry.retry, "server_message": self.server_message,
                "retry_after_s": self.retry_after_s, "causes": list(self.entry.causes),
                "fixes": self.fixes(), "details": self.details}


def classify(obs: Observation, *, expect: str = "json", context: dict[str, str] | None = None) -> Diagnosis | None:
    """`expect`: "models" (a model list), "chat" (choices), "messages", "responses", "stream", "json"."""
    raise NotImplementedError  # filled in by the catalogue work (issue 3)
