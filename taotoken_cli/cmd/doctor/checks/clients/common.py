"""What every client check shares: reading a client's files once per run, resolving them into what the
checks need, repairs that edit JSON/TOML in place, and the base-URL check every client's URL goes through."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from taotoken_cli.cmd.doctor.context import DoctorContext
from taotoken_cli.cmd.doctor.model import Issues, Repair, Result
from taotoken_cli.cmd.doctor.registry import check
from taotoken_cli.core.base.errors import InputError
from taotoken_cli.core.base.fix import Command, Fix
from taotoken_cli.core.base.i18n import N_, _
from taotoken_cli.core.base.masking import mask_key, unquoted_key
from taotoken_cli.core.clients import CLIENTS, claude_code, cline, codex, opencode, qwen_code
from taotoken_cli.core.clients.base import ClientState, ConfigFile
from taotoken_cli.core.files.fsutil import is_world_readable, private_fix
from taotoken_cli.core.net import hygiene
from taotoken_cli.core.net.urlform import Form

SECTION = "Clients"
Found = TypeVar("Found")


def client_state(ctx: DoctorContext, name: str) -> ClientState:
    """The client's parsed files (parse errors kept), read once per run; `name` is its init target name."""
    return ctx.memo(f"client:{name}", lambda: CLIENTS[name].read(ctx.machine))


def installed(ctx: DoctorContext, name: str, role: str, not_found: str) -> tuple[ClientState, ConfigFile] | Result:
    """(parsed files, the file in `role`), or skipped when the client is neither detected nor has that file
    (`not_found`, translated, says where doctor looked)."""
    state = client_state(ctx, name)
    file = state.files[role]
    if not state.detection.found and not file.exists:
        return Result.skipped(_("{client} not found ({where})").format(client=CLIENTS[name].LABEL, where=not_found))
    return state, file


def json_repair(path: Path, description: str, edit: Callable[[Any], None], *, secret: bool = False,
                allow_comments: bool = False) -> Repair:
    """A repair that edits the parsed JSON; only the values `edit` changes are rewritten (jsonedit.edit_json),
    every other byte of the file stays. `allow_comments`: the file is JSONC (VS Code's settings.json)."""
    from taotoken_cli.core.formats.jsonedit import dumps_like, edit_json, parse_json

    def transform(text: str) -> str:
        data = parse_json(text, path, allow_comments=allow_comments) if text.strip() else {}
        edit(data)
        return edit_json(text, data, allow_comments=allow_comments) if text.strip() else dumps_like(data, None)

    return Repair(path, description, transform, secret=secret)


def toml_repair(path: Path, description: str, edit: Callable[[Any], None], *, secret: bool = False) -> Repair:
    """A repair that edits the TOML document with tomlkit (comments and layout kept; tomledit.dumps keeps the
    line endings and a missing final newline)."""
    from taotoken_cli.core.clients.base import parse_toml_doc
    from taotoken_cli.core.formats import tomledit

    def transform(text: str) -> str:
        doc = parse_toml_doc(text, path)
        edit(doc)
        return tomledit.dumps(doc, text)

    return Repair(path, description, transform, secret=secret)


def parse_failure(file) -> Result:
    err = file.error
    return Result.fail(err.message, fixes=[err.fix] if err.fix else [])


def clean_root(value: str) -> tuple[str | None, list[str]]:
    """(API root, what cleaning changed) for a base URL found in a client file."""
    try:
        cleaned = hygiene.clean_base_url(value)
    except InputError as exc:
        return None, [exc.message]
    return cleaned.value, cleaned.changes


def strip_key(value: Any) -> str | None:
    """A key read from a client's file (any JSON/TOML value): the key as meant, or None when it is no string."""
    return unquoted_key(value) if isinstance(value, str) else None


def permissions(issues: Issues, file, holds_key: bool) -> None:
    if holds_key and file.exists and is_world_readable(file.path):
        issues.warn(_("{path} holds the key and is readable by other users").format(path=file.path),
                    fixes=[Fix.run(private_fix(file.path))])


def client_check(check_id: str, title: str, resolve: Callable[[DoctorContext], Found | Result], *,
                 network: bool = False):
    """Register `body(ctx, found)` as a check. `resolve` reads the client's files once; when it returns a
    Result instead (client not installed, file does not parse), the check returns that without running body.
    `network`: the body probes the network (skipped with --offline)."""

    def register(body: Callable[[DoctorContext, Found], Result]) -> Callable[[DoctorContext], Result]:
        @functools.wraps(body)
        def run(ctx: DoctorContext) -> Result:
            found = resolve(ctx)
            return found if isinstance(found, Result) else body(ctx, found)

        return check(check_id, SECTION, title, network=network)(run)

    return register


def unless(resolve: Callable[[DoctorContext], Found | Result], broken: Callable[[Found], bool],
           skip: str) -> Callable[[DoctorContext], Found | Result]:
    """A resolver for client_check: what `resolve` finds, or skipped with `skip` (marked N_(), translated when
    the check runs) where `broken(found)`."""

    def run(ctx: DoctorContext) -> Found | Result:
        found = resolve(ctx)
        return Result.skipped(_(skip)) if not isinstance(found, Result) and broken(found) else found

    return run


SAME_ROOT_FIX = N_("{command}   (writes the same root everywhere)")  # {command}: taotoken init


@dataclass(frozen=True)
class UrlForm:
    """How a client needs its base URL written (the client module's URL_FORM), and how doctor names it."""

    client: str
    url_form: Form  # core.net.urlform: BARE_ROOT or OPENAI_V1, from the client's module
    name: str  # the form, as an ok result names it (marked N_(), translated where shown)
    same_root_fix: Fix | str | None = None  # the fix when the URL names another root than taotoken's (SAME_ROOT_FIX)
    trims: bool = False  # whitespace around the value does not count against the form

    def url(self, root: str | None) -> str:
        return self.url_form.url(root or "")


