"""`taotoken bench`: load-test the gateway with chat completions (thin layer; the work is in taotoken_cli.bench)."""

from __future__ import annotations

import typer

from taotoken_cli.commands import _options


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)


def bench(
    requests: int | None = typer.Option(None, "--requests", "-n", help="Requests to send (default 100; "
                                        "ignored with -z)."),
    concurrency: int = typer.Option(10, "--concurrency", "-c", help="Concurrent requests (closed loop), or the "
                                    "most in flight with --rate."),
    duration: str | None = typer.Option(None, "--duration", "-z", help="Run for a time instead of -n "
                                        "(e.g. 30s, 2m)."),
    rate: float | None = typer.Option(None, "--rate", help="Open loop: start R requests per second; latency "
                                      "counts from each scheduled start, late starts are reported."),
    warmup: int = typer.Option(0, "--warmup", help="Requests sent first and left out of the figures."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds allowed for each request."),
    workers: int | None = typer.Option(None, "--workers", help="Worker processes (default: number of cores)."),
    models: list[str] | None = typer.Option(None, "--model", "-m", help="Model ID; repeat to compare models "
                                            "side by side (default: the configured model)."),
    prompt: str | None = typer.Option(None, "--prompt", help="The user message (default 'Say OK.')."),
    prompt_file: str | None = typer.Option(None, "--prompt-file", help="Read the user message from a file."),
    max_tokens: int = typer.Option(16, "--max-tokens", help="max_tokens of each request."),
    stream: bool = typer.Option(False, "--stream", help="Stream responses and measure time to first token, "
                                "inter-token latency and tokens/s."),
    raw: str | None = typer.Option(None, "--raw", help="Write one JSON line per request to this file."),
    json_out: bool = _options.JSON,
    base_url: str | None = _options.BASE_URL,
    profile: str | None = _options.PROFILE,
) -> None:
    """Load-test chat completions: latency percentiles, TTFT, tokens/s and errors by cause."""
    from taotoken_cli.bench.run import BenchOptions, run

    options = BenchOptions(requests=requests, concurrency=concurrency, duration=duration, rate=rate, warmup=warmup,
                           timeout=timeout, workers=workers, models=list(models or []), prompt=prompt,
                           prompt_file=prompt_file, max_tokens=max_tokens, stream=stream, raw=raw, json_out=json_out,
                           base_url=base_url, profile=profile)
    raise typer.Exit(run(options, _options.io()))
