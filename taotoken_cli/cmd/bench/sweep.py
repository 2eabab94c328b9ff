"""Capacity search: SLO targets, load sweeps, goodput and the knee.

`--slo` targets (repeatable):  METRIC:STAT<LIMIT  for times,  error-rate<PCT%  for failures
    ttft:p95<2s   itl:p99<50ms   tpot:mean<=40ms   latency:p90<10s   error-rate<1%
  METRIC: ttft, itl (inter-token gaps), tpot (time per output token), latency (alias e2e);
  STAT: p50, p95, p99.9 (any percentile), mean or max; LIMIT in ms or s.
  A step meets its SLOs when every target holds over all its requests. A request counts toward
  goodput when it succeeded and its own TTFT, TPOT, mean inter-token gap and latency are within the
  limits (the strictest limit per metric), as in DistServe / vLLM's --goodput.

`--sweep` (one load parameter):  c=1,2,4,8   c=1..64 (doubling)   rate=2..20+2 (step)   rate=1..64*1.5
  Each step is one run (with -n/-z per step). The sweep stops early once past saturation: when a
  step misses the SLOs with no more goodput than the best step before it, or two steps in a row miss
  them, or throughput falls below 90 % of the best step or grows by less than 5 % twice in a row.
  Then it bisects: between the knee and the step above it that missed, and (concurrency) between the
  knee and the unsaturated step below it, until the gap is one user (a rate: within --resolution, 5 %).
  The knee (concurrency) is the lowest load reaching the best goodput within 5 %, among the steps met
  from the bottom up; (rate) the highest rate met, i.e. meeting the SLOs and served on time (achieved
  at least 95 % of offered). Sweeps and SLO verdicts always carry an error-rate target (default
  error-rate<1%): a run whose requests fail never "meets its SLOs".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.i18n import N_, _

MAX_STEPS = 64
TIME_METRICS = {"ttft": "ttft", "itl": "itl", "tpot": "tpot", "latency": "latency", "e2e": "latency",
                "e2el": "latency"}
ERROR_METRICS = ("error-rate", "error_rate", "errors")
_SLO_RE = re.compile(r"^(?P<metric>[a-z][a-z0-9_-]*)(?::(?P<stat>[a-z0-9.]+))?\s*(?P<op><=|<)\s*"
                     r"(?P<value>[0-9]*\.?[0-9]+)\s*(?P<unit>ms|s|%)?$")
SLO_FIX = N_("e.g. --slo ttft:p95<2s, --slo itl:p99<50ms, --slo latency:p90<10s or --slo error-rate<1%")


@dataclass(frozen=True)
class SLO:
    metric: str  # ttft | itl | tpot | latency | error-rate
    stat: str | None  # "p95", "mean", "max"; None for error-rate
    limit: float  # seconds, or a fraction for error-rate
    inclusive: bool  # <= rather than <
    implied: bool = False  # added by bench (the default error-rate target), not given with --slo

    @property
    def text(self) -> str:
        op = "<=" if self.inclusive else "<"
        if self.metric == "error-rate":
            return f"error-rate{op}{self.limit * 100:g}%"
        limit = f"{self.limit:g}s" if self.limit >= 1 else f"{self.limit * 1000:g}ms"
        return f"{self.metric}:{self.stat}{op}{limit}"

    @property
    def percentile(self) -> float | None:
        return float(self.stat[1:]) if self.stat and self.stat.startswith("p") else None

    def holds(self, value: float | None) -> bool:
        if value is None:
            return self.metric == "error-rate"  # nothing measured (no successful request) fails a time target
        return value <= self.limit if self.inclusive else value < self.limit

    def to_dict(self) -> dict[str, Any]:
        unit = "ratio" if self.metric == "error-rate" else "ms"
        limit = self.limit if self.metric == "error-rate" else round(self.limit * 1000, 6)
        return {"target": self.text, "metric": self.metric, "stat": self.stat, "limit": limit, "unit": unit,
                "inclusive": self.inclusive, "default": self.implied}


def parse_slo(text: str) -> SLO:
    raw = text.strip().lower().replace(" ", "")
    match = _SLO_RE.match(raw)
    if match is None:
        raise InputError(_("--slo {text!r} is not a target like METRIC:STAT<LIMIT").format(text=text), _(SLO_FIX))
    metric, stat, unit = match["metric"], match["stat"], match["unit"]
    value = float(match["value"])
    inclusive = match["op"] == "<="
    if metric in ERROR_METRICS:
        problem = (_("--slo {text!r}: error-rate takes no statistic") if stat is not None else
                   _("--slo {text!r}: give the error rate in percent") if unit != "%" else
                   _("--slo {text!r}: an error rate cannot exceed 100 %") if value > 100 else None)
        if problem is not None:
            raise InputError(problem.format(text=text), _("e.g. --slo error-rate<1%"))
        return SLO("error-rate", None, value / 100.0, inclusive)
    if metric not in TIME_METRICS:
        raise InputError(_("--slo {text!r}: unknown metric {metric!r} (known: ttft, itl, tpot, latency, "
                           "error-rate)").format(text=text, metric=metric), _(SLO_FIX))
    if stat is None:
        raise InputError(_("--slo {text!r}: say which statistic, e.g. {metric}:p95<…").format(text=text, metric=metric),
                         _(SLO_FIX))
    if not (stat in ("mean", "max") or re.fullmatch(r"p(100|[1-9]?[0-9](\.[0-9]+)?)", stat)) or stat == "p0":
        raise InputError(_("--slo {text!r}: {stat!r} is not a statistic (p50, p95, p99.9, mean or max)").format(
            text=text, stat=stat), _(SLO_FIX))
    if unit not in ("ms", "s"):
        raise InputError(_("--slo {text!r}: give the limit with its unit, ms or s").format(text=text), _(SLO_FIX))
    if value <= 0:
        raise InputError(_("--slo {text!r}: the limit must be above zero").format(text=text), _(SLO_FIX))
    return SLO(TIME_METRICS[metric], stat, value / 1000.0 if unit == "ms" else value, inclusive)


DEFAULT_ERROR_RATE = 0.01


def with_error_target(slos: list[SLO]) -> list[SLO]:
    """The targets plus the default error-rate<1% when none was given: a verdict over successful requests
    alone would call a run whose requests nearly all failed "SLOs met"."""
    if any(slo.metric == "error-rate" for slo in slos):
        return list(slos)
    return [*slos, SLO("error-rate", None, DEFAULT_ERROR_RATE, False, implied=True)]


def request_limits(slos: list[SLO]) -> dict[str, float]:
    """Per-request limits for goodput: the strictest limit given for each time metric."""
    limits: dict[str, float] = {}
    for slo in slos:
        if slo.metric != "error-rate":
            limits[slo.metric] = min(limits.get(slo.metric, math.inf), slo.limit)
    return limits


def evaluate(slos: list[SLO], stats) -> list[tuple[SLO, float | None, bool]]:
    """(target, measured value, holds?) for each SLO over a series' merged statistics."""
    out = []
    for slo in slos:
        if slo.metric == "error-rate":
            total = stats.ok + stats.failed
            value = stats.failed / total if total else None
        else:
            hist = getattr(stats, slo.metric)
            if not hist.count:
                value = None
            elif slo.stat == "mean":
                value = hist.mean
            elif slo.stat == "max":
                value = hist.max
            else:
                value = hist.percentile(slo.percentile)
        out.append((slo, value, slo.holds(value)))
    return out


