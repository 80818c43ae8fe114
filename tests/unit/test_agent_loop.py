"""The agent loop's logic, with a model that follows scripted turns and records what it was sent.

The model is a boundary fake at the ChatModel protocol; the tools, the hub and the executor are real
(the embedded weather and workspace servers, real worker processes). The end-to-end tests through a
real provider client and the scripted HTTP server are in tests/integration/test_agent.py.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.agent import (
    EXECUTE_PYTHON,
    Agent,
    AgentEvent,
    AgentOptions,
    CodeRequested,
    ExecutionFinished,
    ExecutionOutput,
    ExecutionStarted,
    ExecutionToolCall,
    FinalAnswer,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallRequested,
)
from codemode_kernel.config import CodeModeSettings, load_config
from codemode_kernel.core.errors import AgentError
from codemode_kernel.executor import ExecutionResult, Executor
from codemode_kernel.llm import Message, TextCallback, ToolCall, ToolDefinition, Turn, Usage

pytestmark = pytest.mark.integration

CITIES = ["New York", "Los Angeles", "Chicago", "Miami", "Seattle"]
WEATHER_PROGRAM = """\
cities = [c for c in read_file(path="cities.txt").splitlines() if c]
for city in cities:
    w = get_weather(city=city, unit="fahrenheit")
    print(f"{city}: {w.temperature:.0f}F")
