"""Servers that ask back behind ``codemode serve``: a real serve over stdio with
tests/servers/asking_server.py behind it and the MCP SDK's client in front, with elicitation callbacks.
The server's question reaches the client as an elicitation of serve's own (naming the server, the schema
as codemode read it); the client's answer, defaults filled in, reaches the server; sampling is allowed by
the client through the approval question, then answered by the configured model (a scripted model
server); a client without elicitation gets the question declined, naming the server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, stdio_client
from mcp.client.context import ClientRequestContext
from mcp.types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ErrorData

from codemode_kernel.llm.scripted import ScriptedModelServer
from tests.integration.serve_support import stdio_params, write_serve_config

pytestmark = pytest.mark.integration

SERVER = str(Path(__file__).parents[1] / "servers" / "asking_server.py")
BOOK = 'book_table(restaurant="Chez Nous")'


class Client_:
    """The host's side: answers each elicitation as the test queued, remembers what it was asked."""

    def __init__(self, *answers: ElicitResult) -> None:
        self.answers = list(answers)
        self.asked: list[ElicitRequestFormParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        assert isinstance(params, ElicitRequestFormParams)
        self.asked.append(params)
        return self.answers.pop(0)


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer([lambda request: "In short."] * 5) as server:
        yield server


def _run(folder: Path, model_url: str, codes: list[str], elicit: Client_ | None) -> list[dict[str, Any]]:
    models = [{"ref": "m", "provider": "openai", "model": "scripted", "baseUrl": model_url}]
    config = write_serve_config(
        folder, {"asking": {"command": sys.executable, "args": [SERVER]}}, models=models
    )
    records: list[dict[str, Any]] = []

    async def session() -> None:
        with (folder / "serve.log").open("w") as errlog:
            transport = stdio_client(stdio_params(folder, config), errlog=errlog)
            async with Client(transport, mode="legacy", elicitation_callback=elicit) as client:
                for code in codes:
                    with anyio.fail_after(60):
                        result = await client.call_tool("execute_python", {"code": code})
                    assert result.structured_content is not None, result.content
                    records.append(dict(result.structured_content))

    anyio.run(session)
    return records


@pytest.fixture(scope="module")
def answered(
    tmp_path_factory: pytest.TempPathFactory, model: ScriptedModelServer
) -> tuple[Client_, list[dict[str, Any]]]:
    """One serve session: a program whose server asks a form, then one whose server asks for sampling."""
    host = Client_(
        ElicitResult(action="accept", content={"guests": 3, "seating": "terrace"}),
        ElicitResult(action="accept", content={"decision": "allow once"}),
    )
    codes = [BOOK, 'summarize(text="a long story")']
    return host, _run(tmp_path_factory.mktemp("serve-asking"), model.base_url, codes, host)


def test_the_question_is_forwarded_and_the_answer_gets_its_defaults(
    answered: tuple[Client_, list[dict[str, Any]]],
) -> None:
    host, (record, _) = answered
    assert record["status"] == "ok", record["error"]
    content = {"guests": 3, "seating": "terrace", "date": "2026-12-24", "vegetarian": False}
    assert record["value"]["data"] == {"action": "accept", "content": content}
    asked = host.asked[0]
    assert asked.message == (
        "The MCP server 'asking/book_table' (used by codemode) asks: "
        "Booking at Chez Nous: when, and for how many?"
    )
    schema = asked.requested_schema
    assert schema["properties"]["guests"] == {
        "type": "integer",
        "minimum": 1.0,
        "maximum": 20.0,
        "default": 2,
    }
    assert schema["required"] == ["date", "guests"]
    (call,) = record["tool_calls"]
    assert call["asked"][0]["answer"] == {"action": "accept", "by": "the client", "content": content}


def test_sampling_is_allowed_by_the_client_and_answered_by_the_model(
    answered: tuple[Client_, list[dict[str, Any]]],
) -> None:
    host, (_, record) = answered
    assert record["value"]["data"] == {"text": "In short.", "model": "scripted"}, record
    approval = host.asked[1]
    assert "asking/sampling/createMessage" in approval.message
    (call,) = record["tool_calls"]
    assert call["asked"][0]["allowed"] == {"by": "the client", "scope": "once"}


def test_a_client_without_elicitation_gets_the_question_declined(
    tmp_path: Path, model: ScriptedModelServer
) -> None:
    (record,) = _run(tmp_path, model.base_url, [BOOK], None)
    assert record["value"]["data"] == {"action": "decline", "content": None}
    note = record["tool_calls"][0]["asked"][0]["answer"]["note"]
    assert "server 'asking' asked a question" in note and "it did not declare MCP form elicitation" in note
