"""`taotoken route [--device K | --task T] [--export [--openai]] [--json] [--verify]`, and
`taotoken route devices|set|list`."""

from __future__ import annotations

import typer

from taotoken_cli.commands import _options

route_app = typer.Typer(help="Pick the model for this machine's devices or a task; verify routes.",
                        invoke_without_command=True)

TIMEOUT = typer.Option(15.0, "--timeout", min=0.5, help="Seconds before a device probe is killed (with --verify: "
                       "also the limit for each request).")


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
    from taotoken_cli.errors import InputError
    from taotoken_cli.exitcodes import Exit
    from taotoken_cli.output import Output
    from taotoken_cli.route.view import export_lines, render_choice, render_verify
    from taotoken_cli.routing import choose_for_settings

    if device and task:
        raise InputError("--device and --task are alternatives", "give one of them")
    if openai and not export:
        raise InputError("--openai only applies to --export", "taotoken route --export --openai")
    if export and (json_out or verify):
        raise InputError("--export prints only shell lines; it cannot be combined with --json or --verify",
                         "run them separately")
    if all_routes and not verify:
        raise InputError("--all only applies to --verify", "taotoken route --verify --all")
    settings = _options.load(profile, base_url, model)
    choice = choose_for_settings(settings, device=device, task=task, probe_timeout_s=timeout,
                                 need_devices=not (verify and all_routes))
    out = Output()
    if verify:
        from taotoken_cli.route.verify import run_verify

        report = run_verify(settings, choice, samples=samples, all_routes=all_routes, request_timeout=timeout)
        if json_out:
            out.json({"profile": settings.profile, "choice": choice.to_dict(), **report.to_dict()})
        else:
            render_verify(out, report)
        raise typer.Exit(report.exit_code)
    if choice.model is None:
        from taotoken_cli.errors import TaotokenError

        raise TaotokenError(choice.reason, "taotoken route set cpu=MODEL   (or: taotoken config set model MODEL)",
                            Exit.CONFIG, code="config.missing")
    if export:
        for line in export_lines(choice.model, openai):
            out.line(line)
    elif json_out:
        out.json({"profile": settings.profile, **choice.to_dict()})
    else:
        render_choice(out, choice, settings.profile)


@route_app.command("devices")
def devices(json_out: bool = _options.JSON, timeout: float = TIMEOUT) -> None:
    """Probe CUDA (pycuda) and OpenCL (pyopencl) devices and show what each backend found."""
    from taotoken_cli.devices import probe_devices
    from taotoken_cli.output import Output
    from taotoken_cli.route.view import render_devices

    report = probe_devices(timeout_s=timeout)
    out = Output()
    if json_out:
        out.json(report.to_dict())
    else:
        render_devices(out, report)


@route_app.command("set")
def set_routes(
    assignments: list[str] = typer.Argument(..., help="KIND=MODEL pairs; KIND= removes a route.",
                                            metavar="KIND=MODEL..."),
    profile: str | None = _options.PROFILE,
) -> None:
    """Add, change or remove routes in the profile's routing table."""
    from taotoken_cli.output import Output
    from taotoken_cli.routing import parse_assignments, save_routes

    out = Output()
    edits = parse_assignments(assignments)
    for edit in edits:
        for note in edit.notes:
            out.error_line(f"note: {note}")
    result = save_routes(edits, profile)
    for edit in result.applied:
        out.line(f"removed route {edit.key}" if edit.model is None else f"set route {edit.key} = {edit.model}")
    for edit in result.unchanged:
        out.line(f"route {edit.key} was not set — nothing to remove" if edit.model is None
                 else f"route {edit.key} is already {edit.model} — nothing changed")
    if result.applied:
        out.line(f"profile {result.profile!r} in {result.path}")


@route_app.command("list")
def list_routes(json_out: bool = _options.JSON, profile: str | None = _options.PROFILE) -> None:
    """Show the profile's routing table."""
    from taotoken_cli.output import Output
    from taotoken_cli.route.view import render_routes, routes_to_dict

    settings = _options.load(profile)
    out = Output()
    if json_out:
        out.json({**routes_to_dict(settings.routes, settings.profile), "fallback_model": settings.model.value})
    else:
        render_routes(out, settings.routes, settings.profile, settings.model.value)
