"""The one gateway client (httpx) shared by check, doctor, route and bench's probes.

It never raises for network or HTTP failures: every call returns an Observation (status,
headers, a bounded body, timing, the exception) that `taotoken_cli.core.diagnosis.classify` turns into a
catalogue entry. Redirects are not followed, so the key never travels to another host. The key
is sent only in headers and never logged.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from taotoken_cli import __version__
from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.net.proxies import proxy_for  # noqa: F401 - the gateway's proxy decision, shared by every caller
from taotoken_cli.core.net.urlform import BARE_ROOT, OPENAI_V1

USER_AGENT = f"taotoken-cli/{__version__}"
ENV_ALLOW_HTTP = "TAOTOKEN_ALLOW_HTTP"  # =1: the user accepts sending the key over plain http
MAX_BODY_BYTES = 1 << 20  # error bodies are read for diagnosis only; a dashboard page must not eat memory
# A success body is the answer itself: a gateway with hundreds of models (OpenRouter, a big new-api) lists
# several MiB, and cutting it at the error cap turned a valid list into `resp.not_json`.
MAX_SUCCESS_BODY_BYTES = 64 << 20
ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True)
class Endpoints:
    """Every API URL derived from the stored root (e.g. https://taotoken.net/api)."""

    root: str

    @property
    def openai_base(self) -> str:  # what OpenAI-style clients (SDKs, Codex, Cline) are given
        return OPENAI_V1.url(self.root)

    @property
    def anthropic_base(self) -> str:  # what Claude Code / the Anthropic SDK are given
        return BARE_ROOT.url(self.root)

    @property
    def models(self) -> str:
        return self.openai_base + "/models"

    @property
    def chat(self) -> str:
        return self.openai_base + "/chat/completions"

    @property
    def responses(self) -> str:
        return self.openai_base + "/responses"

    @property
    def messages(self) -> str:  # the Anthropic SDK appends /v1/messages to its base URL
        return self.anthropic_base + "/v1/messages"

    @property
    def gemini_models(self) -> str:  # the Gemini API's model list (@google/genai appends /v1beta/… to the bare root)
        return f"{BARE_ROOT.url(self.root)}/v1beta/models"


@dataclass
class StreamSummary:
    events: int = 0
    content_deltas: int = 0
    text: str = ""
    done: bool = False  # `data: [DONE]` (OpenAI) or `message_stop` (Anthropic) or `response.completed`
    error_event: dict[str, Any] | str | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    first_content_s: float | None = None  # seconds from request start to the first content bytes
    model: str | None = None


@dataclass
class Observation:
    """What one request produced; input to the classifier."""

    method: str
    url: str
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)  # lower-cased names
    body: bytes = b""
    body_truncated: bool = False
    elapsed_s: float = 0.0
    error: BaseException | None = None
    proxy: str | None = None  # the proxy URL used, if any
    stream: StreamSummary | None = None
    key_sent: bool = True

    @property
    def ok_status(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON."""
        if not self.body:
            return None
        try:
            return json.loads(self.body)
        except UnicodeDecodeError:
            try:
                return json.loads(self.decoded())  # e.g. a GBK error body from a gateway in China
            except ValueError:
                return None
        except ValueError:
            return None

    def decoded(self) -> str:
        """The body as text: the charset the Content-Type names, else UTF-8, else GB18030 (GBK's superset: gateways
        and nginx pages in China send it) when the bytes are valid in it, else UTF-8 with replacement characters."""
        charset = next((part.split("=", 1)[1].strip().strip('"') for part in
                        self.headers.get("content-type", "").split(";")[1:] if part.strip().lower().startswith(
                            "charset=")), None)
        for encoding in (charset, "utf-8", "gb18030"):
            if not encoding:
                continue
            try:
                return self.body.decode(encoding)
            except (UnicodeDecodeError, LookupError):
                continue
        return self.body.decode("utf-8", errors="replace")

    def text(self, limit: int = 300) -> str:
        text = self.decoded().strip()
        return text if len(text) <= limit else text[:limit] + "…"


class DeadlineExceeded(TimeoutError):
    """The Gateway's total time budget ran out (classified as net.timeout)."""


class InsecureTransport(Exception):
    """The key would travel unencrypted: plain http to a host that is not this machine."""


def plain_http_refusal(url: str, env: Mapping[str, str] | None = None) -> InsecureTransport | None:
    """Why the key must not be sent to `url`, or None. Loopback http (a local gateway, the mock) is fine;
    anything else over http needs TAOTOKEN_ALLOW_HTTP=1, because everyone on the path could read the key."""
    from urllib.parse import urlsplit

    from taotoken_cli.core.net.hygiene import is_loopback_host

    parts = urlsplit(url)
    if parts.scheme.lower() != "http" or is_loopback_host(parts.hostname):
        return None
    if (os.environ if env is None else env).get(ENV_ALLOW_HTTP) == "1":
        return None
    return InsecureTransport(_("refusing to send the key over plain http to {host}").format(host=parts.hostname))


def chat_request_body(model: str, *, prompt: str, max_tokens: int, stream: bool) -> dict[str, Any]:
    """The OpenAI chat completion request every command sends (check, doctor, route, bench)."""
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": prompt}],
                            "max_tokens": max_tokens}
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}  # token counts from the server, not guessed
    return body


