"""Approvals in a real kernel: the question is an input request on the stdin channel, answered as a
person would (jupyter_client), for a real destructive tool (npm server-memory's delete_entities)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_session import Kernel, memory_kernel

from codemode_kernel.llm.scripted import ScriptedModelServer, ScriptedToolCall, ScriptedTurn

SETUP = (
    "%%codemode\n"
    "cities = ('Oslo', 'Lima', 'Rome')\n"
    'create_entities(entities=[{"name": n, "entityType": "city", "observations": []} for n in cities])'
)
DELETE = (
    "%%codemode\n"
    "try:\n"
    "    delete_entities(entityNames=[{name!r}])\n"
    '    outcome = "deleted"\n'
    "except ToolError as e:\n"
    "    outcome = str(e)\n"
    'print(outcome, sorted(e["name"] for e in read_graph().entities))'
)


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as scripted:
        yield scripted


@pytest.fixture(scope="module")
def kernel(
    jupyter_path: Path,
    memory_server_bin: str,
    model: ScriptedModelServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Kernel]:
    notebook = tmp_path_factory.mktemp("approvals-notebook")
    with memory_kernel(jupyter_path, notebook, memory_server_bin, model.base_url) as k:
        assert k.run(SETUP).status == "ok"
        yield k


def _history_call(kernel: Kernel, tool: str) -> dict[str, Any]:
    runs = kernel.run("%codemode history 1").data("application/json")
    calls = [c for run in runs[-1]["runs"] for c in run["tool_calls"]] if runs else []
    return next(c for c in reversed(calls) if c["tool"] == tool)


def test_the_person_who_ran_the_cell_is_asked_and_no_denies(kernel: Kernel) -> None:
    denied = kernel.run(DELETE.format(name="Oslo"), answers=["n"])
    (question,) = denied.questions
    assert 'memory/delete_entities(entityNames=["Oslo"]) needs approval\n' in question
    assert "  why: its server marks it destructive (destructiveHint)\n" in question
    assert "y = allow this call, a = allow this tool from now on, n = deny (default)" in question
    assert denied.stream() == (
        "memory/delete_entities was denied by the user; nothing was sent ['Lima', 'Oslo', 'Rome']\n"
    )


def test_y_allows_this_call_only(kernel: Kernel) -> None:
    allowed = kernel.run(DELETE.format(name="Oslo"), answers=["y"])
    assert allowed.stream() == "deleted ['Lima', 'Rome']\n" and len(allowed.questions) == 1
    asked_again = kernel.run(DELETE.format(name="Rome"), answers=[""])  # Enter: the default, deny
    assert len(asked_again.questions) == 1 and "denied by the user" in asked_again.stream()


def test_a_allows_the_tool_for_the_rest_of_the_kernel(kernel: Kernel) -> None:
    first = kernel.run(DELETE.format(name="Rome"), answers=["a"])
    assert first.stream() == "deleted ['Lima']\n"
    second = kernel.run(DELETE.format(name="Lima"))
    assert second.questions == [] and second.stream() == "deleted []\n"


def test_a_frontend_that_cannot_answer_gets_a_denial_naming_the_fix(kernel: Kernel) -> None:
    kernel.run(
        "%%codemode\ncreate_entities(entities=[{'name': 'Paris', 'entityType': 'city', 'observations': []}])"
    )
    code = (
        DELETE.format(name="Paris")
        .replace("delete_entities", "delete_observations")
        .replace("entityNames=['Paris']", "deletions=[{'entityName': 'Paris', 'observations': []}]")
    )
    messages: list[dict[str, Any]] = []
    reply = kernel.client.execute_interactive(
        code, allow_stdin=False, output_hook=messages.append, timeout=60
    )
    assert reply["content"]["status"] == "ok"
    text = "".join(m["content"].get("text", "") for m in messages if m["msg_type"] == "stream")
    assert "memory/delete_observations needs approval" in text and "does not answer input requests" in text
    assert "run `%codemode approve memory/delete_observations` first" in text


def test_codemode_approve_allows_ahead_for_unattended_notebooks(kernel: Kernel) -> None:
    said = kernel.run("%codemode approve memory/delete_relations")
    assert "allowed without asking, until the kernel restarts:" in said.stream()
    assert "memory/delete_relations" in said.stream()
    code = "%%codemode\ndelete_relations(relations=[{'from': 'a', 'to': 'b', 'relationType': 'c'}])"
    reply = kernel.client.execute_interactive(code, allow_stdin=False, timeout=60)
    assert reply["content"]["status"] == "ok"
    bad = kernel.run("%codemode approve *")
    assert bad.status == "error" and "is not a tool pattern" in bad.content["evalue"]


def test_no_answer_within_the_calls_timeout_is_a_denial(kernel: Kernel) -> None:
    kernel.run(
        "%%codemode\ncreate_entities(entities=[{'name': 'Bern', 'entityType': 'city', 'observations': []}])"
    )
    code = (
        DELETE.format(name="Bern")
        .replace("delete_entities", "delete_observations")
        .replace("entityNames=['Bern']", "deletions=[{'entityName': 'Bern', 'observations': []}]")
    )
    messages: list[dict[str, Any]] = []
    # Nobody answers the input request: the call is denied at the memory server's 4 s timeout.
    reply = kernel.client.execute_interactive(
        code, allow_stdin=True, stdin_hook=lambda msg: None, output_hook=messages.append, timeout=60
    )
    assert reply["content"]["status"] == "ok"
    text = "".join(m["content"].get("text", "") for m in messages if m["msg_type"] == "stream")
    assert "was denied: no decision came within 4 s" in text
    errors = "".join(
        m["content"]["text"]
        for m in messages
        if m["msg_type"] == "stream" and m["content"]["name"] == "stderr"
    )
    assert "the approval question above went unanswered in time and was withdrawn" in errors


def test_an_agents_program_asks_the_same_way(kernel: Kernel, model: ScriptedModelServer) -> None:
    kernel.run(
        "%%codemode\ncreate_entities(entities=[{'name': 'Kyiv', 'entityType': 'city', 'observations': []}])"
    )
    program = "delete_observations(deletions=[{'entityName': 'Kyiv', 'observations': []}])\nprint('done')"
    model.add(ScriptedTurn(tool_calls=[ScriptedToolCall("execute_python", {"code": program})]), "Done.")
    reply = kernel.run("%%agent\nClear Kyiv's observations", answers=["y"])
    assert reply.status == "ok", reply.content
    assert len(reply.questions) == 1 and "memory/delete_observations" in reply.questions[0]
    sent = [m["content"] for m in model.requests[-1].body["messages"] if m["role"] == "tool"]
    assert sent[-1].startswith("done\n")
