"""``codemode serve`` as an MCP host sees it: the SDK client over stdio and Streamable HTTP, real servers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client

from tests.conftest import free_port, run_cli, wait_for_port

pytestmark = pytest.mark.integration

TWO_SERVERS_PROGRAM = (
    'w = get_weather(city="Oslo", unit="celsius")\n'
    'text = read_file(path="note.txt")\n'
    '{"city": w["city"], "note": text.strip()}\n'
)
RAISING_PROGRAM = 'x = 1\nraise ValueError("boom")\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A workspace with a note, a private home, and a config naming the weather and workspace demo servers."""
    (tmp_path / "home").mkdir()
    (tmp_path / "note.txt").write_text("remember the umbrella\n")

    def demo(name: str, *extra: str) -> dict[str, Any]:
        return {"command": sys.executable, "args": ["-m", f"codemode_kernel.servers.{name}", *extra]}

    servers = {"weather": demo("weather"), "workspace": demo("workspace", "--root", str(tmp_path))}
    (tmp_path / "serve.json").write_text(json.dumps({"mcpServers": servers}))
    return tmp_path


def _env(project: Path) -> dict[str, str]:
    home = project / "home"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CODEMODE_CONFIG", "XDG_CONFIG_HOME", "CODEMODE_SERVE_TOKEN")
    }
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"))
    return env


def _serve_argv(*extra: str) -> list[str]:
    return [sys.executable, "-m", "codemode_kernel.cli", "serve", "--config", "serve.json", *extra]


async def _check_listing(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == ["execute_python"]
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
        argv = _serve_argv()
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=_env(project), cwd=project)
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


@pytest.fixture
def http_serve(project: Path) -> Iterator[int]:
    """``codemode serve --transport http`` on a free port; stopped with Ctrl-C (SIGINT) as a user would."""
    port = free_port()
    proc = subprocess.Popen(
        _serve_argv("--transport", "http", "--port", str(port)),
        cwd=project,
        env=_env(project),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(port, proc, timeout=30)
        yield port
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            assert proc.wait(15) == 0
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise


def test_http_at_mcp_lists_and_runs_a_program(http_serve: int) -> None:
    async def session() -> None:
        async with Client(f"http://127.0.0.1:{http_serve}/mcp") as client:
            await _check_listing(client)
            await _check_two_servers(client)

    anyio.run(session)


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
