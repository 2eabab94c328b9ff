"""Network: DNS, each configured proxy, TCP and TLS to the gateway, and the path with and without proxy."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from taotoken_cli.cmd.doctor import probes
from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _, listed, ngettext
from taotoken_cli.core.diagnosis import proxy_answer
from taotoken_cli.core.net import hygiene
from taotoken_cli.core.net.proxies import proxy_for, proxy_variables
from taotoken_cli.core.platform import system

SECTION = "Network"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def _gateway_proxy(ctx: DoctorContext) -> str | None:
    return proxy_for(ctx.base_url, ctx.env) if ctx.base_url else None


def _needs_dns(host: str) -> bool:
    return not (hygiene.is_loopback_host(host) or host.replace(".", "").isdigit() or ":" in host)


def reach_blocker(ctx: DoctorContext) -> tuple[str, str] | None:
    """(why, check id) when requests cannot reach the gateway and a network check explains it."""
    proxy = _gateway_proxy(ctx)
    if proxy:
        phost, pport = probes.host_port(proxy)
        if not probes.tcp(ctx, phost, pport).ok:
            return _("the proxy {proxy} refuses connections (see net.proxy)").format(proxy=proxy), "net.proxy"
        return None
    return direct_blocker(ctx)


def direct_blocker(ctx: DoctorContext) -> tuple[str, str] | None:
    """(why, check id) when the gateway cannot be reached directly and an earlier network check says so."""
    if not ctx.base_url or _gateway_proxy(ctx):
        return None
    host, port = probes.host_port(ctx.base_url)
    if _needs_dns(host) and not probes.resolve(ctx, host).ok:
        return _("{host} does not resolve (see net.dns)").format(host=host), "net.dns"
    if not probes.tcp(ctx, host, port).ok:
        return _("no TCP connection to {host}:{port} (see net.connect)").format(host=host, port=port), "net.connect"
    return None


def _no_base_url() -> Result:
    return Result.skipped(_("no usable base URL (see config.base_url)"))


@check("net.dns", SECTION, N_("DNS for the gateway host"), network=True)
def dns(ctx: DoctorContext) -> Result:
    if not ctx.base_url:
        return _no_base_url()
    host = urlsplit(ctx.base_url).hostname or ""
    if not _needs_dns(host):
        return Result.ok(_("{host} needs no DNS lookup").format(host=host))
    probe = probes.resolve(ctx, host)
    if probe.ok:
        return Result.ok(f"{host} → {probe.detail} ({_ms(probe.elapsed_s)})")
    proxy = _gateway_proxy(ctx)
    if proxy:
        return Result.warn(_("{host} does not resolve here ({error}); requests go through {proxy}, which resolves it")
                           .format(host=host, error=probe.detail, proxy=proxy),
                           details=[_("see net.via_proxy for whether that works")])
    return Result.fail(_("{host} does not resolve: {error}").format(host=host, error=probe.detail),
                       fixes=[_("check the host name in the base URL ({url})").format(url=ctx.base_url),
                              Fix.of(_("check DNS: {command}   (or try another resolver)"),
                                     command=Command(system.current().dns_check.format(host=host)))])


@dataclass
class ProxyEndpoint:
    """One proxy host:port named by proxy variables, probed once."""

    host: str
    port: int
    names: list[str]  # the variables that name it
    probe: probes.SocketProbe
    used: bool  # requests to the gateway go through it

    @property
    def label(self) -> str:
        return f"{self.host}:{self.port} ({', '.join(self.names)})"


def probe_proxies(ctx: DoctorContext, variables: list[tuple[str, str]], used: str | None) -> list[ProxyEndpoint]:
    """Each proxy that `variables` [(name, value)] name, TCP-probed; `used` is the one the gateway's requests take.
    The shell's proxies (net.proxy) and those a client's settings set (claude.proxy) are checked alike."""
    seen: dict[tuple[str, int], list[str]] = {}
    for name, value in variables:
        seen.setdefault(probes.host_port(value), []).append(name)
    used_at = probes.host_port(used) if used else None
    return [ProxyEndpoint(host, port, names, probes.tcp(ctx, host, port), (host, port) == used_at)
            for (host, port), names in seen.items()]


@check("net.proxy", SECTION, N_("Configured proxies reachable"), network=True)
def proxy_reachable(ctx: DoctorContext) -> Result:
    proxies = proxy_variables(ctx.env)
    if not proxies:
        return Result.skipped(_("no proxy configured"))
    host = urlsplit(ctx.base_url).hostname if ctx.base_url else None
    endpoints = probe_proxies(ctx, proxies, _gateway_proxy(ctx))
    details = [_("{proxy}: accepts connections ({elapsed})").format(proxy=e.label, elapsed=_ms(e.probe.elapsed_s))
               for e in endpoints if e.probe.ok]
    dead = sorted((e for e in endpoints if not e.probe.ok), key=lambda e: not e.used)  # the one in use first
    if not dead:
        return Result.ok(ngettext("{n} proxy reachable", "{n} proxies reachable", len(endpoints)).format(
            n=len(endpoints)), details=details)
    fixes = [Fix.of(_("start the proxy on {host}:{port} (Clash, mihomo, v2ray…), or remove it: {command}"),
                    host=e.host, port=e.port, command=Command("unset " + " ".join(
                        sorted(set(e.names) | {n.lower() for n in e.names} | {n.upper() for n in e.names}))))
             for e in dead]
    if host:
        fixes.append(Fix.of(_("or bypass it for the gateway: {command}"), command=Command(f"export NO_PROXY={host}")))
    from taotoken_cli.cmd.doctor.checks.environment import client_routes

    # A dead proxy matters when taotoken's requests use it, or a client found here does by its own rule.
    users = {e.label: [label for label, _name, proxy in (client_routes(ctx, ctx.base_url) if ctx.base_url else [])
                       if proxy and probes.host_port(proxy) == (e.host, e.port)] for e in dead}
    for e in dead:
        if users[e.label] and not e.used:
            fixes.insert(0, Fix.of(_("{clients} send the gateway's requests through {proxy}: start it, or {command}"),
                                   clients=listed(users[e.label]), proxy=e.label,
                                   command=Command(f"export NO_PROXY={host}")))
    dead = sorted(dead, key=lambda e: not (e.used or users[e.label]))
    first = dead[0]
    if users[first.label] and not first.used:
        return Result.fail(_("proxy {proxy}: {error} — {clients} use it for {host}: the classic \"local proxy "
                             "failed\"").format(proxy=first.label, error=first.probe.detail,
                                                 clients=listed(users[first.label]), host=host),
                           details=details + [f"{e.label}: {e.probe.detail}" for e in dead[1:]], fixes=fixes)
    dead_matters = any(e.used for e in dead)
    # i18n: "local proxy failed" quotes the error clients show: keep it in English
    message = (_("proxy {proxy}: {error} — the classic \"local proxy failed\"") if dead_matters
               else _("proxy {proxy}: {error} (not used for {host}, but other tools may use it)")).format(
        proxy=first.label, error=first.probe.detail, host=host)
    make = Result.fail if dead_matters else Result.warn
    return make(message, details=details + [f"{e.label}: {e.probe.detail}" for e in dead[1:]], fixes=fixes)


@check("net.connect", SECTION, N_("TCP connection to the gateway"), network=True)
def connect(ctx: DoctorContext) -> Result:
    if not ctx.base_url:
        return _no_base_url()
    host, port = probes.host_port(ctx.base_url)
    proxy = _gateway_proxy(ctx)
    if not proxy and _needs_dns(host) and not probes.resolve(ctx, host).ok:
        return Result.skipped(_("{host} does not resolve (see net.dns)").format(host=host), blocked_by="net.dns")
    probe = probes.tcp(ctx, host, port)
    if probe.ok:
        return Result.ok((_("{host}:{port} accepts connections ({elapsed}) (direct; requests use the proxy)") if proxy
                          else _("{host}:{port} accepts connections ({elapsed})")).format(
            host=host, port=port, elapsed=_ms(probe.elapsed_s)))
    if proxy:
        return Result.warn(_("direct connection to {host}:{port} fails ({error}); requests use {proxy}").format(
            host=host, port=port, error=probe.detail, proxy=proxy), details=[_("see net.via_proxy")])
    if hygiene.is_loopback_host(host):
        fixes = [_("check that the gateway runs at {host}:{port}").format(host=host, port=port)]
    else:
        fixes = [Fix.of(_("check the base URL ({url}) and any firewall; if you need a proxy: {command}"),
                        url=ctx.base_url, command=Command("export HTTPS_PROXY=http://…"))]
    return Result.fail(_("cannot connect to {host}:{port}: {error}").format(host=host, port=port, error=probe.detail),
                       fixes=fixes)


@check("net.tls", SECTION, N_("TLS handshake"), network=True)
def tls(ctx: DoctorContext) -> Result:
    if not ctx.base_url:
        return _no_base_url()
    if not ctx.base_url.startswith("https://"):
        return Result.skipped(_("plain http: no TLS"))
    host, port = probes.host_port(ctx.base_url)
    proxy = _gateway_proxy(ctx)
    blocker = direct_blocker(ctx)
    if blocker:
        return Result.skipped(blocker[0], blocked_by=blocker[1])
    probe = probes.tls(ctx, host, port)
    if probe.ok:
        return Result.ok(f"{host}: {probe.detail} ({_ms(probe.elapsed_s)})")
    if proxy and not probes.tcp(ctx, host, port).ok:
        return Result.skipped(_("no direct route; TLS goes through {proxy} (see net.via_proxy)").format(proxy=proxy))
    fixes = [_("check the system clock (certificates look invalid when it is wrong)"),
             Fix.of(_("behind a TLS-inspecting corporate proxy: {command}"),
                    command=Command("export SSL_CERT_FILE=/path/to/corporate-ca.pem"))]
    return Result.fail(_("TLS handshake with {host}:{port} failed: {error}").format(host=host, port=port,
                                                                                  error=probe.detail), fixes=fixes)


@check("net.via_proxy", SECTION, N_("Gateway with and without the proxy"), network=True)
def via_proxy(ctx: DoctorContext) -> Result:
    if not ctx.base_url:
        return _no_base_url()
    proxy = _gateway_proxy(ctx)
    host = urlsplit(ctx.base_url).hostname
    if not proxy:
        return Result.skipped(_("no proxy applies to {host}").format(host=host))
    through = probes.models(ctx, trust_env=True)
    direct = probes.models(ctx, trust_env=False)
    # An HTTP status through the proxy is the gateway's answer only when the proxy did not write it itself.
    problem = probes.diagnose(ctx, through, "models")
    proxy_said = problem if problem is not None and (problem.code or "").startswith("proxy.") else None

    def answered(obs) -> bool:
        return obs.error is None and obs.status is not None

    def text(obs) -> str:
        if not answered(obs):
            return probes.describe_error(obs)
        return _("HTTP {status} in {elapsed}").format(status=obs.status, elapsed=_ms(obs.elapsed_s))

    details = [_("through {proxy}: {outcome}").format(proxy=proxy, outcome=text(through)),
               _("direct: {outcome}").format(outcome=text(direct))]
    if answered(through) and proxy_said is None:
        return Result.ok((_("the gateway answers through {proxy} and directly") if answered(direct)
                          else _("the gateway answers through {proxy}")).format(proxy=proxy), details=details)
    bypass = Fix.of(_("{command}   (bypass the proxy for the gateway)"), command=Command(f"export NO_PROXY={host}"))
    if proxy_said is not None and proxy_said.code in (proxy_answer.CODE, "proxy.auth_required"):
        fixes = ([bypass] if answered(direct) else []) + [f for f in proxy_said.fixes if "NO_PROXY" not in f
                                                           or not answered(direct)]
        if through.status:
            message = (_("the proxy {proxy} answered HTTP {status} itself: {host} never saw the request; direct "
                         "access works") if answered(direct)
                       else _("the proxy {proxy} answered HTTP {status} itself: {host} never saw the request"))
        else:
            message = (_("the proxy {proxy} answered the tunnel request itself: {host} never saw the request; "
                         "direct access works") if answered(direct)
                       else _("the proxy {proxy} answered the tunnel request itself: {host} never saw the request"))
        said = ([_("the proxy said: {said}").format(said=proxy_said.server_message)]
                if proxy_said.server_message else [])
        return Result.fail(message.format(proxy=proxy, status=through.status, host=host),
                           code=proxy_said.code, details=details + proxy_said.details + said, fixes=fixes)
    if answered(direct):
        return Result.fail(_("the proxy {proxy} breaks access to {host}; direct access works").format(
            proxy=proxy, host=host), details=details, fixes=[bypass, _("or fix/start the proxy (see net.proxy)")])
    return Result.fail(_("{host} is unreachable both through {proxy} and directly").format(host=host, proxy=proxy),
                       details=details, fixes=[_("see net.proxy and net.connect")])
