"""`taotoken bench` from options to exit status: validate, resolve the settings, run, render."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from taotoken_cli.core.base.errors import InputError, TaotokenError
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.term.iostreams import IOStreams

DEFAULT_CONCURRENCY = 10
DEFAULT_MAX_TOKENS = 16


@dataclass
class BenchOptions:
    requests: int | str | None = None  # a count: 200, 10k
    concurrency: int | str | None = None  # default 10
    duration: str | None = None  # e.g. 30s, 2m, 45 (seconds)
    rate: float | None = None
    warmup: int | str = 0
    timeout: float = 60.0
    workers: int | None = None
    models: list[str] = field(default_factory=list)
    prompt: str | None = None
    prompt_file: str | None = None
    max_tokens: int | None = None  # default 16
    stream: bool = False
    raw: str | None = None
    json_out: bool = False
    base_url: str | None = None
    profile: str | None = None
    # capacity search
    sweep: str | None = None
    slo: list[str] = field(default_factory=list)
    repeat: int = 1
    resolution: str | None = None  # a rate sweep's knee: bisect until the gap is within this (default 5%)
    # workload
    arrival: str | None = None
    ramp_up: str | None = None
    seed: int = 1
    input_tokens: str | None = None
    output_tokens: str | None = None
    dataset: str | None = None
    trace: str | None = None
    # failing fast
    max_errors: int | str | None = None
    max_error_rate: str | None = None  # a percentage, or "off"; default: stop when every request fails
    # artifacts and network
    csv: str | None = None
    html: str | None = None
    proxy: str | None = None
    no_proxy: bool = False


_DURATION_PART = re.compile(r"([0-9]*\.?[0-9]+)(ms|h|m|s)")


MAX_DURATION_S = 7 * 86_400.0


def parse_duration(text: str, option: str = "-z/--duration") -> float:
    """Durations: 30s, 2m, 1h, 500ms, compound ones as Go writes them (1m30s, 1h30m), or plain seconds."""
    raw = text.strip().lower().replace(" ", "")
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    value = -1.0
    try:
        value = float(raw)
    except ValueError:
        parts = _DURATION_PART.findall(raw)
        if parts and "".join(number + unit for number, unit in parts) == raw:
            value = sum(float(number) * units[unit] for number, unit in parts)
    flag = option.split("/")[-1]
    if not value > 0 or value == float("inf"):  # also refuses nan
        raise InputError(_("{option} {text!r} is not a positive duration").format(option=option, text=text),
                         _("use e.g. {flag} 30s, {flag} 2m, {flag} 1m30s or {flag} 45").format(flag=flag))
    if value > MAX_DURATION_S:  # 1e308 s: no clock counts that far (the engine's sleeps overflow)
        raise InputError(_("{option} {text!r} is longer than a week").format(option=option, text=text),
                         _("use at most {flag} 168h").format(flag=flag))
    return value


_COUNT = re.compile(r"([0-9]*\.?[0-9]+)([km]?)")


def parse_count(value: int | str | None, option: str) -> int | None:
    """A count as peers write it: 200, 10k, 1.5k, 2M (10_000 and 10,000 too)."""
    if value is None or isinstance(value, int):
        return value
    raw = value.strip().lower().replace("_", "").replace(",", "")
    match = _COUNT.fullmatch(raw)
    number = float(match[1]) * {"": 1, "k": 1000, "m": 1_000_000}[match[2]] if match else -1.0
    if not match or number != int(number):
        flag = option.split("/")[0]
        raise InputError(_("{option} {text!r} is not a whole number").format(option=option, text=value),
                         _("use e.g. {flag} 200 or {flag} 10k").format(flag=flag))
    return int(number)


def parse_error_rate(text: str) -> float | None:
    raw = text.strip().lower().rstrip("%").strip()
    if raw in ("off", "none", "no"):
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 100:
        raise InputError(_("--max-error-rate {text!r} is not a percentage above 0 and at most 100").format(text=text),
                         _("e.g. --max-error-rate 50% (stop a model once half its requests fail), or off"))
    return value / 100.0


def _resolution(text: str | None) -> float:
    from taotoken_cli.cmd.bench.sweep import DEFAULT_RESOLUTION

    if text is None:
        return DEFAULT_RESOLUTION
    raw = text.strip().lower().rstrip("%").strip()
    if raw in ("off", "none", "no"):
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 50:
        raise InputError(_("--resolution {text!r} is not a percentage above 0 and at most 50").format(text=text),
                         _("e.g. --resolution 2% (bisect a rate sweep's knee to within 2 %), or off"))
    return value / 100.0


def _conflict(a: str, b: str, fix: str) -> InputError:
    return InputError(_("{a} and {b} both given").format(a=a, b=b), fix)


def validate(args: BenchOptions) -> None:
    args.requests = parse_count(args.requests, "-n/--requests")
    args.concurrency = parse_count(args.concurrency, "-c/--concurrency")
    args.warmup = parse_count(args.warmup, "--warmup") or 0
    args.max_errors = parse_count(args.max_errors, "--max-errors")
    if args.requests is not None and args.duration is not None:
        raise _conflict("-n/--requests", "-z/--duration", _("use -n for a request count or -z for a time"))
    if args.requests is not None and args.requests < 1:
        raise InputError(_("-n/--requests must be at least 1 (got {n})").format(n=args.requests), _("e.g. -n 200"))
    if args.concurrency is not None and args.concurrency < 1:
        raise InputError(_("-c/--concurrency must be at least 1 (got {n})").format(n=args.concurrency),
                         _("e.g. -c 10"))
    if args.rate is not None and args.rate <= 0:
        raise InputError(_("--rate must be a positive number of requests per second (got {rate:g})").format(
            rate=args.rate), _("e.g. --rate 20, or leave it out for a closed loop"))
    if args.warmup < 0:
        raise InputError(_("--warmup cannot be negative"), _("e.g. --warmup 10"))
    if args.timeout <= 0:
        raise InputError(_("--timeout must be positive (got {seconds:g})").format(seconds=args.timeout),
                         _("e.g. --timeout 30"))
    if args.workers is not None and args.workers < 1:
        raise InputError(_("--workers must be at least 1"), _("leave it out to use one worker per core"))
    if args.max_tokens is not None and args.max_tokens < 1:
        raise InputError(_("--max-tokens must be at least 1"), _("e.g. --max-tokens 64"))
    if not 1 <= args.repeat <= 100:
        raise InputError(_("--repeat must be between 1 and 100 (got {n})").format(n=args.repeat), _("e.g. --repeat 3"))
    if args.max_errors is not None and args.max_errors < 1:
        raise InputError(_("--max-errors must be at least 1"),
                         _("e.g. --max-errors 50 (stop a model after 50 failures)"))
    prompts = [name for name, value in (("--prompt", args.prompt), ("--prompt-file", args.prompt_file),
                                        ("--dataset", args.dataset), ("--input-tokens", args.input_tokens),
                                        ("--trace", args.trace)) if value is not None]
    if len(prompts) > 1:
        raise _conflict(prompts[0], prompts[1], _("the prompts come from one of them"))
    if args.output_tokens is not None and args.max_tokens is not None:
        raise _conflict("--output-tokens", "--max-tokens", _("--output-tokens draws max_tokens per request; "
                                                             "use one of them"))
    if args.trace is not None:
        for name, value in (("--rate", args.rate), ("--arrival", args.arrival), ("--ramp-up", args.ramp_up)):
            if value is not None:
                raise _conflict("--trace", name, _("a trace brings its own start times"))
    if args.proxy is not None and args.no_proxy:
        raise _conflict("--proxy", "--no-proxy", _("use one of them"))


def resolve(args: BenchOptions, env: Mapping[str, str]):
    """Base URL, key and models from flags, env and the config file (the shared loader)."""
    from taotoken_cli.core.net.hygiene import clean_model
    from taotoken_cli.core.settings import Overrides, load_settings

    settings = load_settings(Overrides(profile=args.profile, base_url=args.base_url,
                                       model=args.models[0] if args.models else None), env)
    settings.require("base_url", "api_key")
    if args.models:
        models = [clean_model(m).value for m in args.models]
    else:
        settings.require("model")
        models = [settings.model.value]
    return settings, list(dict.fromkeys(models))  # a model given twice runs once


def run(args: BenchOptions, io: IOStreams) -> int:
    """Run the bench and print the report; returns the exit code."""
    from taotoken_cli.cmd.bench.artifacts import check_writable
    from taotoken_cli.cmd.bench.campaign import BenchRun, run_bench

    validate(args)
    duration = parse_duration(args.duration) if args.duration is not None else None
    sweep, slos = _capacity(args)
    workload = _workload(args, sweep)
    paths = {option: check_writable(option, path) for option, path in
             (("--raw", args.raw), ("--csv", args.csv), ("--html", args.html)) if path}
    if args.html:
        _require_plotting()
    settings, models = resolve(args, io.env)
    root = settings.base_url.value
    _refuse_plain_http(root, bool(settings.api_key.value), io.env)
    proxy, source = _proxy(args, root, io.env)
    out = io.out
    options = BenchRun(
        root=root, api_key=settings.api_key.value, models=models, workload=workload, stream=args.stream,
        requests=args.requests if args.requests is not None else (None if args.trace else 100), duration=duration,
        concurrency=args.concurrency or DEFAULT_CONCURRENCY, rate=args.rate, warmup=args.warmup,
        timeout=args.timeout, workers=args.workers, proxy=proxy, proxy_label=_proxy_label(proxy),
        proxy_source=source, sweep=sweep, slos=slos, repeat=args.repeat, max_errors=args.max_errors,
        resolution=_resolution(args.resolution),
        max_error_rate=parse_error_rate(args.max_error_rate) if args.max_error_rate is not None else 1.0,
        raw_path=paths.get("--raw"), csv_path=paths.get("--csv"))
    from taotoken_cli.cmd.bench.sweep import request_limits

    options.slo_limits = request_limits(slos)
    from taotoken_cli.cmd.bench.campaign import STOP, signal_name, stop_on_signals

    # from before the live view is drawn (a signal the moment it shows is one the run handles) until the report is
    # out (a Ctrl-C pressed twice as the run ends must not cut it short)
    restore = stop_on_signals()
    try:
        view = None
        if io.stderr_tty:
            from taotoken_cli.cmd.bench.progress import LiveView, PlainProgress
            from taotoken_cli.core.term.output import dumb_terminal

            view = (PlainProgress(out, models, sweep, args.repeat) if dumb_terminal(io.env)
                    else LiveView(out.err_console, models, sweep, args.repeat))
        try:
            report = run_bench(options, view)
        except KeyboardInterrupt:  # a third Ctrl-C: the workers did not come back, so there is nothing to report
            report = None
        finally:
            if view is not None:
                view.close()  # the live line goes before anything is printed
        if report is None:
            io.out.error_line(_("interrupted three times: stopped at once, without a report"))
            return interrupted_exit(signal_name(STOP.signal))
        return _deliver(args, report, io)
    finally:
        restore()


def _deliver(args: BenchOptions, report, io: IOStreams) -> int:
    """The files, then the report (text or JSON) and the files' names; returns the exit status."""
    from taotoken_cli.cmd.bench.artifacts import write_summary_csv
    from taotoken_cli.cmd.bench.view import render_text

    out = io.out
    written = [(option, path) for option, path in (("--raw", args.raw), ("--csv", args.csv)) if path]
    if args.csv:
        from taotoken_cli.cmd.bench.artifacts import summary_path

        write_summary_csv(summary_path(args.csv), report)
        written.append(("--csv", summary_path(args.csv)))
    if args.html:
        from taotoken_cli.cmd.bench.html_report import write_html

        write_html(args.html, report)
        written.append(("--html", args.html))
    status = exit_code(report)
    if args.json_out:
        from taotoken_cli.cmd.bench.report import SCHEMA_VERSION

        out.json(report.to_dict(), schema=SCHEMA_VERSION, exit_code=status)
    else:
        for line in render_text(report, _width(io)):
            out.line(line)
    for option, path in written:  # on stderr: stdout stays the report (or the JSON)
        out.error_line(_("wrote {path} ({option})").format(path=path, option=option))
    return status


