"""The one rule for the base URL each client is given.

taotoken stores the API root (`https://taotoken.net/api`, no /v1: `hygiene.clean_base_url` strips it). A client
is given that root in its form, decided by the paths it appends:

- `BARE_ROOT`: Anthropic-style clients (Claude Code, the Anthropic SDK) append /v1/messages themselves;
- `OPENAI_V1`: OpenAI-style clients (the OpenAI SDKs, Codex, Cline) append /chat/completions or /responses,
  so they get root + /v1.

Each client module says which form it needs (`URL_FORM` in core/clients/*); init writes `form.url(root)` and
doctor judges a client's URL against the same form.
"""

from __future__ import annotations

from dataclasses import dataclass

V1 = "/v1"


@dataclass(frozen=True)
class Form:
    suffix: str  # what follows the root: "" or "/v1"

    def url(self, root: str) -> str:
        """The URL this form gives a client for the API `root` (a cleaned root: no trailing slash)."""
        return f"{root}{self.suffix}"

    def root(self, url: str) -> str:
        """The root back from a URL in this form (trailing slashes ignored); a URL not in the form as it is."""
        url = url.rstrip("/")
        if self.suffix and url.lower().endswith(self.suffix):
            return url[: -len(self.suffix)]
        return url


BARE_ROOT = Form("")
OPENAI_V1 = Form(V1)
