"""The failure catalogue, as data: one entry per stable code.

Codes are a public contract (`taotoken explain CODE`, `check --json`, bench's error breakdown,
doctor's findings): never rename one; add new ones instead. Fixes are concrete commands or edits.
Each fix is a `Step`: an English msgid whose commands are `{command}` fields, kept apart so the renderer never
splits one and no translation can change one. `{base}`, `{openai_base}`, `{model}`, `{host}`, `{proxy}`,
`{config}`, `{request_id}`, `{retry_after}` in fixes and their commands are filled in by `Diagnosis.fixes()`
from the situation at hand (a `DiagnosisContext`). A fix that only fits some situations has `when=` (a context
value that must be known: a proxy in use, a request id sent, a wait time given) and an optional `otherwise=`
step for when it is not; `explain` shows both. An entry's first fix always applies.

Titles, causes and fixes are English msgids (marked with N_()); `Diagnosis` translates them when it produces
them (`title`, `causes()`, `fixes()`), so --json, which runs in English, never changes with the language.

`retry` says whether the same request may succeed if simply sent again later: never for quota or
billing, even though those share status 429 with real rate limits.
"""

from __future__ import annotations

from dataclasses import dataclass

from taotoken_cli.core.base.exitcodes import Exit
from taotoken_cli.core.base.fix import Command, config_set
from taotoken_cli.core.base.i18n import N_

# Context values a Fix may depend on, and how `explain` labels the line when it has no situation.
CONDITIONS: dict[str, tuple[str, str]] = {
    "proxy": (N_("when a proxy is in use"), N_("when no proxy is in use")),
    "request_id": (N_("when the gateway sent a request id"), N_("when the gateway sent no request id")),
    "retry_after": (N_("when the gateway said how long to wait"), N_("when the gateway gave no wait time")),
    "redirect_base": (N_("when the server said where it redirects"), N_("when the server named no redirect target")),
}


@dataclass(frozen=True)
class Step:
    """A fix as the catalogue holds it: `text`, an English msgid (N_) whose `{command}`, `{command2}` fields are
    the `commands` (kept whole and never translated; their own `{base}`-style placeholders filled like the
    text's), and `when`: a context value that must be known for it to apply, else `otherwise` (if any) applies.
    `Diagnosis.fixes()` makes each a `Fix` (core.base.fix)."""

    text: str
    commands: tuple[tuple[str, Command], ...] = ()
    when: str | None = None
    otherwise: Step | None = None

    def __init__(self, text: str, *, when: str | None = None, otherwise: Step | None = None,
                 **commands: Command) -> None:
        if when is not None and when not in CONDITIONS:
            raise ValueError(f"unknown fix condition {when!r}")
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "commands", tuple(commands.items()))
        object.__setattr__(self, "when", when)
        object.__setattr__(self, "otherwise", otherwise)


def run(command: str | Command) -> Step:
    """A fix that is only a command: the same in every language."""
    return Step("{command}", command=command if isinstance(command, Command) else Command(command))


@dataclass(frozen=True)
class Entry:
    code: str
    title: str
    exit: Exit
    causes: tuple[str, ...]
    fixes: tuple[Step, ...]
    retry: bool = False  # may the same request succeed if simply retried later?


