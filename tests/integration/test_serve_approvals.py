"""Approvals in ``codemode serve``: the client decides through MCP elicitation.

A real ``codemode serve`` over stdio, npm's server-memory behind it (its ``delete_entities`` says
``destructiveHint: true``) and the MCP SDK's client with an ``elicitation_callback`` that answers as each
test says. What is checked is what a host's user and its model see: the question, whether the entity is
gone, the ToolError the program gets, and the decision in the result's record.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, stdio_client
from mcp.client.context import ClientRequestContext
from mcp.client.session import ElicitationFnT
from mcp.types import (
    CallToolResult,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    InputRequiredResult,
    InputResponses,
)

from tests.integration.serve_support import served_http, stdio_params, write_serve_config

pytestmark = pytest.mark.integration

DELETE = """
create_entities(entities=[{"name": "Oslo", "entityType": "city", "observations": ["cold"]},
                          {"name": "Lima", "entityType": "city", "observations": ["warm"]}])
try:
    delete_entities(entityNames=["Oslo"])
    outcome = "deleted"
except ToolError as e:
    outcome = str(e)
[outcome, sorted(e["name"] for e in read_graph().entities)]
"""
REASON = "its server marks it destructive (destructiveHint)"
TIMEOUT = 3  # the memory server's call timeout, which bounds the wait for a decision


class Answers:
    """An elicitation callback that answers as told and remembers the questions."""

    def __init__(self, *answers: ElicitResult | None) -> None:
        self.answers = list(answers)
        self.asked: list[ElicitRequestFormParams] = []
        self.withdrawn = anyio.Event()
        """Set when a question left unanswered was cancelled by the server."""

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        assert isinstance(params, ElicitRequestFormParams)  # a form, not a URL to open
        self.asked.append(params)
        answer = self.answers.pop(0)
        if answer is None:  # never answers
            try:
                await anyio.sleep_forever()
            finally:
                self.withdrawn.set()
        assert answer is not None
        return answer


def _choose(decision: str) -> ElicitResult:
    return ElicitResult(action="accept", content={"decision": decision})


def _record(result: CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None, result.content
    return dict(result.structured_content)


def _delete_call(record: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in record["tool_calls"] if c["tool"] == "delete_entities")


def _config(folder: Path, memory_server_bin: str) -> Path:
    memory = {
        "command": memory_server_bin,
        "env": {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")},
        "timeout": TIMEOUT,
    }
    return write_serve_config(folder, {"memory": memory})


def _serve(
    folder: Path,
    memory_server_bin: str,
    codes: list[str],
    elicit: ElicitationFnT | None,
    mode: str = "legacy",
    during: Callable[[], Awaitable[None]] | None = None,
) -> list[dict[str, Any]]:
    """Run ``codes`` one after the other through one client of a fresh ``codemode serve``; their records."""
    config = _config(folder, memory_server_bin)
    records: list[dict[str, Any]] = []

    async def session() -> None:
        with (folder / "serve.log").open("w") as errlog:
            transport = stdio_client(stdio_params(folder, config), errlog=errlog)
            client = Client(transport, mode=mode, elicitation_callback=elicit)
            async with client:
                for code in codes:
                    with anyio.fail_after(60):
                        result = await client.call_tool("execute_python", {"code": code})
                    records.append(_record(result))
                if during is not None:
                    await during()

    anyio.run(session)
    return records


def test_the_client_allows_a_destructive_call_and_the_record_says_so(
    tmp_path: Path, memory_server_bin: str
) -> None:
    answers = Answers(_choose("allow once"))
    (record,) = _serve(tmp_path, memory_server_bin, [DELETE], answers)
    assert record["status"] == "ok", record["error"]
    assert record["value"]["data"] == ["deleted", ["Lima"]]
    (asked,) = answers.asked  # create_entities and read_graph are not destructive: not asked
    assert 'memory/delete_entities(entityNames=["Oslo"])' in asked.message
    assert REASON in asked.message
    choice = asked.requested_schema["properties"]["decision"]
    assert choice["enum"] == ["allow once", "allow this tool for this session", "deny"]
    assert _delete_call(record)["approval"] == {
        "decision": "allowed",
        "by": "the client",
        "scope": "once",
        "reason": REASON,
    }


def test_a_tool_allowed_for_the_session_is_not_asked_about_again(
    tmp_path: Path, memory_server_bin: str
) -> None:
    answers = Answers(_choose("allow this tool for this session"))
    again = DELETE.replace('"Oslo"]', '"Lima"]')
    first, second = _serve(tmp_path, memory_server_bin, [DELETE, again], answers)
    assert first["value"]["data"] == ["deleted", ["Lima"]]
    assert second["value"]["data"] == ["deleted", ["Oslo"]]  # the second program's own graph
    assert len(answers.asked) == 1
    assert _delete_call(first)["approval"]["scope"] == "session"
    assert _delete_call(second)["approval"] == {
        "decision": "allowed",
        "by": "the client (allowed earlier for this session)",
        "scope": "session",
        "reason": REASON,
    }


@pytest.mark.parametrize(
    ("answer", "by"),
    [(_choose("deny"), "the client"), (ElicitResult(action="decline"), "the client")],
    ids=["deny", "decline"],
)
def test_a_denial_is_a_tool_error_the_program_catches_and_nothing_is_deleted(
    tmp_path: Path, memory_server_bin: str, answer: ElicitResult, by: str
) -> None:
    (record,) = _serve(tmp_path, memory_server_bin, [DELETE], Answers(answer))
    assert record["status"] == "ok"
    outcome, names = record["value"]["data"]
    assert outcome == f"memory/delete_entities was denied by {by}; nothing was sent"
    assert names == ["Lima", "Oslo"]  # the memory server never saw the call
    call = _delete_call(record)
    assert call["status"] == "denied"
    assert call["approval"] == {"decision": "denied", "by": by, "scope": "once", "reason": REASON}


def test_a_client_that_never_answers_is_denied_at_the_calls_timeout_and_the_question_withdrawn(
    tmp_path: Path, memory_server_bin: str
) -> None:
    answers = Answers(None, _choose("allow once"))

    async def withdrawn() -> None:
        with anyio.fail_after(10):
            await answers.withdrawn.wait()

    first, second = _serve(tmp_path, memory_server_bin, [DELETE, DELETE], answers, during=withdrawn)
    outcome, names = first["value"]["data"]
    assert outcome == (
        f"memory/delete_entities was denied: no decision came within {TIMEOUT} s (its timeout); "
        "nothing was sent"
    )
    assert names == ["Lima", "Oslo"]
    assert _delete_call(first)["approval"]["by"] == "timeout"
    assert second["value"]["data"] == ["deleted", ["Lima"]]  # the next question is asked and answered
    assert len(answers.asked) == 2


def test_a_client_without_elicitation_gets_a_clear_refusal_naming_the_fix(
    tmp_path: Path, memory_server_bin: str
) -> None:
    (record,) = _serve(tmp_path, memory_server_bin, [DELETE], None)
    outcome, names = record["value"]["data"]
    assert outcome.startswith(
        f"memory/delete_entities needs approval ({REASON}) and this client cannot answer approval questions "
        "(it did not declare MCP form elicitation), so it was denied; nothing was sent."
    )
    assert 'codeMode.autoApprove in the config codemode serve runs with (e.g. "autoApprove": [' in outcome
    assert names == ["Lima", "Oslo"]
    assert _delete_call(record)["approval"]["by"] == "nobody (it did not declare MCP form elicitation)"


@pytest.mark.parametrize(
    ("answers", "outcome", "names"),
    [
        (Answers(_choose("allow once")), "deleted", ["Lima"]),
        (Answers(_choose("deny")), "memory/delete_entities was denied by the client; nothing was sent", None),
    ],
    ids=["allow", "deny"],
)
def test_a_client_on_the_2026_protocol_is_asked_in_a_round_of_its_own(
    tmp_path: Path, memory_server_bin: str, answers: Answers, outcome: str, names: list[str] | None
) -> None:
    """2026-07-28: the call ends in an InputRequiredResult; the client asks, retries; the program goes on."""
    (record,) = _serve(tmp_path, memory_server_bin, [DELETE], answers, mode="auto")
    assert record["status"] == "ok", record["error"]
    assert record["value"]["data"] == [outcome, names or ["Lima", "Oslo"]]
    (asked,) = answers.asked
    assert 'memory/delete_entities(entityNames=["Oslo"])' in asked.message and REASON in asked.message
    decision = "allowed" if names else "denied"
    assert _delete_call(record)["approval"] == {
        "decision": decision,
        "by": "the client",
        "scope": "once",
        "reason": REASON,
    }
    # One program ran (the same execution across the rounds): create_entities was not made again.
    assert [c["tool"] for c in record["tool_calls"]] == ["create_entities", "delete_entities", "read_graph"]


def test_over_http_the_question_rides_the_requests_stream_and_the_mcp_session_keeps_the_allowance(
    tmp_path: Path, memory_server_bin: str
) -> None:
    """A handshake-era HTTP client: the question goes on its POST's stream; its MCP session is the scope."""
    answers = Answers(_choose("allow this tool for this session"), _choose("deny"))
    again = DELETE.replace('"Oslo"]', '"Lima"]')
    records: list[dict[str, Any]] = []

    async def session(url: str) -> None:
        async with Client(url, mode="legacy", elicitation_callback=answers) as one:
            for code in (DELETE, again):
                with anyio.fail_after(60):
                    records.append(_record(await one.call_tool("execute_python", {"code": code})))
        async with Client(url, mode="legacy", elicitation_callback=answers) as other:  # a new MCP session
            with anyio.fail_after(60):
                records.append(_record(await other.call_tool("execute_python", {"code": DELETE})))

    with served_http(tmp_path, _config(tmp_path, memory_server_bin)) as (_, url):
        anyio.run(session, url)
    first, second, third = records
    assert first["value"]["data"] == ["deleted", ["Lima"]]
    assert second["value"]["data"] == ["deleted", ["Oslo"]]
    assert _delete_call(second)["approval"]["by"] == "the client (allowed earlier for this session)"
    assert third["value"]["data"][0] == "memory/delete_entities was denied by the client; nothing was sent"
    assert len(answers.asked) == 2  # asked in the first session once, and again in the new one


