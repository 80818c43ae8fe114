"""The agent with programs that outlive their execute_python call: wait for them, cancel them, or end.

Real provider client (OpenAI wire format) against the scripted model server, real worker processes, and a
real stdio server that counts its calls in a file, so a test proves what reached it. The scripted model
reads the execution id from the answer it was sent, as a model would.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.agent import (
    EXECUTE_PYTHON,
    Agent,
    AgentEvent,
    AgentResult,
    ExecutionFinished,
    ExecutionNote,
    ExecutionOutput,
    ExecutionRunning,
)
from codemode_kernel.config import CodeModeSettings, load_config
from codemode_kernel.core.toolspec import ToolSpec
from codemode_kernel.executor import Executor
from codemode_kernel.executor.owned import OwnedTool, answered, call_result
from codemode_kernel.llm import OpenAIChatModel
from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedRequest, ScriptedToolCall, ScriptedTurn

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
COUNTING = ROOT / "tests" / "servers" / "counting_server.py"
FOLLOW_UPS = ["wait_execution", "cancel_execution", "list_executions"]

TICKING = """\
import time
print("tick 0")
notify("started", ticks=7)
for i in range(1, 7):
    time.sleep(1)
    print("tick", i)
"done after 7"
"""

SLOW_CALL = """\
count(label="{label}-before")
notify("counted; the slow call next")
slow_count(label="{label}-never", seconds=60)
print("not reached")
"""


@pytest.fixture(scope="module")
def calls_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("counted") / "calls.txt"


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory: pytest.TempPathFactory, calls_log: Path) -> Iterator[Toolbox]:
    path = tmp_path_factory.mktemp("ws")
    servers = {"counting": {"command": sys.executable, "args": [str(COUNTING), "--log", str(calls_log)]}}
    (path / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(path)}))
    with Toolbox(load_config(path / "codemode.json")) as tb:
        yield tb


@pytest.fixture(scope="module")
def executor(toolbox: Toolbox) -> Iterator[Executor]:
    with Executor(toolbox, grace=1.0) as ex:
        yield ex


def ask(agent: Agent, request: str, events: list[AgentEvent], **options: Any) -> AgentResult:
    async def main() -> AgentResult:
        try:
            return await agent.run(request, on_event=events.append, **options)
        finally:
            await agent.model.aclose()  # type: ignore[attr-defined]

    return asyncio.run(main())


def new_agent(toolbox: Toolbox, executor: Executor, server: ScriptedModelServer) -> Agent:
    model = OpenAIChatModel("scripted", ref="scripted", base_url=server.base_url, env={})
    return Agent(toolbox, executor, model, CodeModeSettings())


def model_requests(server: ScriptedModelServer) -> list[ScriptedRequest]:
    return [r for r in server.requests if r.api != "other"]


def offered(request: ScriptedRequest) -> list[str]:
    return [tool["function"]["name"] for tool in request.body.get("tools", [])]


def execution_id_in(request: ScriptedRequest) -> str:
    """The id the last answer told the model, as a model reads it."""
    match = re.search(r"execution_id (\w+)", request.tool_results[-1])
    assert match, f"the answer names no execution id: {request.tool_results[-1]!r}"
    return match.group(1)


def call(name: str, **arguments: Any) -> ScriptedToolCall:
    return ScriptedToolCall(name, arguments)


def counted(log: Path, label: str) -> int:
    return log.read_text().splitlines().count(label) if log.exists() else 0


def slow_call_started(toolbox: Toolbox, label: str) -> None:
    """Wait until the program's slow call reached the server (the call log says it is running)."""
    deadline = time.monotonic() + 30
    while not any(
        r.tool == "slow_count" and r.status == "running" and r.arguments.get("label") == label
        for r in toolbox.hub.call_log.records()
    ):
        assert time.monotonic() < deadline, "the program's slow call never started"
        time.sleep(0.05)


