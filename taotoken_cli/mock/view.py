"""What `taotoken mock` prints: the start banner, one line per request (text or JSON), the summary."""

from __future__ import annotations

import json
import time

from taotoken_cli.masking import mask_key
from taotoken_cli.mock.options import MockOptions
from taotoken_cli.mock.records import FLAG_HINTS, RequestRecord
from taotoken_cli.mock.server import MockServer, Summary, format_host


def banner(server: MockServer, key_origin: str | None) -> list[str]:
    opts = server.options
    origin = f"http://{format_host(server.host)}:{server.port}"
    root = origin + "/api"
    if opts.any_key:
        key = "any non-empty key accepted (--any-key)"
    else:
        key = f"{mask_key(opts.key)} checked" + (f" (from {key_origin})" if key_origin else "")
    lines = [
        f"taotoken mock: listening on {origin} (port {server.port})",
        f"  API root (taotoken --base-url, Claude Code ANTHROPIC_BASE_URL): {root}",
        f"  OpenAI-style clients (SDKs, Codex, Cline base URL):            {root}/v1",
        f"  key: {key}",
        f"  models: {', '.join(opts.listed_models)}" + ("" if opts.models else " (any name is served)"),
    ]
    behaviour = [f"latency {opts.latency_ms:g} ms",
                 f"{opts.tokens} tokens" + (f" at {opts.token_rate:g}/s" if opts.token_rate else ""),
                 f"error style {opts.fail_style}"]
    if opts.aliases:
        behaviour.append("aliases " + ", ".join(f"{k}->{v}" for k, v in opts.aliases.items()))
    if opts.no_channel:
        behaviour.append("no channel for " + ", ".join(opts.no_channel))
    if opts.fail is not None or opts.fault:
        what = f"--fail {opts.fail}" if opts.fail is not None else f"--fault {opts.fault}"
        rate = "every request" if opts.fail_rate >= 1 else f"{opts.fail_rate:g} of requests"
        behaviour.append(f"injecting {what} on {rate}")
        if opts.retry_after is not None:
            behaviour.append(f"Retry-After {opts.retry_after:g}")
    lines.append("  " + "; ".join(behaviour))
    for model in opts.model_timing:
        t = opts.timing_for(model)
        rate = f" at {1 / t.interval_s:g}/s" if t.interval_s else ""
        lines.append(f"  model {model}: latency {t.latency_s * 1000:g} ms; {t.tokens} tokens{rate}")
    for model, kind in opts.model_fail.items():
        lines.append(f"  model {model}: every request fails ({kind})")
    lines.append("  Ctrl-C to stop")
    return lines


class RequestLog:
    """Formats records for the terminal; each flag's hint is printed the first time it is seen."""

    def __init__(self, as_json: bool = False) -> None:
        self.as_json = as_json
        self._hinted: set[str] = set()

    def lines(self, record: RequestRecord) -> list[str]:
        if self.as_json:
            return [record.to_json()]
        stamp = time.strftime("%H:%M:%S")
        lines = [f"{stamp} {record.log_line()}"]
        for flag in record.flags:
            if flag not in self._hinted and flag in FLAG_HINTS:
                self._hinted.add(flag)
                lines.append(f"         hint: {flag}: {FLAG_HINTS[flag]}")
        return lines


def summary_lines(summary: Summary, as_json: bool) -> list[str]:
    if as_json:
        return [json.dumps({"summary": {"requests": summary.requests, "seconds": round(summary.seconds, 3),
                                        "statuses": summary.statuses, "flags": summary.flags}})]
    return [summary.line()]


def describe_options(options: MockOptions) -> dict:
    """For --json start-up: everything but the key."""
    data = {k: v for k, v in vars(options).items() if k != "key"}
    data["model_timing"] = {model: timing.spec() for model, timing in options.model_timing.items()}
    data["key"] = mask_key(options.key) if options.key else None
    return data
