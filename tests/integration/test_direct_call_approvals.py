"""Approvals for the model's own tool calls: a prompt-injected model calls a destructive tool directly.

The attacker is a scripted model (the project's OpenAI-compatible server, spoken to by the real ``openai``
client) that calls npm server-memory's ``delete_entities`` (``destructiveHint: true``) as an ordinary tool,
in classic mode and as a tool excluded from code mode (offered beside ``execute_python``), and the demo
workspace server's ``write_file`` the same way. Every call a model or a program originates goes through
the hub's one decision, so each waits for the approver; a person's own call (the Toolbox's functions)
does not. What is checked is what the user would: whether the entity or the file is gone, what the
model was told, and the call's record.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.agent import Agent, AgentResult
from codemode_kernel.calllog import CallRecord
from codemode_kernel.config import CodeModeSettings, load_config
from codemode_kernel.core.errors import ToolError
from codemode_kernel.executor import Executor
from codemode_kernel.llm import OpenAIChatModel
from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedToolCall, ScriptedTurn
from tests.approval_support import Approver

pytestmark = pytest.mark.integration

REASON = "its server marks it destructive (destructiveHint)"
CLASSIC = CodeModeSettings(enabled=False)
BESIDE_CODE = CodeModeSettings(excluded_tools=["memory/delete_entities", "workspace/write_file"])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("direct-approvals")


@pytest.fixture(scope="module")
def toolbox(workspace: Path, memory_server_bin: str) -> Iterator[Toolbox]:
    memory = {
        "command": memory_server_bin,
        "env": {"MEMORY_FILE_PATH": str(workspace / "memory.jsonl")},
        "timeout": 3,
    }
    files = {
        "command": sys.executable,
        "args": ["-m", "codemode_kernel.servers.workspace", "--root", str(workspace)],
    }
    config = {"mcpServers": {"memory": memory, "workspace": files}, "workspace": str(workspace)}
    (workspace / "codemode.json").write_text(json.dumps(config))
    with Toolbox(load_config(workspace / "codemode.json")) as tb:
        yield tb


def _cities(toolbox: Toolbox) -> list[str]:
    """The graph's entities, read by the person (a read-only tool)."""
    return sorted(e["name"] for e in toolbox.tools.read_graph().entities)


def _plant(toolbox: Toolbox, *names: str) -> None:
    toolbox.tools.create_entities(
        entities=[{"name": n, "entityType": "city", "observations": []} for n in names]
    )


def _attack(
    toolbox: Toolbox, settings: CodeModeSettings, approver: Approver | None, call: ScriptedToolCall
) -> tuple[AgentResult, str, CallRecord]:
    """A model that calls ``call`` directly, then answers; the agent's result, the tool result the model
    was sent, and the call's record in the hub's log."""
    with ScriptedModelServer([ScriptedTurn(tool_calls=[call]), "Done."]) as server:
        model = OpenAIChatModel("scripted", ref="scripted", base_url=server.base_url, env={})
        with Executor(toolbox, settings=settings, grace=1.0, approver=approver) as executor:
            agent = Agent(toolbox, executor, model, settings)
            mark = len(toolbox.hub.call_log.records())

            async def main() -> AgentResult:
                try:
                    return await agent.run("Tidy up")
                finally:
                    await model.aclose()

            result = asyncio.run(main())
        sent = [r for r in server.requests if r.api != "other"][-1].tool_results[-1]
    (record,) = [r for r in toolbox.hub.call_log.records()[mark:] if r.tool == call.name]
    return result, sent, record


