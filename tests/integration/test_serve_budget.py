"""What ``codemode serve`` sends back stays within what execute_python's description promises.

A host's model reads the result's text: a program whose output or value is large gets the head and the end
of it, a marker saying how much was cut, and the whole as an artifact it can read as a resource or with
``get_artifact`` in its next program. A bad ``timeout`` is refused with the rule every front door uses
(``limits.check_timeout``), not with a validation library's report.
"""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest
from mcp import Client, stdio_client
from mcp.types import CallToolResult, TextResourceContents

from codemode_kernel.agent import AgentOptions
from tests.integration.serve_support import demo_server, stdio_params, write_serve_config

pytestmark = pytest.mark.integration

BUDGET = AgentOptions().result_budget
"""The characters the description promises ("cut to about 8000 characters")."""

BIG_PROGRAM = 'print("first line of output")\n"abc" * 400_000 + "THE END"\n'
"""Prints a line, then returns 1,200,007 characters: more than a worker sends (1,000,000 bytes)."""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_serve_config(tmp_path, {"weather": demo_server("weather")})


def _text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def test_a_large_value_comes_back_cut_to_the_budget_and_whole_as_an_artifact(config: Path) -> None:
    folder = config.parent

    async def session() -> None:
        with (folder / "serve.stderr.log").open("w") as errlog:
            async with Client(stdio_client(stdio_params(folder, config), errlog=errlog)) as client:
                tool = (await client.list_tools()).tools[0]
                assert f"cut to about {BUDGET} characters" in (tool.description or "")
                assert tool.output_schema is not None and "cut" in tool.output_schema["properties"]
                result = await client.call_tool("execute_python", {"code": BIG_PROGRAM})
                assert not result.is_error, _text(result)
                text = _text(result)
                assert len(text) <= BUDGET, len(text)
                assert text.startswith("first line of output\nvalue: abcabc")
                assert "[ok in" in text
                cut = re.search(r"\[\.\.\. ([\d,]+) characters cut here; the whole is artifact (\w+)", text)
                assert cut is not None, text
                left_out, artifact_id = int(cut[1].replace(",", "")), cut[2]
                assert f"get_artifact({artifact_id!r})" in text and f"artifact://{artifact_id}" in text
                # The worker sends 1,000,000 bytes of a value; the text says the rest never left it.
                worker_cut = "the value was cut before it left the worker: 1,000,000 of its 1,200,007 bytes"
                assert worker_cut + " came through" in text

                whole = await client.read_resource(f"artifact://{artifact_id}")
                content = whole.contents[0]
                assert isinstance(content, TextResourceContents)
                assert content.text.startswith("first line of output\nvalue: abcabc")
                assert len(content.text) > 1_000_000
                assert len(content.text) - BUDGET < left_out < len(content.text)

                record = result.structured_content
                assert record is not None and record["status"] == "ok"
                assert record["cut"] == {
                    "characters": left_out,
                    "artifact": artifact_id,
                    "uri": f"artifact://{artifact_id}",
                }

                # A program reads it back by the id the text gave.
                again = await client.call_tool(
                    "execute_python", {"code": f"len(get_artifact({artifact_id!r}))"}
                )
                assert not again.is_error, _text(again)
                assert again.structured_content is not None
                assert again.structured_content["value"]["data"] == len(content.text)
                assert again.structured_content["cut"] is None

    anyio.run(session)


BAD_TIMEOUTS = [
    (301, "301 seconds is outside 1 to 300"),
    (0.5, "0.5 seconds is outside 1 to 300"),
    ("ten", "'ten' is not a number of seconds"),
]


def test_a_bad_timeout_is_refused_naming_the_field_the_range_and_the_fix(config: Path) -> None:
    folder = config.parent

    async def session() -> None:
        with (folder / "serve.stderr.log").open("w") as errlog:
            async with Client(stdio_client(stdio_params(folder, config), errlog=errlog)) as client:
                tool = (await client.list_tools()).tools[0]
                schema = tool.input_schema["properties"]["timeout"]
                assert {"type": "number", "minimum": 1, "maximum": 300} in schema["anyOf"]
                for timeout, shown in BAD_TIMEOUTS:
                    refused = await client.call_tool("execute_python", {"code": "1 + 1", "timeout": timeout})
                    assert refused.is_error
                    text = _text(refused)
                    assert f"execute_python: timeout: {shown}; " in text, text
                    fix = "pass a number of seconds from 1 to 300, or leave timeout out for the default"
                    assert fix in text
                    if isinstance(timeout, int | float) and 300 < timeout <= 3600:  # a config could allow it
                        assert text.endswith(
                            "set defaults.codeMode.maxTimeout to 301 or more (up to 3600) in codemode.json"
                        )
                    else:
                        assert text.endswith(fix)
                    assert "pydantic" not in text and "validation error" not in text
                for timeout, seconds in ((300, 300), ("60", 60)):  # a number sent as a string is taken
                    ran = await client.call_tool("execute_python", {"code": "1 + 1", "timeout": timeout})
                    assert not ran.is_error and ran.structured_content is not None
                    assert ran.structured_content["timeout_s"] == seconds

    anyio.run(session)
