"""`taotoken route --verify`: does the gateway answer each route with the model it was asked for?

For every route, a minimal chat request is sent `samples` times (one-api/new-api pick a channel at
random among the best ones, so one answer proves little) and the response's `model` is compared
with the model asked for: equal, equal up to a date/version suffix (an alias answered by a dated
snapshot), or different (the gateway or a channel remapped or ignored it). A mismatch is a hint,
not proof: channels can rewrite `model` (gateway-errors.md section 7). Failures are classified
through the shared catalogue, so a model without a channel is told apart from a bad key.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from taotoken_cli.cmd.route import PROBE_TIMEOUT_S
from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, Fix, config_set
from taotoken_cli.core.base.i18n import N_, _
from taotoken_cli.core.diagnosis.context import DiagnosisContext, context_for

# Headers that identify the gateway or the upstream that answered (lower-case, as Observation has them).
IDENTIFYING_HEADERS = (
    "x-oneapi-request-id",
    "x-new-api-version",
    "x-upstream-request-id",
    "x-request-id",
    "request-id",
    "openai-model",
    "openai-processing-ms",
    "x-litellm-model-id",
    "x-litellm-model-api-base",
    "x-litellm-model-group",
    "x-openrouter-provider",
)


EQUAL, VARIANT, DIFFERENT, UNKNOWN, FAILED = "equal", "variant", "different", "unknown", "failed"
# The verdict in words: English in --json (`verdict_label`), translated where text shows it (`_(MATCH_LABEL[…])`).
MATCH_LABEL = {
    EQUAL: N_("equal"),
    VARIANT: N_("equal up to a date/version suffix"),
    DIFFERENT: N_("different (remapped or ignored)"),
    UNKNOWN: N_("no model in the response"),
    FAILED: N_("failed"),
}

# A date or version tail: -2024-08-06, -20250101, -0613, -001, @20240620, -v1:0, -latest.
_SUFFIX_RE = re.compile(r"^(?:[-_@:.](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{6}|\d{3,4}|v\d+(?:[.:]\d+)*|latest))+$",
                        re.IGNORECASE)


def compare_models(asked: str, returned: str | None) -> tuple[str, str]:
    """(category, explanation) for the `model` a response reports against the one requested."""
    if not returned:
        return UNKNOWN, _("the response carries no `model` field; the gateway's answer cannot be checked")
    if returned == asked:
        return EQUAL, _("same model ID")
    for longer, shorter in ((returned, asked), (asked, returned)):
        if longer.lower().startswith(shorter.lower()) and _SUFFIX_RE.match(longer[len(shorter):]):
            return VARIANT, _("{suffix} is a date/version suffix of {model}").format(
                suffix=repr(longer[len(shorter):]), model=repr(shorter))
    if returned.lower() == asked.lower():
        return VARIANT, _("same model ID up to letter case")
    # A provider prefix ('openai/gpt-4o' vs 'gpt-4o'), possibly with a dated snapshot too.
    a_base, r_base = asked.rsplit("/", 1)[-1], returned.rsplit("/", 1)[-1]
    if (a_base, r_base) != (asked, returned):
        category, detail = compare_models(a_base, r_base)
        if category in (EQUAL, VARIANT):
            return VARIANT, _("same model without the provider prefix ({detail})").format(detail=detail)
    return DIFFERENT, _("asked for {asked}, the gateway answered as {returned}").format(asked=repr(asked),
                                                                                       returned=repr(returned))


@dataclass
class Sample:
    index: int
    status: int | None
    elapsed_s: float
    match: str  # equal | variant | different | unknown | failed
    returned_model: str | None = None
    detail: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    response_id: str | None = None
    system_fingerprint: str | None = None
    diagnosis: dict[str, Any] | None = None  # Diagnosis.to_dict() when the request failed
    fixes: list[Fix] = field(default_factory=list, repr=False)  # its fixes, typed, for the text view (not JSON)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        del out["fixes"]
        return out


@dataclass
class RouteVerification:
    route: str | None  # routing-table key, None for the profile's model
    model: str
    samples: list[Sample] = field(default_factory=list)

    def outcomes(self) -> dict[tuple[str, str | None], int]:
        """(FAILED, failure code) or (the match, returned model or None) -> how many samples, in order."""
        counts: Counter[tuple[str, str | None]] = Counter()
        for sample in self.samples:
            if sample.match == FAILED:
                counts[(FAILED, str((sample.diagnosis or {}).get("code", "?")))] += 1
            else:
                counts[(sample.match, sample.returned_model)] += 1
        return dict(counts)

    @property
    def distribution(self) -> dict[str, int]:
        """Returned model (or failure code) -> how many samples (for --json: the same in every language)."""
        return {(f"failed: {value}" if match == FAILED else value or "(no model field)"): count
                for (match, value), count in self.outcomes().items()}

    @property
    def verdict(self) -> str:
        matches = {s.match for s in self.samples}
        for worst in (FAILED, DIFFERENT, UNKNOWN, VARIANT):
            if worst in matches:
                return worst
        return EQUAL

    @property
    def exit_code(self) -> int:
        verdict = self.verdict
        if verdict == FAILED:
            first = next(s for s in self.samples if s.match == FAILED)
            return int((first.diagnosis or {}).get("exit_code") or Exit.FAILURE)
        return int(Exit.FAILURE) if verdict in (DIFFERENT, UNKNOWN) else int(Exit.OK)

    def to_dict(self) -> dict[str, Any]:
        return {"route": self.route, "model": self.model, "verdict": self.verdict,
                "verdict_label": MATCH_LABEL[self.verdict], "distribution": self.distribution,
                "exit_code": self.exit_code, "samples": [s.to_dict() for s in self.samples]}


@dataclass
class VerifyReport:
    base_url: str
    routes: list[RouteVerification]

    @property
    def exit_code(self) -> int:
        """The first failing route's diagnosis class; otherwise 1 for a mismatch; 0 when all agree."""
        codes = [r.exit_code for r in self.routes]
        failed = [r.exit_code for r in self.routes if r.verdict == FAILED]
        if failed:
            return failed[0]
        return next((code for code in codes if code), int(Exit.OK))

    def to_dict(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "exit_code": self.exit_code, "ok": self.exit_code == 0,
                "routes": [r.to_dict() for r in self.routes]}


