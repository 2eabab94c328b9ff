"""The core of `taotoken mock` behind the thin Typer layer: resolve the key, serve, print."""

from __future__ import annotations

from collections.abc import Mapping

from taotoken_cli.cmd.mock.options import MockOptions
from taotoken_cli.cmd.mock.records import JSON_SCHEMA, RequestRecord
from taotoken_cli.core.base.errors import TaotokenError
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.base.oserrors import os_error_text
from taotoken_cli.core.platform import system
from taotoken_cli.core.term.iostreams import IOStreams
from taotoken_cli.core.term.output import json_line


def resolve_key(options: MockOptions, key_flag: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The expected key: --key, then TAOTOKEN_API_KEY, then the config file. Returns where it came from."""
    from taotoken_cli.core.base.masking import remember_secret

    if options.any_key:
        return None
    if key_flag is not None:
        from taotoken_cli.core.net.hygiene import clean_key

        options.key = clean_key(key_flag).value
        remember_secret(options.key)
        return "--key"
    from taotoken_cli.core.settings import Overrides, load_settings

    settings = load_settings(Overrides(), env)
    value = settings.api_key
    if value.error:
        raise TaotokenError(_("the key ({origin}) cannot be used: {problem}").format(origin=value.origin,
                                                                                      problem=value.error),
                            value.fix, Exit.CONFIG, code="config.invalid")
    if not value.value:
        raise TaotokenError(_("the mock has no key to check"),
                            Fix.of(_("pass --key, set the key in the environment ({command}), or use --any-key to "
                                     "accept any key"), command=Command("export TAOTOKEN_API_KEY=sk-…")), Exit.USAGE,
                            code="input.invalid")
    options.key = value.value
    return str(value.origin)


def run(options: MockOptions, io: IOStreams, *, key_flag: str | None, quiet: bool, as_json: bool) -> int:
    from taotoken_cli.cmd.mock import view as render
    from taotoken_cli.cmd.mock.server import serve

    key_origin = resolve_key(options, key_flag, io.env)
    options.validate()
    out = io.out
    log = render.RequestLog(as_json, out.width, terminal=out.out.isatty())

    def emit(lines: list[str]) -> None:
        for line in lines:
            out.line(line)
        out.out.flush()

    def on_ready(server) -> None:
        loop_of.append(server.loop)
        if as_json:
            emit([json_line({"event": "listening", "listening": f"http://{server.host}:{server.port}",
                             "port": server.port, "root": f"http://{server.host}:{server.port}/api",
                             "options": render.describe_options(options)}, schema=JSON_SCHEMA)])
        else:
            emit(render.banner(server, key_origin, out.width))

    flush_scheduled = False
    loop_of: list = []

    def flush() -> None:
        nonlocal flush_scheduled
        flush_scheduled = False
        out.out.flush()

    def on_request(record: RequestRecord) -> None:
        # Lines are written at once but flushed once per event-loop iteration: under load that is
        # one pipe write for many requests, so a reader (MockProcess) is woken far less often.
        nonlocal flush_scheduled
        if quiet:
            return
        for line in log.lines(record):
            out.line(line)
        if not flush_scheduled:
            flush_scheduled = True
            loop_of[0].call_soon(flush)

    try:
        summary = serve(options, on_ready, on_request)
    except OSError as exc:
        if system.address_taken(exc):
            raise TaotokenError(_("port {port} on {host} is already in use").format(port=options.port,
                                                                                     host=options.host),
                                _("pick another --port, or --port 0 for a free one"), Exit.USAGE,
                                code="input.invalid") from None
        raise TaotokenError(_("cannot listen on {host}:{port}: {reason}").format(
            host=options.host, port=options.port, reason=os_error_text(exc)),
            _("check --host is an address of this machine"), Exit.USAGE, code="input.invalid") from None
    if out.out.isatty() and not as_json:
        out.out.write_control("\r")  # over the terminal's "^C" echo: the summary starts at column 0
    emit(render.summary_lines(summary, as_json, out.width))
    return Exit.OK
