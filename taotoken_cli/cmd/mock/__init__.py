"""`taotoken mock`: a realistic local gateway for users, tests and benchmarks (stdlib asyncio only).

    from taotoken_cli.cmd.mock import MockGateway, MockOptions
    with MockGateway(MockOptions(key="sk-…", latency_ms=50)) as mock:
        mock.url           # http://127.0.0.1:PORT/api  (the API root, like https://taotoken.net/api)
        mock.openai_base   # …/api/v1 for OpenAI-style clients
        mock.requests      # [RequestRecord, …] in arrival order
`MockProcess` has the same interface but runs the server in a subprocess: use it for benchmarks,
so the gateway's latency is not disturbed by the GIL of the process under test.

The names are imported when first asked for: the app imports `mock.cli` on every start of the CLI, and the server
(asyncio) is for `taotoken mock`, the demo and the tests.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "DEFAULT_MODELS": "options", "FAIL_STYLES": "options", "FAULTS": "options", "MODEL_FAILURES": "options",
    "NAMED_FAILURES": "options", "MockOptions": "options", "ModelTiming": "options",
    "MockProcess": "process", "options_to_args": "process",
    "FLAG_HINTS": "records", "RequestRecord": "records",
    "MockGateway": "server", "MockServer": "server", "Summary": "server", "serve": "server",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
