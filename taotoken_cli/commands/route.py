"""`taotoken route [--device K | --task T] [--export [--openai]] [--json] [--verify]`, and
`taotoken route devices|set|list`."""

from __future__ import annotations

import typer

from taotoken_cli.commands import _options
from taotoken_cli.route import PROBE_TIMEOUT_S

route_app = typer.Typer(help="Pick the model for this machine's devices or a task; verify routes.",
                        invoke_without_command=True)

TIMEOUT = typer.Option(PROBE_TIMEOUT_S, "--timeout", min=0.5, help="Seconds before a device probe is killed "
                       "(with --verify: also the limit for each request).")


def register(app: typer.Typer) -> None:
    app.add_typer(route_app, name="route")


@route_app.callback()
def route(
    ctx: typer.Context,
    device: str | None = typer.Option(None, "--device", "-d", help="Use the route for this device kind "
                                      "(cuda, gpu, opencl, cpu, nvidia, intel, amd, …)."),
    task: str | None = typer.Option(None, "--task", "-t", help="Use the route for this task (e.g. code, embed)."),
    export: bool = typer.Option(False, "--export", help="Print only `export TAOTOKEN_MODEL=…` for eval."),
    openai: bool = typer.Option(False, "--openai", help="With --export: also export OPENAI_MODEL."),
    verify: bool = typer.Option(False, "--verify", help="Ask the gateway and check which model answers."),
    samples: int = typer.Option(3, "--samples", "-n", min=1, max=50, help="Requests per route with --verify."),
    all_routes: bool = typer.Option(False, "--all", help="With --verify: every route, not just the chosen one."),
    json_out: bool = _options.JSON,
    timeout: float = TIMEOUT,
    profile: str | None = _options.PROFILE,
    base_url: str | None = _options.BASE_URL,
    model: str | None = _options.MODEL,
) -> None:
    """Print the model chosen for this machine (or --device/--task) and why."""
    if ctx.invoked_subcommand is not None:
        return
    from taotoken_cli.config import Overrides
    from taotoken_cli.route.run import RouteOptions, choose

    options = RouteOptions(overrides=Overrides(profile=profile, base_url=base_url, model=model), device=device,
                           task=task, export=export, openai=openai, verify=verify, samples=samples,
                           all_routes=all_routes, json_out=json_out, timeout_s=timeout)
    raise typer.Exit(choose(options, _options.io()))


@route_app.command("devices")
def devices(json_out: bool = _options.JSON, timeout: float = TIMEOUT) -> None:
    """Probe CUDA (pycuda, else the driver API) and OpenCL (pyopencl) devices and show what each found."""
    from taotoken_cli.route.run import devices as show_devices

    raise typer.Exit(show_devices(_options.io(), json_out=json_out, timeout_s=timeout))


@route_app.command("set")
def set_routes(
    assignments: list[str] = typer.Argument(..., help="KIND=MODEL pairs; KIND= removes a route.",
                                            metavar="KIND=MODEL..."),
    profile: str | None = _options.PROFILE,
) -> None:
    """Add, change or remove routes in the profile's routing table."""
    from taotoken_cli.route.run import set_routes as save

    raise typer.Exit(save(_options.io(), assignments, profile))


@route_app.command("list")
def list_routes(json_out: bool = _options.JSON, profile: str | None = _options.PROFILE) -> None:
    """Show the profile's routing table."""
    from taotoken_cli.route.run import list_routes as show

    raise typer.Exit(show(_options.io(), json_out=json_out, profile=profile))
