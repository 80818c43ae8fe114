"""Approvals through the executor: a real destructive tool (npm server-memory), real workers.

The approver is the test (the kernel, serve and the CLI bring their own: tests elsewhere); what is checked
here is which calls are asked about, what the program sees, and what the record says.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import ExecutionResult, Executor
from tests.approval_support import Approver

pytestmark = pytest.mark.integration

WEATHER = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
SETUP = """
create_entities(entities=[{"name": "Oslo", "entityType": "city", "observations": ["cold"]},
                          {"name": "Lima", "entityType": "city", "observations": ["warm"]}])
"""
DELETE = """
try:
    delete_entities(entityNames=["Oslo"])
    outcome = "deleted"
except ToolError as e:
    outcome = str(e)
[outcome, sorted(e["name"] for e in read_graph().entities)]
"""


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory: pytest.TempPathFactory, memory_server_bin: str) -> Iterator[Toolbox]:
    path = tmp_path_factory.mktemp("approvals")
    memory = {
        "command": memory_server_bin,
        "env": {"MEMORY_FILE_PATH": str(path / "memory.jsonl")},
        "timeout": 3,
    }
    config = {
        "mcpServers": {"memory": memory, "weather": WEATHER},
        "workspace": str(path),
        "defaults": {
            "codeMode": {"approve": ["weather/get_city"], "autoApprove": ["memory/delete_relations"]}
        },
    }
    (path / "codemode.json").write_text(json.dumps(config))
    with Toolbox(load_config(path / "codemode.json")) as tb:
        yield tb


def _run(toolbox: Toolbox, code: str, approver: Approver | None) -> ExecutionResult:
    with Executor(toolbox, grace=1.0) as executor:
        assert executor.run(SETUP).status == "ok"
        return executor.run(code, approver=approver)


def test_a_destructive_call_waits_for_the_user_and_runs_when_allowed(toolbox: Toolbox) -> None:
    approver = Approver(True)
    result = _run(toolbox, DELETE, approver)
    assert result.status == "ok", result.error
    assert result.value["data"] == ["deleted", ["Lima"]]
    (asked,) = approver.asked  # create_entities and read_graph are not destructive: not asked
    assert (asked.qualified_name, asked.arguments) == ("memory/delete_entities", {"entityNames": ["Oslo"]})
    assert asked.reason == "its server marks it destructive (destructiveHint)"
    call = next(c for c in result.tool_calls if c["tool"] == "delete_entities")
    assert call["status"] == "ok"
    assert call["approval"] == {
        "decision": "allowed",
        "by": "the user",
        "scope": "once",
        "reason": "its server marks it destructive (destructiveHint)",
    }


def test_a_denied_call_is_a_tool_error_the_program_catches_and_nothing_is_sent(toolbox: Toolbox) -> None:
    result = _run(toolbox, DELETE, Approver(False))
    outcome, names = result.value["data"]
    assert outcome == "memory/delete_entities was denied by the user; nothing was sent"
    assert names == ["Lima", "Oslo"]  # the server never saw the call
    call = next(c for c in result.tool_calls if c["tool"] == "delete_entities")
    assert call["status"] == "denied" and call["approval"]["decision"] == "denied"


def test_no_decision_within_the_calls_timeout_is_a_denial(toolbox: Toolbox) -> None:
    result = _run(toolbox, DELETE, Approver(None))
    outcome, names = result.value["data"]
    assert (
        outcome
        == "memory/delete_entities was denied: no decision came within 3 s (its timeout); nothing was sent"
    )
    assert names == ["Lima", "Oslo"]
    call = next(c for c in result.tool_calls if c["tool"] == "delete_entities")
    assert call["approval"]["by"] == "timeout"


def test_with_nobody_to_ask_the_call_is_denied_with_the_fix(toolbox: Toolbox) -> None:
    result = _run(toolbox, DELETE, None)
    outcome = result.value["data"][0]
    assert outcome.startswith("memory/delete_entities needs approval (its server marks it destructive")
    assert "codeMode.autoApprove" in outcome


def test_the_configs_approve_and_auto_approve_lists_decide_too(toolbox: Toolbox) -> None:
    approver = Approver(False)
    code = (
        'delete_relations(relations=[{"from": "Oslo", "to": "Lima", "relationType": "near"}])\n'
        "try:\n    get_city()\nexcept ToolError as e:\n    denied = str(e)\ndenied"
    )
    result = _run(toolbox, code, approver)
    assert result.value == {
        "kind": "text",
        "text": "weather/get_city was denied by the user; nothing was sent",
    }
    assert [r.qualified_name for r in approver.asked] == ["weather/get_city"]  # delete_relations: trusted
    assert approver.asked[0].reason == 'the config asks for it (codeMode.approve: "weather/get_city")'


def test_a_replay_of_a_denied_call_is_denied_again_without_asking(toolbox: Toolbox) -> None:
    with Executor(toolbox, grace=1.0) as executor:
        first = executor.run(DELETE, approver=Approver(False))
        approver = Approver()
        again = executor.run(DELETE, replay=first.tool_calls, approver=approver)
    assert again.value == first.value and not approver.asked
