"""The questions `taotoken init` asks on a terminal. Each answer goes through the shared hygiene and is asked
again when it cannot be used (one bad paste must not end the dialogue, nor send the next line to the shell);
what was cleaned is said at once; the model is picked from the gateway's own list when it has one."""

from __future__ import annotations

from collections.abc import Callable

from taotoken_cli.core.base.i18n import _, listed, ngettext
from taotoken_cli.core.base.masking import remember_secret
from taotoken_cli.core.diagnosis.listing import ModelListing, fetch_model_list, match_models
from taotoken_cli.core.diagnosis.model_ids import close_model_matches
from taotoken_cli.core.net import hygiene
from taotoken_cli.core.settings import LABELS, Origin, Value
from taotoken_cli.core.term.iostreams import IOStreams, Prompter

MODEL_LIST_TIMEOUT_S = 10.0
UNLISTED_ANYWAY = "taotoken init --model ID --allow-unlisted"  # init refuses an unlisted --model without the flag
PROMPT = Origin("flag", "prompt")


def _answered(prompter: Prompter, name: str, clean: Callable[[str], hygiene.Cleaned], answer: str) -> Value:
    cleaned = clean(answer)
    value = Value(cleaned.value, PROMPT, raw=answer, notes=cleaned.notes, warnings=cleaned.warnings)
    for note in value.labelled_notes(LABELS[name]):
        prompter.say(note)
    return value


def ask_base_url(prompter: Prompter, default: str | None) -> Value:
    return prompter.ask_until(_("Base URL"), lambda answer: _answered(prompter, "base_url", hygiene.clean_base_url,
                                                                   answer), default=default)


def ask_key(prompter: Prompter) -> Value:
    def accept(answer: str) -> Value:
        remember_secret(answer)  # masked in any message, even one about a bad paste
        value = _answered(prompter, "api_key", lambda raw: hygiene.clean_key(raw, strip_bearer=True), answer)
        remember_secret(value.value)
        return value

    return prompter.ask_until(_("API key"), accept, secret=True)


def ask_model(io: IOStreams, base_url: str, api_key: str) -> Value:
    """Offer the models the gateway lists for this key; without a list, a typed ID needs an explicit yes."""
    from taotoken_cli.core.net.gateway import budgeted

    prompter = io.prompter
    prompter.say(_("asking {url} which models this key can use …").format(url=f"{base_url}/v1/models"))
    with budgeted(base_url, api_key, MODEL_LIST_TIMEOUT_S, env=io.env) as gateway:
        listing = fetch_model_list(gateway)
    if listing.ok and listing.models:
        ids = listing.ids
        prompter.say(ngettext("{count} model listed: pick one by its number or ID, or type part of a name (or a "
                              "glob such as gpt-4*) to narrow the list",
                              "{count} models listed: pick one by its number or ID, or type part of a name (or a "
                              "glob such as gpt-4*) to narrow the list", len(ids)).format(count=len(ids)))
        chosen = prompter.choose(_("Model"), ids,
                                 narrow=lambda text: [m.id for m in match_models(listing.models, text)],
                                 unknown=lambda text: _not_listed(text, ids))
        return _answered(prompter, "model", hygiene.clean_model, chosen)
    prompter.say(_("warning: {reason}; the model you type cannot be checked against the list").format(
        reason=unchecked_reason(listing)))
    while True:
        value = prompter.ask_until(_("Model ID"), lambda answer: _answered(prompter, "model", hygiene.clean_model,
                                                                           answer))
        if prompter.confirm(_("Use {model} without checking it?").format(model=repr(value.value))):
            return value


def _not_listed(text: str, ids: list[str]) -> str:
    close = close_model_matches(text, ids, limit=3)
    if close:
        return _("{text} is not listed; close: {close} (* shows the whole list; an unlisted ID anyway: "
                 "{command})").format(text=repr(text), close=listed(close), command=UNLISTED_ANYWAY)
    return _("{text} is not listed (* shows the whole list; an unlisted ID anyway: {command})").format(
        text=repr(text), command=UNLISTED_ANYWAY)


def unchecked_reason(listing: ModelListing) -> str:
    """Why there is no list to pick from, in a few words and with the server's own."""
    diagnosis = listing.diagnosis
    if diagnosis is None:
        return _("the gateway lists no models for this key")
    said = "; " + _("server said: {message}").format(message=diagnosis.server_message) \
        if diagnosis.server_message else ""
    if diagnosis.code.startswith("auth."):
        return _("the gateway rejected the key [{code}]").format(code=diagnosis.code + said)
    return _("cannot list the models: {title} [{code}]").format(title=diagnosis.title,
                                                               code=diagnosis.code + said)
