"""What the mock gateway is told to do: one dataclass shared by the CLI, tests and benchmarks."""

from __future__ import annotations

from dataclasses import dataclass, field

from taotoken_cli.errors import InputError

FAIL_STYLES = ("openai", "one-api", "new-api", "litellm", "openrouter", "anthropic")
FAULTS = ("reset", "stall", "html", "no-choices", "stream-error", "empty-stream", "truncated-stream")
# Faults that only make sense for a generation request (chat / responses / messages).
GENERATION_FAULTS = ("no-choices", "stream-error", "empty-stream", "truncated-stream")
# Named failures besides plain HTTP statuses: each style answers them with its own status and body.
NAMED_FAILURES = ("quota", "concurrency")

DEFAULT_MODELS = ("gpt-4o-mini", "claude-sonnet-4-5", "gpu-llama-3.1-8b", "cpu-qwen2.5-0.5b")


@dataclass
class MockOptions:
    """Behaviour of one mock gateway.

    `key` is the key clients must send (None with `any_key=False` is refused at start). `models`
    empty means every model name is served and `/models` lists DEFAULT_MODELS; non-empty means
    only those (plus alias sources) are served and the rest get the style's model-not-found error.
    `fail`/`fault` are injected on a deterministic `fail_rate` fraction of eligible requests
    (rate 0.25 = exactly every 4th), so tests and benchmarks get exact counts.
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
    lenient_paths: bool = False  # serve doubled/missing /v1 too (still flagged in the log)
    lang: str = "en"  # language of new-api messages (one-api's are always Chinese)
    keep_requests: int = 100_000  # how many RequestRecords to keep (oldest dropped)

    def validate(self) -> MockOptions:
        """Check the combination; raises InputError with the fix. Returns self for chaining."""
        from taotoken_cli.hygiene import is_loopback_host

        if not self.any_key and not self.key:
            raise InputError("the mock has no key to check",
                             "pass --key (or set TAOTOKEN_API_KEY), or --any-key to accept every key")
        if self.key is not None and (self.key != self.key.strip() or not self.key):
            raise InputError("the mock's expected key has surrounding whitespace",
                             "give the key without spaces or newlines")
        if not is_loopback_host(self.host) and not self.allow_remote:
            raise InputError(f"refusing to listen on non-loopback host {self.host!r}: anyone on the network "
                             "could use the mock and read its log",
                             "use --host 127.0.0.1, or add --allow-remote if you really mean it")
        if not 0 <= self.port <= 65535:
            raise InputError(f"port {self.port} is out of range", "use 0 (a free port) or 1-65535")
        if self.latency_ms < 0 or self.token_rate < 0 or self.tokens < 0:
            raise InputError("latency, token rate and tokens must not be negative", "use 0 or a positive number")
        if self.fail_style not in FAIL_STYLES:
            raise InputError(f"unknown failure style {self.fail_style!r}", f"use one of: {', '.join(FAIL_STYLES)}")
        if self.fault is not None and self.fault not in FAULTS:
            raise InputError(f"unknown fault {self.fault!r}", f"use one of: {', '.join(FAULTS)}")
        if self.fail is not None and self.fault is not None:
            raise InputError("--fail and --fault cannot be combined", "inject one kind of failure per mock")
        if isinstance(self.fail, str):
            self.fail = parse_fail(self.fail)
        if isinstance(self.fail, int) and not 400 <= self.fail <= 599:
            raise InputError(f"--fail {self.fail}: not an error status", "use a status from 400 to 599")
        if not 0.0 <= self.fail_rate <= 1.0:
            raise InputError(f"--fail-rate {self.fail_rate}: not a fraction", "use a number from 0 to 1")
        if self.retry_after is not None and self.retry_after < 0:
            raise InputError("--retry-after must not be negative", "give seconds, e.g. --retry-after 2")
        if self.lang not in ("en", "zh"):
            raise InputError(f"unknown language {self.lang!r}", "use en or zh")
        return self

    @property
    def listed_models(self) -> tuple[str, ...]:
        base = self.models or DEFAULT_MODELS
        extra = tuple(m for m in self.aliases if m not in base)
        return tuple(base) + extra

    def serves(self, model: str) -> bool:
        return not self.models or model in self.models or model in self.aliases


def parse_fail(text: str) -> int | str:
    text = text.strip().lower()
    if text in NAMED_FAILURES:
        return text
    try:
        return int(text)
    except ValueError:
        raise InputError(f"--fail {text!r}: not an HTTP status or a named failure",
                         f"use a status like 429 or 503, or one of: {', '.join(NAMED_FAILURES)}") from None


def parse_aliases(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for item in items:
        requested, sep, answered = item.partition("=")
        if not sep or not requested.strip() or not answered.strip():
            raise InputError(f"--alias {item!r}: expected REQUESTED=ANSWERED",
                             "e.g. --alias gpt-4o=gpt-4o-2024-08-06")
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
