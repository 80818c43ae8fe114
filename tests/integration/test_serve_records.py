"""``codemode serve``'s outputSchema is the run's record (core/records.py), nested records included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, stdio_client

from tests.integration.serve_support import demo_server, stdio_params, write_serve_config

pytestmark = pytest.mark.integration

COMPLETING_PROGRAM = 'w = get_weather(city="Oslo", unit="celsius")\ncomplete("done", city=w["city"])\n'


def _kinds(schema: dict[str, Any]) -> set[str]:
    """The ``kind`` values the schema's value envelopes allow."""
    defs = schema["$defs"]
    return {
        defs[ref["$ref"].rsplit("/", 1)[1]]["properties"]["kind"]["const"]
        for ref in schema["properties"]["value"]["anyOf"]
        if "$ref" in ref
    }


def test_the_output_schema_is_the_whole_record_and_every_reply_keeps_it(tmp_path: Path) -> None:
    write_serve_config(tmp_path, {"weather": demo_server("weather")})

    async def session() -> None:
        params = stdio_params(tmp_path, tmp_path / "serve.json")
        with (tmp_path / "serve.stderr.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                schema = tools["execute_python"].output_schema
                assert schema == tools["wait_execution"].output_schema  # a wait answers with the same record
                assert schema is not None
                # ``completed`` is sent with every reply: the schema says so (it was missing).
                assert "completed" in schema["properties"] and "completed" in schema["required"]
                assert _kinds(schema) == {"json", "text", "bytes", "image", "table", "repr"}
                call = schema["$defs"]["ToolCallRecord"]
                assert {"server", "tool", "status", "arguments", "seq"} <= set(call["required"])
                assert "approval" in call["properties"] and "approval" not in call["required"]
                result = await client.call_tool("execute_python", {"code": COMPLETING_PROGRAM})
                assert not result.is_error, result.content
                record = result.structured_content
                assert record is not None
                jsonschema.validate(record, schema)
                assert record["completed"] is True
                assert record["value"] == {
                    "kind": "json",
                    "data": {"answer": "done", "data": {"city": "Oslo"}},
                }
                assert [c["tool"] for c in record["tool_calls"]] == ["get_weather"]
                # A program left running answers with the same record, status "running": the schema holds it.
                slow = "print('started')\nget_forecast(city='Oslo', days=1, unit='celsius', delay_seconds=3)"
                running = await client.call_tool("execute_python", {"code": slow, "wait_s": 0.5})
                assert running.structured_content is not None and not running.is_error
                jsonschema.validate(running.structured_content, schema)
                assert running.structured_content["status"] == "running"
                ident = running.structured_content["execution_id"]
                ended = await client.call_tool("wait_execution", {"execution_id": ident, "wait_s": 30})
                assert ended.structured_content is not None
                jsonschema.validate(ended.structured_content, schema)
                assert ended.structured_content["status"] == "ok"

    anyio.run(session)
