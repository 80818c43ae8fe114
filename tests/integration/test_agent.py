"""The agent end to end: real provider clients against the scripted model server, real tools and workers.

The scripted turns are fixed (the model's programs do not depend on what the project sends); every
assertion reads what the project did: the requests the server recorded (tool definitions, tool results
as sent on the wire) and the hub's call log.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.agent import EXECUTE_PYTHON, Agent, AgentResult
from codemode_kernel.config import CodeModeSettings, load_config
from codemode_kernel.executor import Executor
from codemode_kernel.llm import AnthropicChatModel, ChatModel, OpenAIChatModel, open_model
from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedRequest, ScriptedToolCall, ScriptedTurn

pytestmark = pytest.mark.integration

CITIES = ["New York", "Los Angeles", "Chicago", "Miami", "Seattle"]
SERVERS = {"weather": {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}}
WEATHER_PROGRAM = """\
cities = [c for c in read_file(path="cities.txt").splitlines() if c]
for city in cities:
    w = get_weather(city=city, unit="fahrenheit")
    print(f"{city}: {w.temperature:.0f}F")
"""


def workspace_config(path: Path, **extra: Any) -> Path:
    (path / "cities.txt").write_text("\n".join(CITIES) + "\n")
    servers = {
        **SERVERS,
        "workspace": {
            "command": sys.executable,
            "args": ["-m", "codemode_kernel.servers.workspace", "--root", str(path)],
        },
    }
    file = path / "codemode.json"
    file.write_text(json.dumps({"mcpServers": servers, "workspace": str(path), **extra}))
    return file


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Toolbox]:
    with Toolbox(load_config(workspace_config(tmp_path_factory.mktemp("ws")))) as tb:
        yield tb


@pytest.fixture(scope="module")
def executor(toolbox: Toolbox) -> Iterator[Executor]:
    with Executor(toolbox, grace=1.0) as ex:
        yield ex


def make_model(provider: str, server: ScriptedModelServer) -> ChatModel:
    if provider == "anthropic":
        return AnthropicChatModel("scripted", ref="scripted", base_url=server.url, env={})
    return OpenAIChatModel("scripted", ref="scripted", base_url=server.base_url, env={})


def ask(agent: Agent, request: str, **options: Any) -> AgentResult:
    """Run one request on a fresh loop and close the model's connections before the loop goes."""

    async def main() -> AgentResult:
        try:
            return await agent.run(request, **options)
        finally:
            await agent.model.aclose()  # type: ignore[attr-defined]

    return asyncio.run(main())


def code_turn(program: str, **extra: Any) -> ScriptedTurn:
    return ScriptedTurn(tool_calls=[ScriptedToolCall(EXECUTE_PYTHON, {"code": program, **extra})])


def model_requests(server: ScriptedModelServer) -> list[ScriptedRequest]:
    return [r for r in server.requests if r.api != "other"]


def offered(request: ScriptedRequest) -> dict[str, dict[str, Any]]:
    """The tools a request offered, by name: description and parameter schema, in either wire format."""
    out = {}
    for tool in request.body.get("tools", []):
        function = tool.get("function", tool)
        schema = function.get("parameters", function.get("input_schema"))
        out[function["name"]] = {"description": function.get("description", ""), "schema": schema}
    return out


def new_calls(toolbox: Toolbox, mark: int) -> list[Any]:
    return [r for r in toolbox.hub.call_log.records()[mark:] if r.status != "running"]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_one_execute_python_call_makes_the_n_plus_one_calls_and_the_model_sees_only_output(
    provider: str, toolbox: Toolbox, executor: Executor
) -> None:
    turns = [code_turn(WEATHER_PROGRAM), ScriptedTurn(text="Here is the weather for the five cities.")]
    with ScriptedModelServer(turns) as server:
        agent = Agent(toolbox, executor, make_model(provider, server), CodeModeSettings())
        mark = len(toolbox.hub.call_log.records())
        result = ask(agent, "Get the weather for each city in cities.txt")

    assert result.answer == "Here is the weather for the five cities."
    requests = model_requests(server)
    assert len(requests) == result.round_trips == 2
    calls = new_calls(toolbox, mark)
    assert [c.tool for c in calls] == ["read_file"] + ["get_weather"] * 5
    execution = result.executions[0]
    assert {c.execution_id for c in calls} == {execution.execution_id}  # all inside the one worker run

    assert list(offered(requests[0])) == [EXECUTE_PYTHON]
    description = offered(requests[0])[EXECUTE_PYTHON]["description"]
    assert 'def get_weather(city: str, unit: Literal["celsius", "fahrenheit"]) -> GetWeatherOutput:' in (
        description
    )
    assert "def read_file(path: str)" in description
    [seen] = requests[1].tool_results
    assert seen == execution.stdout + "[ok in " + seen.split("[ok in ")[1]
    assert [line.split(":")[0] for line in seen.splitlines()[:5]] == CITIES
    assert "conditions" not in seen and "structuredContent" not in seen
    assert result.usage.input_tokens > 0


