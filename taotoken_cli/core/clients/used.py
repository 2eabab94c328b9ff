"""What a client will send, read from its own files under the environment it starts with: the URL of its
request, the key (masked) and where it comes from, and the model. `doctor --live` shows this beside what the
client printed, so "Codex got 401" comes with "it sent sk-ol…d123 from $OPENAI_API_KEY".
"""

from __future__ import annotations

from dataclasses import dataclass

from taotoken_cli.core.base.i18n import _
from taotoken_cli.core.base.masking import mask_key
from taotoken_cli.core.clients import claude_code, cline, codex, gemini_cli, openclaw, opencode, qwen_code
from taotoken_cli.core.clients.base import Machine
from taotoken_cli.core.net.gateway import Endpoints

ANTHROPIC_DEFAULT = "https://api.anthropic.com"
OPENAI_DEFAULT = "https://api.openai.com/v1"
GEMINI_DEFAULT = "https://generativelanguage.googleapis.com"


@dataclass(frozen=True)
class Used:
    url: str | None  # the request's full URL
    key: str | None  # masked
    key_from: str | None  # where the key comes from (a variable, a file)
    model: str | None
    model_from: str | None


def _mask(value: str | None) -> str | None:
    return mask_key(value.strip()) if value and value.strip() else None


def claude(machine: Machine) -> Used:
    env = claude_code.effective_env(machine)
    base = env.get(claude_code.BASE_URL)
    # ANTHROPIC_API_KEY is sent as x-api-key and wins the header Claude Code builds; the token is the Bearer
    key = env.get(claude_code.API_KEY) or env.get(claude_code.AUTH_TOKEN)
    model = env.get("ANTHROPIC_MODEL")
    settings_model = None
    if model is None:
        for role in claude_code.SETTINGS_ROLES:
            file = claude_code.read(machine).files.get(role)
            if file is not None and isinstance(file.data, dict) and isinstance(file.data.get("model"), str):
                settings_model = (file.data["model"], str(file.path))
                break
    root = (base.value if base else ANTHROPIC_DEFAULT).rstrip("/")
    return Used(Endpoints(root).messages, _mask(key.value) if key else None,
                f"{key.name} ({key.where})" if key else None,
                model.value if model else settings_model[0] if settings_model else None,
                model.where if model else settings_model[1] if settings_model else None)


def codex_used(machine: Machine) -> Used:
    state = codex.read(machine)
    config = state.files["config"]
    data = config.data if isinstance(config.data, dict) else {}
    provider_id = data.get("model_provider") or "openai"
    providers = data.get("model_providers") if isinstance(data.get("model_providers"), dict) else {}
    provider = providers.get(provider_id) if isinstance(providers.get(provider_id), dict) else {}
    base = provider.get("base_url") or (OPENAI_DEFAULT if provider_id == "openai" else None)
    key = key_from = None
    if isinstance(provider.get("experimental_bearer_token"), str):
        key, key_from = provider["experimental_bearer_token"], f"experimental_bearer_token ({config.path})"
    elif isinstance(provider.get("env_key"), str):
        name = provider["env_key"]
        key, key_from = machine.env.get(name), "$" + name
        if not key:
            key_from = _("${name} is not set in the environment it starts with").format(name=name)
    else:
        auth = state.files["auth"]
        if isinstance(auth.data, dict) and isinstance(auth.data.get("OPENAI_API_KEY"), str):
            key, key_from = auth.data["OPENAI_API_KEY"], f"OPENAI_API_KEY ({auth.path})"
    model = data.get("model") if isinstance(data.get("model"), str) else None
    return Used(str(base).rstrip("/") + "/responses" if base else None, _mask(key), key_from, model,
                str(config.path) if model else None)


def cline_used(machine: Machine) -> Used:
    file = cline.read(machine).files["providers"]
    data = file.data if isinstance(file.data, dict) else {}
    provider_id = data.get("lastUsedProvider")
    providers = data.get("providers") if isinstance(data.get("providers"), dict) else {}
    entry = providers.get(provider_id) if isinstance(providers.get(provider_id), dict) else {}
    settings = entry.get("settings") if isinstance(entry.get("settings"), dict) else {}
    base = settings.get("baseUrl")
    where = str(file.path)
    return Used(str(base).rstrip("/") + "/chat/completions" if isinstance(base, str) and base else None,
                _mask(settings.get("apiKey") if isinstance(settings.get("apiKey"), str) else None),
                f"providers.{provider_id}.settings.apiKey ({where})" if settings.get("apiKey") else None,
                settings.get("model") if isinstance(settings.get("model"), str) else None,
                where if settings.get("model") else None)


def gemini_used(machine: Machine) -> Used:
    found = gemini_cli.effective(machine)
    base = found.base_url.value if found.base_url else GEMINI_DEFAULT
    model = found.model.value if found.model else None
    return Used(f"{base.rstrip('/')}/v1beta/models/{model or 'MODEL'}:streamGenerateContent",
                _mask(found.api_key.value) if found.api_key else None,
                f"{gemini_cli.API_KEY} ({found.api_key.where})" if found.api_key else None,
                model, found.model.where if found.model else None)


def openclaw_used(machine: Machine) -> Used:
    file = openclaw.read_config(machine)
    data = file.data if isinstance(file.data, dict) else {}
    chosen = openclaw.primary(data) or ""
    provider_id, _slash, model = chosen.partition("/")
    models = data.get("models") if isinstance(data.get("models"), dict) else {}
    providers = models.get("providers") if isinstance(models.get("providers"), dict) else {}
    entry = providers.get(provider_id) if isinstance(providers.get(provider_id), dict) else {}
    base, key = entry.get("baseUrl"), entry.get("apiKey")
    suffix = openclaw.ENDPOINTS.get(str(entry.get("api") or openclaw.API), "")
    return Used(str(base).rstrip("/") + suffix if isinstance(base, str) and base else None,
                _mask(key if isinstance(key, str) else None),
                f"models.providers.{provider_id}.apiKey ({file.path})" if isinstance(key, str) and key else None,
                model or None, f"agents.defaults.model.primary ({file.path})" if model else None)


def opencode_used(machine: Machine) -> Used:
    found = opencode.effective(machine)
    chat = found.entry is not None and found.entry.get("npm", opencode.PROVIDER_NPM) == opencode.PROVIDER_NPM
    return Used(found.base_url.rstrip("/") + "/chat/completions" if found.base_url and chat else found.base_url,
                _mask(found.key), found.key_from, found.model, found.model_from)


def qwen_used(machine: Machine) -> Used:
    found = qwen_code.effective(machine)
    return Used(found.base_url.rstrip("/") + "/chat/completions" if found.base_url else None, _mask(found.key),
                found.key_from, found.model, found.model_from)


READERS = {claude_code.NAME: claude, codex.NAME: codex_used, cline.NAME: cline_used, gemini_cli.NAME: gemini_used,
           openclaw.NAME: openclaw_used, opencode.NAME: opencode_used, qwen_code.NAME: qwen_used}


def used_by(name: str, machine: Machine) -> Used:
    return READERS[name](machine)
