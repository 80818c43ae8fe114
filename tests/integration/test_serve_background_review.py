"""Long programs in ``codemode serve``, reviewed as a hostile client and a demanding user would use them.

A real ``codemode serve`` process (stdio and Streamable HTTP), a real stdio server behind it that counts its
calls in a file, and the MCP SDK's client; each test is a case the first version got wrong.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any, cast

import anyio
import psutil
import pytest
from mcp import Client, MCPError, stdio_client
from mcp.types import CallToolResult, ElicitResult, InputRequiredResult, InputResponses

from codemode_kernel import Toolbox
from codemode_kernel.agent.feedback import ResultText
from codemode_kernel.config import load_config
from codemode_kernel.executor import ExecutionResult, Executor
from codemode_kernel.serve import background
from codemode_kernel.serve.reply import Finished
from tests.integration.serve_support import served_http, stdio_params, write_serve_config

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
COUNTING = ROOT / "tests" / "servers" / "counting_server.py"
SLEEPER = "import time\nprint('holding')\ntime.sleep(60)"


def _project(root: Path, code_mode: dict[str, Any] | None = None, **serve: Any) -> Path:
    servers = {
        "counting": {"command": sys.executable, "args": [str(COUNTING), "--log", str(root / "calls.txt")]}
    }
    defaults = {"serve": serve, "codeMode": {"grace": 2, **(code_mode or {})}}
    return write_serve_config(root, servers, defaults=defaults)


def _record(result: CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None, result.content
    return result.structured_content


def _text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _assert_quiet(folder: Path) -> None:
    """serve's stderr has no traceback and no warning of a task left pending or an error never read."""
    stderr = (folder / "serve.stderr.log").read_text()
    for sign in ("Traceback", "Task was destroyed", "never retrieved"):
        assert sign not in stderr, stderr


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_program_started_with_wait_s_0_and_a_free_place_is_running_not_queued(
    tmp_path: Path, mode: str
) -> None:
    """wait_s=0 answers at once; with places free the program has started, and its id is its own."""
    config = _project(tmp_path, poolSize=4)

    async def session() -> tuple[CallToolResult, dict[str, Any]]:
        async with Client(stdio_client(stdio_params(tmp_path, config)), mode=mode) as client:
            with anyio.fail_after(60):
                started = await client.call_tool("execute_python", {"code": "print('hi')", "wait_s": 0})
                ident = _record(started)["execution_id"]
                final = _record(
                    await client.call_tool("wait_execution", {"execution_id": ident, "wait_s": 30})
                )
        return started, final

    started, final = anyio.run(session)
    record = _record(started)
    assert record["status"] == "running", _text(started)
    assert "every place is taken" not in _text(started)
    assert final["status"] == "ok" and final["execution_id"] == record["execution_id"]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_cancelling_a_queued_program_answers_the_call_waiting_on_it_and_frees_its_place(
    tmp_path: Path, mode: str
) -> None:
    """A program queued behind another is cancelled while a wait_execution waits on it."""
    config = _project(tmp_path, poolSize=1)
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with Client(stdio_client(stdio_params(tmp_path, config)), mode=mode) as client:
            with anyio.fail_after(60):
                holder = _record(await client.call_tool("execute_python", {"code": SLEEPER, "wait_s": 0}))
                queued = _record(await client.call_tool("execute_python", {"code": "print(1)", "wait_s": 0}))
                assert (holder["status"], queued["status"]) == ("running", "queued")
                ident = queued["execution_id"]

                async def wait() -> None:
                    arguments = {"execution_id": ident, "wait_s": 30}
                    seen["wait"] = await client.call_tool("wait_execution", arguments)

                async with anyio.create_task_group() as group:
                    group.start_soon(wait)
                    await anyio.sleep(1)  # the wait has begun (were it later, it would find no execution)
                    seen["cancel"] = await client.call_tool("cancel_execution", {"execution_id": ident})
                await client.call_tool("cancel_execution", {"execution_id": holder["execution_id"]})
                seen["next"] = _record(
                    await client.call_tool("execute_python", {"code": "6 * 7", "wait_s": 30})
                )
                seen["list"] = _text(await client.call_tool("list_executions", {}))

    anyio.run(session)
    assert seen["cancel"].is_error and "cancelled before it started" in _text(seen["cancel"])
    assert seen["wait"].is_error, _text(seen["wait"])
    print("the wait got:", _text(seen["wait"]))
    assert "cancelled before it started" in _text(seen["wait"]) or "no execution" in _text(seen["wait"])
    assert seen["next"]["status"] == "ok" and seen["next"]["value"]["data"] == 42  # its place was freed
    assert "No execution of yours" in seen["list"]


