"""%%agent with a program that runs on past its wait while the model runs another: what the cell shows."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_session import Kernel, configured_kernel

from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedRequest, ScriptedToolCall, ScriptedTurn
from codemode_kernel.views.display import TRACE_MIME

SLOW = 'import time\nfor i in range(4):\n    print("slow", i)\n    time.sleep(1)\n"slow done"'
QUICK = 'print("quick")\n"quick done"'


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def kernel(
    jupyter_path: Path, server: ScriptedModelServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Kernel]:
    notebook = tmp_path_factory.mktemp("long-agent")
    model = {"ref": "scripted", "provider": "openai", "model": "scripted", "baseUrl": server.base_url}
    (notebook / "agent.json").write_text(
        json.dumps({"mcpServers": {}, "workspace": str(notebook), "models": [model]})
    )
    with configured_kernel(jupyter_path, notebook, notebook / "agent.json") as k:
        yield k


def wait_for_the_slow_one(request: ScriptedRequest) -> ScriptedTurn:
    """The model comes back for the program that ran on (its id is in the first tool result)."""
    first = request.tool_results[0]
    match = re.search(r"execution_id (\w+)", first)
    assert match, first
    return ScriptedTurn(
        tool_calls=[ScriptedToolCall("wait_execution", {"execution_id": match.group(1), "wait_s": 60})]
    )


def test_a_program_that_runs_on_beside_another_ends_in_its_own_record(
    kernel: Kernel, server: ScriptedModelServer
) -> None:
    server.add(
        ScriptedTurn(tool_calls=[ScriptedToolCall("execute_python", {"code": SLOW, "wait_s": 1})]),
        ScriptedTurn(tool_calls=[ScriptedToolCall("execute_python", {"code": QUICK})]),
        wait_for_the_slow_one,
        "Both ran.",
    )
    reply = kernel.run("%%agent\nRun the slow one and the quick one")
    assert reply.status == "ok", reply.content

    texts = reply.data()
    assert any(re.fullmatch(r"\w+ runs on: the model may wait for it, stop it, or go on", t) for t in texts)
    assert texts[-1].startswith("agent: answered, 4 model requests, 2 programs")
    traces = [t for t in reply.data(TRACE_MIME) if t is not None]
    by_code = {trace.get("code"): trace for trace in traces}
    assert set(by_code) == {SLOW, QUICK}, "each program's record shows its own code"
    assert len(traces) == 2, "one record each: no live view left behind"
    assert by_code[SLOW]["status"] == by_code[QUICK]["status"] == "ok"
    assert "slow done" in json.dumps(by_code[SLOW]["value"]) and "quick done" in json.dumps(
        by_code[QUICK]["value"]
    )
    stream = reply.stream()
    assert "quick\n" in stream and "slow 3\n" in stream