def tls_context(env: Mapping[str, str] | None = None):
    """The certificates httpx trusts with trust_env: SSL_CERT_FILE, else SSL_CERT_DIR, else certifi's bundle."""
    import ssl

    env = os.environ if env is None else env
    if env.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=env["SSL_CERT_FILE"])
    if env.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=env["SSL_CERT_DIR"])
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


class Gateway:
    def __init__(self, base_url: str, api_key: str | None, *, connect_timeout: float = 3.0,
                 read_timeout: float = 10.0, trust_env: bool = True, extra_headers: dict[str, str] | None = None,
                 http2: bool = False, total_timeout: float | None = None,
                 request_timeout: float | None = None, ends_at: float | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.endpoints = Endpoints(base_url.rstrip("/"))
        # One budget for everything this Gateway does (`check --timeout`), and/or one per request
        # (`route --verify`): httpx's timeouts are per phase/per read, so a server that trickles
        # bytes — even the header bytes — would otherwise never time out.
        # The budget starts with the first request, not here: building the client (importing httpx, loading
        # the CA bundle) is the program's own start-up, and on a slow machine it ate a 2 s `check -q` limit.
        # `ends_at` (time.monotonic()) is a deadline someone else set (doctor's run): whatever building the client
        # costs, no request runs past it.
        self.total_timeout = total_timeout
        self.ends_at = ends_at
        self.deadline: float | None = None
        self.request_timeout = request_timeout
        self._sockets: list[Any] = []  # this Gateway's open sockets, shut down when a deadline passes
        self._key = api_key
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.trust_env = trust_env
        self.env: Mapping[str, str] = os.environ if env is None else env
        # The proxy is decided here, once, by the same rules doctor reports (taotoken_cli.core.net.proxies): httpx is
        # then told it explicitly instead of reading the process environment itself.
        self.proxy = proxy_for(self.endpoints.root, self.env) if trust_env else None
        self._extra_headers = extra_headers or {}
        self._client = None
        self._client_error: BaseException | None = None

    # -- plumbing ---------------------------------------------------------------------------
    def _get_client(self):
        if self._client is None and self._client_error is None:
            import httpx

            try:
                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.read_timeout, connect=self.connect_timeout),
                    trust_env=False,
                    proxy=self.proxy,
                    follow_redirects=False,
                    headers={"User-Agent": USER_AGENT},
                    # Load the CA bundle only when TLS can be involved: it costs ~20 ms at start-up,
                    # which matters for `check` in .bashrc against a plain-http local gateway.
                    verify=tls_context(self.env) if self.endpoints.root.startswith("https") or self.proxy else False,
                )
            except Exception as exc:  # e.g. socks proxy without socksio, invalid proxy URL
                self._client_error = exc
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def headers(self, anthropic: bool = False, gemini: bool = False) -> dict[str, str]:
        headers = {"Accept": "application/json", **self._extra_headers}
        if self._key:  # the Gemini API takes the key in x-goog-api-key (as Gemini CLI sends it), never a query
            headers["x-goog-api-key" if gemini else "Authorization"] = self._key if gemini else f"Bearer {self._key}"
        if anthropic:
            headers["anthropic-version"] = ANTHROPIC_VERSION
        return headers

    def request(self, method: str, url: str, *, json_body: Any = None, anthropic: bool = False,
                stream: bool = False, gemini: bool = False) -> Observation:
        obs = Observation(method, url, key_sent=bool(self._key))
        refusal = plain_http_refusal(url, self.env) if self._key else None
        if refusal is not None:
            obs.error = refusal
            return obs
        obs.proxy = self.proxy
        client = self._get_client()
        if client is None:
            obs.error = self._client_error
            return obs
        started = time.perf_counter()
        if self.total_timeout is not None and self.deadline is None:
            self.deadline = started + self.total_timeout
        if self.ends_at is not None:  # on this clock: perf_counter and monotonic may differ (Windows)
            ends = started + (self.ends_at - time.monotonic())
            self.deadline = ends if self.deadline is None else min(self.deadline, ends)
        deadline = self._deadline_for(started)
        kwargs: dict[str, Any] = {}
        timer = None
        cut: list[bool] = []  # set when the deadline timer cut the socket under this request
        if deadline is not None:
            import threading

            import httpx

            remaining = deadline - started
            if remaining <= 0:
                obs.error = DeadlineExceeded(_("the time limit was used up before this request started"))
                return obs
            kwargs["timeout"] = httpx.Timeout(min(self.read_timeout, remaining),
                                              connect=min(self.connect_timeout, remaining))
            kwargs["extensions"] = {"trace": self._trace}
            # httpx re-arms its read timeout on every received byte: only cutting the socket at the
            # deadline stops a server that drips its status line and headers.
            timer = threading.Timer(remaining, self._cut, args=(cut,))
            timer.daemon = True
            timer.start()
        try:
            with client.stream(method, url, json=json_body, headers=self.headers(anthropic, gemini),
                               **kwargs) as response:
                obs.status = response.status_code
                obs.headers = {k.lower(): v for k, v in response.headers.items()}
                is_sse = obs.content_type == "text/event-stream"
                chunks = self._bounded(response.iter_bytes(), deadline)
                if stream and is_sse and obs.ok_status:
                    obs.stream = StreamSummary()  # kept when the stream breaks: partial content is evidence
                    self._read_stream(chunks, started, obs.stream)
                else:
                    self._read_body(obs, chunks)
        except Exception as exc:  # network failures are observations, not crashes
            obs.error = exc
            if cut and not isinstance(exc, DeadlineExceeded):
                obs.error = DeadlineExceeded(_("timed out: the time limit ran out before the answer was complete"))
        finally:
            if timer is not None:
                timer.cancel()
        obs.elapsed_s = time.perf_counter() - started
        return obs

    def _deadline_for(self, started: float) -> float | None:
        deadlines = [d for d in (self.deadline, None if self.request_timeout is None
                                 else started + self.request_timeout) if d is not None]
        return min(deadlines) if deadlines else None

    def _trace(self, event_name: str, info: dict[str, Any]) -> None:
        """httpcore trace hook: remember each new socket (plain TCP, then the TLS one) so `_cut` can reach it."""
        if event_name in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if sock is not None:
                self._sockets.append(sock)

    def _cut(self, cut: list[bool]) -> None:
        import contextlib
        import socket

        if self._sockets:  # nothing to cut while connecting: the connect timeout speaks for itself
            cut.append(True)
        for sock in self._sockets:
            with contextlib.suppress(OSError, ValueError):  # already closed
                sock.shutdown(socket.SHUT_RDWR)
        self._sockets.clear()

    @staticmethod
    def _read_body(obs: Observation, chunks: Iterator[bytes]) -> None:
        cap = MAX_SUCCESS_BODY_BYTES if obs.ok_status else MAX_BODY_BYTES
        parts: list[bytes] = []
        size = 0
        for chunk in chunks:
            parts.append(chunk)
            size += len(chunk)
            if size >= cap:
                obs.body_truncated = True
                break
        obs.body = b"".join(parts)[:cap]

    @staticmethod
    def _bounded(chunks: Iterator[bytes], deadline: float | None) -> Iterator[bytes]:
        """Stop reading at the deadline (a trickling server cannot stretch `--timeout`)."""
        for chunk in chunks:
            if deadline is not None and time.perf_counter() > deadline:
                raise DeadlineExceeded(_("timed out: the time limit ran out while reading the answer"))
            yield chunk

    @staticmethod
    def _read_stream(chunks: Iterator[bytes], started: float, summary: StreamSummary | None = None) -> StreamSummary:
        from taotoken_cli.core.net.sse import SSEParser

        summary = StreamSummary() if summary is None else summary
        parser = SSEParser()
        for chunk in chunks:
            arrived = time.perf_counter() - started
            for event in parser.feed(chunk):
                absorb_event(summary, event, arrived)
        for event in parser.close():
            absorb_event(summary, event, time.perf_counter() - started)
        return summary

    # -- API calls --------------------------------------------------------------------------
    def list_models(self) -> Observation:
        return self.request("GET", self.endpoints.models)

    def chat(self, model: str, *, prompt: str = "Say OK.", max_tokens: int = 1, stream: bool = False) -> Observation:
        body = chat_request_body(model, prompt=prompt, max_tokens=max_tokens, stream=stream)
        return self.request("POST", self.endpoints.chat, json_body=body, stream=stream)

    def messages(self, model: str, *, prompt: str = "Say OK.", max_tokens: int = 1,
                 stream: bool = False) -> Observation:
        body = {"model": model, "max_tokens": max_tokens, "messages": [{"role": "user", "content": prompt}]}
        if stream:
            body["stream"] = True
        return self.request("POST", self.endpoints.messages, json_body=body, anthropic=True, stream=stream)

    def responses(self, model: str, *, prompt: str = "Say OK.", max_tokens: int = 16,
                  stream: bool = False) -> Observation:
        body: dict[str, Any] = {"model": model, "input": prompt, "max_output_tokens": max_tokens}
        if stream:
            body["stream"] = True
        return self.request("POST", self.endpoints.responses, json_body=body, stream=stream)

    def gemini_models(self) -> Observation:
        """The Gemini API's model list, the key in x-goog-api-key as Gemini CLI sends it: free (no generation)."""
        return self.request("GET", self.endpoints.gemini_models, gemini=True)


