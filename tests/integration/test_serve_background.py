"""Long programs in ``codemode serve``: a call answers ``running`` after ``wait_s``; the client comes back.

A real ``codemode serve`` process (stdio and Streamable HTTP), a real stdio server behind it that counts its
calls in a file, and the MCP SDK's client in both protocol eras.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from mcp import Client, stdio_client
from mcp.types import CallToolResult, LoggingMessageNotificationParams

from tests.integration.serve_support import served_http, stdio_params, write_serve_config

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
COUNTING = ROOT / "tests" / "servers" / "counting_server.py"

TWENTY_SECONDS = """
import time
for i in range(20):
    print("second", i)
    if i == 10:
        notify("halfway", i=i)
    count(label=f"tick-{i}")
    time.sleep(1)
"done"
"""


def _project(root: Path, **serve: Any) -> Path:
    servers = {
        "counting": {"command": sys.executable, "args": [str(COUNTING), "--log", str(root / "calls.txt")]}
    }
    return write_serve_config(root, servers, defaults={"serve": serve, "codeMode": {"grace": 2}})


def _record(result: CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None, result.content
    return result.structured_content


def _text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _without_timings(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what differs between two runs of one program: ids, times, durations, and the
    counting server's answers (each run's count of a label is one more than the run's before)."""
    volatile = ("execution_id", "duration_ms", "session")
    differ = ("id", "execution_id", "started", "ended", "duration_ms", "result")
    calls = [{k: v for k, v in call.items() if k not in differ} for call in record["tool_calls"]]
    notes = [{k: v for k, v in note.items() if k != "at_ms"} for note in record.get("notes", [])]
    kept = {k: v for k, v in record.items() if k not in volatile}
    return {**kept, "tool_calls": calls, "notes": notes}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_twenty_second_program_answers_running_then_comes_back_whole(tmp_path: Path, mode: str) -> None:
    config = _project(tmp_path, poolSize=4)
    logs: list[str] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        logs.append(f"{params.logger}: {params.data}")

    async def session(url: str) -> tuple[list[CallToolResult], CallToolResult, float]:
        async with (
            Client(url, mode=mode, logging_callback=on_log) as client,
            anyio.create_task_group() as group,
        ):
            foreground: list[CallToolResult] = []

            async def in_foreground() -> None:
                # One long wait, which the program's note may end: the client then waits again.
                arguments = {"code": TWENTY_SECONDS, "wait_s": 60, "timeout": 60}
                answer = await client.call_tool("execute_python", arguments)
                while _record(answer)["status"] in ("running", "queued"):
                    ident = _record(answer)["execution_id"]
                    answer = await client.call_tool("wait_execution", {"execution_id": ident, "wait_s": 60})
                foreground.append(answer)

            group.start_soon(in_foreground)
            began = time.monotonic()
            answers = [
                await client.call_tool("execute_python", {"code": TWENTY_SECONDS, "wait_s": 2, "timeout": 60})
            ]
            first_took = time.monotonic() - began
            ident = _record(answers[0])["execution_id"]
            while _record(answers[-1])["status"] in ("running", "queued"):
                answers.append(await client.call_tool("wait_execution", {"execution_id": ident, "wait_s": 8}))
                assert len(answers) < 12, "the program never ended"
        return answers, foreground[0], first_took

    with served_http(tmp_path, config) as (_, url):
        answers, foreground, first_took = anyio.run(session, url)

    first = _record(answers[0])
    assert first["status"] == "running" and first_took < 10
    assert first["stdout"].startswith("second 0\nsecond 1\n")
    assert "execution_id" in _text(answers[0]) and "wait_execution" in _text(answers[0])
    # Each answer holds what came since the one before: together they are the whole output, once.
    running = [_record(a) for a in answers[:-1]]
    streamed = "".join(r["stdout"] for r in running)
    final = _record(answers[-1])
    assert final["status"] == "ok" and final["value"]["text"] == "done"
    assert final["stdout"].startswith(streamed) and final["stdout"].count("second 0\n") == 1
    assert [n["message"] for r in running for n in r["notes"]] in ([], ["halfway"])  # a note wakes a wait
    assert any(r["running"]["tool_calls_so_far"] > 0 for r in running)
    # The final record is the one a foreground run of the same program makes.
    assert _without_timings(final) == _without_timings(_record(foreground))
    assert (tmp_path / "calls.txt").read_text().splitlines().count("tick-19") == 2  # once per run, no more
    if mode == "legacy":
        assert any(line.startswith("note: halfway") for line in logs), logs


