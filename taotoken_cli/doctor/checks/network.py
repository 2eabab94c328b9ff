"""Network: DNS, each configured proxy, TCP and TLS to the gateway, and the path with and without proxy."""

from __future__ import annotations

from urllib.parse import urlsplit

from taotoken_cli import hygiene
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


@check("net.proxy", SECTION, "Configured proxies reachable", network=True)
def proxy_reachable(ctx: DoctorContext) -> Result:
    proxies = proxy_variables(ctx.env)
    if not proxies:
        return Result.skipped("no proxy configured")
    used = _gateway_proxy(ctx)
    host = urlsplit(ctx.base_url).hostname if ctx.base_url else None
    seen: dict[tuple[str, int], list[str]] = {}
    for name, value in proxies:
        seen.setdefault(probes.host_port(value), []).append(name)
    dead: list[str] = []
    details: list[str] = []
    fixes: list[str] = []
    dead_matters = False
    for (phost, pport), names in seen.items():
        probe = probes.tcp(ctx, phost, pport)
        label = f"{phost}:{pport} ({', '.join(names)})"
        if probe.ok:
            details.append(f"{label}: accepts connections ({_ms(probe.elapsed_s)})")
            continue
        dead.append(f"{label}: {probe.detail}")
        if used and probes.host_port(used) == (phost, pport):
            dead_matters = True
        fixes.append(f"start the proxy on {phost}:{pport} (Clash, mihomo, v2ray…), or remove it: "
                     f"unset {' '.join(sorted(set(names) | {n.lower() for n in names} | {n.upper() for n in names}))}")
    if not dead:
        return Result.ok(f"{len(seen)} prox{'y' if len(seen) == 1 else 'ies'} reachable", details=details)
    if host:
        fixes.append(f"or bypass it for the gateway: export NO_PROXY={host}")
    message = (f"proxy {dead[0]} — the classic \"local proxy failed\"" if dead_matters
               else f"proxy {dead[0]} (not used for {host}, but other tools may use it)")
    make = Result.fail if dead_matters else Result.warn
    return make(message, details=details + dead[1:], fixes=fixes)


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

    def answered(obs) -> bool:
        return obs.error is None and obs.status is not None

    def text(obs) -> str:
        return (f"HTTP {obs.status} in {_ms(obs.elapsed_s)}" if answered(obs) else probes.describe_error(obs))

    details = [f"through {proxy}: {text(through)}", f"direct: {text(direct)}"]
    if answered(through):
        return Result.ok(f"the gateway answers through {proxy}" + (" and directly" if answered(direct) else ""),
                         details=details)
    if answered(direct):
        return Result.fail(f"the proxy {proxy} breaks access to {host}; direct access works",
                           details=details,
                           fixes=[f"export NO_PROXY={host}   (bypass the proxy for the gateway)",
                                  "or fix/start the proxy (see net.proxy)"])
    return Result.fail(f"{host} is unreachable both through {proxy} and directly", details=details,
                       fixes=["see net.proxy and net.connect"])
