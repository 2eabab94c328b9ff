"""The failure catalogue, as data: one entry per stable code.

Codes are a public contract (`taotoken explain CODE`, `check --json`, bench's error breakdown,
doctor's findings): never rename one; add new ones instead. Fixes are concrete commands or edits.
`{base}`, `{openai_base}`, `{model}`, `{host}`, `{proxy}`, `{config}`, `{request_id}`, `{retry_after}` in
fixes are filled in by `Diagnosis.fixes()` from the situation at hand. A fix that only fits some
situations is a `Fix` with `when=` (a context value that must be known: a proxy in use, a request id
sent, a wait time given) and an optional `otherwise=` line for when it is not; `explain` shows both.
An entry's first fix always applies.

`retry` says whether the same request may succeed if simply sent again later: never for quota or
billing, even though those share status 429 with real rate limits.
"""

from __future__ import annotations

from dataclasses import dataclass

from taotoken_cli.exitcodes import Exit

# Context values a Fix may depend on, and how `explain` labels the line when it has no situation.
CONDITIONS: dict[str, tuple[str, str]] = {
    "proxy": ("when a proxy is in use", "when no proxy is in use"),
    "request_id": ("when the gateway sent a request id", "when the gateway sent no request id"),
    "retry_after": ("when the gateway said how long to wait", "when the gateway gave no wait time"),
}


class Fix(str):
    """A fix line shown only when the context value `when` is known; else `otherwise` (if any) is shown.

    A str, so code that reads an entry's fixes as text keeps working."""

    when: str
    otherwise: str | None

    def __new__(cls, text: str, *, when: str, otherwise: str | None = None) -> Fix:
        if when not in CONDITIONS:
            raise ValueError(f"unknown fix condition {when!r}")
        fix = super().__new__(cls, text)
        fix.when, fix.otherwise = when, otherwise
        return fix


@dataclass(frozen=True)
class Entry:
    code: str
    title: str
    exit: Exit
    causes: tuple[str, ...]
    fixes: tuple[str, ...]
    retry: bool = False  # may the same request succeed if simply retried later?


_SHOW = "taotoken config show --origin"
_KEYS = "the key list (令牌管理) in the TaoToken console"
_OTHER_MODEL = "try another model (taotoken models lists them): taotoken check --chat --model <id>"

