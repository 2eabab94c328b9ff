"""`taotoken mock`: run a local gateway to point clients at and watch what they send."""

from __future__ import annotations

from pathlib import Path

import typer

from taotoken_cli.cmd import options as _options
from taotoken_cli.core.base.i18n import _

# Values shell completion offers (autocompletion=), taken from the code that accepts them; gen_docs writes
# them into the static completion scripts, so Tab never starts Python. Imports happen only when asked.


def complete_mock_failures() -> list[str]:
    from taotoken_cli.cmd.mock.options import COMMON_STATUSES, NAMED_FAILURES

    return [*map(str, COMMON_STATUSES), *NAMED_FAILURES]


def complete_mock_faults() -> list[str]:
    from taotoken_cli.cmd.mock.options import FAULTS

    return list(FAULTS)


def complete_mock_languages() -> list[str]:
    from taotoken_cli.cmd.mock.options import LANGUAGES

    return list(LANGUAGES)


def complete_mock_styles() -> list[str]:
    from taotoken_cli.cmd.mock.options import FAIL_STYLES

    return list(FAIL_STYLES)



def register(app: typer.Typer) -> None:
    app.command("mock", help=_("Run a local TaoToken-like gateway; point clients at it and watch each "
                               "request.\n\nPer-model options let one mock play several backends: "
                               "--model-timing fast=20,200,32 --model-timing slow=300,20,32 serves a fast and "
                               "a slow model; --model-fail broken=503 fails one model while the others "
                               "answer."))(mock)


def mock(
    port: int = typer.Option(0, "--port", "-P", metavar="PORT",
                             help=_("Port to listen on; 0 picks a free one and prints it.")),
    host: str = typer.Option("127.0.0.1", "--host", metavar="ADDRESS",
                             help=_("Address to listen on (loopback only by default).")),
    allow_remote: bool = typer.Option(False, "--allow-remote", help=_("Allow a non-loopback --host.")),
    key: str | None = typer.Option(None, "--key", metavar="KEY", help=_("The key clients must send (default: "
                                     "TAOTOKEN_API_KEY, then the config file).")),
    any_key: bool = typer.Option(False, "--any-key", help=_("Accept any non-empty key.")),
    models: list[str] = typer.Option([], "--models", metavar="MODEL,...",
                                     help=_("Models served, comma-separated (default: any name).")),
    alias: list[str] = typer.Option([], "--alias", metavar="REQ=RESP",
                                    help=_("Answer model REQ with `model: RESP` (e.g. a dated variant).")),
    no_channel: list[str] = typer.Option([], "--no-channel", metavar="MODEL",
                                         help=_("Answer MODEL with new-api's 503 'No available channel'.")),
    latency_ms: float = typer.Option(0.0, "--latency-ms", metavar="MS", help=_("Fixed delay from the request to "
                                       "the response headers (and a stream's first token).")),
    token_rate: float = typer.Option(0.0, "--token-rate", metavar="PER_SECOND", help=_("Tokens per second in "
                                       "streams (0 = unpaced); token i is due at latency + i/rate after the request.")),
    tokens: int = typer.Option(16, "--tokens", metavar="N", help=_("Output length in tokens (capped by max_tokens).")),
    fail: str | None = typer.Option(None, "--fail", metavar="STATUS", autocompletion=complete_mock_failures,
                                    help=_("Inject this HTTP status (or 'quota', 'concurrency').")),
    fail_style: str = typer.Option("new-api", "--fail-style", metavar="STYLE", autocompletion=complete_mock_styles,
                                   help=_("Error body shape: openai, one-api, new-api, litellm, openrouter, "
                                          "anthropic.")),
    fail_rate: float = typer.Option(1.0, "--fail-rate", metavar="FRACTION",
                                    help=_("Fraction of requests that fail, 0 to 1 (deterministic).")),
    retry_after: float | None = typer.Option(None, "--retry-after", metavar="SECONDS",
                                             help=_("Retry-After seconds on injected 429/503 answers.")),
    fault: str | None = typer.Option(None, "--fault", metavar="FAULT", autocompletion=complete_mock_faults,
                                     help=_("reset, stall, html, no-choices, stream-error, empty-stream, "
                                       "truncated-stream or no-usage (no usage chunk though asked).")),
    model_timing: list[str] = typer.Option(
        [], "--model-timing", metavar="MODEL=LATENCY_MS,TOKEN_RATE,TOKENS",
        help=_("Timing of one model (repeatable), e.g. fast=20,200,32 next to slow=300,20,32: compare two backends. "
               "An empty field keeps the global value.")),
    model_fail: list[str] = typer.Option(
        [], "--model-fail", metavar="MODEL=KIND",
        help=_("Fail every request for MODEL (repeatable) while other models stay healthy: KIND is a status "
               "(401, 429, 503…), quota, concurrency, no-channel, or a --fault.")),
    slots: int | None = typer.Option(None, "--slots", metavar="N",
                                     help=_("Serve at most N generations at once; the rest wait in a FIFO queue "
                                            "(a server of known capacity).")),
    rate_limit: float | None = typer.Option(None, "--rate-limit", metavar="PER_SECOND",
                                            help=_("A token bucket of this many requests/s: over it, 429 with "
                                                   "Retry-After (--retry-after, default 1).")),
    keep: int = typer.Option(10_000, "--keep", metavar="N",
                             help=_("Remember the last N requests (memory stays bounded; default 10000).")),
    lenient_paths: bool = typer.Option(False, "--lenient-paths",
                                       help=_("Also answer doubled/missing /v1 paths (they are still flagged).")),
    no_gemini_api: bool = typer.Option(False, "--no-gemini-api",
                                       help=_("Answer the Gemini API (served by default, for Gemini CLI) as an "
                                              "unknown route, as gateways without it do.")),
    lang: str = typer.Option("en", "--lang", metavar="LANG", autocompletion=complete_mock_languages,
                             help=_("Language of new-api messages: en or zh.")),
    replay: list[Path] = typer.Option([], "--replay", metavar="FILE",
                                      help=_("Answer the request a recording names (method, path) with its "
                                             "recorded status, headers and body (repeatable; the repo's "
                                             "new-api fixtures are such recordings).")),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=_("No per-request log lines.")),
    json_out: bool = typer.Option(False, "--json", help=_("Log one JSON object per request.")),
) -> None:
    from taotoken_cli.cmd.mock.options import (
        MockOptions,
        parse_aliases,
        parse_model_fail,
        parse_model_timing,
        parse_models,
    )
    from taotoken_cli.cmd.mock.replay import load_recording
    from taotoken_cli.cmd.mock.run import run

    options = MockOptions(
        key=None, any_key=any_key, host=host, port=port, allow_remote=allow_remote, models=parse_models(models),
        aliases=parse_aliases(alias), no_channel=parse_models(no_channel), latency_ms=latency_ms,
        token_rate=token_rate, tokens=tokens, fail=fail, fail_style=fail_style, fail_rate=fail_rate,
        retry_after=retry_after, fault=fault, model_timing=parse_model_timing(model_timing),
        model_fail=parse_model_fail(model_fail), lenient_paths=lenient_paths, gemini_api=not no_gemini_api, lang=lang,
        replay=tuple(load_recording(path) for path in replay),
        slots=slots, rate_limit=rate_limit, keep_requests=keep)
    raise typer.Exit(run(options, _options.io(), key_flag=key, quiet=quiet, as_json=json_out))
