"""Which API key a model sends where, and what a model's unusable tool arguments turn into."""

from __future__ import annotations

import asyncio

import pytest

from codemode_kernel.core.errors import LLMAuthError
from codemode_kernel.llm import AnthropicChatModel, Message, OpenAIChatModel, ToolCall, argument_error
from codemode_kernel.llm._arguments import parse_arguments

OPENROUTER = "https://openrouter.ai/api/v1"


@pytest.mark.parametrize(
    ("base_url", "api_key_env", "env", "sent"),
    [
        # The official service: the named variable, else the default one.
        (None, None, {"OPENAI_API_KEY": "sk-default"}, "sk-default"),
        (None, "WORK_KEY", {"WORK_KEY": "sk-work", "OPENAI_API_KEY": "sk-default"}, "sk-work"),
        ("https://api.openai.com/v1", None, {"OPENAI_API_KEY": "sk-default"}, "sk-default"),
        # Another service: only a variable named for it; the default key is never sent there.
        (OPENROUTER, "OPENROUTER_API_KEY", {"OPENROUTER_API_KEY": "sk-or"}, "sk-or"),
        (OPENROUTER, None, {"OPENAI_API_KEY": "sk-default"}, "not-needed"),
        # Local servers work without a key, and use one when it is there.
        ("http://localhost:11434/v1", None, {"OPENAI_API_KEY": "sk-default"}, "not-needed"),
        ("http://192.168.1.20:8000/v1", "VLLM_KEY", {}, "not-needed"),
        ("http://127.0.0.1:1234/v1", "LMSTUDIO_KEY", {"LMSTUDIO_KEY": "lm"}, "lm"),
    ],
)
def test_which_key_is_sent(
    base_url: str | None, api_key_env: str | None, env: dict[str, str], sent: str
) -> None:
    model = OpenAIChatModel("m", base_url=base_url, api_key_env=api_key_env, env=env)
    assert model.endpoint.api_key(env) == sent


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        (OpenAIChatModel("gpt-4.1", ref="gpt", env={}), "OPENAI_API_KEY"),
        (AnthropicChatModel("claude-x", ref="gpt", env={"ANTHROPIC_API_KEY": "  "}), "ANTHROPIC_API_KEY"),
        (
            OpenAIChatModel("x", ref="gpt", base_url=OPENROUTER, api_key_env="OPENROUTER_API_KEY", env={}),
            "OPENROUTER_API_KEY",
        ),
    ],
)
def test_a_missing_key_names_the_variable_and_how_to_set_it(model: OpenAIChatModel, variable: str) -> None:
    with pytest.raises(LLMAuthError) as raised:
        asyncio.run(model.complete([Message("user", "hi")]))
    message = str(raised.value)
    assert f"the environment variable {variable} is not set" in message
    assert f"export {variable}=..." in message and '"apiKeyEnv"' in message and 'models["gpt"]' in message
    assert raised.value.ref == "gpt"


def test_an_anthropic_base_url_ending_in_v1_is_not_doubled() -> None:
    assert (
        AnthropicChatModel("c", base_url="http://localhost:8080/v1/").endpoint.url == "http://localhost:8080"
    )


@pytest.mark.parametrize(
    ("raw", "arguments", "problem"),
    [
        ('{"city": "Paris"}', {"city": "Paris"}, None),
        ("", {}, None),
        ("{}", {}, None),
        ('{"city": "Par', {}, "not valid JSON"),
        ('["Paris"]', {}, "a JSON list, not an object"),
        ('"Paris"', {}, "a JSON str, not an object"),
    ],
)
def test_unusable_arguments_become_an_empty_object_and_a_message(
    raw: str, arguments: dict[str, str], problem: str | None
) -> None:
    assert parse_arguments(raw) == arguments
    message = argument_error(ToolCall("c1", "get_weather", arguments, raw))
    if problem is None:
        assert message is None
    else:
        assert message is not None and problem in message and "get_weather" in message
        assert "Call the tool again" in message
