"""One rule for each client's URL form: the client modules declare it, init writes it, doctor judges by it."""

from __future__ import annotations

from taotoken_cli.core.clients import ccswitch, claude_code, cline, codex, envvars
from taotoken_cli.core.clients.base import Triple
from taotoken_cli.core.net.gateway import Endpoints
from taotoken_cli.core.net.urlform import BARE_ROOT, OPENAI_V1
from tests.conftest import SENTINEL_KEY

ROOT = "https://taotoken.net/api"
TRIPLE = Triple(ROOT, SENTINEL_KEY, "gpt-4o-mini")


def test_the_two_forms_and_their_way_back_to_the_root() -> None:
    assert BARE_ROOT.url(ROOT) == ROOT and OPENAI_V1.url(ROOT) == ROOT + "/v1"
    assert OPENAI_V1.root(ROOT + "/v1/") == ROOT and OPENAI_V1.root(ROOT + "/V1") == ROOT
    assert OPENAI_V1.root(ROOT) == ROOT and BARE_ROOT.root(ROOT + "/") == ROOT


def test_each_client_declares_its_form_as_data() -> None:
    assert claude_code.URL_FORM is BARE_ROOT  # Claude Code appends /v1/messages itself
    assert codex.URL_FORM is OPENAI_V1 and cline.URL_FORM is OPENAI_V1  # they append /responses, /chat/completions
    assert ccswitch.URL_FORMS == {"claude": BARE_ROOT, "codex": OPENAI_V1, "gemini": BARE_ROOT,  # /v1beta/… itself
                                  "opencode": OPENAI_V1, "openclaw": OPENAI_V1}
    assert envvars.VARIABLES["OPENAI_BASE_URL"].form == OPENAI_V1
    assert envvars.VARIABLES["ANTHROPIC_BASE_URL"].form == envvars.VARIABLES["TAOTOKEN_BASE_URL"].form == BARE_ROOT


def test_the_triple_the_gateway_and_cc_switch_give_the_same_urls() -> None:
    endpoints = Endpoints(ROOT)
    assert TRIPLE.anthropic_base == endpoints.anthropic_base == ROOT
    assert TRIPLE.openai_base == endpoints.openai_base == ROOT + "/v1"
    assert endpoints.models == ROOT + "/v1/models" and endpoints.messages == ROOT + "/v1/messages"
    assert ccswitch.endpoint(TRIPLE, "claude") == ROOT and ccswitch.endpoint(TRIPLE, "codex") == ROOT + "/v1"
    assert envvars.wanted("OPENAI_BASE_URL", TRIPLE) == ROOT + "/v1"
    assert envvars.wanted("ANTHROPIC_BASE_URL", TRIPLE) == ROOT


def test_doctor_judges_each_client_by_the_form_its_module_declares() -> None:
    from taotoken_cli.cmd.doctor.checks.clients.common import CLAUDE_FORM, CLINE_FORM, CODEX_FORM

    assert CLAUDE_FORM.url_form is claude_code.URL_FORM
    assert CODEX_FORM.url_form is codex.URL_FORM and CLINE_FORM.url_form is cline.URL_FORM
    assert CODEX_FORM.url(ROOT) == TRIPLE.url_for(codex.URL_FORM) == ROOT + "/v1"
