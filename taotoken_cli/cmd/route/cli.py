"""`taotoken route [--device K | --task T] [--export [--openai]] [--json] [--verify]`, and
`taotoken route devices|set|list`."""

from __future__ import annotations

import typer

from taotoken_cli.cmd import options as _options
from taotoken_cli.cmd.route import PROBE_TIMEOUT_S
from taotoken_cli.core.base.i18n import _

# Values shell completion offers (autocompletion=), taken from the code that accepts them; gen_docs writes
# them into the static completion scripts, so Tab never starts Python. Imports happen only when asked.


def complete_device_kinds() -> list[str]:
    from taotoken_cli.core.devices.routing import DEVICE_KINDS, KNOWN_VENDORS

    return [*DEVICE_KINDS, *KNOWN_VENDORS]


def complete_route_keys() -> list[str]:
    """`route set KIND=MODEL`: the device kinds and vendors, each ready for its model."""
    return [f"{kind}=" for kind in complete_device_kinds()]


route_app = typer.Typer(help=_("Pick the model for this machine's devices or a task; verify routes."),
                        invoke_without_command=True)

_AT_LEAST_HALF_A_SECOND = _options.in_range(0.5, seconds=True)


def register(app: typer.Typer) -> None:
    app.add_typer(route_app, name="route")


@route_app.callback()
def route(
    ctx: typer.Context,
    device: str | None = typer.Option(None, "--device", "-d", metavar="KIND", autocompletion=complete_device_kinds,
                                      help=_("Use the route for this device kind (cuda, gpu, opencl, cpu, nvidia, "
                                        "intel, amd, …).")),
    task: str | None = typer.Option(None, "--task", metavar="TASK",
                                    help=_("Use the route for this task (e.g. code, embed).")),
    export: bool = typer.Option(False, "--export", help=_("Print only the line that sets TAOTOKEN_MODEL in your "
                                                           "shell (`export TAOTOKEN_MODEL=…` in bash), for eval.")),
    openai: bool = typer.Option(False, "--openai", help=_("With --export: also set OPENAI_MODEL.")),
    verify: bool = typer.Option(False, "--verify", help=_("Ask the gateway and check which model answers.")),
    samples: int = typer.Option(3, "--samples", metavar="N", callback=_options.in_range(1, 50),
                                help=_("Requests per route with --verify (1 to 50).")),
    all_routes: bool = typer.Option(False, "--all", help=_("With --verify: every route, not just the chosen one.")),
    json_out: bool = _options.JSON,
    timeout: float = typer.Option(PROBE_TIMEOUT_S, "--timeout", metavar="SECONDS", callback=_AT_LEAST_HALF_A_SECOND,
                                  help=_("Seconds before a device probe is killed, 0.5 or more; with --verify also "
                                    "the limit for each request.")),
    profile: str | None = _options.PROFILE,
    base_url: str | None = _options.BASE_URL,
    model: str | None = _options.MODEL,
    _t: str | None = _options.retired("-t", "--task"),
    _n: str | None = _options.retired("-n", "--samples"),
) -> None:
    """Print the model chosen for this machine (or --device/--task) and why."""
    if ctx.invoked_subcommand is not None:
        return
    from taotoken_cli.cmd.route.run import RouteOptions, choose
    from taotoken_cli.core.settings import Overrides

    options = RouteOptions(overrides=Overrides(profile=profile, base_url=base_url, model=model), device=device,
                           task=task, export=export, openai=openai, verify=verify, samples=samples,
                           all_routes=all_routes, json_out=json_out, timeout_s=timeout)
    raise typer.Exit(choose(options, _options.io()))


@route_app.command("devices", help=_("Probe CUDA (pycuda, else the driver API) and OpenCL (pyopencl) devices "
                                     "and show what each found."))
def devices(
    json_out: bool = _options.JSON,
    timeout: float = typer.Option(PROBE_TIMEOUT_S, "--timeout", metavar="SECONDS", callback=_AT_LEAST_HALF_A_SECOND,
                                  help=_("Seconds before a device probe is killed (0.5 or more).")),
) -> None:
    from taotoken_cli.cmd.route.run import devices as show_devices

    raise typer.Exit(show_devices(_options.io(), json_out=json_out, timeout_s=timeout))


@route_app.command("set", help=_("Add, change or remove routes in the profile's routing table (a model the "
                                 "gateway does not list is warned about)."))
def set_routes(
    assignments: list[str] = typer.Argument(..., help=_("KIND=MODEL pairs; KIND= removes a route."),
                                            metavar="KIND=MODEL...", autocompletion=complete_route_keys),
    no_check: bool = typer.Option(False, "--no-check", help=_("Do not ask the gateway whether it lists the models.")),
    profile: str | None = _options.PROFILE,
) -> None:
    from taotoken_cli.cmd.route.run import set_routes as save

    raise typer.Exit(save(_options.io(), assignments, profile, check_models=not no_check))


@route_app.command("list", help=_("Show the profile's routing table."))
def list_routes(json_out: bool = _options.JSON, profile: str | None = _options.PROFILE) -> None:
    from taotoken_cli.cmd.route.run import list_routes as show

    raise typer.Exit(show(_options.io(), json_out=json_out, profile=profile))
