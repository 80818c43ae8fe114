"""One factory makes a tool function from a type model; only where its calls go differs (hub or channel)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

from codemode_kernel.core.errors import ToolArgumentError, ToolError
from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.hub.validation import ArgumentValidator
from codemode_kernel.typegen import (
    build_tool_model,
    make_async_tool_function,
    make_docstring,
    make_signature,
    make_tool_function,
)

SPEC = ToolSpec(
    server="weather",
    name="get-weather",
    description="Current weather for a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
    output_schema={
        "type": "object",
        "properties": {"result": {"type": "number"}},
        "required": ["result"],
        "x-fastmcp-wrap-result": True,
    },
)
MODEL = build_tool_model(SPEC, "get_weather", check=ArgumentValidator)


def answer(arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool that answers with the number of arguments it got, or an error for Atlantis."""
    if arguments.get("city") == "Atlantis":
        return {"isError": True, "content": [{"type": "text", "text": "no such city"}]}
    return {"content": [], "structuredContent": {"result": len(arguments)}}


def test_the_function_binds_calls_and_decodes() -> None:
    sent: list[dict[str, Any]] = []

    def call(arguments: dict[str, Any], on_progress: Any) -> dict[str, Any]:
        assert on_progress is None
        sent.append(arguments)
        return answer(arguments)

    function = make_tool_function(MODEL, call, module="tools")
    assert function("Oslo", days=2) == 2  # {"result": 2} unwrapped, as the SDK's wrapped results are
    assert sent == [{"city": "Oslo", "days": 2}]
    with pytest.raises(ToolError, match="no such city") as raised:
        function(city="Atlantis")
    assert (raised.value.tool, raised.value.server) == ("get-weather", "weather")
    with pytest.raises(ToolArgumentError):
        function()  # the required city is missing: nothing is sent
    assert len(sent) == 2


def test_the_async_twin_does_the_same_awaited() -> None:
    async def acall(arguments: dict[str, Any], on_progress: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return answer(arguments)

    function = make_async_tool_function(MODEL, acall, module="tools")
    assert inspect.iscoroutinefunction(function)
    assert asyncio.run(function("Oslo")) == 1
    with pytest.raises(ToolError):
        asyncio.run(function("Atlantis"))


@pytest.mark.parametrize("factory", [make_tool_function, make_async_tool_function])
def test_both_have_the_tool_s_face(factory: Any) -> None:
    function = factory(
        MODEL, lambda arguments, on_progress: answer(arguments), module="codemode_kernel.tools"
    )
    assert (function.__name__, function.__qualname__) == ("get_weather", "get_weather")
    assert function.__module__ == "codemode_kernel.tools"
    assert function.__doc__ == make_docstring(MODEL)
    assert inspect.signature(function) == make_signature(MODEL)


def test_on_progress_is_taken_out_of_the_arguments_and_handed_to_the_call() -> None:
    handed: list[Any] = []

    def call(arguments: dict[str, Any], on_progress: Any) -> dict[str, Any]:
        handed.append(on_progress)
        return answer(arguments)

    def watch(update: Any) -> None:
        pass

    function = make_tool_function(MODEL, call, module="tools")
    assert function("Oslo", on_progress=watch) == 1  # not sent as an argument of the tool
    assert handed == [watch]
    with pytest.raises(TypeError, match="on_progress must be a function of one argument"):
        function("Oslo", on_progress=3)
