"""`taotoken models`: the models the key can use, with the configured and routed ones marked.

`run.run(options, io)` fetches and renders (`view`); the list itself is read by the core
(`taotoken_cli.core.diagnosis.listing`), which check, init and route share.
"""

DEFAULT_TIMEOUT_S = 10.0  # one request; some gateways build a long list slowly
