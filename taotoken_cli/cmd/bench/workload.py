"""Workloads: when each request starts (arrivals) and what it asks for (prompt, max_tokens).

Arrivals (open loop) are computed once, in the parent, before a series starts, from a seeded
generator, so every worker reads the same schedule and a run can be repeated exactly:
- `constant`: evenly spaced, 1/R apart;
- `poisson`: exponential gaps with mean 1/R;
- `gamma:B`: gamma-distributed gaps with mean 1/R and shape B ("burstiness", as in vLLM's bench:
  1 is Poisson, below 1 burstier, above 1 smoother);
- a ramp-up of T seconds: the rate grows linearly from 0 to R. The gaps are drawn in "operational
  time" (mean 1) and mapped through the inverse of the cumulative rate, so the arrival process
  keeps its shape while the rate climbs;
- a trace: the trace's own timestamps.

What request g asks for is a function of (seed, g) alone (a counter-based generator, splitmix64),
so any worker can build request g without knowing what the others sent.
"""

from __future__ import annotations

import json
import math
import random
from array import array
from dataclasses import dataclass, field

from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.base.oserrors import os_error_text

_MASK = (1 << 64) - 1


def unit(seed: int, stream: int, g: int) -> float:
    """A uniform number in [0, 1) for request `g`: splitmix64 of (seed, stream, g)."""
    z = (seed * 0x9E3779B97F4A7C15 + stream * 0xBF58476D1CE4E5B9 + (g + 1) * 0x94D049BB133111EB) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return ((z ^ (z >> 31)) >> 11) / float(1 << 53)


# -- lengths ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lengths:
    """A token count per request: fixed N, uniform A..B, or normal MEAN,SD (rounded, at least 1)."""

    kind: str  # "fixed" | "uniform" | "normal"
    a: float
    b: float = 0.0

    def draw(self, seed: int, stream: int, g: int) -> int:
        if self.kind == "fixed":
            return int(self.a)
        u = unit(seed, stream, g)
        if self.kind == "uniform":
            return int(self.a) + int(u * (int(self.b) - int(self.a) + 1))
        from statistics import NormalDist

        return max(1, round(NormalDist(self.a, self.b).inv_cdf(min(max(u, 1e-12), 1 - 1e-12))))

    @property
    def mean(self) -> float:
        return (self.a + self.b) / 2 if self.kind == "uniform" else self.a

    def text(self) -> str:
        return {"fixed": f"{self.a:g}", "uniform": f"{self.a:g}..{self.b:g}"}.get(self.kind,
                                                                               f"normal:{self.a:g},{self.b:g}")


def parse_lengths(option: str, text: str) -> Lengths:
    """`128`, `64..256` (uniform, both ends included) or `normal:128,32` (mean, standard deviation)."""
    raw = text.strip().lower()
    fix = _("e.g. {option} 128, {option} 64..256 or {option} normal:128,32").format(option=option)
    try:
        if raw.startswith("normal:"):
            mean_text, _sep, sd_text = raw[len("normal:"):].partition(",")
            mean, sd = float(mean_text), float(sd_text)
            if not (mean >= 1 and sd >= 0 and math.isfinite(mean + sd)):
                raise InputError(_("{option} {text!r}: the mean must be at least 1 and the deviation not "
                                   "negative").format(option=option, text=text), fix)
            return Lengths("normal", mean, sd)
        if ".." in raw:
            low_text, _sep, high_text = raw.partition("..")
            low, high = int(low_text), int(high_text)
            if not 1 <= low <= high:
                raise InputError(_("{option} {text!r}: the range must go from at least 1 up to a larger "
                                   "number").format(option=option, text=text), fix)
            return Lengths("uniform", low, high)
        value = int(raw)
    except ValueError:
        raise InputError(_("{option} {text!r} is not a token count or a distribution").format(option=option,
                                                                                             text=text), fix) from None
    if value < 1:
        raise InputError(_("{option} must be at least 1 (got {value})").format(option=option, value=value), fix)
    return Lengths("fixed", value)


