"""Network probes shared by several checks, each memoised on the context (run once per doctor run)."""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.core.base.fix import Fix
from taotoken_cli.core.base.i18n import _, listed
from taotoken_cli.core.base.oserrors import os_error_text
from taotoken_cli.core.diagnosis.context import DiagnosisContext
from taotoken_cli.core.net.gateway import Endpoints, Gateway, Observation


@dataclass
class SocketProbe:
    ok: bool
    elapsed_s: float
    detail: str  # addresses, TLS version, or the error


def host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url if "://" in url else "http://" + url)
    port = parts.port or {"https": 443, "http": 80, "socks5": 1080, "socks5h": 1080, "socks4": 1080}.get(
        parts.scheme.lower(), 80)
    return parts.hostname or "", port


def resolve(ctx: DoctorContext, host: str) -> SocketProbe:
    def run() -> SocketProbe:
        started = time.monotonic()
        try:
            infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        except OSError as exc:
            return SocketProbe(False, time.monotonic() - started, os_error_text(exc))
        addresses = sorted({str(info[4][0]) for info in infos})
        return SocketProbe(True, time.monotonic() - started, listed(addresses[:4]))

    return ctx.memo(f"dns:{host}", run)


def tcp(ctx: DoctorContext, host: str, port: int) -> SocketProbe:
    def run() -> SocketProbe:
        started = time.monotonic()
        try:
            with socket.create_connection((host, port), timeout=ctx.request_timeouts()[0]):
                pass
        except OSError as exc:
            # the system's own words for other errors ("Connection refused"), as it said them
            reason = _("timed out") if isinstance(exc, TimeoutError | socket.timeout) else os_error_text(exc)
            return SocketProbe(False, time.monotonic() - started, reason)
        return SocketProbe(True, time.monotonic() - started,
                           _("{host}:{port} accepts connections").format(host=host, port=port))

    return ctx.memo(f"tcp:{host}:{port}", run)


def tls(ctx: DoctorContext, host: str, port: int) -> SocketProbe:
    def run() -> SocketProbe:
        started = time.monotonic()
        context = ssl.create_default_context()
        connect, read = ctx.request_timeouts()
        try:
            with socket.create_connection((host, port), timeout=connect) as raw:
                raw.settimeout(read)
                with context.wrap_socket(raw, server_hostname=host) as wrapped:
                    version = wrapped.version()
                    cert = wrapped.getpeercert() or {}
        except ssl.SSLCertVerificationError as exc:
            return SocketProbe(False, time.monotonic() - started,
                               _("certificate not trusted: {reason}").format(reason=exc.verify_message))
        except (OSError, ssl.SSLError) as exc:
            reason = _("timed out") if isinstance(exc, TimeoutError | socket.timeout) else str(exc)
            return SocketProbe(False, time.monotonic() - started, reason)
        expires = cert.get("notAfter", "?")
        return SocketProbe(True, time.monotonic() - started,
                           _("{version}, certificate valid until {expires}").format(version=version, expires=expires))

    return ctx.memo(f"tls:{host}:{port}", run)


def _gateway(ctx: DoctorContext, trust_env: bool = True, auth: bool = True) -> Gateway:
    connect, read = ctx.request_timeouts()
    assert ctx.base_url is not None
    # ends_at, the run's deadline itself rather than a duration measured from now: building the client (httpx, the CA
    # bundle) takes a second on a loaded machine, and a server that drips bytes re-arms the read timeout forever;
    # either way the probe ends at the deadline, classified (net.timeout), within the runner's grace.
    return Gateway(ctx.base_url, ctx.api_key if auth else None, connect_timeout=connect, read_timeout=read,
                   trust_env=trust_env, ends_at=ctx.deadline, env=ctx.env)


def get(ctx: DoctorContext, url: str, *, trust_env: bool = True, auth: bool = True) -> Observation:
    def run() -> Observation:
        with _gateway(ctx, trust_env, auth) as gw:
            return gw.request("GET", url)

    return ctx.memo(f"get:{url}:{trust_env}:{auth}", run)


def models(ctx: DoctorContext, *, trust_env: bool = True) -> Observation:
    assert ctx.base_url is not None
    return get(ctx, Endpoints(ctx.base_url).models, trust_env=trust_env)


def _send_once(ctx: DoctorContext, key: str, send: Callable[[Gateway, str], Observation]) -> Observation:
    """Send one small request with taotoken's model, once per run: checks that share it wait for it."""
    def run() -> Observation:
        assert ctx.model is not None
        with _gateway(ctx) as gw:
            return send(gw, ctx.model)

    return ctx.memo(key, run)


def chat(ctx: DoctorContext) -> Observation:
    """The run's one chat completion, streamed (as `check --stream`): content and a proper end prove both that
    the model answers and that streaming works."""
    return _send_once(ctx, "chat", lambda gw, model: gw.chat(model, max_tokens=8, stream=True))


def messages(ctx: DoctorContext) -> Observation:
    return _send_once(ctx, "messages", Gateway.messages)


