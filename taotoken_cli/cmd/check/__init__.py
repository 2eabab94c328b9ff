"""`taotoken check`: one fast request that says "works" or names the failure and its fix.

`run.run(options, io)` does the work and renders it (`view`); `fastpath` parses plain invocations without
Typer, because `check` runs at shell start-up.
"""

DEFAULT_TIMEOUT_S = 5.0  # the whole check, start-up included, stays well inside a shell's patience
MODES = ("line", "quiet", "code", "json")  # default view, -q, --code, --json
