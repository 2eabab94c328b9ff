"""What `taotoken mock` prints: the start banner, one line per request (text or JSON), the summary."""

from __future__ import annotations

import time

from taotoken_cli.cmd.mock.options import MockOptions
from taotoken_cli.cmd.mock.records import FLAG_HINTS, JSON_SCHEMA, RequestRecord
from taotoken_cli.cmd.mock.server import MockServer, Summary, format_host
from taotoken_cli.core.base.i18n import _, listed, ngettext
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.net.urlform import OPENAI_V1
from taotoken_cli.core.term.layout import DEFAULT_WIDTH, cell_width, pad, wrap
from taotoken_cli.core.term.output import json_line

_INDENT = "  "
_HINT_INDENT = " " * 9  # under the request line's text, past its HH:MM:SS stamp


def banner(server: MockServer, key_origin: str | None, width: int = DEFAULT_WIDTH) -> list[str]:
    opts = server.options
    origin = f"http://{format_host(server.host)}:{server.port}"
    root = origin + "/api"
    lines = wrap(_("taotoken mock: listening on {origin} (port {port})").format(origin=origin, port=server.port),
                 width, hang=_INDENT)
    lines += _addresses([(_("API root (taotoken --base-url, Claude Code ANTHROPIC_BASE_URL):"), root),
                         (_("OpenAI-style clients (SDKs, Codex, Cline base URL):"), OPENAI_V1.url(root))], width)
    if opts.any_key:
        key = _("key: any non-empty key accepted (--any-key)")
    elif key_origin:
        key = _("key: {key} checked (from {origin})").format(key=mask_key(opts.key), origin=key_origin)
    else:
        key = _("key: {key} checked").format(key=mask_key(opts.key))
    models = listed(opts.listed_models)
    said = [key, _("models: {models}").format(models=models) if opts.models
            else _("models: {models} (any name is served)").format(models=models),
            # i18n: between the items of one line of the banner: "latency 0 ms; 16 tokens; error style new-api"
            _("; ").join(_behaviour(opts))]
    for model in opts.model_timing:
        t = opts.timing_for(model)
        ms = f"{t.latency_s * 1000:g}"
        if t.interval_s:
            said.append(ngettext("model {model}: latency {ms} ms; {n} token at {rate}/s",
                                 "model {model}: latency {ms} ms; {n} tokens at {rate}/s", t.tokens)
                        .format(model=model, ms=ms, n=t.tokens, rate=f"{1 / t.interval_s:g}"))
        else:
            said.append(ngettext("model {model}: latency {ms} ms; {n} token",
                                 "model {model}: latency {ms} ms; {n} tokens", t.tokens)
                        .format(model=model, ms=ms, n=t.tokens))
    for model, kind in opts.model_fail.items():
        said.append(_("model {model}: every request fails ({kind})").format(model=model, kind=kind))
    said.append(_("Ctrl-C to stop"))
    for text in said:
        lines += wrap(text, width, _INDENT, _INDENT * 2)
    return lines


def _addresses(rows: list[tuple[str, str]], width: int) -> list[str]:
    """Label and URL side by side, the URLs aligned; on a terminal too narrow for that, each URL under its label."""
    column = max(cell_width(label) for label, _url in rows)
    if all(cell_width(_INDENT) + column + 1 + cell_width(url) <= width for _label, url in rows):
        return [f"{_INDENT}{pad(label, column)} {url}" for label, url in rows]
    return [line for label, url in rows for line in (_INDENT + label, _INDENT * 3 + url)]


def _behaviour(opts: MockOptions) -> list[str]:
    """The mock's behaviour as short items (joined with "; " on one line)."""
    if opts.token_rate:
        tokens = ngettext("{n} token at {rate}/s", "{n} tokens at {rate}/s", opts.tokens)
    else:
        tokens = ngettext("{n} token", "{n} tokens", opts.tokens)
    items = [_("latency {ms} ms").format(ms=f"{opts.latency_ms:g}"),
             tokens.format(n=opts.tokens, rate=f"{opts.token_rate:g}"),
             _("error style {style}").format(style=opts.fail_style)]
    if opts.aliases:
        items.append(_("aliases {aliases}").format(aliases=listed(f"{k}->{v}" for k, v in opts.aliases.items())))
    if opts.no_channel:
        items.append(_("no channel for {models}").format(models=listed(opts.no_channel)))
    if opts.fail is not None or opts.fault:
        what = f"--fail {opts.fail}" if opts.fail is not None else f"--fault {opts.fault}"
        if opts.fail_rate >= 1:
            items.append(_("injecting {failure} on every request").format(failure=what))
        else:
            items.append(_("injecting {failure} on {rate} of requests").format(failure=what,
                                                                                rate=f"{opts.fail_rate:g}"))
        if opts.retry_after is not None:
            items.append(f"Retry-After {opts.retry_after:g}")  # the header the answers carry
    if opts.slots is not None:
        items.append(ngettext("{n} slot, the rest queued", "{n} slots, the rest queued", opts.slots)
                     .format(n=opts.slots))
    if opts.rate_limit is not None:
        items.append(_("429 over {rate} requests/s").format(rate=f"{opts.rate_limit:g}"))
    return items


class RequestLog:
    """Formats records for the terminal; each flag's hint is printed the first time it is seen. The request line is
    one line per request, as a server log, into a pipe or a file; on a terminal (`terminal`) it wraps under the
    time stamp, so the terminal never splits a word of it. The hints wrap under their text."""

    def __init__(self, as_json: bool = False, width: int = DEFAULT_WIDTH, terminal: bool = False) -> None:
        self.as_json = as_json
        self.width = width
        self.terminal = terminal
        self._hinted: set[str] = set()

    def lines(self, record: RequestRecord) -> list[str]:
        if self.as_json:
            return [record.to_json()]
        stamp = time.strftime("%H:%M:%S")
        line = f"{stamp} {record.log_line()}"
        lines = wrap(line, self.width, hang=" " * (len(stamp) + 1)) if self.terminal else [line]
        for flag in record.flags:
            if flag not in self._hinted and flag in FLAG_HINTS:
                self._hinted.add(flag)
                label = _("hint: ")
                lines += wrap(_("{flag}: {hint}").format(flag=flag, hint=_(FLAG_HINTS[flag])), self.width,
                              _HINT_INDENT + label, " " * (len(_HINT_INDENT) + cell_width(label)))
        return lines


def summary_lines(summary: Summary, as_json: bool, width: int = DEFAULT_WIDTH) -> list[str]:
    if as_json:
        return [json_line({"event": "summary", "summary": {
            "requests": summary.requests, "seconds": round(summary.seconds, 3), "statuses": summary.statuses,
            "flags": summary.flags}}, schema=JSON_SCHEMA, exit_code=0)]
    return wrap(summary.line(), width, hang=_INDENT)


def describe_options(options: MockOptions) -> dict:
    """For --json start-up: everything but the key."""
    data = {k: v for k, v in vars(options).items() if k != "key"}
    data["model_timing"] = {model: timing.spec() for model, timing in options.model_timing.items()}
    data["key"] = mask_key(options.key) if options.key else None
    return data
