"""Options shared by several commands, declared once, and what every command's help has in common.

Short flags mean one thing across all commands (tests/app/test_cli_surface.py checks it):
  -m --model   -p --profile   -q --quiet   -y --yes   -v --verbose   -V --version   -h --help
  -t --timeout (as hey/oha/ab: seconds)    -n --requests, -c --concurrency, -z --duration (bench; as hey/ab)
  -d --device (route)   -l --list (explain)   -P --port (mock)
A short flag a command once had with another meaning is `retired`: it stays a usage error that names the
long option to write instead.
"""

from __future__ import annotations

import re
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from taotoken_cli.cmd.coercion import skip_needless
from taotoken_cli.core.base.i18n import N_, _, current

# Help texts are translated here, at import: the language is chosen before the app is imported.
PROFILE = typer.Option(None, "--profile", "-p", envvar=None, metavar="NAME",
                       help=_("Profile to use (default: TAOTOKEN_PROFILE, then default_profile in the config file)."))
BASE_URL = typer.Option(None, "--base-url", metavar="URL",
                        help=_("Override the base URL (API root, e.g. https://taotoken.net/api)."))
MODEL = typer.Option(None, "--model", "-m", metavar="MODEL", help=_("Override the model ID."))
JSON = typer.Option(False, "--json", help=_("Print a stable JSON object instead of text."))
NO_PROXY = typer.Option(False, "--no-proxy", help=_("Ignore HTTP(S)_PROXY/ALL_PROXY from the environment."))


def io():
    """The process's streams, environment and working directory, for a command's core."""
    from taotoken_cli.core.term.iostreams import IOStreams

    return IOStreams.system()


# The longest wait any time limit may ask for (a day): larger ones (`inf`, `1e308`) overflow the clocks they are
# handed to, and no check or probe is meant to wait longer.
MAX_SECONDS = 86_400.0


def in_range(low: float, high: float | None = None, *, seconds: bool = False) -> Any:
    """A callback refusing numbers outside [low, high] (`seconds`: a duration) as a usage error. (Typer's
    min=/max= would print `<float range> [x>=0.1]` in the help; the help says the range in words instead.)"""

    top = high if high is not None else (MAX_SECONDS if seconds else None)

    def check(value: float | None) -> float | None:
        if value is None:
            return value
        if seconds and high is None and value == value and value > top:  # inf, 1e308: no clock counts that far
            raise typer.BadParameter(_("{value} is too large: give at most {high} seconds").format(
                value=f"{value:g}", high=f"{top:g}"))
        if not value >= low:  # also refuses nan
            text = (_("{value} is too small: give at least {low} seconds") if seconds
                    else _("{value} is too small: give at least {low}"))
            raise typer.BadParameter(text.format(value=f"{value:g}", low=f"{low:g}"))
        if high is not None and value > high:
            text = (_("{value} is too large: give at most {high} seconds") if seconds
                    else _("{value} is too large: give at most {high}"))
            raise typer.BadParameter(text.format(value=f"{value:g}", high=f"{high:g}"))
        return value

    return check


def retired(flag: str, long: str) -> Any:
    """A short flag this command no longer has: using it is a usage error naming the long option."""

    def refuse(value: str | None) -> None:
        if value is not None:
            raise typer.BadParameter(_("{flag} no longer means {long} (a short flag means one thing in every "
                                       "command); write: {long} {value}").format(flag=flag, long=long, value=value))

    return typer.Option(None, flag, hidden=True, callback=refuse, expose_value=True)