# A fix that is only a command (`run("taotoken init")`) is not marked: it reads the same in every language. The
# commands inside a fix are `{command}` fields of its text, so no translation can change one; `config_set` marks
# the `taotoken config set NAME VALUE` a diagnosis replaces by the instruction that sets NAME where it comes from.
_ENTRIES = (
    # --- local configuration ------------------------------------------------------------------
    Entry("auth.missing_key", N_("No API key was sent"), Exit.CONFIG,
          (N_("no key is configured for this profile"), N_("the variable holding the key is empty in this shell"),
           N_("a proxy stripped the Authorization header")),
          (Step(N_("{command}   (or: {command2})"),
                command=Command("taotoken init"),
                command2=config_set("api_key", "-")), run("export TAOTOKEN_API_KEY=sk-…"))),
    Entry("config.missing", N_("A required setting is not configured"), Exit.CONFIG,
          (N_("this profile has no value for it and no TAOTOKEN_* variable provides one"),
           N_("TAOTOKEN_PROFILE or --profile selects a profile that does not exist")),
          (run("taotoken init"), run("taotoken config show --origin"))),
    Entry("config.invalid", N_("A configured value cannot be used"), Exit.CONFIG,
          (N_("a value was pasted with extra text (Bearer prefix, spaces inside, smart quotes)"),
           N_("the base URL has no scheme or an unsupported one")),
          (Step(N_("{command}   (shows which source the bad value came from)"),
                command=Command("taotoken config show --origin")),
           run(config_set("base_url", "{base}")))),
    Entry("config.unparsable", N_("The config file does not parse"), Exit.CONFIG,
          (N_("a hand edit left invalid TOML (unclosed quote, duplicate key)"),
           N_("a hand edit left a value of a form taotoken cannot use (a default_profile with spaces or slashes)")),
          (Step(N_("fix the file at the line:column shown, or move it away and run {command}"),
                command=Command("taotoken init")),)),
    Entry("input.invalid", N_("A value given on the command line cannot be used"), Exit.USAGE,
          (N_("the value was pasted with extra text or has the wrong form"),),
          (Step(N_("see the fix printed with the error; {command} lists the options"),
                command=Command("taotoken <command> --help")),)),
    # --- key / authentication ---------------------------------------------------------------------
    Entry("auth.key_not_received", N_("The gateway says no key arrived, but one was sent"), Exit.AUTH,
          (N_("a proxy or corporate gateway strips the Authorization header"),
           N_("the request went to a different service than the gateway (wrong base URL)")),
          (Step(N_("check the base URL: {command}"), command=Command("taotoken config show --origin")),
           Step(N_("try without the proxy {proxy}: {command}"),
                command=Command("taotoken check --no-proxy"),
                when="proxy"))),
    Entry("auth.invalid_key", N_("The gateway rejected the key"), Exit.AUTH,
          (N_("the key was copied incompletely or with extra characters"),
           N_("the key was deleted, disabled or expired in the console"),
           N_("the key's own quota is used up (new-api reports that as 'invalid token' too)"),
           N_("the key belongs to a different gateway than the base URL")),
          (Step(N_("copy the key again from the key list (令牌管理) in the TaoToken console, then: {command}"),
                command=config_set("api_key", "-")),
           Step(N_("see which key is used and where it comes from: {command}"),
                command=Command("taotoken config show --origin")))),
    Entry("auth.expired_key", N_("The key has expired"), Exit.AUTH,
          (N_("the key's expiry date has passed"),),
          (Step(N_("extend the key's expiry in the key list (令牌管理) in the TaoToken console, or create a new key "
                   "and: {command}"),
                command=config_set("api_key", "-")),)),
    Entry("auth.key_disabled", N_("The key is disabled"), Exit.AUTH,
          (N_("the key was switched off by you or an administrator"),),
          (Step(N_("enable the key in the key list (令牌管理) in the TaoToken console, or create a new one and: "
                   "{command}"),
                command=config_set("api_key", "-")),)),
    Entry("auth.account_banned", N_("The account is banned"), Exit.AUTH,
          (N_("the gateway operator blocked the account"),),
          (Step(N_("only the gateway's support can lift this; contact them with request id {request_id}"),
                when="request_id",
                otherwise=Step(N_("only the gateway's support can lift this; contact them"))),)),
    Entry("auth.ip_not_allowed", N_("The key may not be used from this IP address"), Exit.AUTH,
          (N_("the key has an IP allow-list and this machine's egress IP is not on it"),
           N_("a VPN or proxy changed the IP the gateway sees")),
          (Step(N_("add the IP the gateway reported to the key's allow-list in the key list (令牌管理) in the TaoToken "
                   "console")),
           Step(N_("or run without the proxy {proxy}: {command}"),
                command=Command("taotoken check --no-proxy"),
                when="proxy",
                otherwise=Step(N_("if a VPN is on, compare with it off (it changes the IP the gateway sees)"))))),
    Entry("auth.key_suffix", N_("The key carries an extra '-suffix' the gateway reads as a channel id"), Exit.AUTH,
          (N_("something was appended to the key after a '-' (one-api/new-api treat it as a channel id, "
              "which only administrators may select)"),),
          (Step(N_("copy the key again without anything appended, then: {command}"),
                command=config_set("api_key", "-")),)),
    Entry("auth.forbidden_model", N_("The key is not allowed to use this model"), Exit.AUTH,
          (N_("the key has a model allow-list that does not include {model}"),
           N_("{model} is misspelled: some gateways (LiteLLM) answer a typo the same way")),
          (Step(N_("list the models this key may use: {command}"), command=Command("taotoken models")),
           Step(N_("or have {model} added to the key's model limits in the key list (令牌管理) in the TaoToken "
                   "console")))),
    Entry("auth.forbidden_group", N_("The key is bound to a group it may not use"), Exit.AUTH,
          (N_("the key's group was removed or the account lost access to it"),),
          (Step(N_("pick an available group for the key in the key list (令牌管理) in the TaoToken console, or "
                   "create a new key")),)),
    Entry("auth.forbidden", N_("The gateway refused the request (403)"), Exit.AUTH,
          (N_("the key lacks a permission this request needs"),
           N_("a firewall or WAF in front of the gateway blocked the request")),
          (Step(N_("compare with a key that works, and read the server message above")),
           Step(N_("try without the proxy {proxy}: {command}"),
                command=Command("taotoken check --no-proxy"),
                when="proxy"))),
    Entry("auth.upstream_credential", N_("The gateway's own upstream credential failed"), Exit.SERVER,
          (N_("your key was accepted, but the gateway's key for the upstream provider is wrong or revoked "
              "(the error text is the upstream provider's, passed through)"),),
          (Step(N_("nothing to change on your side: report it to the gateway operator with request id {request_id}"),
                when="request_id",
                otherwise=Step(N_("nothing to change on your side: report it to the gateway operator"))),
           Step(N_("meanwhile try another model ({command} lists them): {command2}"),
                command=Command("taotoken models"),
                command2=Command("taotoken check --chat --model <id>"))),
          retry=True),
    # --- balance / quota (never retry) ------------------------------------------------------------
    Entry("quota.exhausted", N_("Out of balance or quota (not a rate limit)"), Exit.RATE_QUOTA,
          (N_("the account balance is used up"), N_("a budget or spend cap was reached"),
           N_("the gateway pre-charges an estimate from prompt size + max_tokens and the balance is below it")),
          (Step(N_("top up the account in the TaoToken console, then run: {command}"),
                command=Command("taotoken check --chat")),
           Step(N_("lower max_tokens for large requests; retrying will not help")))),
    Entry("quota.key_exhausted", N_("This key's own quota is used up"), Exit.RATE_QUOTA,
          (N_("the key has its own spending limit, which is reached (the account balance may be fine)"),),
          (Step(N_("raise the key's quota or make it unlimited in the key list (令牌管理) in the TaoToken console")),
           Step(N_("retrying will not help")))),
    # --- rate and concurrency limits --------------------------------------------------------------
    Entry("rate.limited", N_("Rate limit reached (slow down)"), Exit.RATE_QUOTA,
          (N_("too many requests or tokens per minute for this key, account or IP"),
           N_("retries of failing requests count too on some gateways")),
          (Step(N_("wait {retry_after} s (the gateway's Retry-After), then try again"),
                when="retry_after",
                otherwise=Step(N_("wait about a minute, then try again (the gateway gave no wait time; limits are "
                                  "usually per minute)"))),
           Step(N_("lower the request rate / concurrency, e.g. {command}"),
                command=Command("taotoken bench -c 1"))), retry=True),
    Entry("rate.concurrency", N_("Too many requests in flight at once"), Exit.RATE_QUOTA,
          (N_("the gateway caps how many requests one user may have running simultaneously"),),
          (Step(N_("lower concurrency below the limit shown, e.g. {command}"), command=Command("taotoken bench -c 2")),
           Step(N_("let running requests finish before starting new ones"))), retry=True),
    Entry("upstream.saturated", N_("The upstream provider is overloaded (not your limit)"), Exit.SERVER,
          (N_("the gateway's upstream channels for this model are throttling or overloaded"),
           N_("every deployment of this model is at its rate limit or cooling down after errors "
              "(LiteLLM: 'No deployments available')")),
          (Step(N_("wait {retry_after} s (the gateway's Retry-After) and retry; your own limits are not the cause"),
                when="retry_after",
                otherwise=Step(N_("wait a minute or so and retry (the gateway gave no wait time); your own limits "
                                  "are not the cause"))),
           Step(N_("or try another model ({command} lists them): {command2}"),
                command=Command("taotoken models"),
                command2=Command("taotoken check --chat --model <id>"))),
          retry=True),
    # --- URL layout -------------------------------------------------------------------------------
    Entry("url.not_found", N_("The URL does not exist on this server (404)"), Exit.NOT_FOUND,
          (N_("the base URL is not the gateway's API root"), N_("the path prefix (/api, /v1) is wrong or missing")),
          (Step(N_("use the API root as base URL, e.g. {command}"),
                command=config_set("base_url", "https://taotoken.net/api")),
           Step(N_("OpenAI-style clients get {openai_base}; Anthropic-style clients get {base}")))),
    Entry("url.doubled_v1", N_("The URL has /v1 twice"), Exit.NOT_FOUND,
          (N_("the base URL already ends in /v1 and the client appends /v1/... again"),),
          (Step(N_("store the root without /v1: {command}"), command=config_set("base_url", "{base}")),
           Step(N_("in OpenAI-style clients use exactly {openai_base}")))),
    Entry("url.endpoint_in_base", N_("An endpoint path was pasted into the base URL"), Exit.NOT_FOUND,
          (N_("the base URL ends with /chat/completions, /messages or /models and the client appends it again"),),
          (Step(N_("store only the root: {command}"), command=config_set("base_url", "{base}")),)),
    Entry("url.query_string", N_("The base URL carries a query string"), Exit.NOT_FOUND,
          (N_("a link with ?utm_source=… was pasted; clients append paths after the query, so the path is wrong"),),
          (Step(N_("store the URL without '?…': {command}"), command=config_set("base_url", "{base}")),)),
    Entry("url.html_page", N_("A web page came back instead of the API"), Exit.NOT_FOUND,
          (N_("the base URL points at the website/dashboard, not the API root"),
           N_("the /v1 part is missing in an OpenAI-style client's base URL"),
           N_("a captive portal or proxy answered instead of the gateway")),
          (Step(N_("{command}   (the API root)"), command=config_set("base_url", "https://taotoken.net/api")),
           Step(N_("OpenAI-style clients need {openai_base}")))),
    Entry("url.dashboard_api", N_("The dashboard API answered, not the model API"), Exit.NOT_FOUND,
          (N_("the base URL points at the gateway's management API (/api/…) instead of the relay"),),
          (Step(N_("use the API root as base URL: {command}"),
                command=config_set("base_url", "https://taotoken.net/api")),)),
    Entry("url.plain_http", N_("The key would be sent unencrypted (plain http to another host)"), Exit.CONFIG,
          (N_("the base URL starts with http:// and names a host that is not this machine"),
           N_("an old LAN or relay address was left in the configuration")),
          (Step(N_("use the https:// address: {command}"), command=config_set("base_url", "https://{host}/api")),
           Step(N_("only for a gateway on a network you trust: {command}"),
                command=Command("export TAOTOKEN_ALLOW_HTTP=1")))),
    Entry("url.redirect", N_("The server answered with a redirect"), Exit.NOT_FOUND,
          (N_("http:// was used where the server wants https://"), N_("the host or path moved"),
           N_("a login or captive-portal page redirects")),
          (Step(N_("use the redirect target as the base URL: {command}"),
                command=config_set("base_url", "{redirect_base}"), when="redirect_base",
                otherwise=Step(N_("ask the gateway operator for the API root; the server did not say where it "
                                  "redirects"))),)),
    Entry("url.tls_to_plain_http", N_("https:// was used for a port that speaks plain http"), Exit.NOT_FOUND,
          (N_("the server at {host} answered the TLS handshake with plain http (a local gateway or a "
              "development server on an http port)"),
           N_("the port in the base URL belongs to another service than the https one")),
          (Step(N_("for a gateway on this machine or a network you trust, use http://: {command}"),
                command=config_set("base_url", "{http_base}")),
           Step(N_("otherwise check the port of the https address: {command}"),
                command=Command("taotoken config show --origin")))),
    Entry("url.not_implemented", N_("The gateway does not implement this API"), Exit.NOT_FOUND,
          (N_("this endpoint (e.g. /v1/responses or /v1/messages) is not offered by this gateway"),
           N_("the gateway runs an older release that predates this endpoint (new-api answers 'Invalid URL' for "
              "routes it does not have)")),
          (Step(N_("the base URL is right: this gateway does not serve this endpoint; point the client that needs "
                   "it at a gateway that does, or ask the operator to enable it")),
           Step(N_("clients on the OpenAI chat API work here: {openai_base}/chat/completions")))),
    Entry("url.no_gemini_api", N_("The gateway does not serve the Gemini API (Gemini CLI needs it)"), Exit.NOT_FOUND,
          (N_("Gemini CLI speaks only the Gemini API ({base}/v1beta/models/{model}:generateContent), and this gateway "
              "answers that route as unknown"),
           N_("the gateway serves the OpenAI and Anthropic APIs only (many one-api/new-api deployments)")),
          (Step(N_("use a client that speaks the OpenAI or Anthropic API with this gateway (Claude Code, Codex, "
                   "Cline: {command})"), command=Command("taotoken init")),
           Step(N_("or ask the gateway's operator to enable the Gemini API, then: {command}"),
                command=Command("taotoken init --target gemini-cli")))),
    # --- model ------------------------------------------------------------------------------------
    Entry("model.not_found", N_("The model is not known to the gateway"), Exit.NOT_FOUND,
          (N_("the model ID is misspelled (IDs are case-sensitive)"), N_("this key or group does not offer the model")),
          (Step(N_("set a listed ID: {command}   ({command2} shows close matches)"),
                command=config_set("model", "<id>"), command2=Command("taotoken models {model}")),
           Step(N_("list every ID this key may use: {command}"), command=Command("taotoken models")))),
    Entry("model.no_channel", N_("No upstream channel serves this model right now"), Exit.NOT_FOUND,
          (N_("the model is not offered in your group"), N_("all channels for it are disabled or unhealthy")),
          (Step(N_("pick a listed model: {command}   (shows close matches), then: {command2}"),
                command=Command("taotoken models {model}"),
                command2=config_set("model", "<id>")),
           Step(N_("ask the gateway operator whether {model} is available in your group")))),
    Entry("model.missing", N_("The request named no model"), Exit.CONFIG,
          (N_("no model is configured"), N_("the client sends an empty model field")),
          (Step(N_("{command}   (see the list: taotoken models)"), command=config_set("model", "<id>")),)),
    # --- proxy ------------------------------------------------------------------------------------
    Entry("proxy.unreachable", N_("The configured proxy cannot be reached"), Exit.NETWORK,
          (N_("a proxy variable (HTTPS_PROXY/ALL_PROXY/…) points at a proxy that is not running"),
           N_("the proxy refused the CONNECT to the gateway")),
          (Step(N_("start the proxy at {proxy}, or unset it: {command}"),
                command=Command("unset HTTP_PROXY http_proxy HTTPS_PROXY https_proxy ALL_PROXY all_proxy")),
           Step(N_("or exempt the gateway: {command}"),
                command=Command("export NO_PROXY={host}")), Step(N_("or test directly: {command}"),
                command=Command("taotoken check --no-proxy")))),
    Entry("proxy.socks_unsupported", N_("A SOCKS proxy is configured but SOCKS support is missing"), Exit.NETWORK,
          (N_("ALL_PROXY/HTTPS_PROXY is socks5://… (Clash, mihomo) and the socksio package is not installed"),),
          (Step(N_("{command}   (in the environment taotoken runs in)"),
                command=Command('pip install "httpx[socks]"', installs="httpx[socks]")),
           Step(N_("or exempt the gateway: {command}"),
                command=Command("export NO_PROXY={host}")), Step(N_("or test directly: {command}"),
                command=Command("taotoken check --no-proxy")))),
    Entry("proxy.refused", N_("The proxy answered the request itself; the gateway never saw it"), Exit.NETWORK,
          (N_("the proxy's rules block the gateway's host (its own 403 page: a corporate deny list, a Clash/mihomo "
              "REJECT rule)"),
           N_("the proxy cannot reach the gateway and answers 502/503/504 itself"),
           N_("the proxy refused the tunnel (CONNECT) to an https gateway")),
          (Step(N_("let the proxy {proxy} pass {host} (a rule for it in Clash/squid, or ask its administrator), or "
                   "bypass it: {command}"),
                command=Command("export NO_PROXY={host}")),
           Step(N_("compare directly: {command}"), command=Command("taotoken check --no-proxy")))),
    Entry("proxy.auth_required", N_("The proxy requires authentication (407)"), Exit.NETWORK,
          (N_("the proxy URL lacks user:password"),
           N_("with no proxy configured: a transparent or corporate proxy on the way to {host} demands "
              "credentials")),
          (Step(N_("put the credentials in the proxy URL (http://user:pass@host:port), or: {command}"),
                command=Command("taotoken check --no-proxy"), when="proxy",
                otherwise=Step(N_("no proxy is configured here, so something on the network path demands proxy "
                                  "credentials: ask the network's administrator which proxy to use, then: "
                                  "{command}"), command=Command("export HTTPS_PROXY=http://user:pass@proxy:port"))),)),
    # --- network ----------------------------------------------------------------------------------
    Entry("net.dns", N_("The gateway's host name does not resolve"), Exit.NETWORK,
          (N_("the host name in the base URL is misspelled"), N_("no network or DNS server is reachable")),
          (Step(N_("check the host: {command}"),
                command=Command("taotoken config show --origin")), Step(N_("test resolution: {command}"),
                command=Command("getent hosts {host}"))),
          retry=True),
    Entry("net.refused", N_("Connection refused"), Exit.NETWORK,
          (N_("nothing listens at that host and port"), N_("the port in the base URL is wrong")),
          (Step(N_("check the base URL and port: {command}"),
                command=Command("taotoken config show --origin")), Step(N_("if the gateway is local, start it"))),
          retry=True),
    Entry("net.reset", N_("The connection was closed or reset mid-response"), Exit.NETWORK,
          (N_("a proxy, firewall or load balancer cut the connection"), N_("the gateway crashed or restarted")),
          (Step(N_("retry in a moment")),
           Step(N_("if it persists, try without the proxy {proxy}: {command}"),
                command=Command("taotoken check --no-proxy"),
                when="proxy")),
          retry=True),
    Entry("net.timeout", N_("The gateway did not answer in time"), Exit.NETWORK,
          (N_("the gateway or its upstream is slow"), N_("a firewall silently drops the traffic")),
          (Step(N_("retry with a longer limit: {command}"), command=Command("taotoken check --timeout 15")),
           Step(N_("for long generations use streaming or lower max_tokens"))), retry=True),
    Entry("net.connect_timeout", N_("Could not connect in time"), Exit.NETWORK,
          (N_("a firewall drops the connection attempts"), N_("the host is down or the network is offline")),
          (Step(N_("check connectivity: {command}"),
                command=Command("curl -sS -o /dev/null -w '%{{http_code}}\\n' {base}/v1/models")),
           Step(N_("retry with a longer limit: {command}"),
                command=Command("taotoken check --timeout 15"))), retry=True),
    Entry("net.tls", N_("TLS (https) handshake failed"), Exit.NETWORK,
          (N_("the certificate is not trusted (self-signed, corporate interception proxy)"),
           N_("the system clock is wrong"), N_("https:// was used for a plain-http port")),
          (Step(N_("if a corporate proxy intercepts TLS: {command}"),
                command=Command("export SSL_CERT_FILE=/path/to/corporate-ca.pem")),
           Step(N_("check the URL scheme and port: {command}"),
                command=Command("taotoken config show --origin"))), retry=False),
    Entry("net.error", N_("The request failed on the network"), Exit.NETWORK,
          (N_("an unexpected network error (see the message)"),),
          (Step(N_("retry; if it persists, run: {command}"), command=Command("taotoken doctor")),), retry=True),
    # --- responses --------------------------------------------------------------------------------
    Entry("resp.not_json", N_("The answer is not JSON"), Exit.BAD_RESPONSE,
          (N_("the base URL points at something that is not the gateway's API"), N_("a proxy rewrote the answer")),
          (Step(N_("check the base URL: {command}"), command=Command("taotoken config show --origin")),)),
    Entry("resp.no_choices", N_("The answer has no choices (KeyError: 'choices')"), Exit.BAD_RESPONSE,
          (N_("the gateway returned HTTP 200 with an error or an empty result"),
           N_("the upstream returned nothing for this model")),
          (Step(N_("read the server message above; try another model ({command} lists them): {command2}"),
                command=Command("taotoken models"),
                command2=Command("taotoken check --chat --model <id>")),)),
    Entry("resp.no_models", N_("The models endpoint did not return a model list"), Exit.BAD_RESPONSE,
          (N_("the base URL points at a different API"), N_("the gateway answered an unexpected format")),
          (Step(N_("check the base URL: {command}"), command=Command("taotoken config show --origin")),)),
    Entry("resp.error_body", N_("HTTP 2xx, but the body is an error"), Exit.BAD_RESPONSE,
          (N_("the gateway passed an upstream error through with status 200"),),
          (Step(N_("read the server message above; retry, or try another model")),), retry=True),
    Entry("request.invalid", N_("The gateway rejected the request as invalid (400)"), Exit.FAILURE,
          (N_("a parameter is not accepted by this model or gateway"),),
          (Step(N_("read the server message above")),
           Step(N_("if taotoken sent it, report it with request id {request_id}"), when="request_id"))),
    Entry("request.too_large", N_("The request is too large (413)"), Exit.FAILURE,
          (N_("the prompt or attachment exceeds the gateway's size limit"),),
          (Step(N_("send less context per request")),)),
    # --- streams ----------------------------------------------------------------------------------
    Entry("stream.error_event", N_("The stream carried an error event"), Exit.BAD_RESPONSE,
          (N_("the upstream failed after the stream started (overload, content filter, timeout)"),),
          (Step(N_("read the server message above and retry")), Step(N_("if it repeats, try another model"))),
          retry=True),
    Entry("stream.empty", N_("The stream ended without any content"), Exit.BAD_RESPONSE,
          (N_("the upstream failed mid-stream and the gateway dropped the error chunk"),
           N_("the model returned nothing for this prompt")),
          (Step(N_("retry; if it repeats, try another model ({command} lists them): {command2}"),
                command=Command("taotoken models"),
                command2=Command("taotoken check --chat --model <id>")),), retry=True),
    Entry("stream.truncated", N_("The stream stopped before it finished"), Exit.BAD_RESPONSE,
          (N_("the connection closed before [DONE] / message_stop"), N_("a proxy timeout cut a long stream")),
          (Step(N_("retry; for long generations check proxy/load-balancer idle timeouts")),), retry=True),
    Entry("stream.not_sse", N_("A stream was requested but a plain answer came back"), Exit.BAD_RESPONSE,
          (N_("the endpoint or a proxy does not support streaming"),),
          (Step(N_("use a base URL that supports streaming: {openai_base}")),)),
    # --- server -----------------------------------------------------------------------------------
    Entry("server.error", N_("The gateway or its upstream failed (5xx)"), Exit.SERVER,
          (N_("the gateway could not reach its upstream"), N_("an internal error at the gateway")),
          (Step(N_("retry in a moment")),
           Step(N_("if it persists, report it to the gateway operator with request id {request_id}"),
                when="request_id",
                otherwise=Step(N_("if it persists, report it to the gateway operator with the time and the model "
                                  "(the gateway sent no request id)"))),
           Step(N_("meanwhile try another model ({command} lists them): {command2}"),
                command=Command("taotoken models"),
                command2=Command("taotoken check --chat --model <id>"))),
          retry=True),
    Entry("server.timeout", N_("The gateway timed out waiting for the upstream"), Exit.SERVER,
          (N_("a non-streamed generation took longer than the gateway's limit (Cloudflare: ~100 s)"),),
          (Step(N_("use stream=true for long generations, or lower max_tokens")),), retry=True),
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
    404: ("url.not_found", "url.doubled_v1", "url.endpoint_in_base", "url.query_string", "model.not_found",
          "url.not_implemented"),
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