def test_over_http_on_the_2026_protocol_each_question_is_a_round_and_an_allowance_lasts_the_call(
    tmp_path: Path, memory_server_bin: str
) -> None:
    """Each round is an HTTP request of its own (no MCP session); "for this session" means this call."""
    answers = Answers(_choose("allow this tool for this session"), _choose("allow once"))
    twice = (
        DELETE + 'delete_entities(entityNames=["Lima"])\nsorted(e["name"] for e in read_graph().entities)\n'
    )
    records: list[dict[str, Any]] = []

    async def session(url: str) -> None:
        async with Client(url, elicitation_callback=answers) as client:
            assert client.protocol_version == "2026-07-28"
            for code in (twice, DELETE):
                with anyio.fail_after(60):
                    records.append(_record(await client.call_tool("execute_python", {"code": code})))

    with served_http(tmp_path, _config(tmp_path, memory_server_bin)) as (_, url):
        anyio.run(session, url)
    first, second = records
    assert first["status"] == "ok" and first["value"]["data"] == []  # both deleted, asked once
    deletes = [c for c in first["tool_calls"] if c["tool"] == "delete_entities"]
    assert [c["approval"]["by"] for c in deletes] == [
        "the client",
        "the client (allowed earlier for this session)",
    ]
    assert second["value"]["data"] == ["deleted", ["Lima"]]  # a new call is asked again
    assert len(answers.asked) == 2


