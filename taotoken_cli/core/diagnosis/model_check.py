"""Is a model ID one the gateway lists? One models request, asked before an ID is written anywhere
(`config set model`, `route set`, `init --model`), with "did you mean" from the one matcher (`model_ids`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.diagnosis.listing import fetch_model_list
from taotoken_cli.core.diagnosis.model_ids import close_model_matches

CHECK_TIMEOUT_S = 5.0


@dataclass
class ModelCheck:
    """`listed` None: not checked (no key, the gateway unreachable, no list), `unchecked` says why."""

    model: str
    listed: bool | None
    close: list[str] = field(default_factory=list)
    unchecked: str | None = None
    code: str | None = None  # the diagnosis of the failed list request, when there was one


def check_model(base_url: str | None, api_key: str | None, model: str, env: Mapping[str, str], *,
                timeout_s: float = CHECK_TIMEOUT_S) -> ModelCheck:
    from taotoken_cli.core.net.gateway import budgeted

    if not (base_url and api_key):
        return ModelCheck(model, None, unchecked=_("no usable base URL and key to ask the gateway with"))
    with budgeted(base_url, api_key, timeout_s, env=env) as gateway:
        listing = fetch_model_list(gateway)
    if listing.diagnosis is not None:
        return ModelCheck(model, None, unchecked=_("{title} [{code}]").format(
            title=listing.diagnosis.title, code=listing.diagnosis.code), code=listing.diagnosis.code)
    ids = listing.ids
    if not ids:
        return ModelCheck(model, None, unchecked=_("the gateway lists no models for this key"))
    if model in ids:
        return ModelCheck(model, True)
    return ModelCheck(model, False, close_model_matches(model, ids, limit=3))