class _Tidy:
    """What every command's help and usage errors have in common.

    typer 0.2x prints each parameter's Python type in help (`<bool>` for every flag, `<str>`, `<list[str]>`):
    show an option's metavar (SECONDS, URL, FILE), nothing for flags and arguments (their name is shown).

    The words Typer's bundled Click hardcodes in English are said in the user's language here, in one place:
    "Usage:", the help option's help, and the usage errors (CLICK_ERRORS). Typer's own words ("Options",
    "Commands", "[default: …]") come from gettext (i18n/zh_CN/click.po). In Chinese, help texts wrap by
    taotoken's layout rule (commands/_wide_help.py): rich breaks lines only at spaces."""

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)  # type: ignore[misc]
        skip_needless(params)  # ~80 ms of Typer's pydantic coercion, where no value needs it
        for param in params:
            if hasattr(param, "display_type_rich"):
                shown = None if getattr(param, "is_flag", True) else param.metavar
                param.display_type_rich = lambda ctx=None, shown=shown: shown
        return params

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.help = _("Show this message and exit.")
        return option

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if current() != "en":  # Chinese has no spaces to break lines at: wrap as every view does
            from taotoken_cli.cmd.wide_help import use_wide_help_text

            use_wide_help_text()
        super().format_help(ctx, formatter)  # type: ignore[misc]

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """The usage line's placeholders in the user's language: `[OPTIONS] COMMAND [ARGS]...`, `[选项] 命令 [参数]...`
        (the arguments' own metavars stay: they are names, like the options)."""
        pieces = super().collect_usage_pieces(ctx)  # type: ignore[misc]
        if current() == "en":
            return pieces
        words = {"[OPTIONS]": _("[OPTIONS]"), "COMMAND [ARGS]...": _("COMMAND [ARGS]..."),
                 "COMMAND": _("COMMAND"), "[ARGS]...": _("[ARGS]...")}
        return [words.get(piece, piece) for piece in pieces]

    def format_usage(self, ctx: Any, formatter: Any) -> None:
        pieces = self.collect_usage_pieces(ctx)  # type: ignore[attr-defined]
        formatter.write_usage(ctx.command_path, " ".join(pieces), _("Usage: "))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)  # type: ignore[misc]
        except Exception as exc:
            _raise_in_language(exc, ctx)
            raise


# Click's usage errors (as Typer's bundled Click words them) -> the message in the user's language. What matches
# none of these (pydantic's words for a value of the wrong type, say) is shown as it came.
CLICK_ERRORS = (
    (re.compile(r"No such option: (?P<name>\S+)"), N_("No such option: {name}")),
    (re.compile(r"No such option: (?P<name>\S+) \(Possible options: (?P<options>.+)\)"),
     N_("No such option: {name} (possible options: {options})")),
    (re.compile(r"Option (?P<name>'.+') requires an argument\."), N_("Option {name} requires an argument.")),
    (re.compile(r"Option (?P<name>'.+') does not take a value\."), N_("Option {name} does not take a value.")),
    (re.compile(r"Missing argument (?P<name>'.+?')\."), N_("Missing argument {name}.")),
    (re.compile(r"Missing option (?P<name>'.+?')\."), N_("Missing option {name}.")),
    (re.compile(r"Got unexpected extra argument(?:s|\(s\))? \((?P<args>.*)\)"),
     N_("Got unexpected extra argument(s) ({args})")),
    (re.compile(r"Invalid value for (?P<name>.+?): (?P<message>.*)", re.DOTALL),
     N_("Invalid value for {name}: {message}")),
    (re.compile(r"Invalid value: (?P<message>.*)", re.DOTALL), N_("Invalid value: {message}")),
    # Typer's suggestion after "No such command" (which gettext has translated already)
    (re.compile(r"(?P<message>.+?)\.? Did you mean (?P<suggestions>.+)\?", re.DOTALL),
     N_("{message}. Did you mean {suggestions}?")),
)


