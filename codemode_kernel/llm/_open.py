"""``open_model``: the ChatModel of a config ``models`` entry."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ..config.models import Config, ModelConfig
from ..core.errors import ConfigError
from ._anthropic import AnthropicChatModel
from ._openai import OpenAIChatModel
from .types import ChatModel

__all__ = ["open_model"]

_EXAMPLE = (
    '"models": [{"ref": "gpt", "provider": "openai", "model": "gpt-4.1-mini", '
    '"apiKeyEnv": "OPENAI_API_KEY"}] '
    '(or, for a local Ollama: {"ref": "local", "provider": "openai", "model": "qwen3", '
    '"baseUrl": "http://localhost:11434/v1"}); see docs/llm.md'
)


def open_model(config: Config, ref: str | None = None, **options: Any) -> ChatModel:
    """The model named ``ref`` in ``config.models`` (the first entry when ``ref`` is None).

    ``options`` go to the model class (``max_retries``, ``timeout``, ``env``). No request is made here:
    a missing key is reported by the first ``complete()``. Raises ConfigError when no model is
    configured (the message shows an entry to add) or no entry has that ref (it lists the known refs).
    """
    if ref is None:
        if not config.models:
            where = str(config.settings_source) if config.settings_source else None
            raise ConfigError(
                "no model is configured", file=where, path="models", fix=f"add one, e.g. {_EXAMPLE}"
            )
        entry = config.models[0]
    else:
        entry = config.get_model(ref)
    if provider_of(entry) == "anthropic":
        return AnthropicChatModel.from_config(entry, **options)
    return OpenAIChatModel.from_config(entry, **options)


def provider_of(entry: ModelConfig) -> str:
    """The entry's provider; without one, Anthropic for its endpoint or a ``claude`` model, else OpenAI."""
    if entry.provider is not None:
        return entry.provider
    host = urlsplit(entry.base_url or "").hostname or ""
    model = (entry.model or entry.ref).lower()
    return "anthropic" if host == "api.anthropic.com" or model.startswith("claude") else "openai"
