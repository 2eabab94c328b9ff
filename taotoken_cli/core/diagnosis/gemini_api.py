"""Does the gateway serve the Gemini API? Gemini CLI speaks nothing else (POST <root>/v1beta/models/{model}:
generateContent, the key in x-goog-api-key), and many OpenAI-compatible gateways do not offer it. One small
request through the one gateway client answers it; init writes Gemini CLI only on a yes, doctor reports it.

A "no" is an answer that says the route is not there: 404/405/501, new-api's "Invalid URL", a web page, or a 200
that is not a Gemini answer. A key the gateway rejects, a model it has no channel for, a network failure or a
busy gateway say nothing about the route: those are "could not tell", with the diagnosis of what came back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.diagnosis.classify import Diagnosis, classify
from taotoken_cli.core.diagnosis.context import context_for

CODE = "url.no_gemini_api"  # the catalogue entry for a gateway that does not serve it
PROBE_TIMEOUT_S = 8.0
_NOT_THERE = (404, 405, 501)


@dataclass
class GeminiSupport:
    served: bool | None  # None: could not tell (see `diagnosis`)
    url: str  # the URL that was asked
    status: int | None
    reason: str  # in words: what came back
    diagnosis: Diagnosis | None = None  # what a failure that says nothing about the route was


def _is_gemini_answer(data: object) -> bool:
    return isinstance(data, dict) and isinstance(data.get("candidates"), list)


def probe(base_url: str, api_key: str, model: str, env: Mapping[str, str], *,
          timeout_s: float = PROBE_TIMEOUT_S) -> GeminiSupport:
    from taotoken_cli.core.net.gateway import budgeted

    with budgeted(base_url, api_key, timeout_s, env=env) as gateway:
        url = gateway.endpoints.gemini_generate(model)
        obs = gateway.gemini_generate(model)
    if obs.error is None and obs.ok_status:
        try:
            data = obs.json()
        except ValueError:
            data = None
        if _is_gemini_answer(data):
            return GeminiSupport(True, url, obs.status, _("HTTP {status}, a Gemini API answer").format(
                status=obs.status))
        what = _("a web page") if "html" in obs.content_type else _("no Gemini API answer")
        return GeminiSupport(False, url, obs.status, _("HTTP {status}, {what}").format(status=obs.status, what=what))
    diagnosis = classify(obs, context=context_for(base=base_url, model=model))
    if obs.error is None and (obs.status in _NOT_THERE or (diagnosis is not None and diagnosis.code in (
            "url.not_found", "url.not_implemented", "url.html_page", "url.redirect"))):
        said = f": {diagnosis.server_message}" if diagnosis is not None and diagnosis.server_message else ""
        return GeminiSupport(False, url, obs.status, _("HTTP {status}{said}").format(status=obs.status, said=said))
    reason = diagnosis.title if diagnosis is not None else _("no answer")
    return GeminiSupport(None, url, obs.status, reason, diagnosis)
