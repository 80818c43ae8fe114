"""How ``codemode serve`` runs programs for its clients: sessions, progress, cancellation and its limits.

A real ``codemode serve`` process, the weather demo server behind it, and the MCP SDK's client in both
protocol eras: the 2026-07-28 one (each HTTP request on its own, cancelled by closing its stream) and the
handshake one (MCP sessions, ``notifications/cancelled``).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from mcp import Client, stdio_client
from mcp.types import CallToolResult, LoggingMessageNotificationParams, ToolListChangedNotification

from codemode_kernel.llm.scripted import ScriptedModelServer
from tests.conftest import QUIRKY
from tests.integration.serve_support import (
    CODE_MODE_TOOLS,
    demo_server,
    served_http,
    stdio_params,
    write_serve_config,
)

pytestmark = pytest.mark.integration

LIMITS = {"poolSize": 1, "queueLimit": 1, "sessionIdle": 60, "maxSessions": 8}
# The worker runs in a PID namespace (its os.getpid() is 1), so the program names its process instead:
# prctl(PR_SET_NAME) sets what ps and psutil show as its name.
NAMED_PROGRAM = (
    "import ctypes\n"
    "ctypes.CDLL(None).prctl(15, b'{name}', 0, 0, 0)\n"
    "while True:\n"
    '    get_forecast(city="Oslo", days=5, unit="celsius", delay_seconds=1)\n'
)


def _write_project(
    root: Path, limits: dict[str, Any], models: list[dict[str, Any]] | None = None, *, quirky: bool = False
) -> Path:
    servers = {"weather": demo_server("weather")}
    if quirky:
        servers["quirky"] = {"command": sys.executable, "args": [str(QUIRKY)]}
    return write_serve_config(root, servers, defaults={"serve": limits}, models=models or [])


def _record(result: CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None, result.content
    return result.structured_content


def _text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, psutil.Process]]:
    """One ``codemode serve --transport http`` with one place and a queue of one; its URL and process."""
    root = tmp_path_factory.mktemp("serve-runs")
    with served_http(root, _write_project(root, LIMITS)) as (proc, url):
        yield url, psutil.Process(proc.pid)


def test_stdio_session_keeps_globals_and_reports_progress_and_output(tmp_path: Path) -> None:
    _write_project(tmp_path, LIMITS)
    progress: list[str] = []
    logged: list[tuple[str, str | None, Any]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        logged.append((params.level, params.logger, params.data))

    async def session() -> None:
        params = stdio_params(tmp_path, tmp_path / "serve.json")
        with (tmp_path / "serve.log").open("w") as errlog:
            client = Client(stdio_client(params, errlog=errlog), logging_callback=on_log, log_level="info")
            async with client:
                first = await client.call_tool("execute_python", {"code": "x = 41\nx", "session": "work"})
                assert _record(first)["session"] == "work" and "session: work (new" in _text(first)
                second = await client.call_tool("execute_python", {"code": "x + 1", "session": "work"})
                assert _record(second)["value"]["data"] == 42 and "(new" not in _text(second)
                other = await client.call_tool("execute_python", {"code": "x", "session": "other"})
                assert _record(other)["status"] == "error" and _record(other)["error"]["type"] == "NameError"
                fresh = await client.call_tool("execute_python", {"code": "x"})
                assert _record(fresh)["error"]["type"] == "NameError" and _record(fresh)["session"] is None

                code = (
                    'print("looking up Oslo")\n'
                    'f = get_forecast(city="Oslo", days=2, unit="celsius", delay_seconds=0.2)\n'
                    "len(f['days'])\n"
                )
                done = await client.call_tool("execute_python", {"code": code}, progress_callback=on_progress)
                assert _record(done)["value"]["data"] == 2

    anyio.run(session)
    assert progress[0] == "stdout: looking up Oslo"
    assert progress[1].startswith('call #1 get_forecast {"city": "Oslo"') and progress[1].endswith("started")
    assert progress[2:4] == [
        "call #1 get_forecast: 1/2 Oslo: day 1 of 2",
        "call #1 get_forecast: 2/2 Oslo: day 2 of 2",
    ]
    assert progress[4].startswith("call #1 get_forecast ended: ok in ")
    assert ("info", "stdout", "looking up Oslo\n") in logged
    assert "DeprecationWarning" not in (tmp_path / "serve.log").read_text()  # serve's stderr stays quiet


def test_tools_a_server_adds_while_serving_reach_the_description_and_the_client(tmp_path: Path) -> None:
    """The quirky server's add_tool announces one more tool (tools/list_changed): serve follows."""
    _write_project(tmp_path, {}, quirky=True)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            changed.set()

    async def session() -> None:
        params = stdio_params(tmp_path, tmp_path / "serve.json")
        with (tmp_path / "serve.log").open("w") as errlog:
            client = Client(stdio_client(params, errlog=errlog), mode="legacy", message_handler=on_message)
            async with client:
                before = (await client.list_tools()).tools[0].description or ""
                assert "def add_tool(" in before and "def added_0(" not in before
                done = await client.call_tool("execute_python", {"code": "add_tool()"})
                assert _record(done)["status"] == "ok", _record(done)["error"]
                with anyio.fail_after(10):
                    await changed.wait()
                after = (await client.list_tools()).tools
                assert sorted(tool.name for tool in after) == sorted(CODE_MODE_TOOLS)
                described = next(tool.description for tool in after if tool.name == "execute_python")
                assert "def added_0(" in (described or "")
                called = await client.call_tool("execute_python", {"code": "added_0()"})
                assert _record(called)["value"]["text"] == "added_0"

    anyio.run(session)


