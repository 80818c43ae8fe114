"""What ``codemode serve`` offers beside execute_python, as an MCP host sees it through the SDK client.

One served process (Streamable HTTP) for the whole module, in front of real servers: the weather and
workspace demos, a small server whose tools are named ``execute_python`` (code mode's own tool) and
``get_forecast`` (as the weather server's), both excluded, and an entry that is ``codemode serve`` itself.
"""

from __future__ import annotations

import base64
import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import psutil
import pytest
from mcp import Client, MCPError
from mcp.types import BlobResourceContents, Resource, TextResourceContents

from codemode_kernel.serve.selfref import self_reference_note
from codemode_kernel.servers import weather
from tests.integration.serve_support import (
    CODE_MODE_TOOLS,
    demo_server,
    serve_argv,
    served_http,
    write_serve_config,
)

pytestmark = pytest.mark.integration

SHADOW_SERVER = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("shadow", log_level="WARNING")


@server.tool()
def execute_python(code: str) -> str:
    """Count the characters of some code (a tool that happens to share code mode's tool name)."""
    return f"shadow counted {len(code)} characters"


@server.tool()
def get_forecast(place: str) -> dict[str, str]:
    """The forecast of a place, always fog (a tool that happens to share the weather server's tool name)."""
    return {"place": place, "forecast": "fog"}


