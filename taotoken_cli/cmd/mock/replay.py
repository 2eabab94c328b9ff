"""Recorded gateway answers the mock replays (`taotoken mock --replay FILE`).

A recording is the JSON the test fixtures use (tests/fixtures/new_api, tests/fixtures/litellm):
`{"request": {"method", "path"}, "response": {"status", "headers", "body"}}`. The mock answers a request
with that method whose path ends with the recorded path with the recorded status, headers and body, so a
client (or taotoken itself) meets exactly what new-api's own error-building code sends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.base.oserrors import os_error_text

# The mock sends its own identity and framing headers; a recording's copies would be duplicates.
_OWN_HEADERS = ("content-type", "content-length", "x-oneapi-request-id", "x-new-api-version", "date", "connection",
                "transfer-encoding")


@dataclass(frozen=True)
class Recording:
    method: str
    path: str
    status: int
    content_type: str | None
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def answers(self, method: str, path: str) -> bool:
        return method == self.method and path.endswith(self.path)


def load_recording(path: str | Path) -> Recording:
    """One recording file; InputError naming the file and the fix when it is not one."""
    source = Path(path).expanduser()
    fix = _("give a JSON file with request.method, request.path, response.status and response.body "
            "(like tests/fixtures/new_api/*.json)")
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
        request, response = data["request"], data["response"]
        method, where = str(request["method"]).upper(), str(request["path"])
        status, body = int(response["status"]), response["body"]
        headers = {str(k).lower(): str(v) for k, v in (response.get("headers") or {}).items()}
        if not where.startswith("/") or not 100 <= status <= 599 or not isinstance(body, str):
            raise ValueError(where)
    except OSError as exc:
        raise InputError(_("--replay {path}: cannot read it ({reason})").format(path=source, reason=os_error_text(exc)),
                         fix) from None
    except (ValueError, KeyError, TypeError, AttributeError):
        raise InputError(_("--replay {path}: not a recorded answer").format(path=source), fix) from None
    return Recording(method, where, status, headers.get("content-type"),
                     tuple((k, v) for k, v in headers.items() if k not in _OWN_HEADERS), body.encode())