# -- sweeps ----------------------------------------------------------------------------------
def step_label(parameter: str, value: float) -> str:
    """How a sweep step is named everywhere (progress, text report, HTML): `c=8` or `2.5/s`."""
    return f"c={value:g}" if parameter == "concurrency" else f"{value:g}/s"


@dataclass(frozen=True)
class Sweep:
    parameter: str  # "concurrency" | "rate"
    values: tuple[float, ...]

    @property
    def flag(self) -> str:
        return "-c" if self.parameter == "concurrency" else "--rate"

    def label(self, value: float) -> str:
        return step_label(self.parameter, value)


SWEEP_FIX = N_("e.g. --sweep c=1,2,4,8, --sweep c=1..64 (doubling), --sweep rate=2..20+2 or "
               "--sweep rate=1..64*1.5")


def parse_sweep(text: str) -> Sweep:
    raw = text.strip().lower().replace(" ", "")
    name, sep, spec = raw.partition("=")
    parameter = {"c": "concurrency", "concurrency": "concurrency", "rate": "rate", "r": "rate"}.get(name)
    if not sep or parameter is None:
        raise InputError(_("--sweep {text!r}: start with c= (concurrency) or rate=").format(text=text), _(SWEEP_FIX))
    try:
        values = _range(spec) if ".." in spec else [float(v) for v in spec.split(",")]
    except ValueError:
        raise InputError(_("--sweep {text!r}: {spec!r} is not a list or a range of numbers").format(text=text,
                                                                                                   spec=spec),
                         _(SWEEP_FIX)) from None
    if any(not math.isfinite(v) or v <= 0 for v in values):
        raise InputError(_("--sweep {text!r}: every value must be above zero").format(text=text), _(SWEEP_FIX))
    if parameter == "concurrency" and ".." in spec:
        values = [float(max(1, round(v))) for v in values]  # a geometric range of users, rounded
    if parameter == "concurrency" and any(v != int(v) for v in values):
        raise InputError(_("--sweep {text!r}: concurrency values are whole numbers").format(text=text), _(SWEEP_FIX))
    values = sorted(set(values))
    if len(values) > MAX_STEPS:
        raise InputError(_("--sweep {text!r} has {steps} steps (at most {most})").format(text=text, steps=len(values),
                                                                                        most=MAX_STEPS),
                         _("use a coarser step, e.g. c=1..256 doubles: 9 steps"))
    return Sweep(parameter, tuple(values))


_NUMBER = r"([0-9]*\.?[0-9]+)"
_RANGE_RE = re.compile(_NUMBER + r"\.\." + _NUMBER + r"(?:([+*])" + _NUMBER + ")?")