"""


@dataclass
class Sent:
    messages: list[Message]
    system: str | None
    tools: list[ToolDefinition]


@dataclass
class FakeModel:
    """Plays turns in order; a turn with ``delay`` waits first (so a test can cancel it)."""

    turns: list[Turn]
    delay: float = 0.0
    ref: str = "fake"
    provider: str = "test"
    model: str = "fake-1"
    sent: list[Sent] = field(default_factory=list)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        tools: Sequence[ToolDefinition] = (),
        on_text: TextCallback | None = None,
        max_tokens: int | None = None,
    ) -> Turn:
        self.sent.append(Sent(list(messages), system, list(tools)))
        if self.delay:
            await asyncio.sleep(self.delay)
        turn = self.turns.pop(0)
        if on_text is not None and turn.text:
            for word in turn.text.split(" "):
                on_text(word + " ")
        return turn


def code(program: str, call_id: str = "c1", **extra: Any) -> Turn:
    return Turn("", (ToolCall(call_id, EXECUTE_PYTHON, {"code": program, **extra}),), Usage(100, 20))


def tool(name: str, call_id: str, **arguments: Any) -> Turn:
    return Turn("", (ToolCall(call_id, name, arguments),), Usage(100, 10))


def answer(text: str) -> Turn:
    return Turn(text, (), Usage(120, 15), "stop")


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Toolbox]:
    path = tmp_path_factory.mktemp("ws")
    (path / "cities.txt").write_text("\n".join(CITIES) + "\n")
    servers = {
        "weather": {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]},
        "workspace": {
            "command": sys.executable,
            "args": ["-m", "codemode_kernel.servers.workspace", "--root", str(path)],
        },
    }
    (path / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(path)}))
    with Toolbox(load_config(path / "codemode.json")) as tb:
        yield tb


@pytest.fixture(scope="module")
def executor(toolbox: Toolbox) -> Iterator[Executor]:
    with Executor(toolbox, grace=1.0) as ex:
        yield ex


def run(agent: Agent, request: str, **kwargs: Any) -> Any:
    return asyncio.run(agent.run(request, **kwargs))


def calls_since(toolbox: Toolbox, mark: int) -> list[Any]:
    return [r for r in toolbox.hub.call_log.records()[mark:] if r.status != "running"]


def test_one_program_makes_every_call_and_the_model_sees_only_its_output(
    toolbox: Toolbox, executor: Executor
) -> None:
    model = FakeModel([code(WEATHER_PROGRAM), answer("Here is the weather.")])
    agent = Agent(toolbox, executor, model, CodeModeSettings())
    mark = len(toolbox.hub.call_log.records())
    events: list[AgentEvent] = []
    result = run(agent, "Get the weather for each city in cities.txt", on_event=events.append)

    assert result.status == "answered" and result.answer == "Here is the weather."
    assert result.round_trips == 2 and result.code_mode
    assert result.usage == Usage(220, 35)
    calls = calls_since(toolbox, mark)
    assert [c.tool for c in calls] == ["read_file"] + ["get_weather"] * 5
    execution = result.steps[0].actions[0].execution
    assert execution is not None and execution.status == "ok"
    assert {c.execution_id for c in calls} == {execution.execution_id}

    sent_back = [m for m in model.sent[1].messages if m.role == "tool"]
    assert len(sent_back) == 1 and sent_back[0].tool_call_id == "c1" and not sent_back[0].is_error
    lines = sent_back[0].content.splitlines()
    assert [line.split(":")[0] for line in lines[:5]] == CITIES
    assert lines[5].startswith("[ok in ") and lines[5].endswith("6 tool calls]")
    assert "conditions" not in sent_back[0].content  # the tools' JSON never reached the model
    assert [d.name for d in model.sent[0].tools] == [EXECUTE_PYTHON]
    assert "def get_weather(" in model.sent[0].tools[0].description

    kinds = [type(e) for e in events]
    assert kinds[:3] == [StepStarted, CodeRequested, ExecutionStarted]
    assert kinds.count(ExecutionToolCall) == 12  # each call started and ended
    assert "".join(e.text for e in events if isinstance(e, ExecutionOutput)) == execution.stdout
    finished = next(e for e in events if isinstance(e, ExecutionFinished))
    assert finished.result is execution and finished.text == sent_back[0].content
    assert kinds.index(ExecutionFinished) > max(i for i, k in enumerate(kinds) if k is ExecutionOutput)
    assert isinstance(events[-1], FinalAnswer) and events[-1].status == "answered"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).strip() == "Here is the weather."
    step_done = [e for e in events if isinstance(e, StepFinished)]
    assert [e.step for e in step_done] == [1, 2] and step_done[0].execution_ms > 0


def test_classic_mode_makes_each_call_a_round_trip(toolbox: Toolbox, executor: Executor) -> None:
    turns = [tool("read_file", "t0", path="cities.txt")]
    turns += [tool("get_weather", f"t{i}", city=c, unit="fahrenheit") for i, c in enumerate(CITIES, 1)]
    model = FakeModel([*turns, answer("Done.")])
    agent = Agent(toolbox, executor, model, CodeModeSettings(enabled=False))
    mark = len(toolbox.hub.call_log.records())
    events: list[AgentEvent] = []
    result = run(agent, "Get the weather for each city in cities.txt", on_event=events.append)

    assert result.status == "answered" and not result.code_mode
    assert result.round_trips == 7
    calls = calls_since(toolbox, mark)
    assert [c.tool for c in calls] == ["read_file"] + ["get_weather"] * 5
    assert all(c.execution_id is None for c in calls)
    names = {d.name for d in model.sent[0].tools}
    assert EXECUTE_PYTHON not in names and {"read_file", "get_weather", "get_forecast"} <= names
    assert model.sent[1].messages[-1].content == "\n".join(CITIES) + "\n"
    weather = json.loads(model.sent[2].messages[-1].content)
    assert weather["city"] == "New York" and "conditions" in weather  # the whole JSON, every time
    assert [type(e) for e in events].count(ToolCallRequested) == 6
    assert all(not e.is_error for e in events if isinstance(e, ToolCallFinished))


def test_a_bug_comes_back_with_its_line_and_the_fix_runs(toolbox: Toolbox, executor: Executor) -> None:
    buggy = 'w = get_weather(city="Oslo", unit="celsius")\n\nprint(w.temprature)\n'
    fixed = 'w = get_weather(city="Oslo", unit="celsius")\n\nprint(w.temperature)\n'
    model = FakeModel([code(buggy, "c1"), code(fixed, "c2"), answer("It is mild.")])
    result = run(Agent(toolbox, executor, model, CodeModeSettings()), "Weather in Oslo?")
    error_message = model.sent[1].messages[-1]
    assert error_message.is_error and error_message.tool_call_id == "c1"
    assert "line 3" in error_message.content and "temprature" in error_message.content
    assert "fix the program and call execute_python again" in error_message.content
    ok = model.sent[2].messages[-1]
    assert not ok.is_error and ok.content.startswith(tuple("-0123456789"))
    assert [a.execution.status for s in result.steps for a in s.actions if a.execution] == ["error", "ok"]


def test_a_timeout_goes_back_to_the_model(toolbox: Toolbox, executor: Executor) -> None:
    model = FakeModel([code('print("started")\nwhile True:\n    pass\n', timeout=1), answer("Too slow.")])
    result = run(Agent(toolbox, executor, model, CodeModeSettings()), "Loop forever")
    sent = model.sent[1].messages[-1]
    assert sent.is_error and sent.content.startswith("started\n")
    assert "[timeout: stopped after 1 s" in sent.content
    assert result.status == "answered"


def test_an_out_of_range_timeout_is_refused_as_every_front_door_does(
    toolbox: Toolbox, executor: Executor
) -> None:
    model = FakeModel([code("1 + 1", timeout=9000), code("1 + 1", timeout=300), answer("2")])
    result = run(Agent(toolbox, executor, model, CodeModeSettings()), "add")
    refused = model.sent[1].messages[-1]
    assert refused.is_error
    assert refused.content.startswith("timeout: 9000 seconds is outside 1 to 300; pass a number of seconds")
    assert refused.content.endswith("or leave timeout out for the default. Then call execute_python again.\n")
    assert [execution.timeout_s for execution in result.executions] == [300]  # the refused one did not run


def test_a_timeout_above_max_timeout_is_refused_naming_the_setting(
    toolbox: Toolbox, executor: Executor
) -> None:
    model = FakeModel([code("1 + 1", timeout=2000), code("1 + 1", timeout=2), answer("2")])
    settings = CodeModeSettings(max_timeout=1800)
    result = run(Agent(toolbox, executor, model, settings), "add")
    assert model.sent[0].tools[0].parameters["properties"]["timeout"]["maximum"] == 1800
    refused = model.sent[1].messages[-1]
    assert refused.is_error and refused.content.startswith("timeout: 2000 seconds is outside 1 to 1800; ")
    assert "set defaults.codeMode.maxTimeout to 2000 or more (up to 3600)" in refused.content
    assert [execution.timeout_s for execution in result.executions] == [2]


def test_an_excluded_tool_is_an_ordinary_tool_called_through_the_hub(
    toolbox: Toolbox, executor: Executor
) -> None:
    model = FakeModel([tool("get_city", "k1"), answer("You are in a city.")])
    agent = Agent(toolbox, executor, model, CodeModeSettings(excluded_tools=["weather/get_city"]))
    mark = len(toolbox.hub.call_log.records())
    result = run(agent, "Where am I?")
    assert [d.name for d in model.sent[0].tools] == [EXECUTE_PYTHON, "get_city"]
    assert "def get_city" not in model.sent[0].tools[0].description
    calls = calls_since(toolbox, mark)
    assert [(c.tool, c.execution_id) for c in calls] == [("get_city", None)]
    assert json.loads(model.sent[1].messages[-1].content)["city"]
    action = result.steps[0].actions[0]
    assert action.kind == "tool" and action.tool == "get_city" and action.tool_result is not None


def test_mistakes_in_calls_go_back_to_the_model(toolbox: Toolbox, executor: Executor) -> None:
    turns = [
        Turn("", (ToolCall("a", EXECUTE_PYTHON, {}, "{not json"),)),
        tool("no_such_tool", "b"),
        tool("get_weather", "c", city="Oslo", unit="kelvin"),
        answer("Gave up."),
    ]
    model = FakeModel(turns)
    agent = Agent(toolbox, executor, model, CodeModeSettings(excluded_tools=["get_weather"]))
    result = run(agent, "try things")
    replies = [m for m in model.sent[-1].messages if m.role == "tool"]
    assert all(r.is_error for r in replies)
    assert 'needs "code"' in replies[0].content and "{not json" in replies[0].content
    assert "no tool named 'no_such_tool'" in replies[1].content and "execute_python" in replies[1].content
    assert replies[2].content.startswith("ToolArgumentError") and "unit" in replies[2].content
    assert result.status == "answered"


def test_the_conversation_continues_until_reset(toolbox: Toolbox, executor: Executor) -> None:
    model = FakeModel([answer("First."), answer("Second."), answer("Fresh.")])
    agent = Agent(toolbox, executor, model, CodeModeSettings())
    run(agent, "one")
    run(agent, "two")
    assert [(m.role, m.content) for m in model.sent[1].messages] == [
        ("user", "one"),
        ("assistant", "First."),
        ("user", "two"),
    ]
    agent.reset()
    run(agent, "three")
    assert [(m.role, m.content) for m in model.sent[2].messages] == [("user", "three")]


def test_max_steps_stops_with_a_clear_message(toolbox: Toolbox, executor: Executor) -> None:
    model = FakeModel([code("1", "a"), code("2", "b"), code("3", "c")])
    events: list[AgentEvent] = []
    agent = Agent(toolbox, executor, model, CodeModeSettings())
    result = run(agent, "loop", max_steps=2, on_event=events.append)
    assert result.status == "max_steps" and result.round_trips == 2
    assert "Stopped after 2 steps" in result.answer
    assert isinstance(events[-1], FinalAnswer) and events[-1].status == "max_steps"
    assert agent.messages[-1].role == "tool"  # a follow-up request can continue from here


def test_cancelling_the_task_stops_the_execution_and_keeps_the_conversation_valid(
    toolbox: Toolbox, executor: Executor
) -> None:
    model = FakeModel([code("import time\nprint('going', flush=True)\ntime.sleep(30)\n")])
    agent = Agent(toolbox, executor, model, CodeModeSettings())

    async def scenario() -> None:
        started = asyncio.Event()

        def watch(event: AgentEvent) -> None:
            if isinstance(event, ExecutionOutput):
                started.set()

        task = asyncio.create_task(agent.run("sleep", on_event=watch))
        await asyncio.wait_for(started.wait(), 20)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool"]
    assert agent.messages[-1].is_error and "not run" in agent.messages[-1].content
    assert executor.run("1 + 1", timeout=10).status == "ok"  # the executor is usable again


def test_cancelling_the_model_request_drops_the_unanswered_request(
    toolbox: Toolbox, executor: Executor
) -> None:
    agent = Agent(toolbox, executor, FakeModel([answer("late")], delay=30), CodeModeSettings())

    async def scenario() -> None:
        task = asyncio.create_task(agent.run("hello"))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert agent.messages == []


def test_the_whole_request_has_a_deadline(toolbox: Toolbox, executor: Executor) -> None:
    model = FakeModel([code("import time\ntime.sleep(30)\n")])
    agent = Agent(toolbox, executor, model, CodeModeSettings())
    result = run(agent, "sleep", timeout=2)
    assert result.status == "timeout" and "did not finish within 2 s" in result.answer
    assert result.duration_ms < 10_000
    assert agent.messages[-1].role == "tool" and agent.messages[-1].is_error


def test_a_large_output_is_cut_and_kept_whole_as_an_artifact(toolbox: Toolbox, executor: Executor) -> None:
    program = "for i in range(20000):\n    print(f'row {i}')\n"
    model = FakeModel([code(program), answer("Many rows.")])
    agent = Agent(toolbox, executor, model, CodeModeSettings(), options=AgentOptions(result_budget=2000))
    run(agent, "print a lot")
    sent = model.sent[1].messages[-1].content
    assert len(sent) <= 2000
    assert sent.startswith("row 0\n") and "row 19999\n" in sent and "[ok in " in sent
    artifact_id = sent.split("the whole is artifact ")[1].split(":")[0]
    assert executor.artifacts.load(artifact_id).startswith("row 0\nrow 1\n")
    assert "row 12345\n" in executor.artifacts.load(artifact_id)


class InternalFailure:
    """An executor whose worker cannot start: every run ends ``internal`` (a boundary fake)."""

    llm = None

    def __init__(self, real: Executor) -> None:
        self.artifacts = real.artifacts

    def start(self, code: str, **_: Any) -> Ended:
        return Ended(
            ExecutionResult(
                status="internal",
                execution_id="x",
                error={"type": "InternalError", "message": "could not start a worker: no zygote"},
            )
        )


class Ended:
    """A background run that ended at once (what the agent reads of ``executor.jobs.Job``)."""

    def __init__(self, result: ExecutionResult) -> None:
        self.result, self.execution_id, self.done = result, result.execution_id, True

    async def wait_async(self, timeout: float, *, until_note: bool = False) -> ExecutionResult:
        return self.result


def test_an_internal_failure_stops_the_agent_and_tells_the_user(toolbox: Toolbox, executor: Executor) -> None:
    model = FakeModel([code("1"), answer("never sent")])
    agent = Agent(toolbox, InternalFailure(executor), model, CodeModeSettings())  # type: ignore[arg-type]
    with pytest.raises(AgentError, match="could not start a worker") as caught:
        run(agent, "anything")
    assert len(model.sent) == 1  # the failure was not sent back to the model
    assert caught.value.result.round_trips == 1
    assert "Restart the kernel" in str(caught.value)
    assert agent.messages[-1].role == "tool"


def test_a_model_level_code_mode_is_used_when_the_config_knows_the_model(tmp_path: Path) -> None:
    config = {
        "mcpServers": {},
        "workspace": str(tmp_path),
        "defaults": {"codeMode": {"enabled": True}},
        "models": [{"ref": "fake", "provider": "openai", "model": "m", "codeMode": {"enabled": False}}],
    }
    (tmp_path / "codemode.json").write_text(json.dumps(config))
    with Toolbox(load_config(tmp_path / "codemode.json")) as tb, Executor(tb) as ex:
        assert not Agent(tb, ex, FakeModel([])).code_mode
        assert Agent(tb, ex, FakeModel([], ref="unknown")).code_mode
