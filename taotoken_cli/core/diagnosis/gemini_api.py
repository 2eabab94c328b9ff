"""Does the gateway serve the Gemini API? Gemini CLI speaks nothing else (POST <root>/v1beta/models/{model}:
streamGenerateContent, the key in x-goog-api-key), and many OpenAI-compatible gateways do not offer it.

The question costs nothing: GET <root>/v1beta/models with the key in x-goog-api-key, the Gemini API's model list.
new-api (TaoToken's gateway family) serves that list beside its Gemini relay (router/relay-router.go: the
/v1beta/models group, controller.ListModels in the Gemini shape `{"models": [...]}`), and it generates nothing. Not
`:countTokens`: new-api relays every /v1beta/models/{model}:{action} it does not know as a generateContent upstream
(relay/channel/gemini/adaptor.go GetRequestURL), so a count would cost a whole answer. Not `:generateContent`
either: it costs tokens.

A "no" is an answer that says the route is not there: 404/405/501, new-api's "Invalid URL", a web page, or a 200
that is no Gemini model list. A key the gateway rejects, a network failure or a busy gateway say nothing about the
route: those are "could not tell", with the diagnosis of what came back.

`gate` is the one rule init, `config set`/`config sync` and `doctor --fix` follow (doctor's gemini.api check
reports the same probe): Gemini CLI is written only where the gateway answered, the gateway is asked only when
Gemini CLI is a target, and only once per base URL (the root it answered at is recorded: PlanOptions.gemini_root).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.clients import gemini_cli
from taotoken_cli.core.clients.base import PlanOptions, Triple
from taotoken_cli.core.diagnosis.classify import Diagnosis, classify
from taotoken_cli.core.diagnosis.context import context_for

CODE = "url.no_gemini_api"  # the catalogue entry for a gateway that does not serve it
PROBE_TIMEOUT_S = 8.0
_NOT_THERE = (404, 405, 501)
_NOT_THERE_CODES = ("url.not_found", "url.not_implemented", "url.html_page", "url.redirect")


@dataclass
class GeminiSupport:
    served: bool | None  # None: could not tell (see `diagnosis`)
    url: str  # the URL that was asked
    status: int | None
    reason: str  # in words: what came back
    diagnosis: Diagnosis | None = None  # what a failure that says nothing about the route was

    @property
    def code(self) -> str:
        """The catalogue code of a "no" or of what kept the answer away."""
        if self.served is False:
            return CODE
        return self.diagnosis.code if self.diagnosis is not None else "net.error"


def _listed(data: object) -> list[str] | None:
    """The model IDs of a Gemini API model list (`models/` dropped: Google writes it, new-api does not), or None."""
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list):
        return None
    return [str(m["name"]).removeprefix("models/") for m in models if isinstance(m, dict) and m.get("name")]


def probe(base_url: str, api_key: str, env: Mapping[str, str], *, model: str | None = None,
          timeout_s: float = PROBE_TIMEOUT_S, ends_at: float | None = None) -> GeminiSupport:
    """Does the gateway at `base_url` serve the Gemini API: one free model-list request, within `timeout_s` and, given
    `ends_at` (time.monotonic(), doctor's run deadline), no later than that."""
    from taotoken_cli.core.net.gateway import budgeted

    with budgeted(base_url, api_key, timeout_s, env=env, ends_at=ends_at) as gateway:
        url = gateway.endpoints.gemini_models
        obs = gateway.gemini_models()
    if obs.error is None and obs.ok_status:
        try:
            listed = _listed(obs.json())
        except ValueError:
            listed = None
        if listed is not None:
            reason = _("HTTP {status}, a Gemini API model list").format(status=obs.status)
            if model and listed and model not in listed:
                reason = _("{reason}; {model} is not in it").format(reason=reason, model=model)
            return GeminiSupport(True, url, obs.status, reason)
        what = _("a web page") if "html" in obs.content_type else _("no Gemini API model list")
        return GeminiSupport(False, url, obs.status, _("HTTP {status}, {what}").format(status=obs.status, what=what))
    diagnosis = classify(obs, context=context_for(base=base_url, model=model))
    not_there = obs.status in _NOT_THERE or (diagnosis is not None and diagnosis.code in _NOT_THERE_CODES)
    if obs.error is None and not_there:
        said = f": {diagnosis.server_message}" if diagnosis is not None and diagnosis.server_message else ""
        return GeminiSupport(False, url, obs.status, _("HTTP {status}{said}").format(status=obs.status, said=said))
    reason = diagnosis.title if diagnosis is not None else _("no answer")
    return GeminiSupport(None, url, obs.status, reason, diagnosis)


Probe = Callable[[Triple], GeminiSupport]


def probe_for(env: Mapping[str, str], wait: Callable[[float, Callable[[float], GeminiSupport]], GeminiSupport]
              | None = None) -> Probe:
    """The probe as `gate` and `admit` call it; `wait(most, ask)`, given, decides how long it may take (init's
    questions share one wait)."""
    def ask(triple: Triple) -> GeminiSupport:
        def question(seconds: float) -> GeminiSupport:
            return probe(triple.base_url, triple.api_key, env, model=triple.model, timeout_s=seconds)
        return wait(PROBE_TIMEOUT_S, question) if wait else question(PROBE_TIMEOUT_S)
    return ask


@dataclass
class Gate:
    """What the rule decided: the targets to write, the options to plan them with (gemini_root set where the
    gateway answered), and what to tell the user."""

    targets: list[str]
    options: PlanOptions
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def why_not(found: GeminiSupport) -> str:
    if found.served is False:
        return _("the gateway does not serve the Gemini API that Gemini CLI speaks ({url}: {reason})").format(
            url=found.url, reason=found.reason)
    return _("could not tell whether the gateway serves the Gemini API that Gemini CLI speaks ({url}: {reason})"
             ).format(url=found.url, reason=found.reason)


def refusal(found: GeminiSupport):
    """The error init stops with when Gemini CLI was named (--target gemini-cli) and the gateway did not answer."""
    from taotoken_cli.core.base.errors import TaotokenError
    from taotoken_cli.core.base.fix import Command, Fix
    from taotoken_cli.core.diagnosis.catalogue import get

    if found.served is False:
        fix = Fix.of(_("write the other clients: {command}; or ask the gateway's operator to enable the Gemini API"),
                     command=Command("taotoken init"))
    else:
        fix = Fix.of(_("find out why: {command}, then run init again"), command=Command("taotoken check --chat"))
    return TaotokenError(_("{why}; nothing was written").format(why=why_not(found)), fix, get(found.code).exit,
                         code=found.code)


def gate(triple: Triple, targets: Sequence[str], options: PlanOptions, ask: Probe, *, named: bool = False,
         moving: bool = False) -> Gate:
    """Gemini CLI is written only where the gateway serves the Gemini API. The gateway is asked only when Gemini
    CLI is among `targets`, and not again for the root it already answered at (options.gemini_root).

    `named`: the user asked for Gemini CLI (init --target gemini-cli): a gateway that does not answer stops the run
    (raises). Otherwise Gemini CLI is left out with a warning: detected by init, or kept in step by `config set`,
    `config sync` and `doctor --fix` (`moving`: its copy then keeps the old values, and says so)."""
    if gemini_cli.NAME not in targets:
        return Gate(list(targets), dataclasses.replace(options, gemini_root=""))
    if options.gemini_root == triple.base_url:
        return Gate(list(targets), options)
    found = ask(triple)
    if found.served:
        return Gate(list(targets), dataclasses.replace(options, gemini_root=triple.base_url), notes=[
            _("{target}: the gateway serves the Gemini API ({url}: {reason})").format(
                target=gemini_cli.NAME, url=found.url, reason=found.reason)])
    if named:
        raise refusal(found)
    kept = _("{target}: not moved to {base}: {why}; its files keep the values they hold [{code}]") if moving else \
        _("{target}: not written: {why} [{code}]")
    return Gate([t for t in targets if t != gemini_cli.NAME], dataclasses.replace(options, gemini_root=""),
                warnings=[kept.format(target=gemini_cli.NAME, base=triple.base_url, why=why_not(found),
                                      code=found.code)])


def admit(ask: Probe) -> Callable[[Triple, tuple[str, ...], PlanOptions], tuple[list[str], PlanOptions, list[str]]]:
    """The rule for a sync of the recorded copies (copies.plan_sync): `config set`, `config sync`, doctor."""
    def decide(triple: Triple, targets: tuple[str, ...], options: PlanOptions):
        found = gate(triple, targets, options, ask, moving=True)
        return found.targets, found.options, found.warnings

    return decide
