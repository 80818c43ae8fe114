"""Both providers through the real openai and anthropic clients against the scripted model server.

Every assertion reads what a user would check: the turn that came back, the error message, and the
request the server recorded (what the provider really put on the wire).
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest

from codemode_kernel.core.errors import LLMAuthError, LLMError, LLMModelNotFoundError, LLMUnreachableError
from codemode_kernel.llm import (
    AnthropicChatModel,
    ChatModel,
    Message,
    OpenAIChatModel,
    ToolCall,
    ToolDefinition,
    argument_error,
)
from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedRequest, ScriptedToolCall, ScriptedTurn
from tests.conftest import free_port

T = TypeVar("T")
PROVIDERS = ["openai", "anthropic"]

WEATHER = ToolDefinition(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
FORECAST = ToolDefinition("get_forecast", "Forecast for the next days.")


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as s:
        yield s


def make_model(provider: str, server: ScriptedModelServer | None, **options: Any) -> ChatModel:
    options.setdefault("env", {})
    if provider == "openai":
        url = options.pop("base_url", server.base_url if server else None)
        return OpenAIChatModel(options.pop("model", "scripted"), ref="test", base_url=url, **options)
    url = options.pop("base_url", server.url if server else None)
    return AnthropicChatModel(options.pop("model", "scripted"), ref="test", base_url=url, **options)


def run(model: ChatModel, use: Callable[[ChatModel], Awaitable[T]]) -> T:
    """Run ``use(model)`` on a fresh loop and close the model's connections afterwards."""

    async def main() -> T:
        try:
            return await use(model)
        finally:
            await model.aclose()  # type: ignore[attr-defined]

    return asyncio.run(main())


def ask(provider: str, server: ScriptedModelServer, *messages: Message, **options: Any) -> Any:
    model = make_model(provider, server)
    return run(model, lambda m: m.complete(list(messages) or [Message("user", "hi")], **options))


def model_requests(server: ScriptedModelServer) -> list[ScriptedRequest]:
    return [r for r in server.requests if r.api != "other"]


# -- text, tools, conversations ---------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_text_streams_to_on_text_in_order(provider: str, server: ScriptedModelServer) -> None:
    server.add(ScriptedTurn(text=["The ", "weather ", "is ", "mild."]))
    pieces: list[str] = []
    turn = ask(
        provider, server, Message("user", "How is the weather?"), system="Be brief.", on_text=pieces.append
    )
    assert pieces == ["The ", "weather ", "is ", "mild."]
    assert turn.text == "".join(pieces) == "The weather is mild."
    assert turn.tool_calls == ()
    assert turn.model == "scripted"
    assert turn.stop_reason == ("stop" if provider == "openai" else "end_turn")
    (request,) = model_requests(server)
    assert request.body["stream"] is True
    if provider == "openai":
        assert request.body["messages"][0] == {"role": "system", "content": "Be brief."}
        assert request.body["stream_options"] == {"include_usage": True}
    else:
        assert request.body["system"] == "Be brief."
        assert request.body["messages"] == [{"role": "user", "content": "How is the weather?"}]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_tool_call_and_the_tool_definitions_sent(provider: str, server: ScriptedModelServer) -> None:
    server.add(
        ScriptedTurn(
            text="Let me look.",
            tool_calls=[
                ScriptedToolCall("get_weather", {"city": "Paris"}),
                ScriptedToolCall("get_forecast", {"days": 3, "units": ["C"]}),
            ],
        )
    )
    turn = ask(provider, server, tools=[WEATHER, FORECAST])
    assert turn.text == "Let me look."
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_forecast", {"days": 3, "units": ["C"]}),
    ]
    assert all(c.id for c in turn.tool_calls) and len({c.id for c in turn.tool_calls}) == 2
    assert json.loads(turn.tool_calls[0].raw_arguments) == {"city": "Paris"}
    assert turn.stop_reason == ("tool_calls" if provider == "openai" else "tool_use")
    tools = model_requests(server)[0].body["tools"]
    if provider == "openai":
        assert tools == [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            }
            for t in (WEATHER, FORECAST)
        ]
    else:
        assert tools == [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in (WEATHER, FORECAST)
        ]
    assert tools[1].get("input_schema", tools[1].get("function", {}).get("parameters")) == {
        "type": "object",
        "properties": {},
    }


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bad_json_arguments_keep_the_raw_text(provider: str, server: ScriptedModelServer) -> None:
    server.add(ScriptedTurn(tool_calls=[ScriptedToolCall("get_weather", '{"city": "Par')]))
    turn = ask(provider, server, tools=[WEATHER])
    (call,) = turn.tool_calls
    assert call.arguments == {}
    assert call.raw_arguments == '{"city": "Par'
    message = argument_error(call)
    assert message is not None
    assert "get_weather" in message and "not valid JSON" in message


