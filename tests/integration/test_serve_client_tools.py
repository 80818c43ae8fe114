"""Tools the client of ``codemode serve`` owns (seed 003): pending calls, answered in follow-up calls.

A real ``codemode serve`` over stdio with the weather demo server behind it, driven by the MCP SDK's client
as a host would: the client passes its tool definitions with ``execute_python``, gets the calls back as
pending, answers them with ``resume`` and ``answers``, and the program goes on without any server called
twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, stdio_client
from mcp.types import CallToolResult, Tool

from tests.integration.serve_support import demo_server, stdio_params, write_serve_config

pytestmark = pytest.mark.integration

WEB_SEARCH = {
    "name": "webSearch",
    "description": "Search the web; only the client can.",
    "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}
# As a client holds a tool of its own (the SDK's Tool, serialized with its nulls: title, icons, _meta...).
TRANSLATE = Tool(
    name="translate",
    description="Translate a text into English.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    output_schema={"type": "object", "properties": {"english": {"type": "string"}}, "required": ["english"]},
).model_dump(by_alias=True, mode="json")
# A configured server's tool (slow, so its progress shows whether the server was really called), then a
# parallel batch of two client calls, then one more round of the client's.
PROGRAM = (
    'f = get_forecast(city="Oslo", days=1, unit="celsius", delay_seconds=0.1)\n'
    'print("forecast for", f.city)\n'
    'hits = parallel([lambda q=q: web_search(query=q) for q in ("sport news", "world news")])\n'
    'print("resumed with", len(hits), "hits")\n'
    'english = translate(text=f"{f.city}: {hits[0]}").english\n'
    "[hits, english, f.days[0].conditions]"
)


def _record(result: CallToolResult) -> dict[str, Any]:
    record: dict[str, Any] | None = result.structured_content
    assert record is not None, result.content
    return record


def _text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@asynccontextmanager
async def _serve(folder: Path) -> AsyncIterator[Client]:
    write_serve_config(folder, {"weather": demo_server("weather")})
    with (folder / "serve.log").open("w") as errlog:
        async with Client(stdio_client(stdio_params(folder, folder / "serve.json"), errlog=errlog)) as client:
            yield client


def test_a_parallel_batch_of_client_calls_is_answered_in_rounds_without_calling_a_server_twice(
    tmp_path: Path,
) -> None:
    seen: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    async def rounds() -> None:
        async with _serve(tmp_path) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            schema = listed["execute_python"].input_schema["properties"]
            assert {"tools", "resume", "answers"} <= set(schema)

            first = await client.call_tool(
                "execute_python",
                {"code": PROGRAM, "tools": [WEB_SEARCH, TRANSLATE]},
                progress_callback=on_progress,
            )
            record = _record(first)
            assert not first.is_error and record["status"] == "pending"
            assert [(c["id"], c["tool"], c["arguments"]) for c in record["pending_calls"]] == [
                ("call_2", "webSearch", {"query": "sport news"}),
                ("call_3", "webSearch", {"query": "world news"}),
            ]
            assert [c["tool"] for c in record["tool_calls"]] == ["get_forecast"]
            assert record["stdout"] == "forecast for Oslo\n"
            text = _text(first)
            assert 'call_2: webSearch {"query": "sport news"}' in text
            assert "call execute_python again" in text
            # The text alone is enough: a model that sees no structuredContent copies the state from it.
            resume = json.loads(text.split("\nresume: ", 1)[1])
            assert resume == record["resume"]
            assert resume["code_sha256"] == hashlib.sha256(PROGRAM.encode()).hexdigest()
            assert any(m.startswith("call #1 get_forecast: 1/1 Oslo") for m in seen)  # the server ran

            seen.clear()
            second = await client.call_tool(
                "execute_python",
                {
                    "code": PROGRAM,  # sent again, as the seed's client sends its history again
                    "resume": resume,
                    "answers": [
                        {"id": "call_3", "result": "WORLD"},  # any order, any JSON value
                        {"id": "call_2", "result": {"content": [{"type": "text", "text": "SPORT"}]}},
                    ],
                },
                progress_callback=on_progress,
            )
            record = _record(second)
            assert record["status"] == "pending", record["error"]
            assert record["stdout"] == "forecast for Oslo\nresumed with 2 hits\n"
            assert [(c["id"], c["tool"], c["arguments"]) for c in record["pending_calls"]] == [
                ("call_4", "translate", {"text": "Oslo: SPORT"})
            ]
            forecast = record["tool_calls"][0]
            assert forecast["tool"] == "get_forecast"
            assert forecast["warnings"] == ["replayed from the record; no server was called"]
            assert not any("get_forecast:" in m for m in seen)  # the server reported nothing: not called

            done = await client.call_tool(
                "execute_python",
                {
                    "code": PROGRAM,
                    "resume": record["resume"],
                    "answers": [{"seq": 4, "result": {"english": "Oslo: sports"}}],
                },
            )
            record = _record(done)
            assert not done.is_error and record["status"] == "ok", record["error"]
            assert record["value"]["data"][:2] == [["SPORT", "WORLD"], "Oslo: sports"]
            assert record["resume"] is None and record["pending_calls"] == []
            assert [(c["server"], c["tool"]) for c in record["tool_calls"]] == [
                ("weather", "get_forecast"),
                ("client", "webSearch"),
                ("client", "webSearch"),
                ("client", "translate"),
            ]
            assert all(c["warnings"] for c in record["tool_calls"][:3])  # all replayed in the last round

    anyio.run(rounds)


def test_an_error_answer_is_a_tool_error_and_a_diverging_follow_up_names_the_first_difference(
    tmp_path: Path,
) -> None:
    catching = (
        'try:\n    web_search(query="weather in Oslo")\nexcept ToolError as e:\n    caught = str(e)\ncaught'
    )

    async def rounds() -> None:
        async with _serve(tmp_path) as client:
            first = await client.call_tool("execute_python", {"code": catching, "tools": [WEB_SEARCH]})
            failed = await client.call_tool(
                "execute_python",
                {
                    "code": catching,
                    "resume": _record(first)["resume"],
                    "answers": [{"id": "call_1", "error": "quota exceeded"}],
                },
            )
            assert not failed.is_error, _text(failed)
            assert _record(failed)["value"] == {"kind": "text", "text": "quota exceeded"}

            # The follow-up sends other code: it asks something else where the record has an answer.
            asked = await client.call_tool(
                "execute_python", {"code": 'web_search(query="a")', "tools": [WEB_SEARCH], "timeout": 20}
            )
            assert _record(asked)["resume"]["timeout"] == 20
            other = await client.call_tool(
                "execute_python",
                {
                    "code": 'web_search(query="b")',
                    "resume": _record(asked)["resume"],
                    "answers": [{"id": "call_1", "result": "A"}],
                },
            )
            record = _record(other)
            assert other.is_error and record["status"] == "error"
            assert record["error"]["message"].startswith(
                "replay diverged at call 1: the program called webSearch(query='b'), where the record has "
                "webSearch(query='a')"
            )
            assert "The code is not the program the `resume` state was made for" in _text(other)
            assert record["timeout_s"] == 20  # kept from the first round

            # A model that calls its tool by its MCP name is told the program's name for it.
            named = await client.call_tool(
                "execute_python", {"code": 'webSearch(query="x")', "tools": [WEB_SEARCH]}
            )
            assert _record(named)["error"]["type"] == "NameError"
            assert "Your tools have snake_case names in programs: webSearch is web_search." in _text(named)

    anyio.run(rounds)


def test_another_serve_process_takes_the_next_round_nothing_is_kept_between_rounds(tmp_path: Path) -> None:
    code = 'w = get_weather(city="Oslo", unit="celsius")\nweb_search(query=w.conditions)'

    async def rounds() -> None:
        async with _serve(tmp_path) as client:
            first = _record(await client.call_tool("execute_python", {"code": code, "tools": [WEB_SEARCH]}))
        async with _serve(tmp_path) as client:  # a new process, as after a restart
            answer = {"id": first["pending_calls"][0]["id"], "result": "found"}
            done = await client.call_tool(
                "execute_python", {"code": code, "resume": first["resume"], "answers": [answer]}
            )
        assert _record(done)["value"] == {"kind": "text", "text": "found"}, _text(done)
        weather = _record(done)["tool_calls"][0]
        assert weather["tool"] == "get_weather" and weather["warnings"]  # from the record, not the server

    anyio.run(rounds)


ASK = 'web_search(query="x")'
BAD_REQUESTS: list[tuple[dict[str, Any], str]] = [
    ({"code": "1", "tools": [{"description": "no name"}]}, 'tools[0]: "name" is missing'),
    (
        {"code": "1", "tools": [{"name": "t", "inputSchema": "object"}]},
        'tools[0] ("t").inputSchema: must be a JSON Schema object',
    ),
    ({"code": "1", "tools": [{"name": "t"}]}, 'tools[0] ("t").inputSchema: missing'),
    (
        {"code": "1", "tools": [{"name": "t", "inputSchema": {"type": "array"}}]},
        'tools[0] ("t").inputSchema: "type" is "array"',
    ),
    (
        {"code": "1", "tools": [{"name": "t", "inputSchema": {"type": "object", "properties": 3}}]},
        'tools[0] ("t").inputSchema.properties: not valid JSON Schema',
    ),
    (  # never read: a $ref resolves only inside the schema, not from a file or an address
        {
            "code": "1",
            "tools": [{"name": "t", "inputSchema": {"properties": {"p": {"$ref": "file:///etc/passwd"}}}}],
        },
        'tools[0] ("t").inputSchema: $ref "file:///etc/passwd" is not inside the schema',
    ),
    (
        {"code": "1", "tools": [{**TRANSLATE, "outputSchema": {"$ref": "http://127.0.0.1:9/en.json"}}]},
        'tools[0] ("translate").outputSchema: $ref "http://127.0.0.1:9/en.json" is not inside the schema',
    ),
    (
        {"code": "1", "tools": [WEB_SEARCH, WEB_SEARCH]},
        'tools[1]: a second tool named "webSearch" (tools[0] is the first)',
    ),
    (
        {"code": "1", "tools": [{**WEB_SEARCH, "name": "get_weather"}]},
        "tools: client/get_weather (get_weather): a configured server's tool already has this name",
    ),
    ({"code": "1", "tools": [WEB_SEARCH], "session": "s"}, "session: not with tools or resume"),
    ({"code": "1", "answers": [{"id": "call_1", "result": 1}]}, "answers: answers need the `resume`"),
    ({"code": "1", "resume": {"version": 7}, "answers": []}, "resume.version: is 7, this server reads 1"),
    ({"code": "1", "resume": "state"}, "resume"),  # not an object: the SDK's own check names the argument
]


def test_bad_definitions_answers_and_state_are_clear_errors_naming_the_field(tmp_path: Path) -> None:
    async def requests() -> None:
        async with _serve(tmp_path) as client:
            for arguments, message in BAD_REQUESTS:
                refused = await client.call_tool("execute_python", arguments)
                assert refused.is_error and message in _text(refused), (arguments, _text(refused))
                assert refused.structured_content is None  # refused before anything ran

            first = await client.call_tool("execute_python", {"code": ASK, "tools": [WEB_SEARCH]})
            resume = _record(first)["resume"]
            answers_refused = [
                ([], "answers: missing; give the result of each pending call (call_1)"),
                (
                    [{"id": "call_9", "result": 1}],
                    'no pending call has the id "call_9"; the pending calls are call_1 (webSearch)',
                ),
                ([{"seq": 2, "result": 1}], "no pending call has the seq 2"),
                ([{"result": 1}], 'give the "id" of the pending call it answers'),
                ([{"id": "call_1"}], 'answers[0] (call_1, webSearch): give "result"'),
                ([{"id": "call_1", "result": 1, "error": "x"}], "not both"),
                ([{"id": "call_1", "result": 1}, {"seq": 1, "result": 2}], "answered twice"),
                (
                    [{"id": "call_1", "result": {"content": ["text"]}}],
                    "answers[0] (call_1, webSearch).result.content",
                ),
                ([{"id": "call_1", "error": ""}], '"error" must be a message'),
            ]
            for answers, message in answers_refused:
                refused = await client.call_tool(
                    "execute_python", {"code": ASK, "resume": resume, "answers": answers}
                )
                assert refused.is_error and message in _text(refused), (answers, _text(refused))

            broken = {**resume, "record": [{"tool": "get_weather"}]}
            refused = await client.call_tool(
                "execute_python", {"code": ASK, "resume": broken, "answers": [{"id": "call_1", "result": 1}]}
            )
            assert 'resume.record[0]: "server" missing or not a string' in _text(refused)
            assert "pass back the `resume` object of the pending result exactly as it came" in _text(refused)

            # After all that the server still answers, and the state still resumes.
            done = await client.call_tool(
                "execute_python",
                {"code": ASK, "resume": resume, "answers": [{"id": "call_1", "result": "fine"}]},
            )
            assert _record(done)["value"] == {"kind": "text", "text": "fine"}

    anyio.run(requests)