def test_serve_stopping_with_programs_left_running_and_queued_stops_them_all_cleanly(tmp_path: Path) -> None:
    """Ctrl-C with programs left running (both eras) and one queued: serve exits 0, nothing left behind."""
    config = _project(tmp_path, poolSize=2)

    async def session(url: str) -> list[str]:
        statuses = []
        async with Client(url, mode="legacy") as old, Client(url) as modern:
            with anyio.fail_after(60):
                for client in (old, modern, old):
                    answer = await client.call_tool("execute_python", {"code": SLEEPER, "wait_s": 1})
                    statuses.append(_record(answer)["status"])
        return statuses

    with served_http(tmp_path, config) as (popen, url):
        statuses = anyio.run(session, url)
        workers = psutil.Process(popen.pid).children(recursive=True)
    assert statuses == ["running", "running", "queued"]
    left = [p for p in workers if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not left, f"still running after serve stopped: {[p.cmdline() for p in left]}"
    _assert_quiet(tmp_path)


class _Allow:
    """An elicitation callback that allows once, and counts the questions."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        return ElicitResult(action="accept", content={"decision": "allow once"})


APPROVED_LATER = "import time\nprint('started')\ntime.sleep(3)\ncount(label='approved')"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize("waiting", [True, False], ids=["asked-while-a-wait-waits", "asked-between-calls"])
def test_an_approval_raised_by_a_program_left_running_is_answered_through_wait_execution(
    tmp_path: Path, mode: str, waiting: bool
) -> None:
    """The question goes through the call that waits when it is asked, or else through the next one."""
    config = _project(tmp_path, code_mode={"approve": ["counting/count"]})
    allow = _Allow()

    async def session(url: str) -> dict[str, Any]:
        async with Client(url, mode=mode, elicitation_callback=allow) as client:
            with anyio.fail_after(60):
                first = _record(
                    await client.call_tool("execute_python", {"code": APPROVED_LATER, "wait_s": 1})
                )
                assert first["status"] == "running", first
                if not waiting:
                    await anyio.sleep(4)  # the program asks while no call waits
                arguments = {"execution_id": first["execution_id"], "wait_s": 30}
                answer = _record(await client.call_tool("wait_execution", arguments))
                while answer["status"] == "running":
                    answer = _record(await client.call_tool("wait_execution", arguments))
                return answer

    with served_http(tmp_path, config) as (_, url):
        final = anyio.run(session, url)
    assert final["status"] == "ok", final["error"]
    (call,) = final["tool_calls"]
    assert call["status"] == "ok" and call["approval"]["by"] == "the client", call
    assert len(allow.asked) == 1
    _assert_quiet(tmp_path)
    assert (tmp_path / "calls.txt").read_text().splitlines() == ["approved"]


ASKS_AT_ONCE = "count(label='approved')\nprint('approved')\nimport time\ntime.sleep(60)"


def test_cancelling_the_retry_that_answers_a_first_calls_question_stops_the_program(tmp_path: Path) -> None:
    """On 2026-07-28 the retry carrying an approval is still the first call: the client has no id to cancel
    with, so cancelling it must stop the program (else it runs unreachable and holds its place)."""
    config = _project(tmp_path, code_mode={"approve": ["counting/count"]}, poolSize=1)

    async def session(url: str) -> dict[str, Any]:
        async with Client(url, elicitation_callback=_Allow()) as client:  # declares form elicitation
            call = client.session.call_tool
            arguments = {"code": ASKS_AT_ONCE, "wait_s": 30, "timeout": 120}
            with anyio.fail_after(60):
                first = await call("execute_python", arguments, allow_input_required=True)
                assert isinstance(first, InputRequiredResult), first
                answers: InputResponses = {
                    key: ElicitResult(action="accept", content={"decision": "allow once"})
                    for key in first.input_requests or {}
                }
                printed = anyio.Event()

                async def on_progress(value: float, total: float | None, message: str | None) -> None:
                    if message and "approved" in message and message.startswith("stdout"):
                        printed.set()

                async def retry() -> None:
                    await call(
                        "execute_python",
                        arguments,
                        progress_callback=on_progress,
                        input_responses=answers,
                        request_state=first.request_state,
                    )

                async with anyio.create_task_group() as group:
                    group.start_soon(retry)
                    await printed.wait()  # approved and running past the question
                    group.cancel_scope.cancel()
                # Its place is free again: the next program runs at once.
                return _record(await client.call_tool("execute_python", {"code": "6 * 7", "wait_s": 20}))

    with served_http(tmp_path, config) as (_, url):
        after = anyio.run(session, url)
    assert after["status"] == "ok" and after["value"]["data"] == 42, after
    assert (tmp_path / "calls.txt").read_text().splitlines() == ["approved"]
    _assert_quiet(tmp_path)


PRINTING = "import time\nfor i in range(40):\n    print('line', i)\n    time.sleep(0.25)"


def test_two_waits_on_one_program_at_once_each_get_the_notifications_of_what_they_return(
    tmp_path: Path,
) -> None:
    """A second wait_execution while one waits: it answers after the first, and each call is told (as
    progress) of the lines it returns, none of them lost to the other call."""
    config = _project(tmp_path)
    told: dict[str, list[str]] = {"a": [], "b": []}
    answers: dict[str, dict[str, Any]] = {}

    def telling(key: str, heard: anyio.Event | None = None) -> Any:
        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            if message and message.startswith("stdout: "):
                told[key].extend(message.removeprefix("stdout: ").splitlines())
                if heard is not None:
                    heard.set()

        return on_progress

    async def session() -> None:
        async with Client(stdio_client(stdio_params(tmp_path, config)), mode="legacy") as client:
            with anyio.fail_after(60):
                first = _record(await client.call_tool("execute_python", {"code": PRINTING, "wait_s": 0}))
                ident = first["execution_id"]
                heard = anyio.Event()

                async def wait(key: str, seconds: float, heard: anyio.Event | None = None) -> None:
                    answer = await client.call_tool(
                        "wait_execution",
                        {"execution_id": ident, "wait_s": seconds},
                        progress_callback=telling(key, heard),
                    )
                    answers[key] = _record(answer)

                async with anyio.create_task_group() as group:
                    group.start_soon(wait, "a", 3, heard)
                    await heard.wait()  # a waits, and is told
                    group.start_soon(wait, "b", 5)  # counted from its start: it waits after a
                await client.call_tool("cancel_execution", {"execution_id": ident})

    anyio.run(session)
    for key in ("a", "b"):
        returned = answers[key]["stdout"].splitlines()
        assert answers[key]["status"] == "running" and returned, answers[key]
        assert set(returned) <= set(told[key]), (key, returned, told[key])
    assert not set(answers["a"]["stdout"].splitlines()) & set(answers["b"]["stdout"].splitlines())


def test_a_job_cancelled_while_waiting_for_a_session_leaves_the_running_program_its_worker(
    tmp_path: Path,
) -> None:
    """The session's idle timer is the running program's to set when it ends, not the cancelled waiter's."""
    servers = {"counting": {"command": sys.executable, "args": [str(COUNTING), "--log", str(tmp_path / "c")]}}
    (tmp_path / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(tmp_path)}))
    with (
        Toolbox(load_config(tmp_path / "codemode.json")) as tb,
        Executor(tb, grace=1.0, session_idle=1) as ex,
    ):
        holder = ex.start("import time\nprint('holding')\ntime.sleep(4)\n'held'", session="s", timeout=60)
        deadline = time.monotonic() + 20
        while "holding" not in holder.updates().stdout:
            assert time.monotonic() < deadline, "the session's first run never started"
            holder.wait(0.05)
        waiting = ex.start("print('never')", session="s", timeout=60)
        assert waiting.wait(0.5) is None, "the second run of a session waits for the first"
        waiting.cancel("the test")
        cancelled = waiting.wait(15)
        held = holder.wait(30)
    assert cancelled is not None and cancelled.status == "cancelled"
    assert held is not None and held.status == "ok" and held.value is not None, held.error
    assert held.value["text"] == "held"