_ENTRIES = (
    # --- local configuration ------------------------------------------------------------------
    Entry("auth.missing_key", "No API key was sent", Exit.CONFIG,
          ("no key is configured for this profile", "the variable holding the key is empty in this shell",
           "a proxy stripped the Authorization header"),
          ("taotoken init   (or: taotoken config set api_key -)", "export TAOTOKEN_API_KEY=sk-…")),
    Entry("config.missing", "A required setting is not configured", Exit.CONFIG,
          ("this profile has no value for it and no TAOTOKEN_* variable provides one",
           "TAOTOKEN_PROFILE or --profile selects a profile that does not exist"),
          ("taotoken init", _SHOW)),
    Entry("config.invalid", "A configured value cannot be used", Exit.CONFIG,
          ("a value was pasted with extra text (Bearer prefix, spaces inside, smart quotes)",
           "the base URL has no scheme or an unsupported one"),
          (_SHOW + "   (shows which source the bad value came from)", "taotoken config set base_url {base}")),
    Entry("config.unparsable", "The config file does not parse", Exit.CONFIG,
          ("a hand edit left invalid TOML (unclosed quote, duplicate key)",),
          ("fix the file at the line:column shown, or move it away and run `taotoken init`",)),
    Entry("input.invalid", "A value given on the command line cannot be used", Exit.USAGE,
          ("the value was pasted with extra text or has the wrong form",),
          ("see the fix printed with the error; `taotoken <command> --help` lists the options",)),
    # --- key / authentication ---------------------------------------------------------------------
    Entry("auth.key_not_received", "The gateway says no key arrived, but one was sent", Exit.AUTH,
          ("a proxy or corporate gateway strips the Authorization header",
           "the request went to a different service than the gateway (wrong base URL)"),
          ("check the base URL: " + _SHOW,
           Fix("try without the proxy {proxy}: taotoken check --no-proxy", when="proxy"))),
    Entry("auth.invalid_key", "The gateway rejected the key", Exit.AUTH,
          ("the key was copied incompletely or with extra characters",
           "the key was deleted, disabled or expired in the console",
           "the key's own quota is used up (new-api reports that as 'invalid token' too)",
           "the key belongs to a different gateway than the base URL"),
          ("copy the key again from " + _KEYS + ", then: taotoken config set api_key -",
           "see which key is used and where it comes from: " + _SHOW)),
    Entry("auth.expired_key", "The key has expired", Exit.AUTH,
          ("the key's expiry date has passed",),
          ("extend the key's expiry in " + _KEYS + ", or create a new key and: taotoken config set api_key -",)),
    Entry("auth.key_disabled", "The key is disabled", Exit.AUTH,
          ("the key was switched off by you or an administrator",),
          ("enable the key in " + _KEYS + ", or create a new one and: taotoken config set api_key -",)),
    Entry("auth.account_banned", "The account is banned", Exit.AUTH,
          ("the gateway operator blocked the account",),
          (Fix("only the gateway's support can lift this; contact them with request id {request_id}",
               when="request_id", otherwise="only the gateway's support can lift this; contact them"),)),
    Entry("auth.ip_not_allowed", "The key may not be used from this IP address", Exit.AUTH,
          ("the key has an IP allow-list and this machine's egress IP is not on it",
           "a VPN or proxy changed the IP the gateway sees"),
          ("add the IP the gateway reported to the key's allow-list in " + _KEYS,
           Fix("or run without the proxy {proxy}: taotoken check --no-proxy", when="proxy",
               otherwise="if a VPN is on, compare with it off (it changes the IP the gateway sees)"))),
    Entry("auth.key_suffix", "The key carries an extra '-suffix' the gateway reads as a channel id", Exit.AUTH,
          ("something was appended to the key after a '-' (one-api/new-api treat it as a channel id, "
           "which only administrators may select)",),
          ("copy the key again without anything appended, then: taotoken config set api_key -",)),
    Entry("auth.forbidden_model", "The key is not allowed to use this model", Exit.AUTH,
          ("the key has a model allow-list that does not include {model}",
           "{model} is misspelled: some gateways (LiteLLM) answer a typo the same way"),
          ("list the models this key may use: taotoken models",
           "or have {model} added to the key's model limits in " + _KEYS)),
    Entry("auth.forbidden_group", "The key is bound to a group it may not use", Exit.AUTH,
          ("the key's group was removed or the account lost access to it",),
          ("pick an available group for the key in " + _KEYS + ", or create a new key",)),
    Entry("auth.forbidden", "The gateway refused the request (403)", Exit.AUTH,
          ("the key lacks a permission this request needs",
           "a firewall or WAF in front of the gateway blocked the request"),
          ("compare with a key that works, and read the server message above",
           Fix("try without the proxy {proxy}: taotoken check --no-proxy", when="proxy"))),
    Entry("auth.upstream_credential", "The gateway's own upstream credential failed", Exit.SERVER,
          ("your key was accepted, but the gateway's key for the upstream provider is wrong or revoked "
           "(the error text is the upstream provider's, passed through)",),
          (Fix("nothing to change on your side: report it to the gateway operator with request id {request_id}",
               when="request_id", otherwise="nothing to change on your side: report it to the gateway operator"),
           "meanwhile " + _OTHER_MODEL),
          retry=True),
    # --- balance / quota (never retry) ------------------------------------------------------------
    Entry("quota.exhausted", "Out of balance or quota (not a rate limit)", Exit.RATE_QUOTA,
          ("the account balance is used up", "a budget or spend cap was reached",
           "the gateway pre-charges an estimate from prompt size + max_tokens and the balance is below it"),
          ("top up the account in the TaoToken console, then run: taotoken check --chat",
           "lower max_tokens for large requests; retrying will not help")),
    Entry("quota.key_exhausted", "This key's own quota is used up", Exit.RATE_QUOTA,
          ("the key has its own spending limit, which is reached (the account balance may be fine)",),
          ("raise the key's quota or make it unlimited in " + _KEYS,
           "retrying will not help")),
    # --- rate and concurrency limits --------------------------------------------------------------
    Entry("rate.limited", "Rate limit reached (slow down)", Exit.RATE_QUOTA,
          ("too many requests or tokens per minute for this key, account or IP",
           "retries of failing requests count too on some gateways"),
          (Fix("wait {retry_after} s (the gateway's Retry-After), then try again", when="retry_after",
               otherwise="wait about a minute, then try again (the gateway gave no wait time; limits are "
                         "usually per minute)"),
           "lower the request rate / concurrency, e.g. taotoken bench -c 1"), retry=True),
    Entry("rate.concurrency", "Too many requests in flight at once", Exit.RATE_QUOTA,
          ("the gateway caps how many requests one user may have running simultaneously",),
          ("lower concurrency below the limit shown, e.g. taotoken bench -c 2",
           "let running requests finish before starting new ones"), retry=True),
    Entry("upstream.saturated", "The upstream provider is overloaded (not your limit)", Exit.SERVER,
          ("the gateway's upstream channels for this model are throttling or overloaded",
           "every deployment of this model is at its rate limit or cooling down after errors "
           "(LiteLLM: 'No deployments available')"),
          (Fix("wait {retry_after} s (the gateway's Retry-After) and retry; your own limits are not the cause",
               when="retry_after", otherwise="wait a minute or so and retry (the gateway gave no wait time); your "
                                             "own limits are not the cause"),
           "or " + _OTHER_MODEL), retry=True),
    # --- URL layout -------------------------------------------------------------------------------
    Entry("url.not_found", "The URL does not exist on this server (404)", Exit.NOT_FOUND,
          ("the base URL is not the gateway's API root", "the path prefix (/api, /v1) is wrong or missing"),
          ("use the API root as base URL, e.g. taotoken config set base_url https://taotoken.net/api",
           "OpenAI-style clients get {openai_base}; Anthropic-style clients get {base}")),
    Entry("url.doubled_v1", "The URL has /v1 twice", Exit.NOT_FOUND,
          ("the base URL already ends in /v1 and the client appends /v1/... again",),
          ("store the root without /v1: taotoken config set base_url {base}",
           "in OpenAI-style clients use exactly {openai_base}")),
    Entry("url.endpoint_in_base", "An endpoint path was pasted into the base URL", Exit.NOT_FOUND,
          ("the base URL ends with /chat/completions, /messages or /models and the client appends it again",),
          ("store only the root: taotoken config set base_url {base}",)),
    Entry("url.query_string", "The base URL carries a query string", Exit.NOT_FOUND,
          ("a link with ?utm_source=… was pasted; clients append paths after the query, so the path is wrong",),
          ("store the URL without '?…': taotoken config set base_url {base}",)),
    Entry("url.html_page", "A web page came back instead of the API", Exit.NOT_FOUND,
          ("the base URL points at the website/dashboard, not the API root",
           "the /v1 part is missing in an OpenAI-style client's base URL",
           "a captive portal or proxy answered instead of the gateway"),
          ("taotoken config set base_url https://taotoken.net/api   (the API root)",
           "OpenAI-style clients need {openai_base}")),
    Entry("url.dashboard_api", "The dashboard API answered, not the model API", Exit.NOT_FOUND,
          ("the base URL points at the gateway's management API (/api/…) instead of the relay",),
          ("use the API root as base URL: taotoken config set base_url https://taotoken.net/api",)),
    Entry("url.plain_http", "The key would be sent unencrypted (plain http to another host)", Exit.CONFIG,
          ("the base URL starts with http:// and names a host that is not this machine",
           "an old LAN or relay address was left in the configuration"),
          ("use the https:// address: taotoken config set base_url https://{host}/api",
           "only for a gateway on a network you trust: export TAOTOKEN_ALLOW_HTTP=1")),
    Entry("url.redirect", "The server answered with a redirect", Exit.NOT_FOUND,
          ("http:// was used where the server wants https://", "the host or path moved",
           "a login or captive-portal page redirects"),
          ("use the redirect target shown as the base URL (usually https://): taotoken config set base_url "
           "https://{host}/api",)),
    Entry("url.not_implemented", "The gateway does not implement this API", Exit.NOT_FOUND,
          ("this endpoint (e.g. /v1/responses or /v1/messages) is not offered by this gateway",),
          ("use the OpenAI chat API ({openai_base}/chat/completions), or ask the operator",)),
    # --- model ------------------------------------------------------------------------------------
    Entry("model.not_found", "The model is not known to the gateway", Exit.NOT_FOUND,
          ("the model ID is misspelled (IDs are case-sensitive)", "this key or group does not offer the model"),
          ("set a listed ID: taotoken config set model <id>   (`taotoken models {model}` shows close matches)",
           "list every ID this key may use: taotoken models")),
    Entry("model.no_channel", "No upstream channel serves this model right now", Exit.NOT_FOUND,
          ("the model is not offered in your group", "all channels for it are disabled or unhealthy"),
          ("pick a listed model: taotoken models {model}   (shows close matches), then: taotoken config set "
           "model <id>",
           "ask the gateway operator whether {model} is available in your group")),
    Entry("model.missing", "The request named no model", Exit.CONFIG,
          ("no model is configured", "the client sends an empty model field"),
          ("taotoken config set model <id>   (see the list: taotoken models)",)),
    # --- proxy ------------------------------------------------------------------------------------
    Entry("proxy.unreachable", "The configured proxy cannot be reached", Exit.NETWORK,
          ("a proxy variable (HTTPS_PROXY/ALL_PROXY/…) points at a proxy that is not running",
           "the proxy refused the CONNECT to the gateway"),
          ("start the proxy at {proxy}, or unset it: "
           "unset HTTP_PROXY http_proxy HTTPS_PROXY https_proxy ALL_PROXY all_proxy",
           "or exempt the gateway: export NO_PROXY={host}", "or test directly: taotoken check --no-proxy")),
    Entry("proxy.socks_unsupported", "A SOCKS proxy is configured but SOCKS support is missing", Exit.NETWORK,
          ("ALL_PROXY/HTTPS_PROXY is socks5://… (Clash, mihomo) and the socksio package is not installed",),
          ('pip install "httpx[socks]"   (in the environment taotoken runs in)',
           "or exempt the gateway: export NO_PROXY={host}", "or test directly: taotoken check --no-proxy")),
    Entry("proxy.refused", "The proxy answered the request itself; the gateway never saw it", Exit.NETWORK,
          ("the proxy's rules block the gateway's host (its own 403 page: a corporate deny list, a Clash/mihomo "
           "REJECT rule)",
           "the proxy cannot reach the gateway and answers 502/503/504 itself",
           "the proxy refused the tunnel (CONNECT) to an https gateway"),
          ("let the proxy {proxy} pass {host} (a rule for it in Clash/squid, or ask its administrator), or bypass "
           "it: export NO_PROXY={host}",
           "compare directly: taotoken check --no-proxy")),
    Entry("proxy.auth_required", "The proxy requires authentication (407)", Exit.NETWORK,
          ("the proxy URL lacks user:password",),
          ("put the credentials in the proxy URL (http://user:pass@host:port), or: taotoken check --no-proxy",)),
    # --- network ----------------------------------------------------------------------------------
    Entry("net.dns", "The gateway's host name does not resolve", Exit.NETWORK,
          ("the host name in the base URL is misspelled", "no network or DNS server is reachable"),
          ("check the host: " + _SHOW, "test resolution: getent hosts {host}"), retry=True),
    Entry("net.refused", "Connection refused", Exit.NETWORK,
          ("nothing listens at that host and port", "the port in the base URL is wrong"),
          ("check the base URL and port: " + _SHOW, "if the gateway is local, start it"), retry=True),
    Entry("net.reset", "The connection was closed or reset mid-response", Exit.NETWORK,
          ("a proxy, firewall or load balancer cut the connection", "the gateway crashed or restarted"),
          ("retry in a moment",
           Fix("if it persists, try without the proxy {proxy}: taotoken check --no-proxy", when="proxy")),
          retry=True),
    Entry("net.timeout", "The gateway did not answer in time", Exit.NETWORK,
          ("the gateway or its upstream is slow", "a firewall silently drops the traffic"),
          ("retry with a longer limit: taotoken check --timeout 15",
           "for long generations use streaming or lower max_tokens"), retry=True),
    Entry("net.connect_timeout", "Could not connect in time", Exit.NETWORK,
          ("a firewall drops the connection attempts", "the host is down or the network is offline"),
          ("check connectivity: curl -sS -o /dev/null -w '%{{http_code}}\\n' {base}/v1/models",
           "retry with a longer limit: taotoken check --timeout 15"), retry=True),
    Entry("net.tls", "TLS (https) handshake failed", Exit.NETWORK,
          ("the certificate is not trusted (self-signed, corporate interception proxy)",
           "the system clock is wrong", "https:// was used for a plain-http port"),
          ("if a corporate proxy intercepts TLS: export SSL_CERT_FILE=/path/to/corporate-ca.pem",
           "check the URL scheme and port: " + _SHOW), retry=False),
    Entry("net.error", "The request failed on the network", Exit.NETWORK,
          ("an unexpected network error (see the message)",),
          ("retry; if it persists, run: taotoken doctor",), retry=True),
    # --- responses --------------------------------------------------------------------------------
    Entry("resp.not_json", "The answer is not JSON", Exit.BAD_RESPONSE,
          ("the base URL points at something that is not the gateway's API", "a proxy rewrote the answer"),
          ("check the base URL: " + _SHOW,)),
    Entry("resp.no_choices", "The answer has no choices (KeyError: 'choices')", Exit.BAD_RESPONSE,
          ("the gateway returned HTTP 200 with an error or an empty result",
           "the upstream returned nothing for this model"),
          ("read the server message above; " + _OTHER_MODEL,)),
    Entry("resp.no_models", "The models endpoint did not return a model list", Exit.BAD_RESPONSE,
          ("the base URL points at a different API", "the gateway answered an unexpected format"),
          ("check the base URL: " + _SHOW,)),
    Entry("resp.error_body", "HTTP 2xx, but the body is an error", Exit.BAD_RESPONSE,
          ("the gateway passed an upstream error through with status 200",),
          ("read the server message above; retry, or try another model",), retry=True),
    Entry("request.invalid", "The gateway rejected the request as invalid (400)", Exit.FAILURE,
          ("a parameter is not accepted by this model or gateway",),
          ("read the server message above",
           Fix("if taotoken sent it, report it with request id {request_id}", when="request_id"))),
    Entry("request.too_large", "The request is too large (413)", Exit.FAILURE,
          ("the prompt or attachment exceeds the gateway's size limit",),
          ("send less context per request",)),
    # --- streams ----------------------------------------------------------------------------------
    Entry("stream.error_event", "The stream carried an error event", Exit.BAD_RESPONSE,
          ("the upstream failed after the stream started (overload, content filter, timeout)",),
          ("read the server message above and retry", "if it repeats, try another model"), retry=True),
    Entry("stream.empty", "The stream ended without any content", Exit.BAD_RESPONSE,
          ("the upstream failed mid-stream and the gateway dropped the error chunk",
           "the model returned nothing for this prompt"),
          ("retry; if it repeats, " + _OTHER_MODEL,), retry=True),
    Entry("stream.truncated", "The stream stopped before it finished", Exit.BAD_RESPONSE,
          ("the connection closed before [DONE] / message_stop", "a proxy timeout cut a long stream"),
          ("retry; for long generations check proxy/load-balancer idle timeouts",), retry=True),
    Entry("stream.not_sse", "A stream was requested but a plain answer came back", Exit.BAD_RESPONSE,
          ("the endpoint or a proxy does not support streaming",),
          ("use a base URL that supports streaming: {openai_base}",)),
    # --- server -----------------------------------------------------------------------------------
    Entry("server.error", "The gateway or its upstream failed (5xx)", Exit.SERVER,
          ("the gateway could not reach its upstream", "an internal error at the gateway"),
          ("retry in a moment",
           Fix("if it persists, report it to the gateway operator with request id {request_id}", when="request_id",
               otherwise="if it persists, report it to the gateway operator with the time and the model (the "
                         "gateway sent no request id)"),
           "meanwhile " + _OTHER_MODEL),
          retry=True),
    Entry("server.timeout", "The gateway timed out waiting for the upstream", Exit.SERVER,
          ("a non-streamed generation took longer than the gateway's limit (Cloudflare: ~100 s)",),
          ("use stream=true for long generations, or lower max_tokens",), retry=True),
)

