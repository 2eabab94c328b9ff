"""`taotoken mock`: run a local gateway to point clients at and watch what they send."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    app.command("mock")(mock)


def mock(
    port: int = typer.Option(0, "--port", "-P", help="Port to listen on; 0 picks a free one and prints it."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback only by default)."),
    allow_remote: bool = typer.Option(False, "--allow-remote", help="Allow a non-loopback --host."),
    key: str | None = typer.Option(None, "--key", help="The key clients must send (default: TAOTOKEN_API_KEY, "
                                   "then the config file)."),
    any_key: bool = typer.Option(False, "--any-key", help="Accept any non-empty key."),
    models: list[str] = typer.Option([], "--models", help="Models served, comma-separated (default: any name)."),
    alias: list[str] = typer.Option([], "--alias", metavar="REQ=RESP",
                                    help="Answer model REQ with `model: RESP` (e.g. a dated variant)."),
    no_channel: list[str] = typer.Option([], "--no-channel", metavar="MODEL",
                                         help="Answer MODEL with new-api's 503 'No available channel'."),
    latency_ms: float = typer.Option(0.0, "--latency-ms", help="Fixed delay before the response headers."),
    token_rate: float = typer.Option(0.0, "--token-rate", help="Tokens per second in streams (0 = unpaced)."),
    tokens: int = typer.Option(16, "--tokens", help="Output length in tokens (capped by max_tokens)."),
    fail: str | None = typer.Option(None, "--fail", metavar="STATUS",
                                    help="Inject this HTTP status (or 'quota', 'concurrency')."),
    fail_style: str = typer.Option("new-api", "--fail-style",
                                   help="Error body shape: openai, one-api, new-api, litellm, openrouter, anthropic."),
    fail_rate: float = typer.Option(1.0, "--fail-rate", help="Fraction of requests that fail (deterministic)."),
    retry_after: float | None = typer.Option(None, "--retry-after", help="Retry-After seconds on injected errors."),
    fault: str | None = typer.Option(None, "--fault", help="reset, stall, html, no-choices, stream-error, "
                                     "empty-stream or truncated-stream."),
    lenient_paths: bool = typer.Option(False, "--lenient-paths",
                                       help="Also answer doubled/missing /v1 paths (they are still flagged)."),
    lang: str = typer.Option("en", "--lang", help="Language of new-api messages: en or zh."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No per-request log lines."),
    json_out: bool = typer.Option(False, "--json", help="Log one JSON object per request."),
) -> None:
    """Run a local TaoToken-like gateway; point clients at it and watch each request."""
    from taotoken_cli.mock.cli import run_mock
    from taotoken_cli.mock.options import MockOptions, parse_aliases, parse_models

    options = MockOptions(
        key=None, any_key=any_key, host=host, port=port, allow_remote=allow_remote, models=parse_models(models),
        aliases=parse_aliases(alias), no_channel=parse_models(no_channel), latency_ms=latency_ms,
        token_rate=token_rate, tokens=tokens, fail=fail, fail_style=fail_style, fail_rate=fail_rate,
        retry_after=retry_after, fault=fault, lenient_paths=lenient_paths, lang=lang)
    run_mock(options, key_flag=key, quiet=quiet, as_json=json_out)