# -- arrivals -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Arrival:
    kind: str = "constant"  # "constant" | "poisson" | "gamma"
    shape: float = 1.0  # gamma only: the burstiness

    def text(self) -> str:
        return f"gamma:{self.shape:g}" if self.kind == "gamma" else self.kind


ARRIVAL_EXAMPLES = ("constant", "poisson", "gamma:0.5")  # gamma:B takes any burstiness B > 0


def parse_arrival(text: str) -> Arrival:
    raw = text.strip().lower()
    fix = _("use --arrival constant, --arrival poisson or --arrival gamma:0.5 (burstiness: below 1 burstier)")
    if raw in ("constant", "poisson"):
        return Arrival(raw)
    if raw.startswith("gamma:"):
        try:
            shape = float(raw[len("gamma:"):])
        except ValueError:
            shape = -1.0
        if not (shape > 0 and math.isfinite(shape)):
            raise InputError(_("--arrival {text!r}: the burstiness after 'gamma:' must be a positive number").format(
                text=text), fix)
        return Arrival("gamma", shape)
    if raw == "gamma":
        raise InputError(_("--arrival gamma needs its burstiness"), fix)
    raise InputError(_("--arrival {text!r} is not an arrival process").format(text=text), fix)


def _operational_times(arrival: Arrival, rng: random.Random):
    """0, then cumulative gaps of mean 1."""
    u = 0.0
    while True:
        yield u
        if arrival.kind == "constant":
            u += 1.0
        elif arrival.kind == "poisson":
            u += rng.expovariate(1.0)
        else:
            u += rng.gammavariate(arrival.shape, 1.0 / arrival.shape)


def schedule(rate: float, arrival: Arrival, *, seed: int, requests: int | None, duration: float | None,
             ramp_up: float | None = None) -> array:
    """Start offsets in seconds from the series' start, for at most `requests` starts before `duration`."""
    rng = random.Random(seed)
    ramp = ramp_up or 0.0
    ramp_units = rate * ramp / 2.0  # operational time spent during the ramp
    times = array("d")
    for u in _operational_times(arrival, rng):
        if requests is not None and len(times) >= requests:
            break
        t = math.sqrt(2.0 * ramp * u / rate) if u < ramp_units else ramp + (u - ramp_units) / rate
        if duration is not None and t >= duration:
            break
        times.append(t)
    return times


# -- what each request asks ------------------------------------------------------------------
_VOCABULARY = (
    "the", "of", "and", "to", "in", "is", "it", "that", "for", "on", "was", "with", "as", "at", "be", "by", "this",
    "from", "or", "have", "an", "are", "not", "but", "what", "all", "were", "when", "we", "there", "can", "your",
    "which", "their", "said", "if", "do", "will", "each", "about", "how", "up", "out", "them", "then", "she", "many",
    "some", "so", "these", "would", "other", "into", "has", "more", "her", "two", "like", "him", "see", "time",
    "could", "no", "make", "than", "first", "been", "its", "who", "now", "people", "my", "made", "over", "did",
    "down", "only", "way", "find", "use", "may", "water", "long", "little", "very", "after", "words", "called",
    "just", "where", "most", "know", "get", "through", "back", "much", "before", "go", "good", "new", "write", "our",
    "used", "me", "man", "too", "any", "day", "same", "right", "look", "think", "also", "around", "another", "came",
    "come", "work", "three", "word", "must", "because", "does", "part", "even", "place", "well", "such", "here",
    "take", "why", "things", "help", "put", "years", "different", "away", "again", "off", "went", "old", "number",
    "great", "tell", "men", "say", "small", "every", "found", "still", "between", "name", "should", "home", "big",
    "give", "air", "line", "set", "own", "under", "read", "last", "never", "us", "left", "end", "along", "while",
    "might", "next", "sound", "below", "saw", "something", "thought", "both", "few", "those", "always", "looked",
    "show", "large", "often", "together", "asked", "house", "world", "going", "want", "school", "important", "until",
    "form", "food", "keep", "children", "feet", "land", "side", "without", "boy", "once", "animals", "life", "enough",
    "took", "sometimes", "four", "head", "above", "kind", "began",
)