LIFECYCLE = ROOT / "tests" / "servers" / "lifecycle_server.py"


def test_a_job_cancelled_while_waiting_for_a_server_still_connecting_ends_at_once(tmp_path: Path) -> None:
    servers = {
        "good": {"command": sys.executable, "args": [str(LIFECYCLE)]},
        "stuck": {
            "command": sys.executable,
            "args": [str(LIFECYCLE), "--hang-initialize", "--prefix", "stuck_"],
        },
    }
    config = tmp_path / "codemode.json"
    config.write_text(
        json.dumps({"mcpServers": servers, "workspace": str(tmp_path), "defaults": {"startWait": 1}})
    )
    with Toolbox.from_config(config) as tb, Executor(tb, grace=1.0) as ex:
        assert tb.pending == ["stuck"]
        job = ex.start("print('started')\nstuck_echo(text='x')", timeout=60)
        assert job.wait(0.5) is None, "the run waits for the server its program names"
        asked = time.monotonic()
        job.cancel("the test")
        result = job.wait(10)
        took = time.monotonic() - asked
    assert result is not None and result.status == "cancelled", result
    assert result.error is not None and "stopped by the test" in result.error["message"]
    assert result.stdout == "" and took < 3


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_cancelled_wait_leaves_the_program_running_and_its_output_whole(tmp_path: Path, mode: str) -> None:
    """Cancelling a wait_execution (notifications/cancelled, or a closed stream) gives up that wait only."""
    config = _project(tmp_path)
    code = "import time\nfor i in range(12):\n    print('line', i)\n    time.sleep(0.25)\n'done'"

    async def session(url: str) -> list[dict[str, Any]]:
        async with Client(url, mode=mode) as client:
            with anyio.fail_after(60):
                first = _record(await client.call_tool("execute_python", {"code": code, "wait_s": 0}))
                arguments = {"execution_id": first["execution_id"], "wait_s": 30}
                heard = anyio.Event()

                async def on_progress(value: float, total: float | None, message: str | None) -> None:
                    heard.set()

                async with anyio.create_task_group() as group:
                    group.start_soon(
                        lambda: client.call_tool("wait_execution", arguments, progress_callback=on_progress)
                    )
                    await heard.wait()  # the wait is under way
                    group.cancel_scope.cancel()
                answers = [_record(await client.call_tool("wait_execution", arguments))]
                while answers[-1]["status"] == "running":
                    answers.append(_record(await client.call_tool("wait_execution", arguments)))
        return answers

    with served_http(tmp_path, config) as (_, url):
        answers = anyio.run(session, url)
    final = answers[-1]
    assert final["status"] == "ok" and final["value"]["text"] == "done", final
    assert final["stdout"] == "".join(f"line {i}\n" for i in range(12))
    _assert_quiet(tmp_path)


