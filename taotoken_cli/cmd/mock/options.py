"""What the mock gateway is told to do: one dataclass shared by the CLI, tests and benchmarks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from taotoken_cli.cmd.mock.replay import Recording
from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.i18n import _, listed

FAIL_STYLES = ("openai", "one-api", "new-api", "litellm", "openrouter", "anthropic")
FAULTS = ("reset", "stall", "html", "no-choices", "stream-error", "empty-stream", "truncated-stream", "no-usage")
# Faults that only make sense for a generation request (chat / responses / messages).
GENERATION_FAULTS = ("no-choices", "stream-error", "empty-stream", "truncated-stream", "no-usage")
# Faults that change a stream's events (a plain request is answered normally under them).
STREAM_FAULTS = ("stream-error", "empty-stream", "truncated-stream", "no-usage")
# Named failures besides plain HTTP statuses: each style answers them with its own status and body.
NAMED_FAILURES = ("quota", "concurrency")
# What `--model-fail MODEL=KIND` accepts besides an HTTP status: the named failures, the faults, no-channel.
MODEL_FAILURES = (*NAMED_FAILURES, *FAULTS, "no-channel")

# Statuses `--fail` is most often given (any from 400 to 599 works); shell completion offers these.
COMMON_STATUSES = (400, 401, 403, 404, 429, 500, 502, 503, 504)
LANGUAGES = ("en", "zh")  # of new-api's messages

DEFAULT_MODELS = ("gpt-4o-mini", "claude-sonnet-4-5", "gpu-llama-3.1-8b", "cpu-qwen2.5-0.5b")


@dataclass(frozen=True)
class ModelTiming:
    """One model's own speed (`--model-timing MODEL=LATENCY_MS,TOKEN_RATE,TOKENS`); None = the global value."""

    latency_ms: float | None = None
    token_rate: float | None = None
    tokens: int | None = None

    def spec(self) -> str:
        """Back to the CLI form, e.g. `20,200,32` (empty fields keep the global value)."""
        fields = [self.latency_ms, self.token_rate, self.tokens]
        while fields and fields[-1] is None:
            fields.pop()
        return ",".join("" if f is None else repr(f) if isinstance(f, float) else str(f) for f in fields)


class Timing(NamedTuple):
    """The effective timing of one request: headers `latency_s` after its arrival, token i at latency + i*interval."""

    latency_s: float
    interval_s: float  # 0 = unpaced
    tokens: int