@dataclass
class TraceEntry:
    at: float  # seconds from the first entry
    input_tokens: int | None
    output_tokens: int | None
    prompt: str | None = None


@dataclass
class Workload:
    """Everything that decides the requests of a series, besides the model and the load."""

    prompt: str = "Say OK."
    max_tokens: int = 16
    seed: int = 1
    arrival: Arrival = field(default_factory=Arrival)
    ramp_up: float | None = None
    input_tokens: Lengths | None = None  # synthetic prompts of about this many tokens
    output_tokens: Lengths | None = None  # max_tokens drawn per request
    dataset: list[tuple[str, int | None]] | None = None  # (prompt, max_tokens) in file order, cycled
    trace: list[TraceEntry] | None = None
    source: str | None = None  # the dataset or trace file, for the report
    _words: list[str] | None = field(default=None, repr=False)

    @property
    def fixed(self) -> bool:
        """Every request is the same: its bytes are built once."""
        return self.input_tokens is None and self.output_tokens is None and not self.dataset and not self.trace

    def request(self, g: int) -> tuple[str, int]:
        """(prompt, max_tokens) of request g."""
        max_tokens = self.output_tokens.draw(self.seed, 2, g) if self.output_tokens else self.max_tokens
        if self.trace:
            entry = self.trace[g % len(self.trace)]
            if entry.output_tokens is not None:
                max_tokens = entry.output_tokens
            if entry.prompt is not None:
                return entry.prompt, max_tokens
            return self.synthetic(entry.input_tokens or 1, g), max_tokens
        if self.dataset:
            prompt, wanted = self.dataset[g % len(self.dataset)]
            return prompt, (wanted if wanted is not None and self.output_tokens is None else max_tokens)
        if self.input_tokens is not None:
            return self.synthetic(self.input_tokens.draw(self.seed, 1, g), g), max_tokens
        return self.prompt, max_tokens

    def synthetic(self, tokens: int, g: int) -> str:
        """About `tokens` tokens: the request's number, then common English words (about one token each)
        from a seeded random text at an offset of its own, so prompts share no long prefix."""
        if self._words is None:
            rng = random.Random(self.seed)
            self._words = [rng.choice(_VOCABULARY) for _ in range(1 << 15)]
        words = self._words
        need = max(0, tokens - 2)  # "<g>:" is about two tokens
        start = int(unit(self.seed, 3, g) * len(words))
        picked = words[start:start + need]
        while len(picked) < need:
            picked += words[:need - len(picked)]
        return f"{g}: " + " ".join(picked)

    def describe(self) -> dict[str, object]:
        return {"seed": self.seed, "arrival": self.arrival.text(), "ramp_up_s": self.ramp_up,
                "input_tokens": self.input_tokens.text() if self.input_tokens else None,
                "output_tokens": self.output_tokens.text() if self.output_tokens else None,
                "dataset": self.source if self.dataset else None, "dataset_size": len(self.dataset or ()) or None,
                "trace": self.source if self.trace else None, "trace_size": len(self.trace or ()) or None}