def test_a_released_job_keeps_its_result_and_drops_its_copy_of_the_output(tmp_path: Path) -> None:
    """serve keeps an ended run until its client collects it: only the result, not a second copy."""
    (tmp_path / "codemode.json").write_text(json.dumps({"mcpServers": {}, "workspace": str(tmp_path)}))
    with Toolbox(load_config(tmp_path / "codemode.json")) as tb, Executor(tb, grace=1.0) as ex:
        job = ex.start("import time\nprint('x' * 100_000)\ntime.sleep(1)", timeout=30)
        job.release()  # still running: nothing is dropped
        result = job.wait(20)
        assert result is not None and job.updates().stdout == "x" * 100_000 + "\n"
        job.release()
    assert job.result is result and result.stdout == "x" * 100_000 + "\n"
    after = job.updates()
    assert after.state == "ended" and after.stdout == "" and after.result is result


def test_a_program_left_running_ends_with_its_mcp_session(tmp_path: Path) -> None:
    """Once its MCP session is closed nobody can reach the program: it must not hold its place on."""
    config = _project(tmp_path, poolSize=1)

    async def session(url: str) -> tuple[str, dict[str, Any]]:
        with anyio.fail_after(60):
            async with Client(url, mode="legacy") as gone:
                arguments = {"code": SLEEPER, "wait_s": 1, "timeout": 120}
                left = _record(await gone.call_tool("execute_python", arguments))["status"]
            async with Client(url, mode="legacy") as other:
                return left, _record(await other.call_tool("execute_python", {"code": "6 * 7", "wait_s": 20}))

    with served_http(tmp_path, config) as (_, url):
        left, after = anyio.run(session, url)
    assert left == "running"
    assert after["status"] == "ok" and after["value"]["data"] == 42, after
    _assert_quiet(tmp_path)


def test_a_note_sent_while_no_call_waits_ends_the_next_wait_at_once(tmp_path: Path) -> None:
    """The note is news the client has not had: the next wait_execution answers with it, not after wait_s."""
    config = _project(tmp_path)
    code = "notify('ready', rows=3)\ncount(label='noted')\nimport time\ntime.sleep(60)"
    calls = tmp_path / "calls.txt"

    async def session() -> tuple[dict[str, Any], float]:
        async with Client(stdio_client(stdio_params(tmp_path, config)), mode="legacy") as client:
            with anyio.fail_after(60):
                first = _record(
                    await client.call_tool("execute_python", {"code": code, "wait_s": 0, "timeout": 120})
                )
                while not (calls.exists() and "noted" in calls.read_text()):  # the note was sent
                    await anyio.sleep(0.05)
                arguments = {"execution_id": first["execution_id"], "wait_s": 30}
                began = time.monotonic()
                answer = _record(await client.call_tool("wait_execution", arguments))
                took = time.monotonic() - began
                await client.call_tool("cancel_execution", {"execution_id": first["execution_id"]})
        return answer, took

    answer, took = anyio.run(session)
    assert answer["status"] == "running" and [n["message"] for n in answer["notes"]] == ["ready"], answer
    assert took < 10, f"the wait took {took:.1f} s with a note already waiting for the client"


