"""Gateway: which URL layout the server answers, the key, the model, a chat completion, a stream,
and the Anthropic/Responses endpoints when a client that needs them is configured."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from taotoken_cli.cmd.doctor import probes
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Result, Status
from taotoken_cli.cmd.doctor.probes import Problem, diagnose
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.fix import Command, Fix, config_set, texts
from taotoken_cli.core.base.i18n import N_, _, listed, ngettext
from taotoken_cli.core.net.gateway import Endpoints, Observation

SECTION = "Gateway"


def _ms(obs: Observation) -> float:
    return round(obs.elapsed_s * 1000, 1)


def _failed(request: str, problem: Problem) -> str:
    """A failed request and its diagnosis: "GET /v1/models: Invalid API key"."""
    return _("{request}: {problem}").format(request=request, problem=problem.message)


def _looks_like_api(obs: Observation) -> bool:
    """Did an API (not a web page, not a 404) answer?"""
    if obs.error is not None or obs.status is None or obs.status == 404 or obs.status >= 500:
        return False
    data = obs.json()
    return isinstance(data, dict) and ("data" in data or "error" in data or "object" in data or "message" in data)


def _alternatives(root: str) -> list[tuple[str, str]]:
    """[(URL to probe, what the root would be)] when root/v1/models is not the API."""
    parts = urlsplit(root)
    origin = f"{parts.scheme}://{parts.netloc}"
    out = [(root + "/models", "")]
    if parts.path.strip("/"):
        out.append((Endpoints(origin).models, origin))
    if not parts.path.rstrip("/").endswith("/api"):
        out.append((Endpoints(root + "/api").models, root + "/api"))
    return out


def layout(ctx: DoctorContext) -> tuple[Result, bool]:
    """(result, usable): usable means the other gateway checks can read the probes."""
    def compute() -> tuple[Result, bool]:
        root = ctx.base_url
        assert root is not None
        models_url = Endpoints(root).models
        obs = probes.models(ctx)
        problem = diagnose(ctx, obs, "models")
        if obs.error is None and problem is not None and problem.code and problem.code.startswith("proxy."):
            # the proxy answered itself: the gateway never saw the request, nothing here is about its layout
            return Result.fail(_failed(models_url, problem), code=problem.code, fixes=problem.fixes,
                               details=problem.details, latency_ms=_ms(obs)), False
        if _looks_like_api(obs):
            answer = (_("{url} answers a model list ({ms} ms)") if obs.ok_status
                      else _("{url} answers HTTP {status} JSON ({ms} ms)"))
            return Result.ok(answer.format(url=models_url, status=obs.status, ms=f"{_ms(obs):.0f}"),
                             latency_ms=_ms(obs)), True
        if obs.error is not None and problem is not None and problem.code == "url.plain_http":
            # Refused before connecting: the network is not the problem, the unencrypted key would be.
            return Result.fail(_("{error} (plain http to a host that is not this machine)").format(error=obs.error),
                               code=problem.code, fixes=list(problem.fixes)), False
        if obs.error is not None:
            from taotoken_cli.cmd.doctor.checks.network import reach_blocker

            blocker = reach_blocker(ctx)
            if blocker:
                return Result.skipped(_("unreachable: {reason}").format(reason=blocker[0]),
                                      blocked_by=blocker[1]), False
            assert problem is not None
            fixes = list(problem.fixes)
            if "Timeout" in type(obs.error).__name__ and not any("doctor --timeout" in str(fix) for fix in fixes):
                fixes.insert(0, Fix.of(_("on a slow link allow longer: {command}"),
                                       command=Command(f"taotoken doctor --timeout {max(30, ctx.timeout * 3):g}")))
            return Result.fail(_failed(models_url, problem), code=problem.code, fixes=fixes,
                               details=problem.details, latency_ms=_ms(obs)), False
        if obs.content_type == "text/html" or obs.body.lstrip()[:1] == b"<":
            seen = _("an HTML page")
        elif obs.content_type:
            seen = f"HTTP {obs.status} ({obs.content_type})"
        else:
            seen = _("HTTP {status} (no content type)").format(status=obs.status)
        details = [f"GET {models_url} → {seen}"]
        for url, new_root in _alternatives(root):
            alt = probes.get(ctx, url)
            details.append(f"GET {url} → " + (f"HTTP {alt.status}" if alt.status else probes.describe_error(alt)))
            if _looks_like_api(alt):
                if new_root:
                    return Result.fail(_("{root} is not the API root: the API answers under {new_root}").format(
                        root=root, new_root=new_root),
                        details=details, fixes=[Fix.run(f"taotoken config set base_url {new_root}")],
                        code=problem.code if problem else None), False
                return Result.fail(_("the server answers {url} but not {models}").format(
                    url=url, models=models_url),
                    details=details + [_("Claude Code, Codex and Cline call <root>/v1/...; this server serves the "
                                         "OpenAI paths without /v1")],
                    fixes=[_("point the base URL at a root whose /v1/models answers (ask the gateway operator for "
                             "the API base URL)")]), False
        fixes: list[Fix] = [Fix.of(_("set the base URL to the gateway's API root (for TaoToken: {command})"),
                                   command=config_set("base_url", "https://taotoken.net/api"))]
        fixes += [f for f in (problem.fixes if problem else []) if str(f) not in texts(fixes)]
        return Result.fail(_("{url} answers {answer}, not the API").format(url=models_url, answer=seen),
                           details=details, fixes=fixes, code=problem.code if problem else None,
                           latency_ms=_ms(obs)), False

    return ctx.memo("gateway.layout", compute)


def _prerequisite(ctx: DoctorContext, need_key: bool = True, need_model: bool = False,
                  need_listed: bool = True) -> Result | None:
    """A skipped result when an earlier gateway check already explains why this one cannot run."""
    if not ctx.base_url:
        return Result.skipped(_("no usable base URL (see config.base_url)"), blocked_by="config.base_url")
    if need_key and not ctx.api_key:
        return Result.skipped(_("no usable API key (see config.api_key)"), blocked_by="config.api_key")
    if need_model and not ctx.model:
        return Result.skipped(_("no model configured (see config.model)"), blocked_by="config.model")
    result, usable = layout(ctx)
    if not usable:
        if result.status.value == "skipped":
            why = _("the gateway is unreachable (see Network)")
        elif (result.code or "").startswith("proxy."):
            why = _("the proxy answered instead of the gateway (see gateway.layout)")
        elif probes.models(ctx).error is not None:
            why = _("the gateway did not answer (see gateway.layout)")
        else:
            why = _("the gateway's API was not found (see gateway.layout)")
        return Result.skipped(why, blocked_by="gateway.layout")
    if need_model and _key_rejected(ctx):
        return Result.skipped(_("the key was rejected (see gateway.key)"), blocked_by="gateway.key")
    if need_model and need_listed and _model_unlisted(ctx):
        return Result.skipped(_("{model} is not offered by the gateway (see gateway.model)").format(model=ctx.model),
                              blocked_by="gateway.model")
    return None


def _model_unlisted(ctx: DoctorContext) -> bool:
    from taotoken_cli.core.diagnosis.model_ids import model_ids

    obs = probes.models(ctx)
    ids = model_ids(obs.json()) if obs.ok_status else []
    return bool(ids) and ctx.model not in ids


def _key_rejected(ctx: DoctorContext) -> bool:
    obs = probes.models(ctx)
    return obs.status in (401, 403) and not (obs.status == 403 and ctx.model and ctx.model in obs.text(2000))


@check("gateway.layout", SECTION, N_("API layout (root/v1/...)"), network=True)
def gateway_layout(ctx: DoctorContext) -> Result:
    if not ctx.base_url:
        return Result.skipped(_("no usable base URL (see config.base_url)"))
    return layout(ctx)[0]


@check("gateway.key", SECTION, N_("Key accepted"), network=True)
def gateway_key(ctx: DoctorContext) -> Result:
    skip = _prerequisite(ctx)
    if skip:
        return skip
    obs = probes.models(ctx)
    if obs.status in (401, 403):
        problem = diagnose(ctx, obs, "models") or Problem(f"HTTP {obs.status}")
        return Result.fail(_("the gateway rejects the key: {problem}").format(problem=problem.message),
                           code=problem.code,
                           fixes=problem.fixes or [
                               Fix.of(_("copy the key again from the TaoToken console, then: {fix}"),
                                      fix=Fix.run(config_set("api_key", "-")))],
                           details=problem.details, latency_ms=_ms(obs))
    if obs.ok_status:
        return Result.ok(_("accepted by GET /v1/models ({ms} ms)").format(ms=f"{_ms(obs):.0f}"), latency_ms=_ms(obs))
    problem = diagnose(ctx, obs, "models")
    if problem is not None and problem.code and problem.code.startswith("quota."):  # known key, but unusable
        return Result.fail(_failed("GET /v1/models", problem), code=problem.code, fixes=problem.fixes,
                           details=problem.details, latency_ms=_ms(obs))
    return Result.warn(_("cannot tell: /v1/models answered {answer}").format(
        answer=problem.message if problem else obs.status),
                       code=problem.code if problem else None, fixes=problem.fixes if problem else [],
                       details=problem.details if problem else [])


@check("gateway.model", SECTION, N_("Model listed"), network=True)
def gateway_model(ctx: DoctorContext) -> Result:
    skip = _prerequisite(ctx, need_model=True, need_listed=False)
    if skip:
        return skip
    from taotoken_cli.core.diagnosis.model_ids import close_model_matches, model_ids

    obs = probes.models(ctx)
    data = obs.json()
    if not obs.ok_status or not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return Result.skipped(_("no model list to compare with (HTTP {status})").format(status=obs.status))
    ids = model_ids(data)
    model = ctx.model
    assert model is not None
    if model in ids:
        return Result.ok(ngettext("{model} is the one model your key can use",
                                  "{model} is one of the {n} models your key can use", len(ids)).format(
            model=model, n=len(ids)))
    close = close_model_matches(model, ids, limit=3)
    if close:
        return Result.fail(_("model {model} is not listed; did you mean {close}?").format(
            model=repr(model), close=repr(close[0])),
            details=[_("close matches: {models}").format(models=listed(close))],
            fixes=[Fix.run(f"taotoken config set model {close[0]}")])
    shown = listed(ids[:8]) + (_(", … ({n} in all)").format(n=len(ids)) if len(ids) > 8 else "")
    return Result.fail(ngettext("model {model} is not the one model your key can use",
                                "model {model} is not among the {n} models your key can use", len(ids)).format(
        model=repr(model), n=len(ids)),
        details=[_("available: {models}").format(models=shown) if ids
                 else _("the list is empty: the key has no models enabled")],
        fixes=[Fix.run(config_set("model", "<one of the listed IDs>"))])


# -- completions ----------------------------------------------------------------------------------------------
# At most one completion per API and run (gateway.chat and gateway.stream share one streamed chat completion), and
# none once a request of the run was answered 429 (rate limit or quota): with a 5-requests-per-minute key a second
# doctor run must not fail three checks for its own probes. The chat completion goes first; the Messages and
# Responses probes only after it came back without a 429 (side by side: one after the other would add their
# latencies up against the run's deadline).

@dataclass(frozen=True)
class Withheld:
    """A completion doctor did not send, because an earlier request of this run was rate-limited."""

    check_id: str  # the check that reports that request
    code: str
    request: str  # e.g. "GET /v1/models"

    def result(self) -> Result:
        return Result.skipped(_("not sent: {request} was answered {code} (see {check}); doctor sends no completion "
                                "after a 429").format(request=self.request, code=self.code, check=self.check_id),
                              blocked_by=self.check_id)


# api -> (the checks that read it, the probe that sends it, the completions that go before it)
_COMPLETIONS: dict[str, tuple[tuple[str, ...], Callable[[DoctorContext], Observation], tuple[str, ...]]] = {
    "chat": (("gateway.chat", "gateway.stream"), probes.chat, ()),
    "messages": (("gateway.messages",), probes.messages, ("chat",)),
    "responses": (("gateway.responses",), probes.responses, ("chat",)),
}


def _sent_in_this_run(ctx: DoctorContext, api: str) -> bool:
    """Does this run send the `api` completion (one of its checks runs, and its client is configured)?"""
    check_ids = _COMPLETIONS[api][0]
    if ctx.check_ids is None or not ctx.check_ids.intersection(check_ids):
        return False
    return {"chat": True, "messages": claude_code_configured(ctx), "responses": codex_configured(ctx)}[api]


def _limited(ctx: DoctorContext, obs: Observation) -> str | None:
    """The catalogue code when `obs` says the key is rate-limited or out of quota, else None."""
    problem = diagnose(ctx, obs, "json") if obs.status in (402, 429) else None
    if problem is not None and problem.code and problem.code.startswith(("rate.", "quota.")):
        return problem.code
    return "rate.limited" if obs.status == 429 else None


def completion(ctx: DoctorContext, api: str) -> Observation | Withheld:
    """The run's one `api` completion ("chat", "messages", "responses"), sent once the completions that go before
    it (those this run sends) came back, and withheld when the model list or one of them was answered 429.
    Callers have passed `_prerequisite(..., need_model=True)`, which the earlier completions share."""
    earlier = [(name, completion(ctx, name)) for name in _COMPLETIONS[api][2] if _sent_in_this_run(ctx, name)]

    def send() -> Observation | Withheld:
        for name, obs in [("models", probes.models(ctx)), *earlier]:
            if isinstance(obs, Withheld):
                return obs
            code = _limited(ctx, obs)
            if code:
                check_id = "gateway.key" if name == "models" else _COMPLETIONS[name][0][0]
                return Withheld(check_id, code, f"{obs.method} {urlsplit(obs.url).path}")
        return _COMPLETIONS[api][1](ctx)

    return ctx.memo(f"completion:{api}", send)


def _probe_result(ctx: DoctorContext, obs: Observation, expect: str, ok_message: str) -> Result:
    problem = diagnose(ctx, obs, expect)
    if problem is None:
        return Result.ok(_("{message} ({ms} ms)").format(message=ok_message, ms=f"{_ms(obs):.0f}"),
                         latency_ms=_ms(obs))
    return Result.fail(_failed(f"{obs.method} {urlsplit(obs.url).path}", problem), code=problem.code,
                       fixes=problem.fixes, details=problem.details, latency_ms=_ms(obs))


def _chat(ctx: DoctorContext) -> Observation | Result:
    """The streamed chat completion both chat checks read, or the skip that stands for it."""
    skip = _prerequisite(ctx, need_model=True)
    if skip:
        return skip
    obs = completion(ctx, "chat")
    return obs.result() if isinstance(obs, Withheld) else obs


@check("gateway.chat", SECTION, N_("Chat completion"), network=True)
def gateway_chat(ctx: DoctorContext) -> Result:
    obs = _chat(ctx)
    if isinstance(obs, Result):
        return obs
    if obs.stream is None:  # the request failed, or the gateway answered JSON although a stream was asked for
        return _probe_result(ctx, obs, "chat", _("a completion came back with choices (as JSON, not as a stream)"))
    if obs.stream.content_deltas:  # content proves the choices, whatever becomes of the stream (gateway.stream)
        return Result.ok(_("the model answered ({n} token chunk(s), {ms} ms)").format(
            n=obs.stream.content_deltas, ms=f"{_ms(obs):.0f}"), latency_ms=_ms(obs))
    return _probe_result(ctx, obs, "stream", "")  # a stream without content: an error event, or empty


@check("gateway.stream", SECTION, N_("Streamed completion"), network=True)
def gateway_stream(ctx: DoctorContext) -> Result:
    obs = _chat(ctx)
    if isinstance(obs, Result):
        return obs
    if (obs.stream is None and not obs.ok_status) or (obs.stream is not None and not obs.stream.content_deltas):
        problem = diagnose(ctx, obs, "chat" if obs.stream is None else "stream") or Problem(_("no content"))
        return Result.skipped(_("the chat completion itself failed (see gateway.chat)"), blocked_by="gateway.chat",
                              details=[problem.message], fixes=problem.fixes, code=problem.code)
    result = _probe_result(ctx, obs, "stream", _("tokens arrived and the stream ended properly"))
    summary = obs.stream
    if result.status is Status.OK and summary is not None:
        if not summary.done:
            return Result.warn(_("tokens arrived but the stream ended without [DONE] (truncated?)"),
                               latency_ms=result.latency_ms)
        if summary.first_content_s is not None:
            result.message = _("{n} token chunk(s), first after {ms} ms, ended with [DONE]").format(
                n=summary.content_deltas, ms=f"{summary.first_content_s * 1000:.0f}")
    return result


def claude_code_configured(ctx: DoctorContext) -> bool:
    """Claude Code points at a gateway: ANTHROPIC_BASE_URL as Claude Code resolves it (any settings file or the
    shell)."""
    from taotoken_cli.cmd.doctor.checks.clients.claude_code import claude_env

    item = claude_env(ctx).get("ANTHROPIC_BASE_URL")
    return item is not None and item.value.strip() != ""


def codex_configured(ctx: DoctorContext) -> bool:
    codex_dir = ctx.env.get("CODEX_HOME") or str(ctx.home / ".codex")
    return (Path(codex_dir).expanduser() / "config.toml").exists()


def _client_endpoint(ctx: DoctorContext, client: str, configured: bool, api: str, without_it: str) -> Result:
    """Probe /v1/<api>, which one client needs, when that client is configured here; a failure says
    (`without_it`) what the client cannot do then."""
    if not configured:
        return Result.skipped(_("{client} is not configured here").format(client=client))
    skip = _prerequisite(ctx, need_model=True)
    if skip:
        return skip
    obs = completion(ctx, api)
    if isinstance(obs, Withheld):
        return obs.result()
    result = _probe_result(ctx, obs, api, _("{url} answers").format(url=f"{ctx.base_url}/v1/{api}"))
    if result.status is Status.FAIL:
        result.details.append(without_it)
    return result


@check("gateway.messages", SECTION, N_("Anthropic endpoint (Claude Code)"), network=True)
def gateway_messages(ctx: DoctorContext) -> Result:
    return _client_endpoint(ctx, "Claude Code", claude_code_configured(ctx), "messages",
                            _("Claude Code calls <ANTHROPIC_BASE_URL>/v1/messages: without this endpoint it cannot "
                              "use this gateway"))


@check("gateway.responses", SECTION, N_("Responses endpoint (Codex)"), network=True)
def gateway_responses(ctx: DoctorContext) -> Result:
    return _client_endpoint(ctx, "Codex", codex_configured(ctx), "responses",
                            _('Codex only speaks wire_api = "responses": without /v1/responses it cannot use this '
                              "gateway"))
