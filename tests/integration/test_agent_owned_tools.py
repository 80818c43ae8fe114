"""The agent with the caller's own tools: answered in this process, or pending until the caller answers.

Real worker processes and the weather server; the model is the scripted OpenAI-compatible server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.agent import Agent
from codemode_kernel.config import load_config
from codemode_kernel.core.errors import AgentError
from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.executor import Executor
from codemode_kernel.executor.owned import OwnedTool, answered, call_result
from codemode_kernel.llm import OpenAIChatModel
from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedToolCall, ScriptedTurn
from tests.integration.test_agent import workspace_config

pytestmark = pytest.mark.integration
T = TypeVar("T")

DOUBLE = ToolSpec(
    server="notebook",
    name="double",
    description="Double a number.",
    input_schema={"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
)
SEARCH = ToolSpec(
    server="client",
    name="web_search",
    description="Search the web (the caller runs it).",
    input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


@pytest.fixture(scope="module")
def executor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Executor]:
    with Toolbox(load_config(workspace_config(tmp_path_factory.mktemp("ws")))) as tb, Executor(tb) as ex:
        yield ex


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as scripted:
        yield scripted


def _agent(executor: Executor, server: ScriptedModelServer) -> Agent:
    return Agent(executor.toolbox, executor, OpenAIChatModel("scripted", base_url=server.base_url, env={}))


def _on_one_loop(agent: Agent, steps: Callable[[], Awaitable[T]]) -> T:
    async def main() -> T:
        try:
            return await steps()
        finally:
            await agent.model.aclose()  # type: ignore[attr-defined]

    return asyncio.run(main())


def test_a_tool_answered_here_is_a_function_in_the_models_programs(
    executor: Executor, server: ScriptedModelServer
) -> None:
    seen: list[int] = []

    async def answer(arguments: dict[str, Any]) -> dict[str, Any]:
        seen.append(arguments["x"])
        return call_result(str(arguments["x"] * 2))

    program = "print(sum(int(double(x=i)) for i in range(100)))"
    server.add(ScriptedTurn(tool_calls=[ScriptedToolCall("execute_python", {"code": program})]), "9900.")
    agent = _agent(executor, server)
    result = _on_one_loop(agent, lambda: agent.run("Sum the doubles", tools=[OwnedTool(DOUBLE, answer)]))
    assert result.status == "answered" and result.answer == "9900."
    assert seen == list(range(100))
    described = server.requests[0].body["tools"][0]["function"]["description"]
    assert "def double(x: int)" in described
    sent = [m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert sent[0].startswith("9900\n")


def test_a_callers_tools_stop_the_run_pending_and_resume_goes_on(
    executor: Executor, server: ScriptedModelServer
) -> None:
    program = (
        'hits = parallel([lambda q=q: web_search(query=q) for q in ("sport", "world")])\n'
        'w = get_weather(city="Oslo", unit="celsius")\n'
        'print(hits, w.city, web_search(query="more"))'
    )
    server.add(
        ScriptedTurn(tool_calls=[ScriptedToolCall("execute_python", {"code": program})]),
        "Here is the news.",
    )
    agent = _agent(executor, server)
    tools = [OwnedTool(SEARCH)]

    async def steps() -> list[Any]:
        # resume() continues the same AgentResult: read each round's status as it comes.
        first = await agent.run("News?", tools=tools)
        first_status, batch = first.status, list(first.pending_calls)
        second = await agent.resume(
            [answered(c, call_result(c["arguments"]["query"].upper())) for c in batch]
        )
        second_status, last = second.status, list(second.pending_calls)
        third = await agent.resume([answered(last[0], error="no more results")])
        return [first_status, batch, second_status, last, third]

    first_status, batch, second_status, last, result = _on_one_loop(agent, steps)
    assert first_status == "pending" and [c["arguments"]["query"] for c in batch] == ["sport", "world"]
    assert second_status == "pending" and [c["arguments"] for c in last] == [{"query": "more"}]
    assert result.status == "answered" and result.answer == "Here is the news."
    assert len(server.requests) == 2  # the model was asked once per turn, not once per round
    sent = [m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert len(sent) == 1 and "ToolError" in sent[0] and "no more results" in sent[0]
    (action,) = result.steps[0].actions
    assert action.execution is not None and action.execution.status == "error"
    live = [c for c in action.execution.tool_calls if c["tool"] == "get_weather"]
    assert live and "no server was called" in live[0]["warnings"][0]  # replayed on the last round
    with pytest.raises(AgentError, match="nothing to resume"):
        _on_one_loop(agent, lambda: agent.resume([]))


def test_a_program_stopped_pending_and_left_is_answered_as_not_run(
    executor: Executor, server: ScriptedModelServer
) -> None:
    server.add(
        ScriptedTurn(tool_calls=[ScriptedToolCall("execute_python", {"code": 'web_search(query="x")'})]),
        "Fine.",
    )
    agent = _agent(executor, server)

    async def steps() -> Any:
        await agent.run("Search", tools=[OwnedTool(SEARCH)])
        return await agent.run("Never mind")

    assert _on_one_loop(agent, steps).answer == "Fine."
    messages = server.requests[-1].body["messages"]
    assert [m["role"] for m in messages[-3:]] == ["assistant", "tool", "user"]
    assert messages[-2]["content"].startswith("[not run:")