def _width(io: IOStreams) -> int:
    """COLUMNS, else the terminal's width, else 80 (as every view); at least 80, which the tables need."""
    return max(80, io.out.width)


def _capacity(args: BenchOptions):
    from taotoken_cli.cmd.bench.sweep import parse_slo, parse_sweep, with_error_target

    sweep = parse_sweep(args.sweep) if args.sweep is not None else None
    if sweep is not None:
        flag, given = (("-c", args.concurrency) if sweep.parameter == "concurrency" else ("--rate", args.rate))
        if given is not None:
            raise _conflict("--sweep", flag,
                            _("the sweep sets {flag} at each step; leave {flag} out").format(flag=flag))
        if sweep.parameter == "rate" and args.trace is not None:
            raise _conflict("--sweep rate=…", "--trace", _("a trace brings its own start times; sweep c= instead"))
    slos = [parse_slo(text) for text in args.slo]
    if sweep is not None or slos:
        slos = with_error_target(slos)
    if not args.stream:
        for slo in slos:
            if slo.metric in ("ttft", "itl", "tpot"):
                raise InputError(_("--slo {target} needs --stream (time to first token and inter-token gaps "
                                   "are measured on streams)").format(target=slo.text), _("add --stream"))
    return sweep, slos


def _workload(args: BenchOptions, sweep):
    from taotoken_cli.cmd.bench.workload import Workload, parse_arrival, parse_lengths, read_dataset, read_trace

    open_loop = args.rate is not None or (sweep is not None and sweep.parameter == "rate")
    if args.arrival is not None and not open_loop:
        raise InputError(_("--arrival needs an open loop"), _("add --rate R (or --sweep rate=…)"))
    workload = Workload(prompt=read_prompt(args), max_tokens=args.max_tokens or DEFAULT_MAX_TOKENS, seed=args.seed)
    if args.arrival is not None:
        workload.arrival = parse_arrival(args.arrival)
    if args.ramp_up is not None:
        workload.ramp_up = parse_duration(args.ramp_up, "--ramp-up")
    if args.input_tokens is not None:
        workload.input_tokens = parse_lengths("--input-tokens", args.input_tokens)
    if args.output_tokens is not None:
        workload.output_tokens = parse_lengths("--output-tokens", args.output_tokens)
    if args.dataset is not None:
        workload.dataset, workload.source = read_dataset(args.dataset), args.dataset
    if args.trace is not None:
        workload.trace, workload.source = read_trace(args.trace), args.trace
    return workload