def test_classic_mode_sends_every_result_through_the_model(toolbox: Toolbox, executor: Executor) -> None:
    turns: list[Any] = [ScriptedTurn(tool_calls=[ScriptedToolCall("read_file", {"path": "cities.txt"})])]
    turns += [
        ScriptedTurn(tool_calls=[ScriptedToolCall("get_weather", {"city": c, "unit": "fahrenheit"})])
        for c in CITIES
    ]
    turns.append("Here is the weather.")
    with ScriptedModelServer(turns) as server:
        agent = Agent(toolbox, executor, make_model("openai", server), CodeModeSettings(enabled=False))
        mark = len(toolbox.hub.call_log.records())
        result = ask(agent, "Get the weather for each city in cities.txt")

    requests = model_requests(server)
    assert len(requests) == result.round_trips == len(CITIES) + 2
    calls = new_calls(toolbox, mark)
    assert [c.tool for c in calls] == ["read_file"] + ["get_weather"] * 5
    assert all(c.execution_id is None for c in calls)
    tools = offered(requests[0])
    assert EXECUTE_PYTHON not in tools
    spec = next(s for s in toolbox.hub.tool_specs() if s.name == "get_weather")
    assert tools["get_weather"]["schema"] == spec.input_schema
    assert [len(r.tool_results) for r in requests] == list(range(len(CITIES) + 2))
    last = requests[-1].tool_results
    assert last[0] == "\n".join(CITIES) + "\n"
    assert [json.loads(text)["city"] for text in last[1:]] == CITIES


def test_a_bug_is_reported_at_its_line_and_the_fixed_program_succeeds(
    toolbox: Toolbox, executor: Executor
) -> None:
    buggy = (
        'cities = read_file(path="cities.txt").splitlines()\ntotal = 0\ntotal += cities[0]\nprint(total)\n'
    )
    fixed = 'cities = read_file(path="cities.txt").splitlines()\nprint(len(cities))\n'
    with ScriptedModelServer([code_turn(buggy), code_turn(fixed), "There are five cities."]) as server:
        result = ask(Agent(toolbox, executor, make_model("openai", server), CodeModeSettings()), "Count them")

    requests = model_requests(server)
    error_text = requests[1].tool_results[0]
    assert "TypeError" in error_text and "line 3" in error_text and "total += cities[0]" in error_text
    assert requests[2].tool_results[1].startswith("5\n[ok in ")
    assert [e.status for e in result.executions] == ["error", "ok"]


def test_a_timeout_is_reported_back(toolbox: Toolbox, executor: Executor) -> None:
    program = 'print("working")\nwhile True:\n    pass\n'
    with ScriptedModelServer([code_turn(program, timeout=1), "It took too long."]) as server:
        result = ask(Agent(toolbox, executor, make_model("openai", server), CodeModeSettings()), "Spin")

    [seen] = model_requests(server)[1].tool_results
    assert seen.startswith("working\n") and "[timeout: stopped after 1 s" in seen
    assert result.executions[0].status == "timeout" and result.answer == "It took too long."


def test_an_excluded_tool_is_offered_as_an_ordinary_tool(toolbox: Toolbox, executor: Executor) -> None:
    turns = [ScriptedTurn(tool_calls=[ScriptedToolCall("get_city", {})]), "You are in the demo city."]
    with ScriptedModelServer(turns) as server:
        settings = CodeModeSettings(excluded_tools=["weather/get_city"])
        mark = len(toolbox.hub.call_log.records())
        ask(Agent(toolbox, executor, make_model("openai", server), settings), "Where am I?")

    requests = model_requests(server)
    tools = offered(requests[0])
    assert list(tools) == [EXECUTE_PYTHON, "get_city"]
    assert "def get_city" not in tools[EXECUTE_PYTHON]["description"]
    assert "call them as separate tools: get_city" in tools[EXECUTE_PYTHON]["description"]
    assert [(c.tool, c.execution_id) for c in new_calls(toolbox, mark)] == [("get_city", None)]
    assert "city" in json.loads(requests[1].tool_results[0])


def test_a_model_level_code_mode_replaces_the_default(tmp_path: Path) -> None:
    with ScriptedModelServer(["Classic answer.", "Code answer."]) as server:
        models = [
            {"ref": "classic", "provider": "openai", "model": "scripted", "baseUrl": server.base_url,
             "codeMode": {"enabled": False}},
            {"ref": "coder", "provider": "openai", "model": "scripted", "baseUrl": server.base_url},
        ]  # fmt: skip
        config = load_config(
            workspace_config(
                tmp_path,
                defaults={"codeMode": {"enabled": True, "excludedTools": ["get_forecast"]}},
                models=models,
            )
        )
        with Toolbox(config) as tb, Executor(tb) as ex:
            ask(Agent(tb, ex, open_model(config, "classic", env={})), "one")
            ask(Agent(tb, ex, open_model(config, "coder", env={})), "two")

    classic, coder = (offered(r) for r in model_requests(server))
    assert EXECUTE_PYTHON not in classic and {"get_weather", "get_forecast", "read_file"} <= set(classic)
    assert list(coder) == [EXECUTE_PYTHON, "get_forecast"]  # the defaults apply: no codeMode of its own
