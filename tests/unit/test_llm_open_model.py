"""open_model: the ChatModel of a config entry, chosen by ref; clear errors when there is none."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import codemode_kernel.llm as llm
from codemode_kernel.config import Config
from codemode_kernel.config.models import ModelConfig
from codemode_kernel.core.errors import ConfigError
from codemode_kernel.llm import AnthropicChatModel, Message, OpenAIChatModel, open_model
from codemode_kernel.llm.scripted import ScriptedModelServer


def config(tmp_path: Path, *models: ModelConfig) -> Config:
    return Config(workspace=tmp_path, models=list(models), settings_source=tmp_path / "codemode.json")


def test_open_model_picks_the_entry_by_ref_and_talks_to_its_endpoint(tmp_path: Path) -> None:
    with ScriptedModelServer(lambda request: f"{request.api} answered {request.model}") as server:
        cfg = config(
            tmp_path,
            ModelConfig(ref="local", provider="openai", model="qwen3", base_url=server.base_url),
            ModelConfig(ref="claude", provider="anthropic", model="claude-x", base_url=server.url),
        )

        async def ask(ref: str | None) -> str:
            model = open_model(cfg, ref)
            try:
                return (await model.complete([Message("user", "hi")])).text
            finally:
                await model.aclose()  # type: ignore[attr-defined]

        assert asyncio.run(ask("claude")) == "anthropic answered claude-x"
        assert asyncio.run(ask(None)) == "openai answered qwen3"  # no ref: the first entry
    first, second = server.requests
    assert (first.path, first.model) == ("/v1/messages", "claude-x")
    assert (second.path, second.model) == ("/v1/chat/completions", "qwen3")


def test_the_model_knows_its_ref_provider_and_model(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        ModelConfig(ref="fast", provider="openai", model="gpt-4.1-mini"),
        ModelConfig(ref="sonnet", provider="anthropic", model="claude-sonnet-4-5"),
    )
    fast, sonnet = open_model(cfg, "fast"), open_model(cfg, "sonnet")
    assert isinstance(fast, OpenAIChatModel) and isinstance(sonnet, AnthropicChatModel)
    assert (fast.ref, fast.provider, fast.model) == ("fast", "openai", "gpt-4.1-mini")
    assert (sonnet.ref, sonnet.provider, sonnet.model) == ("sonnet", "anthropic", "claude-sonnet-4-5")


def test_options_reach_the_model(tmp_path: Path) -> None:
    model = open_model(config(tmp_path, ModelConfig(ref="m", provider="openai")), max_retries=5, timeout=3.0)
    assert isinstance(model, OpenAIChatModel)
    assert (model.max_retries, model.timeout, model.model) == (5, 3.0, "m")  # the ref stands in for the model


@pytest.mark.parametrize(
    ("entry", "provider"),
    [
        (ModelConfig(ref="claude-haiku"), "anthropic"),
        (ModelConfig(ref="x", model="claude-opus"), "anthropic"),
        (ModelConfig(ref="x", base_url="https://api.anthropic.com"), "anthropic"),
        (ModelConfig(ref="qwen3", base_url="http://localhost:11434/v1"), "openai"),
        (ModelConfig(ref="gpt-4.1"), "openai"),
    ],
)
def test_without_a_provider_it_is_inferred(tmp_path: Path, entry: ModelConfig, provider: str) -> None:
    assert open_model(config(tmp_path, entry)).provider == provider


def test_an_unknown_ref_lists_the_known_ones(tmp_path: Path) -> None:
    cfg = config(
        tmp_path, ModelConfig(ref="fast", provider="openai"), ModelConfig(ref="local", provider="openai")
    )
    with pytest.raises(ConfigError) as raised:
        open_model(cfg, "opus")
    message = str(raised.value)
    assert 'no model with ref "opus"' in message and '"fast"' in message and '"local"' in message
    assert "codemode.json" in message


def test_no_model_configured_says_how_to_add_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        open_model(config(tmp_path))
    message = str(raised.value)
    assert "no model is configured" in message
    assert '"models": [{"ref":' in message and '"baseUrl": "http://localhost:11434/v1"' in message
    assert "docs/llm.md" in message


def test_all_lists_exactly_the_public_names() -> None:
    modules = {name for name, value in vars(llm).items() if isinstance(value, type(llm))}
    public = {name for name in vars(llm) if not name.startswith("_") and name not in modules}
    assert sorted(llm.__all__) == sorted(public)
