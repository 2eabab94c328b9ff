"""The situation a diagnosis's fixes are filled from, typed and built in one place.

The catalogue's fixes hold `{base}`, `{openai_base}`, `{model}`, `{host}`, `{proxy}`, `{config}`,
`{request_id}`, `{retry_after}`, `{redirect_base}`, `{http_base}`; a `DiagnosisContext` has one field for each
(empty: not known, and a conditional fix that needs it does not apply). `sources` says, for each of base URL, key
and model that does not come from the config file, where it does come from: the catalogue's `taotoken config set
NAME VALUE` is then replaced by the instruction that sets NAME there (otherwise the user follows the fix and the
value that really wins stays as it was).

`context_for` builds one from what is known (a URL called, the settings, the environment); the classifier adds
what the answer showed (the proxy, a request id, the wait time, the model the server named).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING

from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.net.urlform import OPENAI_V1

if TYPE_CHECKING:
    from taotoken_cli.core.settings.loader import Settings
    from taotoken_cli.core.settings.origins import Source


@dataclass
class DiagnosisContext:
    base: str = ""  # the API root (Anthropic-style clients use it as it is)
    openai_base: str = ""  # root + /v1
    host: str = ""
    model: str = ""
    proxy: str = ""
    config: str = ""  # taotoken's config file
    request_id: str = ""
    retry_after: str = ""  # seconds, as shown
    redirect_base: str = ""  # the root a redirect's target implies
    http_base: str = ""  # the base URL with http:// (a TLS handshake answered in plain http)
    sources: dict[str, Source] = field(default_factory=dict)
    route: str = ""  # the routing table chose the model for this route: a fix that sets the model sets the route
    shell: str = ""  # the user's shell syntax (core.platform.shells): the catalogue's `export X=…` is shown in it

    def value(self, name: str) -> str:
        """A placeholder's value; one with no value shows as `<name>` rather than breaking the text."""
        known = getattr(self, name, None) if name in _PLACEHOLDERS else None
        return known if known else f"<{name}>"

    def has(self, name: str) -> bool:
        return bool(getattr(self, name, "")) if name in _PLACEHOLDERS else False

    def over(self, other: DiagnosisContext) -> DiagnosisContext:
        """This context, its empty fields taken from `other` (what the caller knows wins over what the URL shows)."""
        merged = {f.name: getattr(self, f.name) or getattr(other, f.name) for f in fields(self)}
        return DiagnosisContext(**merged)

    def with_values(self, **values: str) -> DiagnosisContext:
        return replace(self, **values)

    def filled(self, command: Command) -> Command:
        """A catalogue command with its placeholders filled in; one that installs a package, for the installer
        taotoken runs under."""
        if command.installs:
            from taotoken_cli.core.platform.installer import add_package

            return add_package(command.installs)
        return Command(_fill(command.line, self), command.sets,
                       None if command.value is None else _fill(command.value, self))

    def at_source(self, command: Command) -> Fix | None:
        """For `taotoken config set NAME VALUE` where NAME does not come from the config file: the instruction
        that sets it where it does (the key's value is never shown); for the model a route chose, `taotoken route
        set ROUTE=MODEL`."""
        if command.sets == "model" and self.route:
            return Fix.run(Command(f"taotoken route set {self.route}={command.value}"))
        if command.sets is None or command.sets not in self.sources:
            return None
        from taotoken_cli.core.settings.origins import set_at

        return set_at(self.sources[command.sets], None if command.sets == "api_key" else command.value)


_PLACEHOLDERS = frozenset(f.name for f in fields(DiagnosisContext) if f.name not in ("sources", "route", "shell"))


def _fill(text: str, context: DiagnosisContext) -> str:
    try:
        return text.format_map(_Lookup(context))
    except (IndexError, ValueError, AttributeError):
        return text


class _Lookup(dict):
    def __init__(self, context: DiagnosisContext) -> None:
        super().__init__()
        self.context = context

    def __missing__(self, key: str) -> str:
        return self.context.value(key)


# Where an endpoint path starts in a URL that was called: the root is what comes before it.
_ENDPOINT_SUFFIXES = ("/chat/completions", "/completions", "/responses", "/messages", "/models")


def root_of(url: str) -> str:
    """The API root of a URL that was called (`…/api/v1/models` -> `…/api`)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    path = parts.path
    cut = len(path)
    lowered = path.lower()
    for marker in ("/v1/", *_ENDPOINT_SUFFIXES):
        index = lowered.find(marker)
        if index != -1:
            cut = min(cut, index)
    if lowered.endswith("/v1"):
        cut = min(cut, len(path) - 3)
    return f"{parts.scheme}://{parts.netloc}{path[:cut].rstrip('/')}"


def context_for(*, base: str | None = None, url: str | None = None, settings: Settings | None = None,
                env: Mapping[str, str] | None = None, model: str | None = None, proxy: str | None = None,
                sources: bool = True) -> DiagnosisContext:
    """The one way a context is made. `base` (the API root) or `url` (the URL that was called: the root is
    derived from it) give base, openai_base and host; `settings` give base (when neither is given), the model, the
    config file and, with `env` and `sources`, where each value comes from; `model` and `proxy` override."""
    from urllib.parse import urlsplit

    if base is None and url is not None:
        base = root_of(url)
    if base is None and settings is not None:
        base = settings.base_url.value or ""
    base = (base or "").rstrip("/")
    import os

    from taotoken_cli.core.platform.shells import syntax

    context = DiagnosisContext(shell=syntax(os.environ if env is None else env))
    if base:
        context.base, context.openai_base = base, OPENAI_V1.url(base)
        context.host = urlsplit(base).hostname or ""
    if settings is not None:
        context.model = settings.model.value or ""
        context.config = str(settings.config_path)
        if env is not None and sources:
            from taotoken_cli.core.settings.origins import outside_config

            context.sources = outside_config(settings, env)
    if model is not None:
        context.model = model
    if proxy:
        context.proxy = proxy
    return context
