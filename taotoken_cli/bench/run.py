"""`taotoken bench` from options to exit status: validate, resolve the settings, run, render."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from taotoken_cli.errors import InputError, TaotokenError
from taotoken_cli.iostreams import IOStreams


@dataclass
class BenchOptions:
    requests: int | None = None
    concurrency: int = 10
    duration: str | None = None  # e.g. 30s, 2m, 45 (seconds)
    rate: float | None = None
    warmup: int = 0
    timeout: float = 60.0
    workers: int | None = None
    models: list[str] = field(default_factory=list)
    prompt: str | None = None
    prompt_file: str | None = None
    max_tokens: int = 16
    stream: bool = False
    raw: str | None = None
    json_out: bool = False
    base_url: str | None = None
    profile: str | None = None


def parse_duration(text: str) -> float:
    """`-z` values: 30s, 2m, 1h, 500ms, or a plain number of seconds."""
    raw = text.strip().lower()
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    for suffix in ("ms", "s", "m", "h"):
        if raw.endswith(suffix):
            number, factor = raw[: -len(suffix)], units[suffix]
            break
    else:
        number, factor = raw, 1.0
    try:
        value = float(number) * factor
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):  # also refuses nan
        raise InputError(f"-z/--duration {text!r} is not a positive duration", "use e.g. -z 30s, -z 2m or -z 45")
    return value


def validate(args: BenchOptions) -> None:
    if args.requests is not None and args.duration is not None:
        raise InputError("-n/--requests and -z/--duration both given", "use -n for a request count or -z for a time")
    if args.requests is not None and args.requests < 1:
        raise InputError(f"-n/--requests must be at least 1 (got {args.requests})", "e.g. -n 200")
    if args.concurrency < 1:
        raise InputError(f"-c/--concurrency must be at least 1 (got {args.concurrency})", "e.g. -c 10")
    if args.rate is not None and args.rate <= 0:
        raise InputError(f"--rate must be a positive number of requests per second (got {args.rate:g})",
                         "e.g. --rate 20, or leave it out for a closed loop")
    if args.warmup < 0:
        raise InputError("--warmup cannot be negative", "e.g. --warmup 10")
    if args.timeout <= 0:
        raise InputError(f"--timeout must be positive (got {args.timeout:g})", "e.g. --timeout 30")
    if args.workers is not None and args.workers < 1:
        raise InputError("--workers must be at least 1", "leave it out to use one worker per core")
    if args.max_tokens < 1:
        raise InputError("--max-tokens must be at least 1", "e.g. --max-tokens 64")
    if args.prompt is not None and args.prompt_file is not None:
        raise InputError("--prompt and --prompt-file both given", "use one of them")


def read_prompt(args: BenchOptions) -> str:
    if args.prompt_file is None:
        return args.prompt if args.prompt is not None else "Say OK."
    try:
        with open(os.path.expanduser(args.prompt_file), encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read --prompt-file {args.prompt_file}: {exc.strerror or exc}",
                         "give the path of a UTF-8 text file") from None
    except UnicodeDecodeError:
        raise InputError(f"--prompt-file {args.prompt_file} is not UTF-8 text", "save the prompt as UTF-8") from None
    if not text.strip():
        raise InputError(f"--prompt-file {args.prompt_file} is empty", "put the prompt text in the file")
    return text


def resolve(args: BenchOptions, env: Mapping[str, str]):
    """Base URL, key and models from flags, env and the config file (the shared loader)."""
    from taotoken_cli.config import Overrides, load_settings
    from taotoken_cli.hygiene import clean_model

    settings = load_settings(Overrides(profile=args.profile, base_url=args.base_url,
                                       model=args.models[0] if args.models else None), env)
    settings.require("base_url", "api_key")
    if args.models:
        models = [clean_model(m).value for m in args.models]
    else:
        settings.require("model")
        models = [settings.model.value]
    return settings, list(dict.fromkeys(models))  # a model given twice runs once


def _check_raw_path(path: str) -> str:
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise InputError(f"--raw {path} is a directory", "give a file name, e.g. --raw bench.jsonl")
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
        raise InputError(f"--raw {path}: cannot write in {directory}", "pick a writable directory")
    return path


def run(args: BenchOptions, io: IOStreams) -> int:
    """Run the bench and print the report; returns the exit code."""
    from taotoken_cli.bench import BenchRun, run_bench
    from taotoken_cli.bench.view import ProgressLine, render_text

    duration = parse_duration(args.duration) if args.duration is not None else None
    validate(args)
    prompt = read_prompt(args)
    raw = _check_raw_path(args.raw) if args.raw else None
    settings, models = resolve(args, io.env)
    _refuse_plain_http(settings.base_url.value, bool(settings.api_key.value), io.env)
    _refuse_proxy(settings.base_url.value, io.env)
    out = io.out
    options = BenchRun(root=settings.base_url.value, api_key=settings.api_key.value, models=models, prompt=prompt,
                       max_tokens=args.max_tokens, stream=args.stream,
                       requests=args.requests if args.requests is not None else 100,
                       duration=duration, concurrency=args.concurrency, rate=args.rate, warmup=args.warmup,
                       timeout=args.timeout, workers=args.workers, raw_path=raw)
    bar: list[ProgressLine] = []
    on_progress = None
    if io.stderr_tty:
        def on_progress(plan):
            line = ProgressLine(f"{plan.model[:24]:<24}", out.err)
            bar.append(line)
            return lambda done, total, elapsed: line(done, total, elapsed, plan.duration)
    try:
        report = run_bench(options, on_progress)
    finally:
        if bar:
            bar[-1].clear()
    if args.json_out:
        out.json(report.to_dict())
    else:
        for line in render_text(report):
            out.line(line)
    return _exit_code(report)


def _exit_code(report) -> int:
    """0 when requests succeeded; when every request of a series failed, the exit code of its top error."""
    from taotoken_cli.exitcodes import Exit

    for series in report.series:
        if series.requests and series.ok == 0:
            top = series.top_error
            if top is not None:
                try:
                    from taotoken_cli.diagnosis.catalogue import get

                    return int(get(top.code).exit)
                except KeyError:
                    pass
            return int(Exit.FAILURE)
    return int(Exit.OK)


def _refuse_plain_http(root: str, has_key: bool, env: Mapping[str, str]) -> None:
    """The same rule as the gateway client: no key over plain http to another host without opt-in."""
    from taotoken_cli.gateway import plain_http_refusal

    refusal = plain_http_refusal(root, env) if has_key else None
    if refusal is not None:
        from taotoken_cli.diagnosis.catalogue import get

        entry = get("url.plain_http")
        raise TaotokenError(f"{refusal}: {entry.title}", entry.fixes[-1], entry.exit, code=entry.code)


def _refuse_proxy(root: str, env: Mapping[str, str]) -> None:
    """Bench's own HTTP/1.1 transport connects directly; say so instead of silently bypassing a proxy."""
    from taotoken_cli.proxies import proxy_for

    proxy = proxy_for(root, env)
    if proxy:
        from taotoken_cli.masking import mask_unknown_keys

        host = root.split("://", 1)[-1].split("/", 1)[0]
        raise InputError(f"a proxy is set for {host} ({mask_unknown_keys(proxy)}), and bench connects directly "
                         "so it measures the gateway, not the proxy",
                         f"run it with NO_PROXY={host} (or from a machine that reaches the gateway directly)")
