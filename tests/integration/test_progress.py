"""A slow tool's progress, end to end: the demo weather's get_forecast and server-everything's long-running
operation report progress, and a program sees it (``on_progress=``, ``stream``), as does the notebook's
namespace, the caller's live view (``on_call``) and the call record."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.calllog import CallRecord
from codemode_kernel.config import load_config
from codemode_kernel.executor import Executor

pytestmark = pytest.mark.integration

WEATHER = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory: pytest.TempPathFactory, everything_bin: str):
    path = tmp_path_factory.mktemp("progress")
    servers = {"weather": WEATHER, "everything": {"command": everything_bin}}
    (path / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(path)}))
    with Toolbox(load_config(path / "codemode.json")) as tb:
        yield tb


@pytest.fixture(scope="module")
def executor(toolbox: Toolbox):
    with Executor(toolbox, grace=1.0) as ex:
        yield ex


def test_on_progress_runs_in_the_program_for_each_notification(executor: Executor) -> None:
    code = """
seen = []
forecast = get_forecast(city="Oslo", days=3, delay_seconds=0.05, on_progress=seen.append)
print([str(p) for p in seen])
print([p.fraction for p in seen])
[len(forecast.days), seen[-1].message]
"""
    result = executor.run(code)
    assert result.status == "ok", result.error
    lines = result.stdout.splitlines()
    assert lines[0] == str(["1/3 Oslo: day 1 of 3", "2/3 Oslo: day 2 of 3", "3/3 Oslo: day 3 of 3"])
    assert lines[1] == str([1 / 3, 2 / 3, 1.0])
    assert result.value is not None and result.value["data"] == [3, "Oslo: day 3 of 3"]
    (call,) = result.tool_calls
    assert call["progress"] == {"count": 3, "progress": 3, "total": 3, "message": "Oslo: day 3 of 3"}


def test_stream_iterates_over_progress_then_gives_the_result(executor: Executor) -> None:
    code = """
before = get_weather(city="Paris", unit="celsius")
call = stream(get_forecast, city="Tokyo", days=4, delay_seconds=0.05)
steps = [p.progress for p in call]
after = get_weather(city="Rome", unit="celsius")
[steps, call.result.city, len(call.result.days)]
"""
    result = executor.run(code)
    assert result.status == "ok", result.error
    assert result.value is not None and result.value["data"] == [[1, 2, 3, 4], "Tokyo", 4]
    # The streamed call keeps its place in the record: numbered where the program iterated it.
    assert [(c["seq"], c["tool"]) for c in result.tool_calls] == [
        (1, "get_weather"),
        (2, "get_forecast"),
        (3, "get_weather"),
    ]


def test_async_stream_and_async_on_progress(executor: Executor) -> None:
    code = """
import asyncio
messages = []
async def main():
    async for p in stream(atools.get_forecast, city="Oslo", days=2, delay_seconds=0.05):
        messages.append(p.message)
    counted = []
    await atools.get_forecast(city="Paris", days=2, delay_seconds=0.05, on_progress=counted.append)
    return len(counted)
[await main(), messages]
"""
    result = executor.run(code)
    assert result.status == "ok", result.error
    assert result.value is not None
    assert result.value["data"] == [2, ["Oslo: day 1 of 2", "Oslo: day 2 of 2"]]


def test_a_failing_callback_is_reported_and_the_call_goes_on(executor: Executor) -> None:
    code = """
def broken(p):
    raise ValueError("oops")
[get_forecast(city="Oslo", days=2, delay_seconds=0.01, on_progress=broken).city]
"""
    result = executor.run(code)
    assert result.status == "ok", result.error
    assert result.value is not None and result.value["data"] == ["Oslo"]
    assert "get_forecast(): the on_progress callback failed (the call goes on)" in result.stderr
    assert "ValueError: oops" in result.stderr


def test_a_failed_streamed_call_raises_from_the_loop(executor: Executor) -> None:
    code = """