# -- files -----------------------------------------------------------------------------------
def read_text(option: str, path: str) -> str:
    """The UTF-8 text of the file given to `option` (`~` expanded), or a clear InputError."""
    import os

    try:
        with open(os.path.expanduser(path), encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(_("cannot read {option} {path}: {reason}").format(option=option, path=path,
                                                                            reason=os_error_text(exc)),
                         _("give the path of a UTF-8 file")) from None
    except UnicodeDecodeError:
        raise InputError(_("{option} {path} is not UTF-8 text").format(option=option, path=path),
                         _("save it as UTF-8")) from None


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1 or value != int(value):
        return None
    return int(value)


def read_dataset(path: str) -> list[tuple[str, int | None]]:
    """Prompts from a file: JSON Lines (`prompt`/`text` or ShareGPT `conversations`, optionally
    `max_tokens`/`output_tokens`), or plain text with one prompt per line."""
    lines = read_text("--dataset", path).splitlines()
    jsonl = path.lower().endswith((".jsonl", ".ndjson")) or any(line.lstrip().startswith("{")
                                                                 for line in lines[:1])
    prompts: list[tuple[str, int | None]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if not jsonl:
            prompts.append((line, None))
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise InputError(_("--dataset {path}:{line} is not a JSON object").format(path=path, line=number),
                             _("one JSON object per line, e.g. {example}").format(example='{"prompt": "Hello"}')) \
                from None
        prompt = _prompt_of(record)
        if prompt is None:
            raise InputError(_("--dataset {path}:{line} has no prompt").format(path=path, line=number),
                             _('give "prompt" (or "text", or ShareGPT "conversations") on every line'))
        wanted = None
        if isinstance(record, dict):
            for key in ("max_tokens", "output_tokens", "output_length"):
                if key in record:
                    wanted = _count(record[key])
                    if wanted is None:
                        raise InputError(_("--dataset {path}:{line}: {key} must be a positive whole number").format(
                            path=path, line=number, key=key), _("e.g. {example}").format(example=f'"{key}": 128'))
                    break
        prompts.append((prompt, wanted))
    if not prompts:
        raise InputError(_("--dataset {path} has no prompts").format(path=path),
                         _("put one prompt per line (or one JSON object per line)"))
    return prompts


def _prompt_of(record: object) -> str | None:
    if isinstance(record, str):
        return record or None
    if not isinstance(record, dict):
        return None
    for key in ("prompt", "text"):
        if isinstance(record.get(key), str) and record[key]:
            return record[key]
    turns = record.get("conversations")
    if isinstance(turns, list):
        for turn in turns:
            if isinstance(turn, dict) and turn.get("from") in ("human", "user") and isinstance(turn.get("value"), str):
                return turn["value"] or None
    return None


def read_trace(path: str) -> list[TraceEntry]:
    """A request trace, JSON Lines: `timestamp` (milliseconds, as in the Mooncake/AIPerf traces), then
    `input_length` (or `prompt`) and `output_length`. Entries are replayed in time order."""
    entries: list[TraceEntry] = []
    example = '{"timestamp": 0, "input_length": 512, "output_length": 128}'
    for number, line in enumerate(read_text("--trace", path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            raise InputError(_("--trace {path}:{line} is not a JSON object").format(path=path, line=number),
                             _("one object per line, e.g. {example}").format(example=example))
        at = record.get("timestamp")
        if isinstance(at, bool) or not isinstance(at, (int, float)) or not math.isfinite(at) or at < 0:
            raise InputError(_("--trace {path}:{line}: timestamp must be a number of milliseconds (0 or more)")
                             .format(path=path, line=number), _("e.g. {example}").format(example=example))
        prompt = record.get("prompt") if isinstance(record.get("prompt"), str) and record.get("prompt") else None
        fields = {}
        for key in ("input_length", "output_length"):
            if key in record:
                fields[key] = _count(record[key])
                if fields[key] is None:
                    raise InputError(_("--trace {path}:{line}: {key} must be a positive whole number").format(
                        path=path, line=number, key=key), _("e.g. {example}").format(example=example))
        if prompt is None and "input_length" not in fields:
            raise InputError(_("--trace {path}:{line} has neither input_length nor prompt").format(
                path=path, line=number), _("e.g. {example}").format(example=example))
        entries.append(TraceEntry(at / 1000.0, fields.get("input_length"), fields.get("output_length"), prompt))
    if not entries:
        raise InputError(_("--trace {path} has no entries").format(path=path),
                         _("one JSON object per line, e.g. {example}").format(example=example))
    entries.sort(key=lambda e: e.at)
    first = entries[0].at
    for entry in entries:
        entry.at -= first
    return entries