def budgeted(base_url: str, api_key: str | None, timeout_s: float, *, trust_env: bool = True,
             env: Mapping[str, str] | None = None, ends_at: float | None = None) -> Gateway:
    """A Gateway whose requests together end within `timeout_s` seconds (`check --timeout`, `models --timeout`),
    and, given `ends_at` (time.monotonic()), no later than that deadline (doctor's run)."""
    timeout = max(0.1, timeout_s)
    return Gateway(base_url, api_key, connect_timeout=min(3.0, timeout), read_timeout=timeout,
                   trust_env=trust_env, total_timeout=timeout, ends_at=ends_at, env=env)


def absorb_event(summary: StreamSummary, event, arrived_s: float) -> None:
    """Fold one SSE event (OpenAI chat, Responses or Anthropic Messages) into the summary."""
    summary.events += 1
    if event.is_done:
        summary.done = True
        return
    try:
        payload = json.loads(event.data)
    except ValueError:
        if event.event == "error":
            summary.error_event = event.data[:500]
        return
    if not isinstance(payload, dict):
        return
    kind = payload.get("type") or event.event
    if payload.get("error") or event.event == "error" or kind in ("error", "response.failed"):
        summary.error_event = payload.get("error") or payload.get("response", {}).get("error") or payload
        return
    text = ""
    if isinstance(payload.get("choices"), list):  # OpenAI chat chunk
        summary.model = summary.model or payload.get("model")
        for choice in payload["choices"]:
            delta = choice.get("delta") or {}
            text += (delta.get("content") or "") + (delta.get("reasoning_content") or "")
            if choice.get("finish_reason"):
                summary.finish_reason = choice["finish_reason"]
    elif kind == "content_block_delta":  # Anthropic
        delta = payload.get("delta") or {}
        text = delta.get("text") or delta.get("thinking") or ""
    elif kind == "response.output_text.delta":  # Responses API
        text = payload.get("delta") or ""
    elif kind in ("message_stop", "response.completed"):
        summary.done = True
        if kind == "response.completed":
            summary.usage = (payload.get("response") or {}).get("usage")
    elif kind == "message_start":
        summary.model = (payload.get("message") or {}).get("model")
    elif kind == "message_delta":
        summary.finish_reason = (payload.get("delta") or {}).get("stop_reason") or summary.finish_reason
        summary.usage = payload.get("usage") or summary.usage
    if payload.get("usage") and isinstance(payload.get("choices"), list):
        summary.usage = payload["usage"]
    if text:
        summary.content_deltas += 1
        summary.text += text
        if summary.first_content_s is None:
            summary.first_content_s = arrived_s