try:
    for p in stream(get_forecast, city="Oslo", days=99, delay_seconds=0.01):
        pass
except ToolArgumentError as exc:
    print("caught", type(exc).__name__, exc.field)
"""
    result = executor.run(code)
    assert result.status == "ok", result.error
    assert result.stdout == "caught ToolArgumentError days\n"


def test_on_progress_must_be_a_function(executor: Executor) -> None:
    result = executor.run('get_forecast(city="Oslo", days=1, delay_seconds=0, on_progress="yes")')
    assert result.status == "error"
    assert result.error is not None
    assert "on_progress must be a function of one argument" in result.error["message"]
    assert result.error["line"] == 1


def test_third_party_long_running_operation_reports_to_the_program(executor: Executor) -> None:
    code = """
seen = []
trigger_long_running_operation(duration=0.3, steps=3, on_progress=seen.append)
[(p.progress, p.total) for p in seen]
"""
    result = executor.run(code)
    assert result.status == "ok", result.error
    assert result.value is not None and result.value["data"] == [[1, 3], [2, 3], [3, 3]]


def test_the_callers_live_view_sees_each_update_of_the_running_call(executor: Executor) -> None:
    updates: list[tuple[str, int]] = []

    def on_call(record: CallRecord) -> None:
        updates.append((record.status, record.progress["count"] if record.progress else 0))

    result = executor.run('get_forecast(city="Oslo", days=3, delay_seconds=0.05)', on_call=on_call)
    assert result.status == "ok", result.error
    assert updates == [("running", 0), ("running", 1), ("running", 2), ("running", 3), ("ok", 3)]


def test_the_notebook_namespace_functions_take_on_progress_too(toolbox: Toolbox) -> None:
    seen = []
    forecast = toolbox.tools["get_forecast"](city="Oslo", days=2, delay_seconds=0.01, on_progress=seen.append)
    assert forecast.city == "Oslo"
    assert [p.message for p in seen] == ["Oslo: day 1 of 2", "Oslo: day 2 of 2"]

    async def twin() -> list[float]:
        steps: list[float] = []
        await toolbox.atools["get_forecast"](
            city="Oslo", days=2, delay_seconds=0.01, on_progress=lambda p: steps.append(p.progress)
        )
        return steps

    assert asyncio.run(twin()) == [1, 2]


def test_leaving_an_async_stream_early_leaves_later_calls_working(executor: Executor) -> None:
    code = """
import asyncio
async def first_update():
    async for p in stream(atools.get_forecast, city="Oslo", days=3, delay_seconds=0.1):
        return p.message
message = await first_update()
await asyncio.sleep(0.4)  # the abandoned call's answer and progress arrive meanwhile
[message, get_weather(city="Paris", unit="celsius").city]
"""
    result = executor.run(code, timeout=20)
    assert result.status == "ok", result.error
    assert result.value is not None and result.value["data"] == ["Oslo: day 1 of 3", "Paris"]


def test_progress_after_the_programs_loop_closed_leaves_later_calls_working(executor: Executor) -> None:
    code = """
import asyncio, time
async def impatient():
    try:
        await asyncio.wait_for(
            atools.get_forecast(city="Oslo", days=4, delay_seconds=0.1, on_progress=print), 0.15
        )
    except TimeoutError:
        return "gave up"
outcome = asyncio.run(impatient())
time.sleep(0.5)  # its progress keeps coming after that loop closed
[outcome, get_weather(city="Paris", unit="celsius").city]
"""
    result = executor.run(code, timeout=20)
    assert result.status == "ok", result.error
    assert result.value is not None and result.value["data"] == ["gave up", "Paris"]


def test_a_plain_for_over_an_async_function_says_how_to_stream_it(executor: Executor) -> None:
    result = executor.run("for p in stream(atools.get_forecast, city='Oslo', days=1):\n    pass")
    assert result.status == "error" and result.error is not None
    assert "stream(): get_forecast is an async function; write async for p in" in result.error["message"]
    assert result.error["line"] == 1