def responses(ctx: DoctorContext) -> Observation:
    return _send_once(ctx, "responses", Gateway.responses)


def gemini(ctx: DoctorContext):
    """Does the gateway serve the Gemini API (diagnosis.gemini_api.probe: a free model-list request), once per run;
    with --offline it is not asked ("could not tell")."""
    from taotoken_cli.core.diagnosis import gemini_api
    from taotoken_cli.core.net.gateway import Endpoints

    def run() -> gemini_api.GeminiSupport:
        assert ctx.base_url is not None and ctx.api_key is not None
        if ctx.offline:
            return gemini_api.GeminiSupport(None, Endpoints(ctx.base_url).gemini_models, None,
                                            _("not asked (--offline)"))
        return gemini_api.probe(ctx.base_url, ctx.api_key, ctx.env, model=ctx.model,
                                timeout_s=ctx.request_timeouts()[1], ends_at=ctx.deadline)

    return ctx.memo("gemini:api", run)


def describe_error(obs: Observation) -> str:
    """A short human phrase for a transport failure (the classifier gives the catalogue code)."""
    exc = obs.error
    if exc is None:
        return f"HTTP {obs.status}"
    name = type(exc).__name__
    text = str(exc) or name
    if "Timeout" in name:
        return _("timed out after {seconds} s").format(seconds=f"{obs.elapsed_s:.1f}")
    if name == "ProxyError" or "proxy" in text.lower():
        return _("proxy error: {error}").format(error=text)
    if "socksio" in text:
        return _("SOCKS proxy without the socksio package")
    if name == "ConnectError":
        return _("cannot connect: {error}").format(error=text)
    return f"{name}: {text}"


@dataclass
class Problem:
    """A classified failure of one probe."""

    message: str
    code: str | None = None
    fixes: list[Fix] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    server_message: str | None = None  # what the server (or the proxy) said, trimmed


def _context(ctx: DoctorContext) -> DiagnosisContext:
    from taotoken_cli.core.diagnosis.context import context_for
    from taotoken_cli.core.net.proxies import proxy_for

    base = ctx.base_url or ""
    return context_for(base=base, settings=ctx.settings, env=ctx.env, model=ctx.model or "",
                       proxy=(proxy_for(base, ctx.env) if base else "") or "")


def diagnose(ctx: DoctorContext, obs: Observation, expect: str) -> Problem | None:
    """Classify with the shared catalogue; None means the probe succeeded. An answer the proxy gave itself (its
    own 403 or error page) is the proxy's problem: the classifier tells (diagnosis.proxy_answer)."""
    from taotoken_cli.core.diagnosis import classify, proxy_answer

    diagnosis = classify.classify(obs, expect=expect, context=_context(ctx))
    if diagnosis is None:
        return None
    message = diagnosis.title
    fixes = diagnosis.fixes()
    if obs.error is not None and diagnosis.code in ("net.timeout", "net.connect_timeout"):
        # The limit that ran out is doctor's own (--timeout), not anything the server said; the fix reruns what
        # timed out with more time, not a `check` of some other endpoint.
        message = _("{title}: doctor's own time limit ({seconds} s, --timeout) ran out before {request} "
                    "answered").format(title=message, seconds=f"{ctx.timeout:g}",
                                       request=f"{obs.method} {urlsplit(obs.url).path}")
        fixes = timeout_fixes(ctx, obs, expect) + [fix for fix in fixes if "--timeout" not in str(fix)]
    elif obs.error is not None and diagnosis.server_message and diagnosis.code != proxy_answer.CODE:
        message = _("{title}: {error}").format(title=message, error=diagnosis.server_message)  # our error, not theirs
    elif diagnosis.server_message:
        said = (_("{title} — the proxy said: {said}") if diagnosis.code == proxy_answer.CODE
                else _("{title} — server said: {said}"))
        message = said.format(title=message, said=diagnosis.server_message)
    return Problem(message, diagnosis.code, fixes, list(diagnosis.details), diagnosis.server_message)


def timeout_fixes(ctx: DoctorContext, obs: Observation | None = None, expect: str = "") -> list[Fix]:
    """Rerun what timed out with a longer limit: doctor itself, and the `check` that sends that same request (when
    the request is known: `obs`)."""
    from taotoken_cli.core.base.fix import Command

    seconds = f"{max(30.0, ctx.timeout * 3):g}"
    fixes = [Fix.of(_("allow longer: {command}"), command=Command(f"taotoken doctor --timeout {seconds}"))]
    path = urlsplit(obs.url).path if obs is not None else ""
    rerun = None
    if path.endswith("/chat/completions"):
        rerun = f"taotoken check {'--stream' if expect == 'stream' else '--chat'} --timeout {seconds}"
    elif path.endswith("/models"):
        rerun = f"taotoken check --timeout {seconds}"
    if rerun:
        fixes.append(Fix.of(_("or test just that request: {command}"), command=Command(rerun)))
    return fixes