def codex_url_why(wanted: str, changes: list[str]) -> str:
    """Why a Codex base_url is not in Codex's form (for client_base_url_result)."""
    return _("; ").join(c for c in changes if "trailing /v1" not in c) or \
        _("lacks /v1: Codex calls <base_url>/responses and never adds /v1")


def claude_url_why(value: str) -> Callable[[str, list[str]], str]:
    """Why a Claude Code ANTHROPIC_BASE_URL `value` is not the bare root (for client_base_url_result)."""

    def why(_wanted: str, changes: list[str]) -> str:
        if value.strip().rstrip("/").endswith("/v1"):
            return _("ends in /v1: Claude Code appends /v1/messages itself and would call {url}/v1/messages "
                     "(404)").format(url=value.strip().rstrip("/"))
        return _("is not the bare API root: {changes}").format(changes=_("; ").join(changes))

    return why


CLAUDE_FORM = UrlForm("Claude Code", claude_code.URL_FORM, N_("bare root"), trims=True)
CODEX_FORM = UrlForm("Codex", codex.URL_FORM, N_("root + /v1"))
CLINE_FORM = UrlForm("Cline", cline.URL_FORM, N_("root + /v1"), same_root_fix=Fix.run("taotoken init"))
OPENCODE_FORM = UrlForm("OpenCode", opencode.URL_FORM, N_("root + /v1"), same_root_fix=Fix.run("taotoken config sync"))
QWEN_FORM = UrlForm("Qwen Code", qwen_code.URL_FORM, N_("root + /v1"), same_root_fix=Fix.run("taotoken config sync"))


def client_base_url_result(ctx: DoctorContext, label: str, value: str, form: UrlForm, *,
                           why: Callable[[str, list[str]], str], set_fix: Callable[[str], str],
                           repair: Callable[[str], Repair] | None = None, unusable_fix: str | None = None,
                           differs: str | None = None) -> Result:
    """A base URL found in a client's file, checked in turn: a usable URL? in the client's form? the root
    taotoken uses? Fails (with the fix, and the repair where the value is in a file), warns, or is ok.

    `label` names the setting and its value in messages; `why(wanted, changes)` says why the value is not in
    the client's form; `set_fix(url)` is the instruction, `repair(url)` the `doctor --fix` edit, that write a
    URL there. Where a client words it differently: `unusable_fix` (default: set taotoken's URL) and
    `differs` (default: "<label> differs from taotoken's base URL …").
    """
    root, changes = clean_root(value)
    if root is None:
        return Result.fail(_("{label} is not a usable URL: {reason}").format(label=label, reason=changes[0]),
                           fixes=[unusable_fix or set_fix(form.url(ctx.base_url))])
    wanted = form.url(root)
    if (value.strip() if form.trims else value) != wanted:
        # `why` is a whole predicate ("ends in /v1: …"): one message joins it to its subject, in each language's way
        return Result.fail(_("{label} {problem}").format(label=label, problem=why(wanted, changes)),
                           fixes=[set_fix(wanted)],
                           repairs=[repair(wanted)] if repair else [])
    if ctx.base_url and root != ctx.base_url:
        return Result.warn(differs or _("{label} differs from taotoken's base URL {url}").format(
            label=label, url=form.url(ctx.base_url)),
            fixes=[form.same_root_fix or Fix.of(_(SAME_ROOT_FIX), command=Command("taotoken init"))])
    return Result.ok(_("{url} ({form}, as {client} needs)").format(url=wanted, form=_(form.name), client=form.client))


def sent_key(issues: Issues, ctx: DoctorContext, client: str, key: str, source: str,
             repair: Callable[[str], Repair | None], *, other_fix: Fix | str, compare: bool = True,
             unrepairable: Callable[[], None] | None = None) -> Result:
    """The key a client will send (`source`: where it comes from), judged: whitespace around it fails, a key that is
    not taotoken's warns (`compare`: the client uses TaoToken's provider); `repair(value)` is the `doctor --fix` edit
    that writes `value` where the key lives (None where none can: `other_fix` is then the fix, or `unrepairable`
    reports it its own way). Returns the ok result naming the key, masked."""
    if key != key.strip():
        fix = repair(key.strip())
        issues.fail(_("the key from {source} has whitespace or a newline around it").format(source=source),
                    fixes=[Fix.run("taotoken doctor --fix") if fix else other_fix], repairs=[fix] if fix else [])
    elif compare and ctx.api_key and key != ctx.api_key:
        fix = repair(ctx.api_key)
        if fix is None and unrepairable is not None:
            unrepairable()
        else:
            issues.warn(_("{client} sends {key} (from {source}), not taotoken's key {ours}").format(
                client=client, key=mask_key(key), source=source, ours=mask_key(ctx.api_key)),
                fixes=[Fix.run("taotoken config sync") if fix else other_fix], repairs=[fix] if fix else [])
    return issues.result(_("{key} (from {source})").format(key=mask_key(key), source=source))


def and_join(items: list[str]) -> str:
    """`a and b` (`a and b and c`): names joined the way a sentence lists them."""
    text = items[0]
    for item in items[1:]:
        text = _("{first} and {second}").format(first=text, second=item)
    return text


def noted(text: str, note: str) -> str:
    """`text (note)`: an aside after a finished sentence (full-width brackets in Chinese)."""
    return _("{text} ({note})").format(text=text, note=note)