@pytest.mark.parametrize("provider", PROVIDERS)
def test_conversation_with_tool_results_in_the_wire_format(
    provider: str, server: ScriptedModelServer
) -> None:
    # The scripted model answers from what it was sent: it echoes the tool results back.
    server.add(lambda request: "Results: " + " | ".join(request.tool_results))
    calls = (
        ToolCall("c1", "get_weather", {"city": "Paris"}, '{"city": "Paris"}'),
        ToolCall("c2", "get_forecast", {}),
    )
    conversation = [
        Message("user", "Weather and forecast?"),
        Message("assistant", "Checking.", tool_calls=calls),
        Message("tool", "18 C", tool_call_id="c1"),
        Message("tool", "no such city", tool_call_id="c2", is_error=True),
    ]
    turn = ask(provider, server, *conversation, tools=[WEATHER, FORECAST])
    assert turn.text == "Results: 18 C | no such city"
    sent = model_requests(server)[0].body["messages"]
    if provider == "openai":
        assert sent == [
            {"role": "user", "content": "Weather and forecast?"},
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    },
                    {"id": "c2", "type": "function", "function": {"name": "get_forecast", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
            {"role": "tool", "tool_call_id": "c2", "content": "no such city"},
        ]
    else:
        assert sent == [
            {"role": "user", "content": "Weather and forecast?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "c2", "name": "get_forecast", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "content": "18 C"},
                    {"type": "tool_result", "tool_use_id": "c2", "content": "no such city", "is_error": True},
                ],
            },
        ]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_usage_is_what_the_server_counted(provider: str, server: ScriptedModelServer) -> None:
    server.add("four words of text", "a much longer answer " * 10)
    model = make_model(provider, server)

    async def two(m: ChatModel) -> list[Any]:
        return [
            await m.complete([Message("user", "short")]),
            await m.complete([Message("user", "long " * 200)]),
        ]

    short, long = run(model, two)
    assert short.usage.input_tokens > 0 and short.usage.output_tokens == 5  # 18 characters / 4, rounded up
    assert long.usage.input_tokens > short.usage.input_tokens + 200
    assert long.usage.output_tokens == 53
    assert (short.usage + long.usage).output_tokens == 58


@pytest.mark.parametrize("provider", PROVIDERS)
def test_max_tokens_reaches_the_request(provider: str, server: ScriptedModelServer) -> None:
    server.add("ok", "ok")
    ask(provider, server, max_tokens=77)
    ask(provider, server)
    first, second = model_requests(server)
    assert first.body["max_tokens"] == 77
    # The Messages API needs max_tokens on every request; chat completions leave it to the server.
    assert second.body.get("max_tokens") == (None if provider == "openai" else 4096)