CATALOGUE: dict[str, Entry] = {entry.code: entry for entry in _ENTRIES}


# What an HTTP status can mean, most likely first (`taotoken explain 429`). The classifier decides one code
# from the whole answer; a status alone leaves these candidates.
STATUS_MEANINGS: dict[int, tuple[str, ...]] = {
    200: ("resp.error_body", "resp.no_choices", "url.html_page", "url.dashboard_api", "resp.not_json"),
    301: ("url.redirect",), 302: ("url.redirect",), 307: ("url.redirect",), 308: ("url.redirect",),
    400: ("request.invalid", "model.not_found", "model.missing", "quota.exhausted"),
    401: ("auth.invalid_key", "auth.expired_key", "auth.key_disabled", "quota.key_exhausted", "auth.missing_key",
          "auth.key_not_received", "auth.upstream_credential"),
    402: ("quota.exhausted",),
    403: ("auth.forbidden_model", "auth.forbidden", "auth.ip_not_allowed", "auth.key_suffix", "auth.forbidden_group",
          "auth.account_banned", "quota.exhausted", "quota.key_exhausted", "proxy.refused"),
    404: ("url.not_found", "url.doubled_v1", "url.endpoint_in_base", "url.query_string", "model.not_found"),
    405: ("url.not_found",), 407: ("proxy.auth_required",), 408: ("net.timeout",), 410: ("url.not_found",),
    413: ("request.too_large",), 422: ("request.invalid", "quota.key_exhausted"),
    429: ("rate.limited", "rate.concurrency", "quota.exhausted", "upstream.saturated"),
    500: ("server.error", "auth.upstream_credential"), 501: ("url.not_implemented",),
    502: ("server.error", "proxy.refused"), 503: ("model.no_channel", "upstream.saturated", "server.error",
                                                  "proxy.refused"),
    504: ("server.timeout",), 522: ("server.timeout",), 524: ("server.timeout",), 529: ("upstream.saturated",),
}


def get(code: str) -> Entry:
    return CATALOGUE[code]


def close_codes(code: str, limit: int = 5) -> list[str]:
    """Known codes resembling `code` (for `explain` with a typo)."""
    import difflib

    code = code.strip().lower()
    found = difflib.get_close_matches(code, list(CATALOGUE), n=limit, cutoff=0.5)
    prefix = code.split(".", 1)[0]
    for known in CATALOGUE:
        if len(found) >= limit:
            break
        if (known.startswith(prefix + ".") or code in known) and known not in found:
            found.append(known)
    return found