def test_cancelling_a_program_cancels_its_call_at_the_upstream_server(tmp_path: Path) -> None:
    _write_project(tmp_path, {}, quirky=True)

    async def session() -> None:
        params = stdio_params(tmp_path, tmp_path / "serve.json")
        started = anyio.Event()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            if message and message.endswith("started"):
                started.set()

        with (tmp_path / "serve.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                async with anyio.create_task_group() as group:

                    async def call() -> None:
                        code = "sleep(seconds=60)"
                        await client.call_tool(
                            "execute_python", {"code": code}, progress_callback=on_progress
                        )

                    group.start_soon(call)
                    with anyio.fail_after(20):
                        await started.wait()
                    group.cancel_scope.cancel()
                with anyio.fail_after(20):
                    while True:
                        counted = await client.call_tool("execute_python", {"code": "cancelled_count()"})
                        if _record(counted)["value"]["text"] == "1":
                            break
                        await anyio.sleep(0.1)

    anyio.run(session)


def test_session_limit_refuses_a_new_session_and_keeps_the_old(tmp_path: Path) -> None:
    _write_project(tmp_path, {"maxSessions": 1})

    async def session() -> None:
        params = stdio_params(tmp_path, tmp_path / "serve.json")
        with (tmp_path / "serve.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                await client.call_tool("execute_python", {"code": "kept = 'yes'", "session": "a"})
                refused = await client.call_tool("execute_python", {"code": "1", "session": "b"})
                assert refused.is_error and refused.structured_content is None
                assert "1 sessions are alive" in _text(refused) and "maxSessions is 1" in _text(refused)
                again = await client.call_tool("execute_python", {"code": "kept", "session": "a"})
                assert _record(again)["value"]["text"] == "yes"

    anyio.run(session)


def test_llm_in_a_served_program_is_answered_by_the_configured_model(tmp_path: Path) -> None:
    with ScriptedModelServer(["Take an umbrella."]) as model:
        entry = {"ref": "helper", "provider": "openai", "model": "scripted", "baseUrl": model.base_url}
        _write_project(tmp_path, {}, models=[entry])

        async def session() -> None:
            params = stdio_params(tmp_path, tmp_path / "serve.json")
            with (tmp_path / "serve.log").open("w") as errlog:
                async with Client(stdio_client(params, errlog=errlog)) as client:
                    listed = (await client.list_tools()).tools[0]
                    assert listed.description is not None and "llm(prompt) -> str" in listed.description
                    code = 'w = get_weather(city="Oslo", unit="celsius")\nllm(f"advice for {w.conditions}")'
                    done = await client.call_tool("execute_python", {"code": code})
                    record = _record(done)
                    assert record["value"]["text"] == "Take an umbrella.", record["error"]
                    assert [c["tool"] for c in record["tool_calls"]] == ["get_weather", "llm"]

        anyio.run(session)
        assert "advice for rain" in json.dumps(model.requests[0].body)


def test_sessions_without_mcp_sessions_get_a_name_only_their_client_knows(
    served: tuple[str, psutil.Process],
) -> None:
    url, _ = served

    async def session() -> None:
        async with Client(url) as client:  # the 2026-07-28 protocol: no MCP session
            first = await client.call_tool("execute_python", {"code": "y = 7", "session": "calc"})
            name = _record(first)["session"]
            assert name.startswith("calc~") and len(name) > len("calc~") + 10
            assert f"session: {name} (new" in _text(first)
            kept = await client.call_tool("execute_python", {"code": "y * 6", "session": name})
            assert _record(kept)["value"]["data"] == 42 and _record(kept)["session"] == name
            # The bare name is not a key to someone else's globals: it starts a new session.
            guessed = await client.call_tool("execute_python", {"code": "y", "session": "calc"})
            assert _record(guessed)["error"]["type"] == "NameError"
            assert _record(guessed)["session"] not in (name, "calc")

    anyio.run(session)


def test_sessions_of_two_mcp_sessions_never_mix(served: tuple[str, psutil.Process]) -> None:
    url, _ = served

    async def session() -> None:
        async with Client(url, mode="legacy") as one, Client(url, mode="legacy") as two:
            await one.call_tool("execute_python", {"code": "secret = 'one'", "session": "s"})
            other = await two.call_tool("execute_python", {"code": "secret", "session": "s"})
            assert _record(other)["error"]["type"] == "NameError" and _record(other)["session"] == "s"
            mine = await one.call_tool("execute_python", {"code": "secret", "session": "s"})
            assert _record(mine)["value"]["text"] == "one"

    anyio.run(session)


def _processes_named(name: str) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["name"]) if p.info["name"] == name]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_cancelled_call_stops_its_program(served: tuple[str, psutil.Process], mode: str) -> None:
    """Cancelling at the client (a closed stream, or notifications/cancelled) ends the worker at once."""
    url, serve_process = served
    name = f"cm-cancel-{mode}"[:15]

    async def session() -> None:
        started = anyio.Event()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            if message and message.endswith("started"):
                started.set()

        async with Client(url, mode=mode) as client:
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    code = NAMED_PROGRAM.replace("{name}", name)
                    await client.call_tool("execute_python", {"code": code}, progress_callback=on_progress)

                group.start_soon(call)
                with anyio.fail_after(20):
                    await started.wait()
                assert len(_processes_named(name)) == 1  # the program runs, in a tool call
                group.cancel_scope.cancel()
            deadline = time.monotonic() + 10
            while _processes_named(name) and time.monotonic() < deadline:
                await anyio.sleep(0.05)
            assert not _processes_named(name), "the cancelled program's worker is still running"
            after = await client.call_tool("execute_python", {"code": "'still serving'"})
            assert _record(after)["value"]["text"] == "still serving"

    anyio.run(session)
    assert serve_process.is_running()


def test_beyond_the_queue_a_call_is_refused_at_once(served: tuple[str, psutil.Process]) -> None:
    url, _ = served
    outcomes: dict[str, CallToolResult] = {}
    timings: dict[str, float] = {}

    async def session() -> None:
        async with Client(url) as client:

            async def call(label: str, code: str) -> None:
                began = time.monotonic()
                outcomes[label] = await client.call_tool("execute_python", {"code": code})
                timings[label] = time.monotonic() - began

            async with anyio.create_task_group() as group:
                group.start_soon(call, "running", "import time\ntime.sleep(2)\n'first'")
                await anyio.sleep(0.5)
                group.start_soon(call, "queued", "'second'")
                await anyio.sleep(0.3)
                group.start_soon(call, "refused", "'third'")

    anyio.run(session)
    assert _record(outcomes["running"])["value"]["text"] == "first"
    assert _record(outcomes["queued"])["value"]["text"] == "second"
    refused = outcomes["refused"]
    assert refused.is_error and "codemode serve is busy" in _text(refused)
    assert "poolSize is 1" in _text(refused) and "queueLimit is 1" in _text(refused)
    assert timings["refused"] < 1.0 < timings["queued"]