# -- retries and errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_is_retried_then_succeeds(provider: str, server: ScriptedModelServer) -> None:
    server.add(ScriptedTurn(status=429, error="slow down"), "finally")
    turn = ask(provider, server)
    assert turn.text == "finally"
    first, second = model_requests(server)
    assert (first.status, second.status) == (429, 200)
    assert first.body == second.body
    assert second.headers["x-stainless-retry-count"] == "1"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_5xx_retries_run_out_into_an_llm_error(provider: str, server: ScriptedModelServer) -> None:
    server.add(*[ScriptedTurn(status=503, error="overloaded")] * 3)
    model = make_model(provider, server, max_retries=1)
    with pytest.raises(LLMError) as raised:
        run(model, lambda m: m.complete([Message("user", "hi")]))
    assert raised.value.status == 503
    assert "HTTP 503" in str(raised.value) and "after 1 retries" in str(raised.value)
    assert "overloaded" in str(raised.value)
    assert [r.status for r in model_requests(server)] == [503, 503]
    assert server.remaining == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_401_says_the_key_was_refused_and_names_the_variable(
    provider: str, server: ScriptedModelServer
) -> None:
    server.add(ScriptedTurn(status=401, error="invalid x-api-key"))
    model = make_model(provider, server, api_key_env="MY_MODEL_KEY", env={"MY_MODEL_KEY": "sk-wrong"})
    with pytest.raises(LLMAuthError) as raised:
        run(model, lambda m: m.complete([Message("user", "hi")]))
    message = str(raised.value)
    assert "refused the API key" in message and "MY_MODEL_KEY" in message and 'models["test"]' in message
    assert "sk-wrong" not in message
    assert raised.value.status == 401 and raised.value.ref == "test"
    (request,) = model_requests(server)  # not retried
    # The key from the named variable is the one sent (anthropic 2.x also sends it as a bearer token).
    assert request.headers["authorization"] == "Bearer sk-wrong"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_401_without_a_key_variable_says_how_to_add_one(provider: str, server: ScriptedModelServer) -> None:
    server.add(ScriptedTurn(status=401))
    with pytest.raises(LLMAuthError, match='add "apiKeyEnv"'):
        ask(provider, server)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_404_names_the_model_and_the_config_entry(provider: str, server: ScriptedModelServer) -> None:
    server.add(ScriptedTurn(status=404, error="model 'gpt-nope' not found"))
    model = make_model(provider, server, model="gpt-nope")
    with pytest.raises(LLMModelNotFoundError) as raised:
        run(model, lambda m: m.complete([Message("user", "hi")]))
    message = str(raised.value)
    assert '"gpt-nope"' in message and 'models["test"]' in message and server.url in message
    assert model_requests(server)[0].model == "gpt-nope"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unreachable_endpoint_names_the_url(provider: str) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    model = make_model(provider, None, base_url=url + ("/v1" if provider == "openai" else ""), max_retries=0)
    with pytest.raises(LLMUnreachableError) as raised:
        run(model, lambda m: m.complete([Message("user", "hi")]))
    assert url in str(raised.value) and "baseUrl" in str(raised.value)


@pytest.mark.parametrize(
    ("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]
)
def test_missing_key_for_the_official_endpoint_fails_before_any_request(provider: str, variable: str) -> None:
    model = make_model(provider, None, base_url=None, env={})
    started = time.monotonic()
    # An attempted request would fail as unreachable here (no internet); the key check comes first.
    with pytest.raises(LLMAuthError) as raised:
        run(model, lambda m: m.complete([Message("user", "hi")]))
    assert time.monotonic() - started < 1
    assert variable in str(raised.value) and f"export {variable}=" in str(raised.value)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_local_endpoint_needs_no_key(provider: str, server: ScriptedModelServer) -> None:
    server.add("hello")
    model = make_model(provider, server, env={"OPENAI_API_KEY": "sk-real", "ANTHROPIC_API_KEY": "sk-real"})
    assert run(model, lambda m: m.complete([Message("user", "hi")])).text == "hello"
    headers = model_requests(server)[0].headers
    # The default variable is for the official service only: it never leaves for another endpoint.
    assert "sk-real" not in json.dumps(headers)


# -- cancellation -----------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("when", ["while streaming", "before the answer"])
def test_cancelling_the_task_closes_the_request(
    provider: str, when: str, server: ScriptedModelServer
) -> None:
    if when == "while streaming":
        server.add(ScriptedTurn(text=["first ", "second"], pause=30))
    else:
        server.add(ScriptedTurn(text="never", delay=30))
    model = make_model(provider, server)

    async def cancel_midway(m: ChatModel) -> list[str]:
        pieces: list[str] = []
        task = asyncio.create_task(m.complete([Message("user", "hi")], on_text=pieces.append))
        deadline = time.monotonic() + 10
        while not (pieces if when == "while streaming" else model_requests(server)):
            assert time.monotonic() < deadline and not task.done()
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pieces

    started = time.monotonic()
    pieces = run(model, cancel_midway)
    assert server.wait_disconnected(5)
    assert time.monotonic() - started < 10
    assert pieces == (["first "] if when == "while streaming" else [])
    (request,) = model_requests(server)
    assert request.disconnected


@pytest.mark.parametrize("provider", PROVIDERS)
def test_one_model_serves_several_loops_without_leaking(provider: str, server: ScriptedModelServer) -> None:
    # The kernel asks one model from a cell's loop and from the executor's; scripts use asyncio.run.
    server.add("one", "two", "three")
    model = make_model(provider, server)
    answers = [asyncio.run(model.complete([Message("user", "hi")])).text for _ in range(3)]
    gc.collect()  # an unclosed connection would surface here as an unraisable ResourceWarning (an error)
    assert answers == ["one", "two", "three"]
