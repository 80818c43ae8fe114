"""Tools owned by the caller of Executor.run: answered in this process, or by the caller (pending calls).

Real worker processes and the real weather server; the caller's tools are the only thing not behind MCP.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.core.errors import ToolNameCollisionError
from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.executor import Executor
from codemode_kernel.executor.owned import OwnedTool, answered

pytestmark = pytest.mark.integration

WEATHER = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
SEARCH = ToolSpec(
    server="client",
    name="web_search",
    description="Search the web; the caller runs it.",
    input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
SCALE = ToolSpec(
    server="notebook",
    name="scale",
    description="Multiply a number.",
    input_schema={
        "type": "object",
        "properties": {"x": {"type": "number"}, "factor": {"type": "integer", "default": 2}},
        "required": ["x"],
    },
    output_schema={"type": "object", "properties": {"result": {"type": "number"}}, "required": ["result"]},
)


@pytest.fixture(scope="module")
def executor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Executor]:
    path = tmp_path_factory.mktemp("owned")
    (path / "codemode.json").write_text(
        json.dumps({"mcpServers": {"weather": WEATHER}, "workspace": str(path)})
    )
    with Toolbox(load_config(path / "codemode.json")) as tb, Executor(tb, grace=1.0) as ex:
        yield ex


def _scale_tool(seen: list[dict[str, Any]]) -> OwnedTool:
    async def answer(arguments: dict[str, Any]) -> dict[str, Any]:
        seen.append(arguments)
        if arguments["x"] < 0:
            raise ValueError("negative numbers are not supported")
        value = arguments["x"] * arguments.get("factor", 2)
        return {
            "content": [{"type": "text", "text": json.dumps({"result": value})}],
            "structuredContent": {"result": value},
        }

    return OwnedTool(SCALE, answer)


def test_a_tool_answered_in_this_process_is_a_typed_function_called_100_times(executor: Executor) -> None:
    seen: list[dict[str, Any]] = []
    code = "total = 0\nfor i in range(100):\n    total += scale(x=i, factor=3).result\ntotal"
    result = executor.run(code, tools=[_scale_tool(seen)])
    assert result.status == "ok", result.error
    assert result.value == {"kind": "json", "data": 3 * sum(range(100))}
    assert len(seen) == 100 and seen[7] == {"x": 7, "factor": 3}
    assert {(c["server"], c["tool"], c["status"]) for c in result.tool_calls} == {("notebook", "scale", "ok")}
    assert [c["seq"] for c in result.tool_calls] == list(range(1, 101))
    # The next run without it has no such function; with it again, the stub is there for help().
    assert executor.run("scale(x=1)").error["type"] == "NameError"  # type: ignore[index]
    doc = executor.run("import inspect\nstr(inspect.signature(scale))", tools=[_scale_tool(seen)])
    assert doc.value == {"kind": "text", "text": "(x: float, *, factor: int = 2) -> tools.ScaleOutput"}


def test_bad_arguments_and_a_failing_owner_are_errors_at_the_programs_line(executor: Executor) -> None:
    seen: list[dict[str, Any]] = []
    bad = executor.run('x = 1\nscale(x="ten")', tools=[_scale_tool(seen)])
    assert bad.error is not None and (bad.error["type"], bad.error["line"]) == ("ToolArgumentError", 2)
    assert "x" in bad.error["message"] and not seen  # refused before the owner saw it
    failing = executor.run(
        "try:\n    scale(x=-1)\nexcept ToolError as e:\n    caught = str(e)\ncaught",
        tools=[_scale_tool(seen)],
    )
    assert failing.value == {
        "kind": "text",
        "text": "scale raised ValueError: negative numbers are not supported",
    }
    assert failing.tool_calls[0]["status"] == "tool_error"


def test_a_replay_answers_an_owned_tool_from_the_record_without_calling_it(executor: Executor) -> None:
    seen: list[dict[str, Any]] = []
    first = executor.run("scale(x=4).result", tools=[_scale_tool(seen)])
    again = executor.run("scale(x=4).result", tools=[_scale_tool(seen)], replay=first.tool_calls)
    assert again.value == first.value == {"kind": "json", "data": 8}
    assert len(seen) == 1


def test_a_callers_tools_come_back_as_pending_calls_a_parallel_batch_at_once(executor: Executor) -> None:
    code = (
        'here = get_weather(city="Oslo", unit="celsius")\n'
        'hits = parallel([lambda q=q: web_search(query=q) for q in ("sport news", "world news")])\n'
        'print("resumed")\n'
        'more = web_search(query=f"{here.city} {hits[0]}")\n'
        "[hits, more]"
    )
    tools = [OwnedTool(SEARCH)]
    hub_calls = executor.toolbox.hub.call_log
    live_before = sum(1 for r in hub_calls.records() if r.tool == "get_weather" and not r.warnings)
    first = executor.run(code, tools=tools, replay=[])
    assert first.status == "pending", first.error
    assert [(c["tool"], c["arguments"], c["seq"]) for c in first.pending_calls] == [
        ("web_search", {"query": "sport news"}, 2),
        ("web_search", {"query": "world news"}, 3),
    ]
    assert [c["tool"] for c in first.tool_calls] == ["get_weather"]  # made live, kept for the next round
    record = [
        *first.tool_calls,
        *(answered(c, _text(c["arguments"]["query"].upper())) for c in first.pending_calls),
    ]
    second = executor.run(code, tools=tools, replay=record)
    assert second.status == "pending" and second.stdout == "resumed\n"
    (last,) = second.pending_calls
    assert last["arguments"] == {"query": "Oslo SPORT NEWS"} and last["seq"] == 4
    record += [answered(last, _text("nothing new"))]
    done = executor.run(code, tools=tools, replay=record)
    assert done.status == "ok", done.error
    assert done.value == {"kind": "json", "data": [["SPORT NEWS", "WORLD NEWS"], "nothing new"]}
    live_after = sum(1 for r in hub_calls.records() if r.tool == "get_weather" and not r.warnings)
    assert live_after - live_before == 1  # the server was called once over three runs: replayed after


def test_a_caller_may_fail_a_pending_call_and_the_program_catches_it(executor: Executor) -> None:
    code = 'try:\n    web_search(query="x")\nexcept ToolError as e:\n    caught = str(e)\ncaught'
    first = executor.run(code, tools=[OwnedTool(SEARCH)], replay=[])
    record = [answered(first.pending_calls[0], error="quota exceeded")]
    done = executor.run(code, tools=[OwnedTool(SEARCH)], replay=record)
    assert done.value == {"kind": "text", "text": "quota exceeded"}


def test_a_resumed_program_that_asks_something_else_fails_naming_the_first_difference(
    executor: Executor,
) -> None:
    first = executor.run('web_search(query="a")', tools=[OwnedTool(SEARCH)], replay=[])
    record = [answered(first.pending_calls[0], _text("A"))]
    other = executor.run('web_search(query="b")', tools=[OwnedTool(SEARCH)], replay=record)
    assert other.status == "error" and other.error is not None
    assert other.error["message"].startswith(
        "replay diverged at call 1: the program called web_search(query='b'), where the record has "
        "web_search(query='a')"
    )


def test_a_callers_tool_named_like_a_servers_is_refused_before_running(executor: Executor) -> None:
    clash = ToolSpec(server="client", name="get_weather", description="", input_schema={"type": "object"})
    with pytest.raises(ToolNameCollisionError, match="client/get_weather"):
        executor.run("1", tools=[OwnedTool(clash)])


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}