@pytest.mark.parametrize("settings", [CLASSIC, BESIDE_CODE], ids=["classic", "excluded-beside-code"])
def test_a_models_direct_destructive_call_is_denied_when_nobody_can_be_asked(
    toolbox: Toolbox, settings: CodeModeSettings
) -> None:
    _plant(toolbox, "Oslo", "Lima")
    _, sent, record = _attack(
        toolbox, settings, None, ScriptedToolCall("delete_entities", {"entityNames": ["Oslo"]})
    )
    assert "Oslo" in _cities(toolbox)  # the server never saw the call
    assert sent.startswith(
        "ToolError: memory/delete_entities needs approval (its server marks it destructive"
    )
    assert "nothing was sent" in sent
    assert record.status == "denied" and record.execution_id is None
    assert record.approval == {
        "decision": "denied",
        "by": "nobody",
        "scope": "once",
        "reason": REASON,
        "origin": "model",
    }


@pytest.mark.parametrize("settings", [CLASSIC, BESIDE_CODE], ids=["classic", "excluded-beside-code"])
def test_a_models_direct_destructive_call_waits_for_the_approvers_yes(
    toolbox: Toolbox, settings: CodeModeSettings
) -> None:
    _plant(toolbox, "Rome")
    approver = Approver(True)
    _, sent, record = _attack(
        toolbox, settings, approver, ScriptedToolCall("delete_entities", {"entityNames": ["Rome"]})
    )
    assert "Rome" not in _cities(toolbox)
    (asked,) = approver.asked
    assert (asked.qualified_name, asked.arguments, asked.reason) == (
        "memory/delete_entities",
        {"entityNames": ["Rome"]},
        REASON,
    )
    assert asked.origin == "model"
    assert "needs approval" not in sent
    assert record.status == "ok"
    assert record.approval == {
        "decision": "allowed",
        "by": "the user",
        "scope": "once",
        "reason": REASON,
        "origin": "model",
    }


def test_a_model_writing_a_file_beside_execute_python_is_denied_and_nothing_is_written(
    toolbox: Toolbox, workspace: Path
) -> None:
    call = ScriptedToolCall("write_file", {"path": "planted.py", "content": "import os\n"})
    approver = Approver(False)
    _, sent, record = _attack(toolbox, BESIDE_CODE, approver, call)
    assert not (workspace / "planted.py").exists()
    assert sent == "ToolError: workspace/write_file was denied by the user; nothing was sent\n"
    assert [r.qualified_name for r in approver.asked] == ["workspace/write_file"]
    assert record.status == "denied" and record.approval is not None
    assert record.approval["origin"] == "model"


def test_no_decision_within_the_calls_timeout_denies_the_models_call(toolbox: Toolbox) -> None:
    _plant(toolbox, "Bern")
    _, sent, record = _attack(
        toolbox, CLASSIC, Approver(None), ScriptedToolCall("delete_entities", {"entityNames": ["Bern"]})
    )
    assert "Bern" in _cities(toolbox)
    assert sent == (
        "ToolError: memory/delete_entities was denied: no decision came within 3 s (its timeout); "
        "nothing was sent\n"
    )
    assert record.approval is not None and record.approval["by"] == "timeout"


def test_the_persons_own_call_is_not_asked(toolbox: Toolbox) -> None:
    """A person calling a tool function (a cell, a script) is the one deciding: nothing to ask."""
    _plant(toolbox, "Kyiv")
    mark = len(toolbox.hub.call_log.records())
    toolbox.tools.delete_entities(entityNames=["Kyiv"])
    assert "Kyiv" not in _cities(toolbox)
    (record,) = [r for r in toolbox.hub.call_log.records()[mark:] if r.tool == "delete_entities"]
    assert record.status == "ok" and record.approval is None


def test_a_hub_call_that_does_not_say_who_originated_it_is_asked(toolbox: Toolbox) -> None:
    """Code that calls the hub directly (an agent of one's own) without saying whose call it is: asked like
    a model's, and with nobody to ask it is denied, naming how to say it."""
    _plant(toolbox, "Riga")
    with pytest.raises(ToolError) as denied:
        toolbox.hub.call("memory", "delete_entities", {"entityNames": ["Riga"]})
    assert "Riga" in _cities(toolbox)
    message = str(denied.value)
    assert message.startswith("memory/delete_entities needs approval (its server marks it destructive")
    assert "approval=ApprovalCheck(" in message
