"""Approvals for an excluded tool called directly through ``codemode serve`` (its passthrough).

A tool in ``excludedTools`` is offered to the MCP client beside ``execute_python`` under its own name, so
the client's model can call it without a program. A real ``codemode serve`` over stdio, npm server-memory
behind it with ``delete_entities`` excluded, and the MCP SDK's client: the direct call is asked of the
client through the same elicitation as a program's call, and refused with the fix when the client cannot
answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, stdio_client
from mcp.client.context import ClientRequestContext
from mcp.types import CallToolResult, ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ErrorData

from tests.integration.serve_support import stdio_params, write_serve_config

pytestmark = pytest.mark.integration

PLANT = (
    'create_entities(entities=[{"name": n, "entityType": "city", "observations": []} '
    'for n in ("Oslo", "Lima")])'
)
LIST = 'sorted(e["name"] for e in read_graph().entities)'
REASON = "its server marks it destructive (destructiveHint)"


class Answers:
    """An elicitation callback that answers as told and remembers the questions."""

    def __init__(self, *decisions: str) -> None:
        self.decisions = list(decisions)
        self.asked: list[str] = []

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        assert isinstance(params, ElicitRequestFormParams)
        self.asked.append(params.message)
        return ElicitResult(action="accept", content={"decision": self.decisions.pop(0)})


def _serve(
    folder: Path, memory_server_bin: str, answers: Answers | None, mode: str = "legacy"
) -> tuple[CallToolResult, list[Any]]:
    """Plant two cities, call the excluded ``delete_entities`` directly, then list what is left."""
    memory = {
        "command": memory_server_bin,
        "env": {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")},
        "timeout": 3,
    }
    config = write_serve_config(
        folder, {"memory": memory}, defaults={"codeMode": {"excludedTools": ["memory/delete_entities"]}}
    )
    out: dict[str, Any] = {}

    async def session() -> None:
        with (folder / "serve.log").open("w") as errlog:
            transport = stdio_client(stdio_params(folder, config), errlog=errlog)
            async with Client(transport, mode=mode, elicitation_callback=answers) as client:
                with anyio.fail_after(60):
                    names = [t.name for t in (await client.list_tools()).tools]
                    assert "delete_entities" in names  # offered beside execute_python
                    await client.call_tool("execute_python", {"code": PLANT})
                    out["direct"] = await client.call_tool("delete_entities", {"entityNames": ["Oslo"]})
                    left = await client.call_tool("execute_python", {"code": LIST})
                    assert left.structured_content is not None
                    out["left"] = left.structured_content["value"]["data"]

    anyio.run(session)
    return out["direct"], out["left"]


def _text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def test_the_clients_direct_call_of_an_excluded_destructive_tool_is_asked_and_allowed(
    tmp_path: Path, memory_server_bin: str
) -> None:
    answers = Answers("allow once")
    direct, left = _serve(tmp_path, memory_server_bin, answers)
    assert not direct.is_error, _text(direct)
    assert left == ["Lima"]
    (question,) = answers.asked
    assert 'memory/delete_entities(entityNames=["Oslo"])' in question and REASON in question
    assert "From: the model's own call (not a program)." in question


def test_the_clients_direct_call_is_denied_when_it_answers_deny(
    tmp_path: Path, memory_server_bin: str
) -> None:
    direct, left = _serve(tmp_path, memory_server_bin, Answers("deny"))
    assert direct.is_error
    assert _text(direct) == (  # the SDK names the tool that failed first
        "Error executing tool delete_entities: "
        "memory/delete_entities was denied by the client; nothing was sent"
    )
    assert left == ["Lima", "Oslo"]


def test_a_client_that_cannot_be_asked_is_refused_naming_the_fix(
    tmp_path: Path, memory_server_bin: str
) -> None:
    direct, left = _serve(tmp_path, memory_server_bin, None)
    assert direct.is_error and left == ["Lima", "Oslo"]
    text = _text(direct)
    assert text.startswith(
        f"Error executing tool delete_entities: memory/delete_entities needs approval ({REASON}) and this "
        "client cannot answer approval questions (it did not declare MCP form elicitation)"
    )
    assert "codeMode.autoApprove" in text


@pytest.mark.parametrize(("decision", "left"), [("allow once", ["Lima"]), ("deny", ["Lima", "Oslo"])])
def test_on_the_2026_protocol_the_direct_call_is_asked_in_a_round_of_its_own(
    tmp_path: Path, memory_server_bin: str, decision: str, left: list[str]
) -> None:
    """The call ends in an InputRequiredResult; the SDK client asks, retries, and gets the call's result."""
    answers = Answers(decision)
    direct, names = _serve(tmp_path, memory_server_bin, answers, mode="auto")
    assert names == left
    (question,) = answers.asked
    assert 'memory/delete_entities(entityNames=["Oslo"])' in question and REASON in question
    if decision == "deny":
        assert direct.is_error and _text(direct).endswith("was denied by the client; nothing was sent")
    else:
        assert not direct.is_error, _text(direct)