def test_a_long_program_answers_running_and_wait_execution_brings_the_rest_and_its_value(
    toolbox: Toolbox, executor: Executor
) -> None:
    # The first wait ends at the program's note (whatever the machine's load), the second at its 1 s
    # wait_s (the program is still ticking), the third at the program's end.
    def wait(wait_s: float) -> Any:
        return lambda request: ScriptedTurn(
            tool_calls=[call("wait_execution", execution_id=execution_id_in(request), wait_s=wait_s)]
        )

    turns = [
        ScriptedTurn(tool_calls=[call(EXECUTE_PYTHON, code=TICKING, wait_s=30)]),
        wait(1),
        wait(60),
        "Done.",
    ]
    events: list[AgentEvent] = []
    with ScriptedModelServer(turns) as server:
        result = ask(new_agent(toolbox, executor, server), "Count slowly", events)

    first, second, third, fourth = model_requests(server)
    assert offered(first) == [EXECUTE_PYTHON]  # nothing ran on yet: no follow-up tools
    assert "wait_s" in first.body["tools"][0]["function"]["parameters"]["properties"]
    assert "wait_execution" in first.body["tools"][0]["function"]["description"]
    assert offered(second) == offered(third) == offered(fourth) == [EXECUTE_PYTHON, *FOLLOW_UPS]

    running = second.tool_results[0]
    assert running.startswith("tick 0\n[note at ") and 'started {"ticks": 7}' in running, running
    ident = execution_id_in(second)
    assert f"wait_execution(execution_id={ident!r})" in running
    assert f"cancel_execution(execution_id={ident!r})" in running
    still = third.tool_results[1]
    assert "[running for " in still and "done after 7" not in still and "tick 0" not in still

    ended = fourth.tool_results[2]
    every_tick = "".join(f"tick {i}\n" for i in range(7))
    assert ended.startswith(every_tick) and "value: done after 7\n" in ended and "[ok in " in ended
    assert "[note at" not in ended  # the end reads as a program that ended within its call
    so_far = "".join(line + "\n" for line in (running + still).splitlines() if line.startswith("tick"))
    assert every_tick.startswith(so_far) and so_far, "the running answers: each line once, in order"

    assert result.answer == "Done." and result.status == "answered"
    [execution] = result.executions
    assert execution.status == "ok" and execution.execution_id == ident
    started, waited = result.steps[0].actions[0], result.steps[2].actions[0]
    assert started.ran_on and started.execution is execution and started.text == running
    assert result.steps[1].actions[0].ended is None
    assert waited.call.name == "wait_execution" and waited.ended is execution and waited.text == ended

    kinds = [type(e).__name__ for e in events]
    ran_on = kinds.index("ExecutionRunning")
    last_tick = next(i for i, e in enumerate(events) if isinstance(e, ExecutionOutput) and "tick 6" in e.text)
    assert ran_on < last_tick < kinds.index("ExecutionFinished"), "the view sees it run on, then end"
    finished = next(e for e in events if isinstance(e, ExecutionFinished))
    running_event = next(e for e in events if isinstance(e, ExecutionRunning))
    assert finished.call_id == running_event.call_id and finished.result is execution
    assert running_event.execution_id == ident
    assert [e.note["message"] for e in events if isinstance(e, ExecutionNote)] == ["started"]


def test_a_model_that_cancels_gets_the_cancelled_record_and_the_slow_call_never_lands(
    toolbox: Toolbox, executor: Executor, calls_log: Path
) -> None:
    def cancel(request: ScriptedRequest) -> ScriptedTurn:
        ident = execution_id_in(request)
        slow_call_started(toolbox, "cancel-never")
        return ScriptedTurn(
            tool_calls=[
                call("list_executions"),
                call("cancel_execution", execution_id="nope"),
                call("cancel_execution", execution_id=ident),
            ]
        )

    turns = [
        ScriptedTurn(tool_calls=[call(EXECUTE_PYTHON, code=SLOW_CALL.format(label="cancel"), wait_s=60)]),
        cancel,
        "Stopped it.",
    ]
    with ScriptedModelServer(turns) as server:
        began = time.monotonic()
        result = ask(new_agent(toolbox, executor, server), "Count, slowly", [])
        took = time.monotonic() - began

    assert took < 45, "the note ended the first wait, and the cancel ended the program"
    second, third = model_requests(server)[1:]
    running = second.tool_results[0]
    assert "counted; the slow call next" in running and "[running for" in running  # the note ended the wait
    ident = execution_id_in(second)
    listed, unknown, cancelled = third.tool_results[1:]
    assert listed.startswith(f"{ident}: running, ") and "count(label=" in listed
    assert "no program with execution_id 'nope'" in unknown and ident in unknown
    assert "[cancelled after" in cancelled and "stopped by the model (cancel_execution)" in cancelled

    [execution] = result.executions
    assert execution.status == "cancelled"
    assert [(c["tool"], c["status"]) for c in execution.tool_calls] == [
        ("count", "ok"),
        ("slow_count", "cancelled"),
    ]
    assert counted(calls_log, "cancel-before") == 1 and counted(calls_log, "cancel-never") == 0
    assert "not reached" not in execution.stdout
    assert executor.jobs == []