def test_the_2026_rounds_on_the_wire_an_unanswered_retry_is_asked_again_and_a_spent_state_is_refused(
    tmp_path: Path, memory_server_bin: str
) -> None:
    """The rounds driven by hand, as a client that keeps the state itself would: what each answer is."""
    config = _config(tmp_path, memory_server_bin)
    outcomes: list[Any] = []

    async def session() -> None:
        with (tmp_path / "serve.log").open("w") as errlog:
            client = Client(
                stdio_client(stdio_params(tmp_path, config), errlog=errlog), elicitation_callback=Answers()
            )
            async with client:
                call = client.session.call_tool
                arguments = {"code": DELETE}
                with anyio.fail_after(60):
                    first = await call("execute_python", arguments, allow_input_required=True)
                    assert isinstance(first, InputRequiredResult) and first.request_state is not None
                    state = first.request_state
                    again = await call(
                        "execute_python", arguments, request_state=state, allow_input_required=True
                    )
                    answer: InputResponses = {
                        key: _choose("allow once") for key in (first.input_requests or {})
                    }
                    done = await call(
                        "execute_python", arguments, input_responses=answer, request_state=state
                    )
                    spent = await call(
                        "execute_python", arguments, input_responses=answer, request_state=state
                    )
                    # A state the client made up never reaches serve: the SDK checks its seal.
                    forged = json.dumps({"run": "guessed", "question": "question-1"})
                    with pytest.raises(MCPError, match="Invalid or expired requestState"):
                        await call("execute_python", arguments, input_responses=answer, request_state=forged)
                outcomes.extend([first, again, done, spent])

    anyio.run(session)
    first, again, done, spent = outcomes
    (key,) = first.input_requests
    question = first.input_requests[key]
    assert question.method == "elicitation/create" and REASON in question.params.message
    assert isinstance(again, InputRequiredResult) and again.input_requests == first.input_requests
    assert _record(done)["value"]["data"] == ["deleted", ["Lima"]]
    assert spent.is_error and "this call is no longer waiting for an answer" in spent.content[0].text
    assert "make the call again without input_responses or request_state" in spent.content[0].text