def sample_once(gateway, model: str, index: int, context: DiagnosisContext, route: str | None = None) -> Sample:
    from taotoken_cli.core.diagnosis.classify import classify

    obs = gateway.chat(model, prompt="Say OK.", max_tokens=1)
    headers = {name: obs.headers[name] for name in IDENTIFYING_HEADERS if obs.headers.get(name)}
    sample = Sample(index, obs.status, round(obs.elapsed_s, 3), FAILED, headers=headers)
    # the routing table chose this model, not the profile's model setting: a fix sets the route instead
    context = context.with_values(model=model, route=route or "")
    diagnosis = classify(obs, expect="chat", context=context)
    body = obs.json()
    if isinstance(body, dict):
        sample.response_id = body.get("id") if isinstance(body.get("id"), str) else None
        fingerprint = body.get("system_fingerprint")
        sample.system_fingerprint = fingerprint if isinstance(fingerprint, str) else None
    if diagnosis is not None:
        sample.diagnosis = diagnosis.to_dict()
        sample.fixes = diagnosis.fixes()
        title = diagnosis.title
        sample.detail = (_("{title}: {server_message}").format(title=title, server_message=diagnosis.server_message)
                         if diagnosis.server_message else title)
        return sample
    returned = body.get("model") if isinstance(body, dict) and isinstance(body.get("model"), str) else None
    sample.returned_model = returned
    sample.match, sample.detail = compare_models(model, returned)
    return sample


def verify_routes(gateway, targets: list[tuple[str | None, str]], samples: int,
                  context: DiagnosisContext | None = None,
                  on_request: Callable[[int, int, str], None] | None = None) -> VerifyReport:
    """Sample every (route, model) target `samples` times, sequentially (a gateway is not a load test).
    `on_request(sent, total, model)` hears of each request before it is sent."""
    context = context or DiagnosisContext()
    results: list[RouteVerification] = []
    total = len(targets) * samples
    for route, model in targets:
        verification = RouteVerification(route, model)
        for index in range(1, samples + 1):
            if on_request is not None:
                on_request(len(results) * samples + index - 1, total, model)
            verification.samples.append(sample_once(gateway, model, index, context, route))
        results.append(verification)
    return VerifyReport(gateway.endpoints.root, results)


def run_verify(settings, choice, *, samples: int, all_routes: bool,
               request_timeout: float = PROBE_TIMEOUT_S, env: Mapping[str, str] | None = None,
               on_request: Callable[[int, int, str], None] | None = None) -> VerifyReport:
    """Verify the chosen route (or, with `all_routes`, every route in the table) against the gateway.

    Each request ends within `request_timeout` seconds, however the server trickles its answer."""
    from taotoken_cli.core.base.errors import TaotokenError
    from taotoken_cli.core.net.gateway import Gateway

    settings.require("base_url", "api_key")
    if all_routes and settings.routes:
        targets: list[tuple[str | None, str]] = list(settings.routes.items())
    elif all_routes and settings.model.value:
        targets = [(None, settings.model.value)]
    elif choice.model:
        targets = [(choice.route, choice.model)]
    else:
        raise TaotokenError(_("nothing to verify: {reason}").format(reason=choice.reason),
                            Fix.of(_("{command}   (or: {command2})"), command=Command("taotoken route set cpu=MODEL"),
                                   command2=config_set("model", "MODEL")),
                            Exit.CONFIG, code="config.missing")
    base = settings.base_url.value
    with Gateway(base, settings.api_key.value, connect_timeout=min(3.0, request_timeout),
                 read_timeout=request_timeout, request_timeout=request_timeout, env=env) as gateway:
        context = context_for(base=base, settings=settings, env=os.environ if env is None else env)
        return verify_routes(gateway, targets, samples, context, on_request)
