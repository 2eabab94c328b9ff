"""`taotoken bench`: load-test the gateway with chat completions (thin layer; the work is in taotoken_cli.cmd.bench)."""

from __future__ import annotations

import typer

from taotoken_cli.cmd import options as _options
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.platform.installer import add_extra

# Values shell completion offers (autocompletion=), taken from the code that accepts them; gen_docs writes
# them into the static completion scripts, so Tab never starts Python. Imports happen only when asked.


def complete_arrivals() -> list[str]:
    from taotoken_cli.cmd.bench.workload import ARRIVAL_EXAMPLES

    return list(ARRIVAL_EXAMPLES)


# Help panels (translated at import, as every help text: the language is chosen before the app is imported)
_LOAD = _("Load")
_CAPACITY = _("Capacity search")
_WORKLOAD = _("Workload")
_OUTPUT = _("Output files")


def _no_q(value: str | None) -> None:
    """`-q` is the rate in oha and hey: say which option bench has for it (a usage error, exit 2)."""
    if value is not None:
        raise typer.BadParameter(_("bench has no -q: its open-loop rate is --rate R, requests per second in all "
                                   "(as oha's -q; hey's -q is per worker, so R = q × c); write: --rate {value}")
                                 .format(value=value))


def register(app: typer.Typer) -> None:
    app.command("bench", help=_("Load-test chat completions: latency, TTFT, tokens/s and errors by cause; "
                                "capacity sweeps against SLOs."))(bench)


