"""Input hygiene for the triple (base URL, key, model), in one place.

Every function returns the cleaned value plus human-readable notes of what it changed or
distrusts, so callers can report them; nothing is changed silently. Values that cannot be
used raise InputError with the fix.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.fix import Command, Fix, config_set
from taotoken_cli.core.base.i18n import _, listed

# Endpoint paths people paste as part of a base URL.
_ENDPOINT_SUFFIXES = ("/chat/completions", "/completions", "/responses", "/messages", "/models")
_QUOTES = "\"'`“”‘’"


@dataclass
class Cleaned:
    value: str
    changes: list[str] = field(default_factory=list)  # what we changed (info)
    warnings: list[str] = field(default_factory=list)  # what still looks wrong

    @property
    def notes(self) -> list[str]:
        return self.changes + self.warnings


def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


_LABEL_RE = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$")


def host_problem(host: str) -> str | None:
    """What is wrong with a URL's host name (None when it is a usable name or IP address)."""
    if ":" in host:  # an IPv6 address (urlsplit removed the brackets)
        try:
            ipaddress.IPv6Address(host.split("%")[0])
        except ValueError:
            return _("is not a valid IPv6 address")
        return None
    if re.fullmatch(r"[0-9.]+", host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return _("is not a valid IPv4 address")
        return None
    try:
        ascii_host = host.encode("idna").decode("ascii")  # international names become xn--…
    except UnicodeError:
        return _("is not a valid host name")
    labels = ascii_host.lower().rstrip(".").split(".")
    if len(ascii_host) > 253 or not all(_LABEL_RE.match(label) for label in labels):
        return _("is not a valid host name (letters, digits and '-' between dots)")
    return None


def _unwrap(raw: str, note: str) -> Cleaned:
    """Strip surrounding whitespace and quotes (pasted from docs or shell snippets), saying so (`note`)."""
    text = raw.strip().strip(_QUOTES).strip()
    result = Cleaned(text)
    if text != raw:
        result.changes.append(note)
    return result


def not_text(value: str) -> bool:
    """Control characters, or bytes that were not UTF-8 (Python keeps them as U+DC80-U+DCFF; no file can hold
    them): a value from a variable set from a file in another encoding, or from a terminal in another locale."""
    return not value.isprintable()


def clean_base_url(raw: str) -> Cleaned:
    """Return the API root: scheme://host[:port]/path without query, fragment, endpoint or /v1."""
    result = _unwrap(raw, _("removed surrounding whitespace/quotes from the base URL"))
    text = result.value
    if not text:
        raise InputError(_("the base URL is empty"), _("pass the API root, e.g. --base-url https://taotoken.net/api"))
    if not_text(text):
        raise InputError(_("base URL {url} contains bytes that are not text (a variable set from a file in another "
                           "encoding?)").format(url=ascii(text)),
                         _("write it again as plain text, e.g. https://taotoken.net/api"))
    wide = [ch for ch in text if 0xFF01 <= ord(ch) <= 0xFF5E or ch == "\u3002"]
    if wide:
        # A Chinese input method types ： ／ 。 for : / . — the ASCII forms are meant (NFKC maps them).
        text = unicodedata.normalize("NFKC", text).replace("\u3002", ".")
        result.changes.append(_("replaced the full-width characters {chars} with their ASCII forms").format(
            chars=" ".join(dict.fromkeys(wide))))
    if "://" not in text:
        raise InputError(
            _("base URL {url} has no scheme").format(url=repr(text)),
            _("write it with https://, e.g. {example}").format(example="https://" + text.lstrip("/")),
        )
    try:
        parts = urlsplit(text)
        hostname = parts.hostname
    except ValueError as exc:  # e.g. "Invalid IPv6 URL" for https://[::1
        raise InputError(_("base URL {url} cannot be parsed ({error})").format(url=repr(text), error=exc),
                         _("check the host part, e.g. https://taotoken.net/api or http://[::1]:3000/api")) from None
    if parts.scheme.lower() not in ("http", "https"):
        raise InputError(
            _("base URL scheme {scheme} is not supported").format(scheme=repr(parts.scheme)),
            _("use an http:// or https:// URL, e.g. https://taotoken.net/api"),
        )
    if not hostname:
        raise InputError(_("base URL {url} has no host").format(url=repr(text)), _("e.g. https://taotoken.net/api"))
    problem = host_problem(hostname)
    if problem:
        raise InputError(_("base URL {url}: the host {host} {problem}").format(url=repr(text), host=repr(hostname),
                                                                              problem=problem),
                         _("write the host name or IP address only, e.g. https://taotoken.net/api"))
    try:
        port = parts.port
    except ValueError:  # not a number, or above 65535
        port = -1
    port_text = parts.netloc.rpartition("]")[2].rpartition("@")[2].partition(":")[2]
    if port == -1 or port == 0 or (port_text and not port_text.isdigit()):
        raise InputError(_("base URL {url} has an invalid port {port}").format(url=repr(text), port=repr(port_text)),
                         _("a port is a number from 1 to 65535, e.g. https://taotoken.net:8443/api, or none at all"))
    if any(ch.isspace() for ch in text):
        raise InputError(_("base URL {url} contains whitespace").format(url=repr(text)),
                         _("remove the spaces from the URL"))
    if parts.username or parts.password:
        raise InputError(
            _("the base URL contains user:password@"),
            _("give the key with --key-stdin instead of in the URL"),
        )
    if parts.query:
        result.changes.append(_("removed the query string ?{query} (clients append paths after it)")
                              .format(query=parts.query))
    if parts.fragment:
        result.changes.append(_("removed the fragment #{fragment}").format(fragment=parts.fragment))
    page = _dashboard_page(parts.path)
    if page:
        example = "https://taotoken.net/api" if hostname.lower() in ("taotoken.net", "www.taotoken.net") \
            else f"{parts.scheme.lower()}://{parts.netloc.lower()}/api"
        raise InputError(_("base URL {url} is the console page {page}, not the API root").format(
            url=repr(text), page=page),
            Fix.of(_("use the API root instead: {command}"), command=config_set("base_url", example)))
    path = parts.path.rstrip("/")
    if path != parts.path and parts.path not in ("", "/"):
        result.changes.append(_("removed the trailing slash"))
    v1_count = 0
    stripped = True
    while stripped:  # until stable, so cleaning a cleaned URL changes nothing (…/models/v1 -> root)
        stripped = False
        for suffix in _ENDPOINT_SUFFIXES:
            if path.lower().endswith(suffix):
                path = path[: -len(suffix)].rstrip("/")
                result.changes.append(_("removed the endpoint path {suffix} (each client appends its own)")
                                      .format(suffix=suffix))
                stripped = True
                break
        while path.lower().endswith("/v1"):
            path = path[:-3].rstrip("/")
            v1_count += 1
            stripped = True
    if v1_count == 1:
        result.changes.append(_("removed the trailing /v1: the root is stored and each client gets its own form"))
    elif v1_count > 1:
        result.changes.append(_("removed a repeated /v1 ({count}x): it would produce /v1/v1/... requests")
                              .format(count=v1_count))
    scheme = parts.scheme.lower()
    netloc = parts.netloc.lower()
    if netloc.endswith(":"):  # `host:` with an empty port means the default one
        netloc = netloc[:-1]
        result.changes.append(_("removed the empty port after the host"))
    result.value = urlunsplit((scheme, netloc, path, "", ""))
    if scheme == "http" and not is_loopback_host(hostname):
        result.warnings.append(
            _("plain http to {host}: the key would travel unencrypted; use https://").format(host=hostname)
        )
    return result


# The web console's pages (new-api/one-api: /console/token, /token, /panel, /log, /topup …): copied from the
# address bar, they answer HTML to every API call.
_CONSOLE_PAGES = ("console", "panel", "dashboard", "token", "topup", "login")


def _dashboard_page(path: str) -> str | None:
    first = path.strip("/").split("/", 1)[0].lower()
    return path.rstrip("/") if first in _CONSOLE_PAGES else None


_BEARER_RE = re.compile(r"^\s*(authorization\s*:\s*)?bearer\s+", re.IGNORECASE)
_KEY_SHAPE_RE = re.compile(r"^[A-Za-z0-9_\-.:+/=]{16,256}$")


def clean_key(raw: str, *, strip_bearer: bool = False) -> Cleaned:
    """Strip whitespace, newlines and quotes; warn on odd shapes. A `Bearer ` prefix is refused, or with
    `strip_bearer` (a key pasted at init's prompt, where the user sees the note) removed."""
    bearer = _BEARER_RE.match(raw)
    if bearer and not strip_bearer:
        raise InputError(
            _("the key starts with 'Bearer ' (or 'Authorization:'): that is the HTTP header, not the key"),
            _("paste only the key itself (it usually starts with sk-); every client adds 'Bearer ' on its own"),
        )
    value = raw[bearer.end():] if bearer else raw
    result = Cleaned(value)
    if bearer:
        result.changes.append(_("removed {prefix} before the key: that is the HTTP header, and every client adds "
                                "it on its own").format(prefix=repr(raw[:bearer.end()].strip())))
    stripped = value.strip()
    if stripped != value:
        removed = value[: len(value) - len(value.lstrip())] + value[len(value.rstrip()):]
        wide = [ch for ch in removed if ord(ch) > 127]  # U+3000 from a Chinese IME, U+00A0 from a web page
        if "\n" in removed or "\r" in removed:
            result.changes.append(_("removed a trailing newline from the key"))
        elif wide:
            result.changes.append(_("removed a full-width or non-breaking space ({code}) around the key").format(
                code=listed(dict.fromkeys(f"U+{ord(ch):04X}" for ch in wide))))
        else:
            result.changes.append(_("removed surrounding whitespace from the key"))
    unquoted = stripped.strip(_QUOTES).strip()
    if unquoted != stripped:
        result.changes.append(_("removed quotes around the key"))
    if not unquoted:
        raise InputError(_("the key is empty"), _("paste the key from the TaoToken console (it starts with sk-)"))
    if any(ch.isspace() for ch in unquoted):
        raise InputError(
            _("the key contains whitespace inside it"),
            _("copy the key again in one piece; HTTP headers cannot carry spaces or newlines"),
        )
    if any(ord(ch) > 126 for ch in unquoted):
        raise InputError(
            _("the key contains non-ASCII characters (smart quotes or full-width characters?)"),
            _("copy the key again from the console as plain text"),
        )
    result.value = unquoted
    if not unquoted.startswith("sk-"):
        result.warnings.append(_("the key does not start with sk- as TaoToken keys do; check it is the API key"))
    elif not _KEY_SHAPE_RE.match(unquoted):
        result.warnings.append(_("the key is unusually short or contains unexpected characters"))
    # one-api/new-api read anything after a second '-' as a channel id (403 普通用户不支持指定渠道).
    if unquoted.startswith("sk-") and "-" in unquoted[3:]:
        result.warnings.append(key_suffix_warning())
    return result


def key_suffix_warning() -> str:
    """Said once where a key is set; `check` repeats it only when the gateway refused the key (a LiteLLM or
    OpenRouter key has dashes and works: a warning on every successful check is noise)."""
    return _("the key has a '-' after the sk- prefix; one-api/new-api gateways read the part after it as a "
             "channel id and answer 403 — check nothing was appended to the key")


def clean_model(raw: str) -> Cleaned:
    result = _unwrap(raw, _("removed surrounding whitespace/quotes from the model ID"))
    value = result.value
    if not value:
        raise InputError(_("the model ID is empty"),
                         Fix.of(_("pass a model ID, e.g. --model gpt-4o-mini ({command} lists them)"),
                                command=Command("taotoken models")))
    if any(ch.isspace() for ch in value):
        raise InputError(_("model ID {model} contains whitespace").format(model=repr(value)),
                         _("model IDs have no spaces; copy it again"))
    if not_text(value):
        raise InputError(_("model ID {model} contains bytes that are not text (a variable set from a file in "
                           "another encoding?)").format(model=ascii(value)),
                         _("copy the model ID again as plain text"))
    return result