def _range(spec: str) -> list[float]:
    """A..B doubles from A; A..B+S adds S; A..B*F multiplies by F (F above 1)."""
    match = _RANGE_RE.fullmatch(spec)
    if match is None:
        raise ValueError(spec)
    low, high = float(match[1]), float(match[2])
    op, step = (match[3], float(match[4])) if match[3] else ("*", 2.0)
    if high < low or (op == "*" and step <= 1) or (op == "+" and step <= 0):
        raise ValueError(spec)
    values, v = [], low
    while v <= high * (1 + 1e-9) and len(values) <= MAX_STEPS:
        values.append(round(v, 6))
        v = v * step if op == "*" else v + step
    return values


@dataclass
class Step:
    load: float
    goodput: float | None  # requests/s meeting the SLOs over the steady window (all successes without SLOs)
    meets: bool | None  # every SLO held (None: no SLOs)
    aborted: bool = False
    offered: float | None = None  # open loop: the scheduled rate (requests/s) over the steady window

    @property
    def met(self) -> bool:
        """Within the targets: SLOs held, not stopped and, open loop, served on time (achieved >= 95 % of
        offered: a server that cannot keep up only queues more and more)."""
        if self.aborted or self.meets is False:
            return False
        return self.offered is None or (self.goodput or 0.0) >= SATURATION * self.offered


SATURATION = 0.95  # "reaches the best goodput": within 5 % of it
DEFAULT_RESOLUTION = 0.05  # rate sweeps bisect until the gap is within 5 %
MAX_PROBES = 16


def saturated(steps: list[Step], with_slos: bool) -> str | None:
    """Why the sweep should stop after the last step (None: go on). In English: it is data (`stop_reason` in
    the JSON); the text report translates it."""
    last = steps[-1]
    if last.aborted:
        return N_("the last step was stopped by the error limits")
    before = [s.goodput or 0.0 for s in steps[:-1]]
    best = max(before) if before else None
    if with_slos:
        if last.meets is False and best is not None and (last.goodput or 0.0) <= best:
            return N_("a step missed the SLOs with no more goodput than the best step before it")
        if last.meets is False and len(steps) >= 2 and steps[-2].meets is False:
            return N_("two steps in a row missed the SLOs")
    if best is None:
        return None
    if (last.goodput or 0.0) < 0.9 * best:
        return N_("throughput fell below 90 % of the best step")
    if len(steps) >= 3:
        best_2 = max(s.goodput or 0.0 for s in steps[:-2])
        if (steps[-2].goodput or 0.0) < 1.05 * best_2 and (last.goodput or 0.0) < 1.05 * best:
            return N_("throughput grew by less than 5 % twice in a row")
    return None


def knee(steps: list[Step], parameter: str = "concurrency") -> float | None:
    """The capacity point. Concurrency: the lowest load reaching the best goodput (within 5 %) among the
    steps met from the bottom up (more users past it only queue); rate: the highest rate met."""
    return knee_and_bound(steps, parameter)[0]


def knee_and_bound(steps: list[Step], parameter: str = "concurrency") -> tuple[float | None, Step | None]:
    """(the knee, the measured step that bounds it: the nearest one on the other side of the rule)."""
    ordered = sorted(steps, key=lambda s: s.load)
    met: list[Step] = []
    for step in ordered:  # contiguous from the lowest load: a met step above a missed one is not trusted
        if not step.met:
            break
        met.append(step)
    if not met:
        return None, ordered[0] if ordered else None
    above = next((s for s in ordered if s.load > met[-1].load), None)
    if parameter != "concurrency":
        return met[-1].load, above
    best = max(s.goodput or 0.0 for s in met)
    if best <= 0:
        return None, None
    point = next(s for s in met if (s.goodput or 0.0) >= SATURATION * best)
    if point is met[-1] and above is not None:
        return point.load, above  # still climbing: the next load missed its targets
    below = [s for s in ordered if s.load < point.load]
    return point.load, (below[-1] if below else None)  # saturated: the load below it fell short


def next_probe(steps: list[Step], parameter: str, resolution: float = DEFAULT_RESOLUTION) -> float | None:
    """The load to measure next to narrow the knee down (None: the gap is one step). Between the knee and
    the step that missed above it, then between the knee and the unsaturated step below it; concurrency in
    whole users, a rate until the gap is within `resolution`."""
    if resolution <= 0:
        return None  # --resolution off: the coarse steps only
    ordered = sorted(steps, key=lambda s: s.load)
    point = knee(steps, parameter)
    loads = {s.load for s in ordered}

    def between(low: float, high: float) -> float | None:
        if parameter == "concurrency":
            mid = float((int(low) + int(high)) // 2)
            return mid if high - low > 1 and mid not in loads else None
        if resolution <= 0 or high <= low * (1 + resolution):
            return None
        mid = round((low + high) / 2, 6)
        return mid if mid not in loads else None

    if point is None:
        return None
    above = next((s for s in ordered if s.load > point), None)
    if above is not None and not above.met:
        probe = between(point, above.load)
        if probe is not None:
            return probe
    if parameter == "concurrency":
        below = [s for s in ordered if s.load < point]
        if below:
            return between(below[-1].load, point)
    return None
