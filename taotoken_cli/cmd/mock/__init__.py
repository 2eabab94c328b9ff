"""`taotoken mock`: a realistic local gateway for users, tests and benchmarks (stdlib asyncio only).

    from taotoken_cli.cmd.mock import MockGateway, MockOptions
    with MockGateway(MockOptions(key="sk-…", latency_ms=50)) as mock:
        mock.url           # http://127.0.0.1:PORT/api  (the API root, like https://taotoken.net/api)
        mock.openai_base   # …/api/v1 for OpenAI-style clients
        mock.requests      # [RequestRecord, …] in arrival order
`MockProcess` has the same interface but runs the server in a subprocess: use it for benchmarks,
so the gateway's latency is not disturbed by the GIL of the process under test.
"""

from taotoken_cli.cmd.mock.options import (
    DEFAULT_MODELS,
    FAIL_STYLES,
    FAULTS,
    MODEL_FAILURES,
    NAMED_FAILURES,
    MockOptions,
    ModelTiming,
)
from taotoken_cli.cmd.mock.process import MockProcess, options_to_args
from taotoken_cli.cmd.mock.records import FLAG_HINTS, RequestRecord
from taotoken_cli.cmd.mock.server import MockGateway, MockServer, Summary, serve

__all__ = ["DEFAULT_MODELS", "FAIL_STYLES", "FAULTS", "FLAG_HINTS", "MODEL_FAILURES", "NAMED_FAILURES", "MockGateway",
           "MockOptions", "ModelTiming", "MockProcess", "MockServer", "options_to_args", "RequestRecord", "Summary",
           "serve"]