def test_a_2026_state_from_execute_python_does_not_open_wait_execution(tmp_path: Path) -> None:
    """A retry's request_state is sealed to its tool and arguments: sent to wait_execution it is refused,
    and the program's question is still answered by the right retry."""
    config = _project(tmp_path, code_mode={"approve": ["counting/count"]})

    async def session() -> tuple[str, dict[str, Any]]:
        async with Client(
            stdio_client(stdio_params(tmp_path, config)), elicitation_callback=_Allow()
        ) as client:
            call = client.session.call_tool
            arguments = {"code": "count(label='approved')", "wait_s": 30}
            with anyio.fail_after(60):
                first = await call("execute_python", arguments, allow_input_required=True)
                assert isinstance(first, InputRequiredResult), first
                answers: InputResponses = {
                    key: ElicitResult(action="accept", content={"decision": "allow once"})
                    for key in first.input_requests or {}
                }
                with pytest.raises(MCPError) as refused:
                    await call(
                        "wait_execution",
                        {"execution_id": "anything"},
                        input_responses=answers,
                        request_state=first.request_state,
                    )
                done = await call(
                    "execute_python", arguments, input_responses=answers, request_state=first.request_state
                )
        return str(refused.value), _record(done)

    refused, done = anyio.run(session)
    assert "requestState" in refused
    assert done["status"] == "ok" and (tmp_path / "calls.txt").read_text().splitlines() == ["approved"]


def test_an_uncollected_run_is_forgotten_after_its_time_even_if_no_other_run_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The table is swept when its time is up, not only when another program is kept."""
    monkeypatch.setattr(background, "KEEP_ENDED_S", 0.2)

    async def scenario() -> bool:
        runs = background.BackgroundRuns()
        run = background.BackgroundRun(
            scope="stdio", code="1", ref=None, client_run=None, approver=cast(Any, None)
        )
        run.task = asyncio.ensure_future(asyncio.sleep(0))
        runs.keep(run)
        await run.task
        deadline = time.monotonic() + 10
        while runs.of("stdio"):
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    assert asyncio.run(scenario()), "an ended run was kept past KEEP_ENDED_S"


DEEP_FRAME = r"""
import struct
channel = notify.__closure__[0].cell_contents.require_channel()  # the worker's own channel, reached by hand
body = b'{"type":"notify","message":"m","data":{"x":' + b"[" * 200000 + b"]" * 200000 + b"}}"
channel.sock.sendall(struct.pack(">I", len(body)) + body)
"""


def test_a_frame_nested_too_deep_is_a_broken_channel_not_a_crash_of_the_kernels_reader(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A hostile program's notify frame nested 200,000 deep: the run ends saying the program broke the
    channel; the kernel's reader does not die with a RecursionError nobody reads."""
    (tmp_path / "codemode.json").write_text(json.dumps({"mcpServers": {}, "workspace": str(tmp_path)}))
    with Toolbox(load_config(tmp_path / "codemode.json")) as tb, Executor(tb, grace=1.0) as ex:
        result = ex.run(DEEP_FRAME, timeout=20)
        after = ex.run("1 + 1", timeout=20)
    assert result.status == "crashed" and result.error is not None
    assert result.error["type"] == "ProtocolError" and "broke the channel" in result.error["message"], (
        result.error
    )
    assert after.status == "ok"
    assert "never retrieved" not in capfd.readouterr().err


def test_ended_runs_never_held_uncollected_beyond_the_output_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that starts programs printing much and never collects them: the oldest ended go first."""
    monkeypatch.setattr(background, "MAX_KEPT_OUTPUT", 1000)

    async def finished(index: int) -> Finished:
        result = ExecutionResult(status="ok", execution_id=f"e{index}", stdout="x" * 600)
        return Finished(result, ResultText(result.stdout), None)

    async def scenario() -> list[str]:
        runs = background.BackgroundRuns()
        kept = []
        for index in range(3):
            run = background.BackgroundRun(
                scope="stdio", code=str(index), ref=None, client_run=None, approver=cast(Any, None)
            )
            run.task = asyncio.ensure_future(finished(index))
            runs.keep(run)
            kept.append(run)
            await run.task
            await asyncio.sleep(0)  # the task's done callbacks
        return [run.code for run in runs.of("stdio")]

    assert asyncio.run(scenario()) == ["2"], "1,800 characters held against a cap of 1,000"