def test_an_agent_that_answers_while_its_program_runs_stops_it_and_records_it(
    toolbox: Toolbox, executor: Executor, calls_log: Path
) -> None:
    def answer(request: ScriptedRequest) -> str:
        slow_call_started(toolbox, "left-never")
        return "I will not wait for it."

    turns = [
        ScriptedTurn(tool_calls=[call(EXECUTE_PYTHON, code=SLOW_CALL.format(label="left"), wait_s=60)]),
        answer,
    ]
    events: list[AgentEvent] = []
    with ScriptedModelServer(turns) as server:
        began = time.monotonic()
        result = ask(new_agent(toolbox, executor, server), "Count, slowly", events)
        took = time.monotonic() - began

    assert result.answer == "I will not wait for it." and result.status == "answered"
    assert took < 45, "the run ended with the answer, not with the program's 60 s call"
    [execution] = result.executions
    assert execution.status == "cancelled"
    assert (
        execution.error is not None
        and "stopped by the agent at the end of its request" in (execution.error["message"])
    )
    assert [(c["tool"], c["status"]) for c in execution.tool_calls] == [
        ("count", "ok"),
        ("slow_count", "cancelled"),
    ]
    assert counted(calls_log, "left-never") == 0
    assert any(isinstance(e, ExecutionFinished) and e.result is execution for e in events)
    assert executor.jobs == []


def test_a_request_that_times_out_while_waiting_stops_the_program_and_records_it(
    toolbox: Toolbox, executor: Executor, calls_log: Path
) -> None:
    turns = [
        ScriptedTurn(tool_calls=[call(EXECUTE_PYTHON, code=SLOW_CALL.format(label="late"), wait_s=1)]),
        lambda request: ScriptedTurn(
            tool_calls=[call("wait_execution", execution_id=execution_id_in(request), wait_s=120)]
        ),
    ]
    with ScriptedModelServer(turns) as server:
        result = ask(new_agent(toolbox, executor, server), "Count, slowly", [], timeout=12)

    assert result.status == "timeout"
    [execution] = result.executions
    assert execution.status == "cancelled"
    assert counted(calls_log, "late-never") == 0
    assert executor.jobs == []


def test_a_program_that_ends_pending_in_a_wait_runs_again_with_the_answers_on_resume(
    toolbox: Toolbox, executor: Executor
) -> None:
    search = ToolSpec(
        server="client",
        name="web_search",
        description="Search the web (the caller runs it).",
        input_schema={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    )
    program = 'import time\nprint("searching soon")\ntime.sleep(4)\nprint(web_search(query="news"))'
    turns = [
        ScriptedTurn(tool_calls=[call(EXECUTE_PYTHON, code=program, wait_s=1)]),
        lambda request: ScriptedTurn(
            tool_calls=[call("wait_execution", execution_id=execution_id_in(request), wait_s=60)]
        ),
        "The news is in.",
    ]
    with ScriptedModelServer(turns) as server:
        agent = new_agent(toolbox, executor, server)

        async def steps() -> tuple[str, list[Any], AgentResult]:
            try:
                first = await agent.run("News?", tools=[OwnedTool(search)])
                status, pending = first.status, list(first.pending_calls)
                return status, pending, await agent.resume([answered(pending[0], call_result("NEWS"))])
            finally:
                await agent.model.aclose()  # type: ignore[attr-defined]

        status, pending, result = asyncio.run(steps())

    assert status == "pending" and [c["arguments"] for c in pending] == [{"query": "news"}]
    assert result.status == "answered" and result.answer == "The news is in."
    third = model_requests(server)[2]
    assert "NEWS" in third.tool_results[1] and "[ok in " in third.tool_results[1]
    started, resumed = result.steps[0].actions[0], result.steps[1].actions[0]
    assert started.ran_on and started.execution is not None and started.execution.status == "pending"
    assert resumed.call.name == "wait_execution" and resumed.execution is not None
    assert resumed.execution.status == "ok" and resumed.execution.stdout == "searching soon\nNEWS\n"
