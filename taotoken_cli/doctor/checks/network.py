"""Network: DNS, each configured proxy, TCP and TLS to the gateway, and the path with and without proxy."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from taotoken_cli import hygiene
from taotoken_cli.diagnosis import proxy_answer
from taotoken_cli.doctor import probes
from taotoken_cli.doctor.context import DoctorContext
from taotoken_cli.doctor.model import Result
from taotoken_cli.doctor.registry import check
from taotoken_cli.proxies import proxy_for, proxy_variables

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
            return f"the proxy {proxy} refuses connections (see net.proxy)", "net.proxy"
        return None
    return direct_blocker(ctx)


def direct_blocker(ctx: DoctorContext) -> tuple[str, str] | None:
    """(why, check id) when the gateway cannot be reached directly and an earlier network check says so."""
    if not ctx.base_url or _gateway_proxy(ctx):
        return None
    host, port = probes.host_port(ctx.base_url)
    if _needs_dns(host) and not probes.resolve(ctx, host).ok:
        return f"{host} does not resolve (see net.dns)", "net.dns"
    if not probes.tcp(ctx, host, port).ok:
        return f"no TCP connection to {host}:{port} (see net.connect)", "net.connect"
    return None


@check("net.dns", SECTION, "DNS for the gateway host", network=True)
def dns(ctx: DoctorContext) -> Result:
    if not ctx.base_url:
        return Result.skipped("no usable base URL (see config.base_url)")
    host = urlsplit(ctx.base_url).hostname or ""
    if not _needs_dns(host):
        return Result.ok(f"{host} needs no DNS lookup")
    probe = probes.resolve(ctx, host)
    if probe.ok:
        return Result.ok(f"{host} → {probe.detail} ({_ms(probe.elapsed_s)})")
    proxy = _gateway_proxy(ctx)
    if proxy:
        return Result.warn(f"{host} does not resolve here ({probe.detail}); requests go through {proxy}, "
                           "which resolves it", details=["see net.via_proxy for whether that works"])
    return Result.fail(f"{host} does not resolve: {probe.detail}",
                       fixes=[f"check the host name in the base URL ({ctx.base_url})",
                              f"check DNS: getent hosts {host}   (or try another resolver)"])


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


@check("net.proxy", SECTION, "Configured proxies reachable", network=True)
def proxy_reachable(ctx: DoctorContext) -> Result:
    proxies = proxy_variables(ctx.env)
    if not proxies:
        return Result.skipped("no proxy configured")
    host = urlsplit(ctx.base_url).hostname if ctx.base_url else None
    endpoints = probe_proxies(ctx, proxies, _gateway_proxy(ctx))
    details = [f"{e.label}: accepts connections ({_ms(e.probe.elapsed_s)})" for e in endpoints if e.probe.ok]
    dead = sorted((e for e in endpoints if not e.probe.ok), key=lambda e: not e.used)  # the one in use first
    if not dead:
        return Result.ok(f"{len(endpoints)} prox{'y' if len(endpoints) == 1 else 'ies'} reachable", details=details)
    fixes = [f"start the proxy on {e.host}:{e.port} (Clash, mihomo, v2ray…), or remove it: unset "
             f"{' '.join(sorted(set(e.names) | {n.lower() for n in e.names} | {n.upper() for n in e.names}))}"
             for e in dead]
    if host:
        fixes.append(f"or bypass it for the gateway: export NO_PROXY={host}")
    first = dead[0]
    dead_matters = any(e.used for e in dead)
    message = (f"proxy {first.label}: {first.probe.detail} — the classic \"local proxy failed\"" if dead_matters
               else f"proxy {first.label}: {first.probe.detail} (not used for {host}, but other tools may use it)")
    make = Result.fail if dead_matters else Result.warn
    return make(message, details=details + [f"{e.label}: {e.probe.detail}" for e in dead[1:]], fixes=fixes)


@check("net.connect", SECTION, "TCP connection to the gateway", network=True)
def connect(ctx: DoctorContext) -> Result:
    if not ctx.base_url:
        return Result.skipped("no usable base URL (see config.base_url)")
    host, port = probes.host_port(ctx.base_url)
    proxy = _gateway_proxy(ctx)
    if not proxy and _needs_dns(host) and not probes.resolve(ctx, host).ok:
        return Result.skipped(f"{host} does not resolve (see net.dns)", blocked_by="net.dns")
    probe = probes.tcp(ctx, host, port)
    if probe.ok:
        return Result.ok(f"{host}:{port} accepts connections ({_ms(probe.elapsed_s)})"
                         + (" (direct; requests use the proxy)" if proxy else ""))
    if proxy:
        return Result.warn(f"direct connection to {host}:{port} fails ({probe.detail}); requests use {proxy}",
                           details=["see net.via_proxy"])
    fixes = [f"check that the gateway runs at {host}:{port}"] if hygiene.is_loopback_host(host) else [
        f"check the base URL ({ctx.base_url}) and any firewall; if you need a proxy: export HTTPS_PROXY=http://…"]
    return Result.fail(f"cannot connect to {host}:{port}: {probe.detail}", fixes=fixes)


@check("net.tls", SECTION, "TLS handshake", network=True)
def tls(ctx: DoctorContext) -> Result:
    if not ctx.base_url:
        return Result.skipped("no usable base URL (see config.base_url)")
    if not ctx.base_url.startswith("https://"):
        return Result.skipped("plain http: no TLS")
    host, port = probes.host_port(ctx.base_url)
    proxy = _gateway_proxy(ctx)
    blocker = direct_blocker(ctx)
    if blocker:
        return Result.skipped(blocker[0], blocked_by=blocker[1])
    probe = probes.tls(ctx, host, port)
    if probe.ok:
        return Result.ok(f"{host}: {probe.detail} ({_ms(probe.elapsed_s)})")
    if proxy and not probes.tcp(ctx, host, port).ok:
        return Result.skipped(f"no direct route; TLS goes through {proxy} (see net.via_proxy)")
    fixes = ["check the system clock (certificates look invalid when it is wrong)",
             "behind a TLS-inspecting corporate proxy: export SSL_CERT_FILE=/path/to/corporate-ca.pem"]
    return Result.fail(f"TLS handshake with {host}:{port} failed: {probe.detail}", fixes=fixes)


@check("net.via_proxy", SECTION, "Gateway with and without the proxy", network=True)
def via_proxy(ctx: DoctorContext) -> Result:
    if not ctx.base_url:
        return Result.skipped("no usable base URL (see config.base_url)")
    proxy = _gateway_proxy(ctx)
    host = urlsplit(ctx.base_url).hostname
    if not proxy:
        return Result.skipped(f"no proxy applies to {host}")
    through = probes.models(ctx, trust_env=True)
    direct = probes.models(ctx, trust_env=False)
    # An HTTP status through the proxy is the gateway's answer only when the proxy did not write it itself.
    problem = probes.diagnose(ctx, through, "models")
    proxy_said = problem if problem is not None and (problem.code or "").startswith("proxy.") else None

    def answered(obs) -> bool:
        return obs.error is None and obs.status is not None

    def text(obs) -> str:
        return (f"HTTP {obs.status} in {_ms(obs.elapsed_s)}" if answered(obs) else probes.describe_error(obs))

    details = [f"through {proxy}: {text(through)}", f"direct: {text(direct)}"]
    if answered(through) and proxy_said is None:
        return Result.ok(f"the gateway answers through {proxy}" + (" and directly" if answered(direct) else ""),
                         details=details)
    bypass = f"export NO_PROXY={host}   (bypass the proxy for the gateway)"
    if proxy_said is not None and proxy_said.code in (proxy_answer.CODE, "proxy.auth_required"):
        fixes = ([bypass] if answered(direct) else []) + [f for f in proxy_said.fixes if "NO_PROXY" not in f
                                                           or not answered(direct)]
        what = f"HTTP {through.status}" if through.status else "the tunnel request"
        said = [f"the proxy said: {proxy_said.server_message}"] if proxy_said.server_message else []
        return Result.fail(f"the proxy {proxy} answered {what} itself: {host} never saw the request"
                           + ("; direct access works" if answered(direct) else ""),
                           code=proxy_said.code, details=details + proxy_said.details + said, fixes=fixes)
    if answered(direct):
        return Result.fail(f"the proxy {proxy} breaks access to {host}; direct access works",
                           details=details, fixes=[bypass, "or fix/start the proxy (see net.proxy)"])
    return Result.fail(f"{host} is unreachable both through {proxy} and directly", details=details,
                       fixes=["see net.proxy and net.connect"])