@dataclass
class MockOptions:
    """Behaviour of one mock gateway.

    `key` is the key clients must send (None with `any_key=False` is refused at start). `models`
    empty means every model name is served and `/models` lists DEFAULT_MODELS; non-empty means
    only those (plus alias sources) are served and the rest get the style's model-not-found error.
    `fail`/`fault` are injected on a deterministic `fail_rate` fraction of eligible requests
    (rate 0.25 = exactly every 4th), so tests and benchmarks get exact counts. `model_timing`
    and `model_fail` override the timing and the failure for one model (a model's own failure
    hits every request for it; the global fail/fault then spares that model).
    """

    key: str | None = None
    any_key: bool = False
    host: str = "127.0.0.1"
    port: int = 0
    allow_remote: bool = False
    models: tuple[str, ...] = ()
    aliases: dict[str, str] = field(default_factory=dict)  # requested model -> answered `model`
    no_channel: tuple[str, ...] = ()
    latency_ms: float = 0.0  # fixed delay between the full request and the response headers
    token_rate: float = 0.0  # tokens per second in streams; 0 = as fast as possible
    tokens: int = 16  # output length (capped by the request's max_tokens)
    fail: int | str | None = None  # HTTP status or a NAMED_FAILURES name
    fail_style: str = "new-api"  # body shape of every error the mock produces
    fail_rate: float = 1.0
    retry_after: float | None = None  # seconds; sent as Retry-After on injected 429/503
    fault: str | None = None
    # Per model, for serving a fast and a slow (or a healthy and a failing) model from one mock:
    model_timing: dict[str, ModelTiming] = field(default_factory=dict)
    model_fail: dict[str, int | str] = field(default_factory=dict)  # model -> status | MODEL_FAILURES name
    lenient_paths: bool = False  # serve doubled/missing /v1 too (still flagged in the log)
    gemini_api: bool = True  # serve the Gemini API (/v1beta/models/…:generateContent); False: an unknown route
    lang: str = "en"  # language of new-api messages (one-api's are always Chinese)
    keep_requests: int = 10_000  # how many RequestRecords to keep (oldest dropped): `--keep N`
    replay: tuple[Recording, ...] = ()  # recorded answers (--replay), served before anything else
    slots: int | None = None  # at most this many generations at once, the rest queued FIFO (capacity.Slots)
    rate_limit: float | None = None  # requests/s over which generations get 429 (capacity.TokenBucket)

    def validate(self) -> MockOptions:
        """Check the combination; raises InputError with the fix. Returns self for chaining."""
        from taotoken_cli.core.net.hygiene import is_loopback_host

        if not self.any_key and not self.key:
            raise InputError(_("the mock has no key to check"),
                             _("pass --key (or set TAOTOKEN_API_KEY), or --any-key to accept every key"))
        if self.key is not None and (self.key != self.key.strip() or not self.key):
            raise InputError(_("the mock's expected key has surrounding whitespace"),
                             _("give the key without spaces or newlines"))
        if not is_loopback_host(self.host) and not self.allow_remote:
            raise InputError(_("refusing to listen on non-loopback host {host}: anyone on the network could use "
                               "the mock and read its log").format(host=repr(self.host)),
                             _("use --host 127.0.0.1, or add --allow-remote if you really mean it"))
        if not 0 <= self.port <= 65535:
            raise InputError(_("port {port} is out of range").format(port=self.port),
                             _("use 0 (a free port) or 1-65535"))
        if self.latency_ms < 0 or self.token_rate < 0 or self.tokens < 0:
            raise InputError(_("latency, token rate and tokens must not be negative"),
                             _("use 0 or a positive number"))
        if self.fail_style not in FAIL_STYLES:
            raise InputError(_("unknown failure style {style}").format(style=repr(self.fail_style)),
                             _("use one of: {choices}").format(choices=listed(FAIL_STYLES)))
        if self.fault is not None and self.fault not in FAULTS:
            raise InputError(_("unknown fault {fault}").format(fault=repr(self.fault)),
                             _("use one of: {choices}").format(choices=listed(FAULTS)))
        if self.fail is not None and self.fault is not None:
            raise InputError(_("--fail and --fault cannot be combined"), _("inject one kind of failure per mock"))
        if isinstance(self.fail, str):
            self.fail = parse_fail(self.fail)
        if isinstance(self.fail, int) and not 400 <= self.fail <= 599:
            raise InputError(_("--fail {status}: not an error status").format(status=self.fail),
                             _("use a status from 400 to 599"))
        if not 0.0 <= self.fail_rate <= 1.0:
            raise InputError(_("--fail-rate {rate}: not a fraction").format(rate=self.fail_rate),
                             _("use a number from 0 to 1"))
        if self.keep_requests < 1:
            raise InputError(_("--keep must be at least 1 (got {n})").format(n=self.keep_requests),
                             _("e.g. --keep 1000 (the most recent requests the mock remembers)"))
        if self.slots is not None and self.slots < 1:
            raise InputError(_("--slots must be at least 1 (got {n})").format(n=self.slots),
                             _("e.g. --slots 12 (12 generations at once, the rest wait their turn)"))
        if self.rate_limit is not None and not self.rate_limit > 0:
            raise InputError(_("--rate-limit must be a positive number of requests per second"),
                             _("e.g. --rate-limit 10 (answers 429 with Retry-After over 10 requests/s)"))
        if self.retry_after is not None and self.retry_after < 0:
            raise InputError(_("--retry-after must not be negative"), _("give seconds, e.g. --retry-after 2"))
        for model, timing in self.model_timing.items():
            if any(v is not None and v < 0 for v in (timing.latency_ms, timing.token_rate, timing.tokens)):
                raise InputError(_("--model-timing {model}: latency, token rate and tokens must not be negative")
                                 .format(model=model),
                                 _("use 0 or a positive number, e.g. --model-timing fast=20,200,32"))
        self.model_fail = {model: parse_fail(str(kind), model) for model, kind in self.model_fail.items()}
        if self.models:
            for flag, names in (("--model-timing", self.model_timing), ("--model-fail", self.model_fail)):
                unserved = [m for m in names if not self.serves(m)]
                if unserved:
                    raise InputError(_("{option} {model}: not among --models ({models})").format(
                        option=flag, model=unserved[0], models=listed(self.models)),
                        _("add it to --models, or drop the {option} for it").format(option=flag))
        if self.lang not in LANGUAGES:
            raise InputError(_("unknown language {lang}").format(lang=repr(self.lang)),
                             _("use {first} or {second}").format(first=LANGUAGES[0], second=LANGUAGES[1]))
        return self

    @property
    def listed_models(self) -> tuple[str, ...]:
        base = self.models or DEFAULT_MODELS
        named = [*self.aliases, *self.model_timing,
                 *(m for m, kind in self.model_fail.items() if kind != "no-channel")]
        extra = tuple(dict.fromkeys(m for m in named if m not in base))
        return tuple(base) + extra

    def serves(self, model: str) -> bool:
        return not self.models or model in self.models or model in self.aliases

    def timing_for(self, model: str | None) -> Timing:
        own = self.model_timing.get(model) if model is not None and self.model_timing else None
        latency_ms, rate, tokens = self.latency_ms, self.token_rate, self.tokens
        if own is not None:
            latency_ms = own.latency_ms if own.latency_ms is not None else latency_ms
            rate = own.token_rate if own.token_rate is not None else rate
            tokens = own.tokens if own.tokens is not None else tokens
        return Timing(latency_ms / 1000.0, 1.0 / rate if rate > 0 else 0.0, tokens)

    def failure_for(self, model: str | None) -> tuple[int | str | None, str | None, bool]:
        """(fail, fault, own): the model's own failure (always injected) or the global --fail/--fault."""
        own = self.model_fail.get(model) if model is not None and self.model_fail else None
        if own is None or own == "no-channel":
            return self.fail, self.fault, False
        if own in FAULTS:
            return None, str(own), True
        return own, None, True

    def no_channel_for(self, model: str) -> bool:
        return model in self.no_channel or self.model_fail.get(model) == "no-channel"