def bench(
    requests: str | None = typer.Option(None, "--requests", "-n", metavar="N", rich_help_panel=_LOAD,
                                        help=_("Requests to send (default 100; 10k is 10000; per step of a sweep; "
                                               "ignored with -z).")),
    concurrency: str | None = typer.Option(None, "--concurrency", "-c", metavar="N", rich_help_panel=_LOAD,
                                           help=_("Concurrent requests (closed loop; default 10), or the most in "
                                             "flight with --rate.")),
    duration: str | None = typer.Option(None, "--duration", "-z", metavar="TIME", rich_help_panel=_LOAD,
                                        help=_("Run for a time instead of -n (e.g. 30s, 2m, 1m30s).")),
    rate: float | None = typer.Option(None, "--rate", metavar="R", rich_help_panel=_LOAD,
                                      help=_("Open loop: start R requests per second; latency counts from each "
                                        "scheduled start, late starts are reported.")),
    warmup: str = typer.Option("0", "--warmup", metavar="N", rich_help_panel=_LOAD,
                               help=_("Requests sent first and left out of the figures.")),
    timeout: float = typer.Option(60.0, "--timeout", "-t", metavar="SECONDS", rich_help_panel=_LOAD,
                                  help=_("Seconds allowed for each request.")),
    workers: int | None = typer.Option(None, "--workers", metavar="N", rich_help_panel=_LOAD,
                                       help=_("Worker processes (default: number of cores).")),
    models: list[str] | None = typer.Option(None, "--model", "-m", metavar="MODEL",
                                            help=_("Model ID; repeat to compare models side by side (default: the "
                                              "configured model).")),
    stream: bool = typer.Option(False, "--stream", help=_("Stream responses and measure time to first token, "
                                  "inter-token latency and tokens/s.")),
    proxy: str | None = typer.Option(None, "--proxy", metavar="URL", rich_help_panel=_LOAD,
                                     help=_("Go through this HTTP proxy (e.g. http://127.0.0.1:7890); default: "
                                       "HTTPS_PROXY/HTTP_PROXY/ALL_PROXY as other clients use them.")),
    no_proxy: bool = typer.Option(False, "--no-proxy", rich_help_panel=_LOAD,
                                  help=_("Connect directly, ignoring the proxy variables.")),
    max_errors: str | None = typer.Option(None, "--max-errors", metavar="N", rich_help_panel=_LOAD,
                                          help=_("Stop a model after N failed requests.")),
    max_error_rate: str | None = typer.Option(None, "--max-error-rate", metavar="PCT", rich_help_panel=_LOAD,
                                              help=_("Stop a model once this share of its requests failed (judged "
                                                "after 20; default 100%: when every one fails; off: never).")),
    sweep: str | None = typer.Option(None, "--sweep", metavar="SPEC", rich_help_panel=_CAPACITY,
                                     help=_("Step the load: c=1,2,4,8 or c=1..64 (doubling) for concurrency, "
                                       "rate=2..20+2 or rate=1..64*1.5 for an open-loop rate; stops past saturation "
                                       "and reports the knee.")),
    slo: list[str] | None = typer.Option(None, "--slo", metavar="TARGET", rich_help_panel=_CAPACITY,
                                         help=_("A target the run must meet, repeatable: ttft:p95<2s, itl:p99<50ms, "
                                           "tpot:mean<40ms, latency:p90<10s, error-rate<1%. Sets goodput; missed "
                                           "targets exit 1.")),
    repeat: int = typer.Option(1, "--repeat", metavar="N", rich_help_panel=_CAPACITY,
                               help=_("Run each series N times and report the spread.")),
    resolution: str | None = typer.Option(None, "--resolution", metavar="PCT", rich_help_panel=_CAPACITY,
                                          help=_("How finely a rate sweep's knee is bisected (default 5%); "
                                                 "concurrency is bisected to one user; off: the coarse steps only.")),
    _q: str | None = typer.Option(None, "-q", hidden=True, callback=lambda value: _no_q(value)),
    prompt: str | None = typer.Option(None, "--prompt", metavar="TEXT", rich_help_panel=_WORKLOAD,
                                      help=_("The user message (default 'Say OK.').")),
    prompt_file: str | None = typer.Option(None, "--prompt-file", metavar="FILE", rich_help_panel=_WORKLOAD,
                                           help=_("Read the user message from a file.")),
    max_tokens: int | None = typer.Option(None, "--max-tokens", metavar="N", rich_help_panel=_WORKLOAD,
                                          help=_("max_tokens of each request (default 16).")),
    dataset: str | None = typer.Option(None, "--dataset", metavar="FILE", rich_help_panel=_WORKLOAD,
                                       help=_("Prompts from a file, in order: JSON Lines with \"prompt\" (optional "
                                         "\"max_tokens\") or ShareGPT \"conversations\", or text, one per line.")),
    input_tokens: str | None = typer.Option(None, "--input-tokens", metavar="DIST", rich_help_panel=_WORKLOAD,
                                            help=_("Synthetic prompts of about this many tokens: 512, 128..1024 "
                                              "(uniform) or normal:512,128.")),
    output_tokens: str | None = typer.Option(None, "--output-tokens", metavar="DIST", rich_help_panel=_WORKLOAD,
                                             help=_("max_tokens drawn per request: 128, 64..256 or normal:128,32.")),
    arrival: str | None = typer.Option(None, "--arrival", metavar="KIND", rich_help_panel=_WORKLOAD,
                                       autocompletion=complete_arrivals,
                                       help=_("Open-loop arrivals: constant (default), poisson, or gamma:B "
                                         "(burstiness B: 1 is Poisson, below 1 burstier).")),
    ramp_up: str | None = typer.Option(None, "--ramp-up", metavar="TIME", rich_help_panel=_WORKLOAD,
                                       help=_("Climb to the load over this time: the rate from 0 with --rate, "
                                         "users one after another otherwise.")),
    trace: str | None = typer.Option(None, "--trace", metavar="FILE", rich_help_panel=_WORKLOAD,
                                     help=_("Replay a request trace, JSON Lines: timestamp (ms), input_length "
                                       "(or prompt), output_length.")),
    seed: int = typer.Option(1, "--seed", metavar="N", rich_help_panel=_WORKLOAD,
                             help=_("Seed of the arrivals and drawn lengths (the same seed, the same requests).")),
    raw: str | None = typer.Option(None, "--raw", metavar="FILE", rich_help_panel=_OUTPUT,
                                   help=_("Write one JSON line per request to this file.")),
    csv: str | None = typer.Option(None, "--csv", metavar="FILE", rich_help_panel=_OUTPUT,
                                   help=_("Write one CSV row per request to FILE and one per series to "
                                     "FILE.summary.csv.")),
    html: str | None = typer.Option(None, "--html", metavar="FILE", rich_help_panel=_OUTPUT,
                                    help=_("Write an HTML report with plots, one file that opens offline (needs "
                                           "the html extra: {command}).").format(
                                        # rich reads [html] as markup: escaped, it shows as typed
                                        command=str(add_extra("html")).replace("[", "\\["))),
    json_out: bool = _options.JSON,
    base_url: str | None = _options.BASE_URL,
    profile: str | None = _options.PROFILE,
) -> None:
    from taotoken_cli.cmd.bench.run import BenchOptions, run

    options = BenchOptions(requests=requests, concurrency=concurrency, duration=duration, rate=rate, warmup=warmup,
                           timeout=timeout, workers=workers, models=list(models or []), prompt=prompt,
                           prompt_file=prompt_file, max_tokens=max_tokens, stream=stream, raw=raw, json_out=json_out,
                           base_url=base_url, profile=profile, sweep=sweep, slo=list(slo or []), repeat=repeat,
                           arrival=arrival, ramp_up=ramp_up, seed=seed, input_tokens=input_tokens,
                           output_tokens=output_tokens, dataset=dataset, trace=trace, max_errors=max_errors,
                           max_error_rate=max_error_rate, csv=csv, html=html, proxy=proxy, no_proxy=no_proxy,
                           resolution=resolution)
    raise typer.Exit(run(options, _options.io()))