# What Typer (0.2x checks values with pydantic) says is wrong with a value, by its shape -> the user's language.
VALUE_ERRORS = (
    (re.compile(r"Input should be a valid number, unable to parse string as a number"),
     N_("Input should be a valid number, unable to parse string as a number")),
    (re.compile(r"Input should be a valid integer, unable to parse string as an integer"),
     N_("Input should be a valid integer, unable to parse string as an integer")),
    (re.compile(r"Input should be a valid integer, got a number with a fractional part"),
     N_("Input should be a valid integer, got a number with a fractional part")),
    (re.compile(r"Input should be a valid boolean, unable to interpret input"),
     N_("Input should be a valid boolean, unable to interpret input")),
    (re.compile(r"Input should be a finite number"), N_("Input should be a finite number")),
    (re.compile(r"Input should be greater than or equal to (?P<limit>\S+)"),
     N_("Input should be greater than or equal to {limit}")),
    (re.compile(r"Input should be greater than (?P<limit>\S+)"), N_("Input should be greater than {limit}")),
    (re.compile(r"Input should be less than or equal to (?P<limit>\S+)"),
     N_("Input should be less than or equal to {limit}")),
    (re.compile(r"Input should be less than (?P<limit>\S+)"), N_("Input should be less than {limit}")),
    (re.compile(r"Value (?P<value>.+) is not a valid (?P<kind>\w+)\."), N_("Value {value} is not a valid {kind}.")),
)


def translated_usage_error(message: str) -> str | None:
    """Click's English usage error `message` in the user's language; None when it is English or not known."""
    if current() == "en":
        return None
    for pattern, text in CLICK_ERRORS:
        match = pattern.fullmatch(message)
        if match:
            found = match.groupdict()
            if "message" in found:  # what is wrong with the value: pydantic's words, by their shape
                found["message"] = _translated_value_error(found["message"])
            return _(text).format(**found)
    return None


def _translated_value_error(message: str) -> str:
    for pattern, text in VALUE_ERRORS:
        match = pattern.fullmatch(message.strip())
        if match:
            return _(text).format(**match.groupdict())
    return message


def _raise_in_language(exc: BaseException, ctx: Any = None) -> None:
    """Raise Click's usage error `exc` again, in the user's language; return when there is nothing to translate.
    Under --json the error is also one JSON object on stdout, as every other error is (core.term.guard)."""
    exceptions = _click_exceptions()
    no_args_is_help = getattr(exceptions, "NoArgsIsHelpError", ())  # its message is the help itself
    if not isinstance(exc, exceptions.UsageError) or isinstance(exc, no_args_is_help):
        return
    text = translated_usage_error(exc.format_message())
    _usage_error_json(text or exc.format_message(), exc.ctx or ctx)
    if text is not None:
        raise exceptions.UsageError(text, exc.ctx) from None  # a usage error still: exit status 2


def _usage_error_json(message: str, ctx: Any) -> None:
    from taotoken_cli.core.base.exitcodes import Exit
    from taotoken_cli.core.base.fix import Fix
    from taotoken_cli.core.term.guard import json_error

    command = getattr(ctx, "command_path", None) or "taotoken"
    json_error("input.invalid", Exit.USAGE, message, Fix.run(f"{command} --help"))


def _click_exceptions() -> Any:
    try:
        from typer._click import exceptions  # typer 0.2x bundles its own Click
    except ImportError:  # pragma: no cover - older typer uses Click itself
        from click import exceptions  # type: ignore[no-redef]
    return exceptions


class Command(_Tidy, TyperCommand):
    pass


class Group(_Tidy, TyperGroup):
    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except Exception as exc:
            _raise_in_language(exc, ctx)
            raise


def _ours(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, _Tidy)


def tidy_help(app: typer.Typer) -> None:
    """Give every command and group of `app` (registered so far) the help without type names, and Click's
    hardcoded words in the user's language (see `_Tidy`)."""
    if not _ours(app.info.cls):
        app.info.cls = Group
    for command in app.registered_commands:
        if not _ours(command.cls):
            command.cls = Command
    for group in app.registered_groups:
        if group.typer_instance is not None:
            tidy_help(group.typer_instance)