def parse_fail(text: str, model: str | None = None) -> int | str:
    """A `--fail` value (status or named failure); with `model`, a `--model-fail` value (also faults)."""
    text = text.strip().lower()
    allowed = MODEL_FAILURES if model is not None else NAMED_FAILURES
    if text in allowed:
        return text
    option = f"--model-fail {model}=" if model is not None else "--fail "
    try:
        status = int(text)
    except ValueError:
        message = (_("{option}{value}: not an HTTP status or a named failure") if model is None
                   else _("{option}{value}: not an HTTP status or a known failure"))
        raise InputError(message.format(option=option, value=repr(text)),
                         _("use a status like 429 or 503, or one of: {choices}").format(choices=listed(allowed))
                         ) from None
    if not 400 <= status <= 599:
        raise InputError(_("{option}{status}: not an error status").format(option=option, status=status),
                         _("use a status from 400 to 599"))
    return status


def parse_model_timing(items: list[str] | tuple[str, ...]) -> dict[str, ModelTiming]:
    """`fast=20,200,32` -> {'fast': ModelTiming(20.0, 200.0, 32)}; empty or missing fields keep the global value."""
    timings: dict[str, ModelTiming] = {}
    for item in items:
        model, sep, spec = item.rpartition("=")
        fields = [f.strip() for f in spec.split(",")]
        fix = _("e.g. --model-timing fast=20,200,32 (20 ms to the first token, 200 tokens/s, 32 tokens)")
        if not sep or not model.strip() or len(fields) > 3 or not any(fields):
            raise InputError(_("--model-timing {value}: expected MODEL=LATENCY_MS[,TOKEN_RATE[,TOKENS]]")
                             .format(value=repr(item)), fix)
        try:
            latency = float(fields[0]) if fields[0] else None
            rate = float(fields[1]) if len(fields) > 1 and fields[1] else None
            tokens = int(fields[2]) if len(fields) > 2 and fields[2] else None
        except ValueError:
            raise InputError(_("--model-timing {value}: not numbers").format(value=repr(item)), fix) from None
        timings[model.strip()] = ModelTiming(latency, rate, tokens)
    return timings


def parse_model_fail(items: list[str] | tuple[str, ...]) -> dict[str, int | str]:
    """`bad=401` -> {'bad': 401}; the value is checked by MockOptions.validate()."""
    failures: dict[str, int | str] = {}
    for item in items:
        model, sep, kind = item.rpartition("=")
        if not sep or not model.strip() or not kind.strip():
            raise InputError(_("--model-fail {value}: expected MODEL=STATUS or MODEL=KIND").format(value=repr(item)),
                             _("e.g. --model-fail broken=503 or --model-fail flaky=stream-error"))
        failures[model.strip()] = parse_fail(kind, model.strip())
    return failures


def parse_aliases(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for item in items:
        requested, sep, answered = item.partition("=")
        if not sep or not requested.strip() or not answered.strip():
            raise InputError(_("--alias {value}: expected REQUESTED=ANSWERED").format(value=repr(item)),
                             _("e.g. --alias gpt-4o=gpt-4o-2024-08-06"))
        aliases[requested.strip()] = answered.strip()
    return aliases


def parse_models(items: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """`--models a,b --models c` -> ('a', 'b', 'c'), blanks dropped, order kept, no duplicates."""
    seen: dict[str, None] = {}
    for item in items:
        for name in item.split(","):
            if name.strip():
                seen[name.strip()] = None
    return tuple(seen)