def read_prompt(args: BenchOptions) -> str:
    from taotoken_cli.cmd.bench.workload import read_text

    if args.prompt_file is None:
        return args.prompt if args.prompt is not None else "Say OK."
    text = read_text("--prompt-file", args.prompt_file)
    if not text.strip():
        raise InputError(_("--prompt-file {path} is empty").format(path=args.prompt_file),
                         _("put the prompt text in the file"))
    return text


def _require_plotting() -> None:
    try:
        import plotly  # noqa: F401
    except ImportError:
        from taotoken_cli.core.base.fix import Fix
        from taotoken_cli.core.platform.installer import add_extra

        raise InputError(_("--html needs the plotting library plotly, which is not installed"),
                         Fix.run(add_extra("html"))) from None


def _proxy(args: BenchOptions, root: str, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The HTTP proxy to go through: --proxy, else the environment's (as httpx would choose it)."""
    from urllib.parse import urlsplit

    if args.no_proxy:
        return None, None
    if args.proxy is not None:
        proxy, source = args.proxy.strip(), "--proxy"
    else:
        from taotoken_cli.core.net.proxies import proxy_for

        proxy, source = proxy_for(root, env), "environment"
        if not proxy:
            return None, None
    given = source == "--proxy"
    label = _proxy_label(proxy)
    try:
        parts = urlsplit(proxy if "://" in proxy else "http://" + proxy)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise InputError((_("--proxy ({proxy}) is not a URL") if given else
                          _("the proxy set in the environment ({proxy}) is not a URL")).format(proxy=label),
                         _("e.g. --proxy http://127.0.0.1:7890")) from None
    if parts.scheme.startswith("socks"):
        raise InputError((_("--proxy is a SOCKS proxy ({proxy}); bench speaks to HTTP proxies") if given else
                          _("the proxy set in the environment is a SOCKS proxy ({proxy}); bench speaks to HTTP "
                            "proxies")).format(proxy=label),
                         _("Clash/mihomo's mixed port speaks HTTP too: --proxy http://127.0.0.1:7890 "
                           "(or --no-proxy to connect directly)"))
    if parts.scheme != "http" or not parts.hostname:
        raise InputError((_("--proxy ({proxy}) is not an http://host:port proxy URL") if given else
                          _("the proxy set in the environment ({proxy}) is not an http://host:port proxy URL"))
                         .format(proxy=label),
                         _("e.g. --proxy http://127.0.0.1:7890 (or --no-proxy to connect directly)"))
    return parts.geturl(), source


def _proxy_label(proxy: str | None) -> str | None:
    """The proxy URL with its password hidden."""
    if not proxy:
        return None
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(proxy)
        if parts.password:
            host = parts.netloc.rsplit("@", 1)[-1]
            return parts._replace(netloc=f"{parts.username}:***@{host}").geturl()
    except ValueError:
        pass
    from taotoken_cli.core.base.masking import mask_unknown_keys

    return mask_unknown_keys(proxy)


def interrupted_exit(signal: str | None) -> int:
    """143 for SIGTERM (128 + 15, as a shell reports a process it ended), else 130 (Ctrl-C)."""
    from taotoken_cli.core.base.exitcodes import Exit

    return 143 if signal == "SIGTERM" else int(Exit.INTERRUPTED)


def exit_code(report) -> int:
    """130 (SIGINT) or 143 (SIGTERM) when the run was stopped. 0 when requests succeeded (and the SLOs held).
    When every request of a series failed, or the error limits stopped it, the exit code of its top error — in a
    sweep only when a model failed at every step (overload at the top of a sweep is what a sweep looks for). 1
    when SLOs were missed: by a single run's series, or at every step of a sweep (no knee)."""
    from taotoken_cli.core.base.exitcodes import Exit

    if report.interrupted is not None:
        return interrupted_exit(report.interrupted)
    if report.sweep is not None:
        for model in report.sweep["models"]:
            steps = [report.series[step["series"]] for step in model["steps"]]
            if steps and all(s.requests and s.ok == 0 for s in steps):
                return _error_exit(steps[0])
        missed = report.slo and any(m["knee"] is None for m in report.sweep["models"])
        return int(Exit.FAILURE if missed else Exit.OK)
    for series in report.series:
        if series.requests and (series.ok == 0 or series.aborted):
            return _error_exit(series)
    if report.slo and any(s.meets_slo is False for s in report.series):
        return int(Exit.FAILURE)
    return int(Exit.OK)


def _error_exit(series) -> int:
    from taotoken_cli.core.base.exitcodes import Exit

    top = series.top_error
    if top is not None:
        from taotoken_cli.core.diagnosis.catalogue import CATALOGUE

        if top.code in CATALOGUE:
            return int(CATALOGUE[top.code].exit)
    return int(Exit.FAILURE)


def _refuse_plain_http(root: str, has_key: bool, env: Mapping[str, str]) -> None:
    """The same rule as the gateway client: no key over plain http to another host without opt-in."""
    from taotoken_cli.core.net.gateway import plain_http_refusal

    refusal = plain_http_refusal(root, env) if has_key else None
    if refusal is not None:
        from taotoken_cli.core.diagnosis.catalogue import get
        from taotoken_cli.core.diagnosis.classify import Diagnosis
        from taotoken_cli.core.diagnosis.context import context_for

        entry = get("url.plain_http")
        # the catalogue's words in the reader's language: its last fix is the opt-in
        fix = Diagnosis(entry.code, entry, context=context_for(base=root)).fixes()[-1]
        raise TaotokenError(_("{refusal}: {title}").format(refusal=refusal, title=_(entry.title)),
                            fix, entry.exit, code=entry.code)