server.run("stdio")
'''

BIG_LINE = "the quick brown fox jumps over the lazy dog, again and again\n"
BIG_TEXT = "".join(f"{n:05d} {BIG_LINE}" for n in range(2000))  # about 130 KB: past the 64 KiB threshold

OFFERED = [*CODE_MODE_TOOLS, "get_forecast", "shadow__execute_python", "shadow__get_forecast"]


@dataclass(frozen=True)
class Served:
    url: str
    project: Path
    process: subprocess.Popen[bytes]

    def stderr(self) -> str:
        return (self.project / "serve.stderr.log").read_text()


def _servers(project: Path) -> dict[str, Any]:
    return {
        "weather": demo_server("weather"),
        "workspace": demo_server("workspace", "--root", str(project)),
        "shadow": {"command": sys.executable, "args": [str(project / "shadow_server.py")]},
        # What a project's .mcp.json written for a host says: serve must not start itself.
        "codemode": {"command": sys.executable, "args": serve_argv(Path("serve.json"))[1:]},
    }


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``codemode serve --transport http`` for the module; stopped with SIGINT as a user would."""
    project = tmp_path_factory.mktemp("serve-tools")
    (project / "big.txt").write_text(BIG_TEXT)
    (project / "shadow_server.py").write_text(SHADOW_SERVER)
    excluded = {"codeMode": {"excludedTools": ["get_forecast", "shadow/execute_python"]}}
    config = write_serve_config(project, _servers(project), defaults=excluded)
    with served_http(project, config) as (proc, url):
        yield Served(url, project, proc)


def _session(served: Served, body: Any) -> None:
    async def run() -> None:
        async with Client(served.url) as client:
            await body(client)

    anyio.run(run)


async def _weather_forecast_tool() -> Any:
    """get_forecast as the weather server itself lists it (in memory: the same server code)."""
    async with Client(weather.build_server()) as direct:
        return next(t for t in (await direct.list_tools()).tools if t.name == "get_forecast")


# -- excluded tools ------------------------------------------------------------------------------------


def test_excluded_tools_are_listed_with_their_own_schemas(served: Served) -> None:
    async def body(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert list(tools) == OFFERED
        upstream = await _weather_forecast_tool()
        offered = tools["get_forecast"]
        assert offered.input_schema == upstream.input_schema
        assert offered.output_schema == upstream.output_schema
        assert (offered.title, offered.description) == (upstream.title, upstream.description)
        assert offered.annotations is not None and offered.annotations.read_only_hint is True
        # Each renamed tool keeps its own server's schemas.
        assert tools["shadow__execute_python"].input_schema["required"] == ["code"]
        shadow_forecast = tools["shadow__get_forecast"]
        assert shadow_forecast.input_schema["required"] == ["place"]
        assert (
            shadow_forecast.description == "The forecast of a place, always fog (a tool that happens to "
            "share the weather server's tool name)."
        )
        # In programs the excluded tools are no functions; the description says where they are instead.
        description = tools["execute_python"].description or ""
        assert "def get_weather(" in description and "def read_file(" in description
        assert "def get_forecast(" not in description
        assert "call them as separate tools: get_forecast, shadow__execute_python, shadow__get_forecast" in (
            description
        )

    _session(served, body)


def test_an_excluded_tool_answers_as_the_upstream_does(served: Served) -> None:
    arguments = {"city": "Oslo", "days": 2, "delay_seconds": 0.05}

    async def body(client: Client) -> None:
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total, message))

        result = await client.call_tool("get_forecast", arguments, progress_callback=on_progress)
        async with Client(weather.build_server()) as direct:
            expected = await direct.call_tool("get_forecast", arguments)
        assert not result.is_error
        assert result.structured_content == expected.structured_content
        assert [block.model_dump() for block in result.content] == [b.model_dump() for b in expected.content]
        assert progress == [(1, 2, "Oslo: day 1 of 2"), (2, 2, "Oslo: day 2 of 2")]

        refused = await client.call_tool("get_forecast", {"city": "Atlantis!", "days": 1, "delay_seconds": 0})
        assert refused.is_error and "'Atlantis!' is not a city name" in refused.content[0].text  # type: ignore[union-attr]

        wrong = await client.call_tool("get_forecast", {"city": "Oslo", "days": 99})
        assert wrong.is_error
        assert "days: 99 is greater than the maximum of 7" in wrong.content[0].text  # type: ignore[union-attr]

    _session(served, body)


def test_name_collisions_are_renamed_and_reported(served: Served) -> None:
    async def body(client: Client) -> None:
        fog = await client.call_tool("shadow__get_forecast", {"place": "Lima"})
        assert fog.structured_content == {"place": "Lima", "forecast": "fog"}
        weather_forecast = await client.call_tool(
            "get_forecast", {"city": "Lima", "days": 1, "delay_seconds": 0}
        )
        assert weather_forecast.structured_content is not None
        assert weather_forecast.structured_content["city"] == "Lima"
        shadow = await client.call_tool("shadow__execute_python", {"code": "print(1)"})
        assert shadow.content[0].text == "shadow counted 8 characters"  # type: ignore[union-attr]
        ours = await client.call_tool("execute_python", {"code": "6 * 7"})
        assert ours.structured_content is not None and ours.structured_content["value"]["data"] == 42

    _session(served, body)
    stderr = served.stderr()
    assert (
        'the excluded tool shadow/get_forecast is offered as "shadow__get_forecast": "get_forecast" is '
        "weather/get_forecast, listed before it"
    ) in stderr
    assert (
        'the excluded tool shadow/execute_python is offered as "shadow__execute_python": execute_python is '
        "code mode's own tool"
    ) in stderr


# -- artifacts as resources -----------------------------------------------------------------------------

STORING_PROGRAM = """
png = bytes([137, 80, 78, 71, 13, 10, 26, 10]) + bytes(range(8))
summary_id = store_artifact({"city": "Oslo", "days": [1, 2, 3]}, name="oslo summary", description="3 days")
image_id = store_artifact(png, name="tiny image")
[summary_id, image_id]
"""


async def _all_resources(client: Client) -> list[Resource]:
    resources: list[Resource] = []
    cursor = None
    while True:
        page = await client.list_resources(cursor=cursor)
        resources += page.resources
        cursor = page.next_cursor
        if cursor is None:
            return resources


def test_artifacts_a_program_stored_are_resources(served: Served) -> None:
    async def body(client: Client) -> None:
        ran = await client.call_tool("execute_python", {"code": STORING_PROGRAM})
        assert ran.structured_content is not None, ran.content
        summary_id, image_id = ran.structured_content["value"]["data"]

        listed = {r.uri: r for r in await _all_resources(client)}
        summary, image = listed[f"artifact://{summary_id}"], listed[f"artifact://{image_id}"]
        assert (summary.name, summary.mime_type, summary.description) == (
            "oslo summary",
            "application/json",
            "3 days",
        )
        assert (image.name, image.mime_type, image.size) == ("tiny image", "image/png", 16)

        text = (await client.read_resource(summary.uri)).contents[0]
        assert isinstance(text, TextResourceContents) and text.mime_type == "application/json"
        assert json.loads(text.text) == {"city": "Oslo", "days": [1, 2, 3]}
        blob = (await client.read_resource(image.uri)).contents[0]
        assert isinstance(blob, BlobResourceContents) and blob.mime_type == "image/png"
        assert base64.b64decode(blob.blob) == bytes([137, 80, 78, 71, 13, 10, 26, 10, *range(8)])

        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["artifact://{id_or_name}"]
        by_name = (await client.read_resource("artifact://" + quote("oslo summary", safe=""))).contents[0]
        assert isinstance(by_name, TextResourceContents) and by_name.text == text.text
        by_id = (await client.read_resource(f"artifact://{summary_id}")).contents[0]
        assert isinstance(by_id, TextResourceContents) and by_id.text == text.text

        with pytest.raises(MCPError) as missing:
            await client.read_resource("artifact://0123456789ab")
        assert missing.value.error.code == -32602  # invalid params: no such resource
        assert "no artifact has the id or name '0123456789ab'" in missing.value.error.message

    _session(served, body)


def test_many_artifacts_are_listed_in_pages_newest_first(served: Served) -> None:
    async def body(client: Client) -> None:
        code = "[store_artifact(n, name=f'number {n}') for n in range(250)]"
        ran = await client.call_tool("execute_python", {"code": code})
        assert ran.structured_content is not None, ran.content
        stored = ran.structured_content["value"]["data"]

        first = await client.list_resources()
        assert len(first.resources) == 200 and first.next_cursor is not None
        listed = await _all_resources(client)
        uris = [r.uri for r in listed]
        assert len(uris) == len(set(uris))  # no artifact twice across pages
        # The newest is the run's whole text (its 250 ids are more than the reply's budget), then the 250.
        assert listed[0].name.startswith("execute_python-output-"), listed[0]
        newest = [uri.removeprefix("artifact://") for uri in uris[1:251]]
        assert newest == stored[::-1]

    _session(served, body)


def test_a_tool_result_too_large_for_the_record_is_a_readable_resource(served: Served) -> None:
    async def body(client: Client) -> None:
        code = 'text = read_file(path="big.txt")\nlen(text)\n'
        ran = await client.call_tool("execute_python", {"code": code})
        record = ran.structured_content
        assert record is not None and record["status"] == "ok", ran.content
        assert record["value"]["data"] == len(BIG_TEXT)  # the program had all of it
        call = record["tool_calls"][0]
        assert call["artifact_id"] is not None  # the record keeps a preview; the whole is an artifact
        assert len(json.dumps(call["result"])) < 10_000

        contents = (await client.read_resource(f"artifact://{call['artifact_id']}")).contents[0]
        assert isinstance(contents, TextResourceContents) and contents.mime_type == "application/json"
        assert json.loads(contents.text)["content"][0]["text"] == BIG_TEXT

    _session(served, body)


# -- a config that lists codemode serve itself -------------------------------------------------------------


def test_a_config_listing_codemode_serve_does_not_start_it(served: Served) -> None:
    command_lines = []
    for child in psutil.Process(served.process.pid).children(recursive=True):
        with contextlib.suppress(psutil.Error, OSError):  # a finished run's worker may be ending meanwhile
            command_lines.append(" ".join(child.cmdline()))
    assert any("codemode_kernel.servers.weather" in line for line in command_lines)  # the others run
    assert not [line for line in command_lines if "codemode_kernel.cli serve" in line]

    async def body(client: Client) -> None:
        assert [tool.name for tool in (await client.list_tools()).tools] == OFFERED

    _session(served, body)


def test_serve_says_which_entry_it_left_out(served: Served) -> None:
    assert self_reference_note(["codemode"], served.project / "serve.json") in served.stderr()
