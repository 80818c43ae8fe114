"""``codemode serve`` as an MCP host sees it: the SDK client over stdio and Streamable HTTP, real servers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, stdio_client

from tests.conftest import run_cli
from tests.integration.serve_support import (
    CODE_MODE_TOOLS,
    demo_server,
    served_http,
    stdio_params,
    write_serve_config,
)

pytestmark = pytest.mark.integration

TWO_SERVERS_PROGRAM = (
    'w = get_weather(city="Oslo", unit="celsius")\n'
    'text = read_file(path="note.txt")\n'
    '{"city": w["city"], "note": text.strip()}\n'
)
RAISING_PROGRAM = 'x = 1\nraise ValueError("boom")\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A workspace with a note, a private home, and serve.json naming the weather and workspace demos."""
    (tmp_path / "note.txt").write_text("remember the umbrella\n")
    servers = {
        "weather": demo_server("weather"),
        "workspace": demo_server("workspace", "--root", str(tmp_path)),
    }
    write_serve_config(tmp_path, servers)
    return tmp_path


async def _check_listing(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == CODE_MODE_TOOLS
    tool = tools[0]
    assert tool.description is not None
    assert "def get_weather(city: str" in tool.description and "def read_file(" in tool.description
    assert "llm(prompt)" not in tool.description  # no model configured: programs are not told of llm()
    assert tool.input_schema["required"] == ["code"]
    assert tool.output_schema is not None and "tool_calls" in tool.output_schema["properties"]


async def _check_two_servers(client: Client) -> None:
    result = await client.call_tool("execute_python", {"code": TWO_SERVERS_PROGRAM})
    assert not result.is_error, result.content
    record = result.structured_content
    assert record is not None and record["status"] == "ok"
    assert record["value"]["data"] == {"city": "Oslo", "note": "remember the umbrella"}
    assert [call["tool"] for call in record["tool_calls"]] == ["get_weather", "read_file"]
    assert "[ok in" in result.content[0].text  # type: ignore[union-attr]


def test_stdio_lists_execute_python_and_runs_programs(project: Path) -> None:
    async def session() -> None:
        params = stdio_params(project, project / "serve.json")
        with (project / "serve.stderr.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                await _check_listing(client)
                await _check_two_servers(client)
                failed = await client.call_tool("execute_python", {"code": RAISING_PROGRAM})
                assert failed.is_error
                record = failed.structured_content
                assert record is not None and record["status"] == "error"
                assert record["error"]["line"] == 2 and record["error"]["type"] == "ValueError"
                assert 'raise ValueError("boom")' in failed.content[0].text  # type: ignore[union-attr]
                slow = {"code": "import time\nwhile True:\n    time.sleep(0.05)\n", "timeout": 1}
                stopped = await client.call_tool("execute_python", slow)
                assert stopped.is_error
                assert stopped.structured_content is not None
                assert stopped.structured_content["status"] == "timeout"

    anyio.run(session)


def test_http_at_mcp_lists_and_runs_a_program(project: Path) -> None:
    async def session(url: str) -> None:
        async with Client(url) as client:
            await _check_listing(client)
            await _check_two_servers(client)

    with served_http(project, project / "serve.json") as (_, url):  # stopped by Ctrl-C, exit 0
        assert url.endswith("/mcp")
        anyio.run(session, url)


def test_http_beyond_loopback_checks_its_options_before_serving(project: Path) -> None:
    # Binding 0.0.0.0 is allowed now (with a bearer token, test_serve_http.py); a malformed option is
    # still refused as a usage error before any server starts.
    argv = ("serve", "--transport", "http", "--host", "0.0.0.0", "--allow-origin", "app.example")
    done = run_cli(*argv, cwd=project, timeout=30)
    assert done.returncode == 2
    assert "--allow-origin 'app.example'" in done.stderr and "scheme://host[:port]" in done.stderr


def test_an_untrusted_project_config_is_refused_with_the_fix(tmp_path: Path) -> None:
    weather = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"weather": weather}}))
    done = run_cli("serve", cwd=tmp_path, stdin="", timeout=30)
    assert done.returncode != 0
    assert ".mcp.json: is not trusted yet" in done.stderr and "codemode trust" in done.stderr