def test_a_note_wakes_a_waiting_call_at_once(tmp_path: Path) -> None:
    config = _project(tmp_path)
    code = "import time\ntime.sleep(1)\nnotify('ready', rows=3)\ntime.sleep(30)"

    async def session(url: str) -> tuple[dict[str, Any], float, dict[str, Any]]:
        async with Client(url) as client:
            began = time.monotonic()
            first = _record(await client.call_tool("execute_python", {"code": code, "wait_s": 20}))
            took = time.monotonic() - began
            cancelled = _record(
                await client.call_tool("cancel_execution", {"execution_id": first["execution_id"]})
            )
            return first, took, cancelled

    with served_http(tmp_path, config) as (_, url):
        first, took, cancelled = anyio.run(session, url)
    assert first["status"] == "running" and took < 10, (first, took)
    assert [(n["message"], n["data"]) for n in first["notes"]] == [("ready", {"rows": 3})]
    assert cancelled["status"] == "cancelled" and cancelled["notes"][0]["message"] == "ready"


def test_cancel_stops_a_program_within_the_grace_and_keeps_its_calls(tmp_path: Path) -> None:
    config = _project(tmp_path)
    code = (
        "count(label='made')\ntry:\n    slow_count(label='never', seconds=60)\nfinally:\n    print('cleaned')"
    )

    async def session() -> tuple[dict[str, Any], float]:
        async with Client(stdio_client(stdio_params(tmp_path, config))) as client:
            running = _record(
                await client.call_tool("execute_python", {"code": code, "wait_s": 3, "timeout": 120})
            )
            assert running["status"] == "running", running
            began = time.monotonic()
            answer = await client.call_tool("cancel_execution", {"execution_id": running["execution_id"]})
            gone = await client.call_tool("wait_execution", {"execution_id": running["execution_id"]})
            assert gone.is_error and "no execution" in _text(gone)
            return _record(answer), time.monotonic() - began

    record, took = anyio.run(session)
    assert record["status"] == "cancelled" and took < 2 + 3  # the grace is 2 s
    assert "stopped by the client (cancel_execution)" in record["error"]["message"]
    assert "cleaned" in record["stdout"]
    assert [(c["tool"], c["status"]) for c in record["tool_calls"]] == [
        ("count", "ok"),
        ("slow_count", "cancelled"),
    ]
    assert (tmp_path / "calls.txt").read_text().splitlines() == ["made"]


def test_one_client_cannot_see_wait_on_or_cancel_anothers_executions(tmp_path: Path) -> None:
    config = _project(tmp_path)
    code = "import time\nprint('mine')\ntime.sleep(30)"

    async def session(url: str) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with (
            Client(url, mode="legacy") as owner,
            Client(url, mode="legacy") as other,
            Client(url) as modern,
        ):
            started = _record(await owner.call_tool("execute_python", {"code": code, "wait_s": 1}))
            ident = started["execution_id"]
            seen["owner_list"] = _text(await owner.call_tool("list_executions", {}))
            seen["other_list"] = _text(await other.call_tool("list_executions", {}))
            seen["other_wait"] = await other.call_tool("wait_execution", {"execution_id": ident, "wait_s": 0})
            seen["other_cancel"] = await other.call_tool("cancel_execution", {"execution_id": ident})
            seen["modern_wait"] = await modern.call_tool(
                "wait_execution", {"execution_id": ident, "wait_s": 0}
            )
            # A 2026-07-28 client has no MCP session: its run's id holds a random part, and nothing lists it.
            unscoped = _record(await modern.call_tool("execute_python", {"code": code, "wait_s": 1}))
            seen["unscoped_id"] = unscoped["execution_id"]
            seen["modern_list"] = _text(await modern.call_tool("list_executions", {}))
            bare = unscoped["execution_id"].split("~")[0]
            seen["bare_wait"] = await modern.call_tool("wait_execution", {"execution_id": bare, "wait_s": 0})
            seen["owner_wait"] = _record(
                await owner.call_tool("wait_execution", {"execution_id": ident, "wait_s": 0})
            )
            seen["owner_cancel"] = _record(await owner.call_tool("cancel_execution", {"execution_id": ident}))
            await modern.call_tool("cancel_execution", {"execution_id": unscoped["execution_id"]})
            seen["ident"] = ident
        return seen

    with served_http(tmp_path, config) as (_, url):
        seen = anyio.run(session, url)
    ident = seen["ident"]
    assert ident in seen["owner_list"] and ident not in seen["other_list"]
    for refused in ("other_wait", "other_cancel", "modern_wait", "bare_wait"):
        assert seen[refused].is_error and "no execution" in _text(seen[refused]), refused
    assert "~" in seen["unscoped_id"] and "no MCP session" in seen["modern_list"]
    assert seen["owner_wait"]["status"] == "running" and seen["owner_wait"]["stdout"] == ""  # sent already
    assert seen["owner_cancel"]["status"] == "cancelled" and seen["owner_cancel"]["stdout"] == "mine\n"


def test_fifty_background_executions_hold_memory_flat(tmp_path: Path) -> None:
    config = _project(tmp_path, poolSize=50, queueLimit=64)
    code = "import time\nprint('x' * 2000)\ntime.sleep(2)\nlen('done')"

    async def batch(client: Client) -> list[dict[str, Any]]:
        started = [
            _record(await client.call_tool("execute_python", {"code": code, "wait_s": 0})) for _ in range(50)
        ]
        finals = []
        for record in started:
            answer = _record(
                await client.call_tool(
                    "wait_execution", {"execution_id": record["execution_id"], "wait_s": 60}
                )
            )
            while answer["status"] in ("running", "queued"):
                answer = _record(
                    await client.call_tool(
                        "wait_execution", {"execution_id": record["execution_id"], "wait_s": 60}
                    )
                )
            finals.append(answer)
        return finals

    async def session(url: str, proc: psutil.Process) -> list[int]:
        sizes = []
        async with Client(url, mode="legacy") as client:
            for _ in range(3):
                finals = await batch(client)
                assert [f["status"] for f in finals] == ["ok"] * 50
                assert all(f["stdout"] == "x" * 2000 + "\n" for f in finals)
                sizes.append(proc.memory_info().rss)
            assert "No execution of yours" in _text(await client.call_tool("list_executions", {}))
        return sizes

    with served_http(tmp_path, config) as (popen, url):
        sizes = anyio.run(session, url, psutil.Process(popen.pid))
    grown = (sizes[2] - sizes[0]) / 2**20
    print(f"serve's RSS after each batch of 50: {[round(size / 2**20, 1) for size in sizes]} MiB")
    assert grown < 15, f"serve's memory grew {grown:.1f} MiB over two more batches of 50: {sizes}"


def test_a_program_kept_while_queued_ends_under_the_id_its_first_answer_gave(tmp_path: Path) -> None:
    config = _project(tmp_path, poolSize=1, queueLimit=4)
    holder = "import time\nprint('holding')\ntime.sleep(60)"

    async def session() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(stdio_client(stdio_params(tmp_path, config))) as client:
            held = _record(await client.call_tool("execute_python", {"code": holder, "wait_s": 2}))
            queued = _record(await client.call_tool("execute_python", {"code": "'second'", "wait_s": 0.5}))
            await client.call_tool("cancel_execution", {"execution_id": held["execution_id"]})
            ident = queued["execution_id"]
            final = _record(await client.call_tool("wait_execution", {"execution_id": ident, "wait_s": 30}))
            return queued, final

    queued, final = anyio.run(session)
    assert queued["status"] == "queued", queued
    assert final["status"] == "ok" and final["value"]["text"] == "second"
    assert final["execution_id"] == queued["execution_id"]
