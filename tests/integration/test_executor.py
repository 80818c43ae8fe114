"""The executor end to end: real worker processes, real signals, tool calls through the real hub."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import Executor
from tests.conftest import QUIRKY

pytestmark = pytest.mark.integration

WEATHER = {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ws")
    (path / "cities.txt").write_text("New York\nLos Angeles\nChicago\nMiami\nSeattle\n")
    servers = {
        "weather": WEATHER,
        "workspace": {
            "command": sys.executable,
            "args": ["-m", "codemode_kernel.servers.workspace", "--root", str(path)],
        },
        "quirky": {"command": sys.executable, "args": [str(QUIRKY)]},
    }
    (path / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(path)}))
    return path


@pytest.fixture(scope="module")
def executor(workspace: Path):
    with Toolbox(load_config(workspace / "codemode.json")) as tb, Executor(tb, grace=1.0) as ex:
        yield ex


def test_value_output_and_tool_calls(executor: Executor) -> None:
    result = executor.run('print("hello")\nr = get_weather(city="Oslo", unit="celsius")\nr.temperature')
    assert result.status == "ok", result.error
    assert result.stdout == "hello\n"
    assert result.value is not None and result.value["kind"] == "json"
    assert isinstance(result.value["data"], float)
    assert [c["tool"] for c in result.tool_calls] == ["get_weather"]
    assert result.tool_calls[0]["arguments"] == {"city": "Oslo", "unit": "celsius"}
    assert result.tool_calls[0]["status"] == "ok"


def test_calls_are_numbered_as_issued_and_a_parallel_batch_in_submission_order(executor: Executor) -> None:
    # The first slot of the batch issues its call last: the record still lists it first.
    code = """
import time
get_weather(city="Oslo", unit="celsius")
def late():
    time.sleep(0.5)
    return get_weather(city="Lima", unit="celsius")
parallel([late, lambda: get_weather(city="Rome", unit="celsius")])
get_weather(city="Kyiv", unit="celsius")
"""
    result = executor.run(code)
    assert result.status == "ok", result.error
    calls = [(c["seq"], c["arguments"]["city"]) for c in result.tool_calls]
    assert calls == [(1, "Oslo"), (2, "Lima"), (3, "Rome"), (4, "Kyiv")]
    started = {c["arguments"].get("city"): c["started"] for c in result.tool_calls}
    assert started["Lima"] > started["Rome"]  # really issued in the other order


def test_the_go_design_cities_example_makes_n_plus_one_calls_in_one_execution(executor: Executor) -> None:
    code = """
cities = [c for c in read_file(path="cities.txt").splitlines() if c]
for city in cities:
    w = get_weather(city=city, unit="fahrenheit")
    print(f"{city}: {w.temperature:.0f}°F")
"""
    result = executor.run(code)
    assert result.status == "ok", result.error
    assert result.stdout.splitlines()[0].startswith("New York: ")
    assert len(result.stdout.splitlines()) == 5
    assert [c["tool"] for c in result.tool_calls] == ["read_file"] + ["get_weather"] * 5


def test_imports_async_twins_and_parallel(executor: Executor) -> None:
    code = """
import asyncio
from tools import get_weather
cities = ["Paris", "Tokyo", "Cairo"]
together = await asyncio.gather(*(atools.get_weather(city=c, unit="celsius") for c in cities))
calls = [lambda c=c: get_weather(city=c, unit="celsius") for c in cities]
threaded = parallel(calls + [lambda: get_weather(city="123", unit="celsius")])
same = [r.temperature for r in together] == [r.temperature for r in threaded[:3]]
same and isinstance(threaded[3], Exception)
"""
    result = executor.run(code)
    assert result.status == "ok", result.error
    assert result.value == {"kind": "json", "data": True}
    assert len(result.tool_calls) == 7


def test_errors_point_at_the_line_as_written(executor: Executor) -> None:
    code = "```python\nx = 1\n\ndef f():\n    return 1 / 0\n\nf()\n```"
    result = executor.run(code)
    assert result.status == "error"
    assert result.error is not None
    assert result.error["type"] == "ZeroDivisionError"
    assert result.error["line"] == 5 and "1 / 0" in result.error["source_line"]
    syntax = executor.run("x = (1,\ny = 2")
    assert syntax.status == "error" and syntax.error is not None and syntax.error["type"] == "SyntaxError"


def test_tool_errors_can_be_caught_or_reported(executor: Executor) -> None:
    caught = executor.run(
        'try:\n    get_weather(city="12345", unit="celsius")\nexcept ToolError as e:\n    out = str(e)\nout',
    )
    assert caught.status == "ok", caught.error
    assert caught.value is not None and "not a city name" in caught.value["text"]
    uncaught = executor.run('get_weather(city="12345", unit="celsius")')
    assert uncaught.status == "error" and uncaught.error is not None
    assert uncaught.error["type"] == "ToolError" and uncaught.error["line"] == 1
    bad_args = executor.run('get_weather(city="Oslo", unit="kelvin")')
    assert bad_args.status == "error" and bad_args.error is not None
    assert bad_args.error["type"] == "ToolArgumentError" and "unit" in bad_args.error["message"]


def test_a_busy_loop_times_out_and_the_next_run_works(executor: Executor) -> None:
    started = time.monotonic()
    result = executor.run('print("started")\nwhile True:\n    pass', timeout=1)
    elapsed = time.monotonic() - started
    assert result.status == "timeout"
    assert result.stdout == "started\n"
    assert elapsed < 1 + 1 + 3  # deadline, grace, and a busy machine
    assert executor.run("1 + 1").value == {"kind": "json", "data": 2}


def test_sigint_ignored_is_killed_after_the_grace_period(executor: Executor) -> None:
    code = (
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.01)"
    )
    started = time.monotonic()
    result = executor.run(code, timeout=1)
    assert result.status == "timeout"
    assert time.monotonic() - started < 1 + 1 + 3


def test_a_tool_call_in_flight_at_the_deadline_is_cancelled_at_the_server(executor: Executor) -> None:
    before = executor.run("int(cancelled_count())").value
    result = executor.run("sleep(seconds=30)", timeout=1)
    assert result.status == "timeout"
    deadline = time.monotonic() + 3
    while executor.run("int(cancelled_count())").value == before:
        assert time.monotonic() < deadline, "the in-flight call was not cancelled at the server"
        time.sleep(0.1)


def test_os_exit_and_a_broken_channel_are_crashes(executor: Executor) -> None:
    exited = executor.run('print("bye")\nimport os\nos._exit(3)')
    assert exited.status == "crashed"
    assert exited.error is not None and "code 3" in exited.error["message"]
    garbage = executor.run(
        "import gc, socket\n"
        "s = [o for o in gc.get_objects() if isinstance(o, socket.socket) and o.fileno() >= 0][0]\n"
        "s.sendall(b'\\x00\\x00\\x00\\x05hello')\n"
        "import time; time.sleep(5)"
    )
    assert garbage.status == "crashed"
    assert garbage.error is not None and "channel" in garbage.error["message"]
    assert executor.run("2 * 21").value == {"kind": "json", "data": 42}


def test_a_program_cannot_rewrite_its_protections(executor: Executor) -> None:
    """The sandbox report comes only first, from the worker: one sent by the program breaks the channel."""
    forged = executor.run(
        "import gc, json, socket, struct\n"
        "s = [o for o in gc.get_objects() if isinstance(o, socket.socket) and o.fileno() >= 0][0]\n"
        "body = json.dumps({'type': 'protections', 'in_force': ['everything'], 'not_in_force': {},\n"
        "                   'warnings': [], 'turned_off': []}).encode()\n"
        "s.sendall(struct.pack('>I', len(body)) + body)\n"
        "import time; time.sleep(5)"
    )
    assert forged.status == "crashed"
    assert (
        forged.error is not None and "protections report after the program started" in forged.error["message"]
    )
    assert "everything" not in forged.protections
    assert executor.run("2 * 21").value == {"kind": "json", "data": 42}


def test_a_top_level_return_and_json_literals_in_a_real_worker(executor: Executor) -> None:
    result = executor.run(
        'forecast = get_weather(city="Oslo", unit="celsius")\nif forecast:\n'
        '    return {"ok": true, "temperature": forecast.temperature}\nprint("never")'
    )
    assert result.status == "ok", result.error
    assert result.value is not None and result.value["kind"] == "json"
    assert result.value["data"]["ok"] is True and len(result.tool_calls) == 1
    assert result.stdout == ""
    assert "line 3: read JSON's true as True, its Python spelling" in result.stderr
    # A session's own `true` is the program's name, not a literal.
    executor.run("true = 'mine'", session="literals")
    assert executor.run("true", session="literals").value == {"kind": "text", "text": "mine"}
    executor.close_session("literals")


def test_inputs_become_globals(executor: Executor) -> None:
    result = executor.run("sum(numbers) + len(name)", inputs={"numbers": [1, 2, 3], "name": "four"})
    assert result.value == {"kind": "json", "data": 10}


def test_result_record_is_json(executor: Executor) -> None:
    record = executor.run('print("x")\n{"a": [1, 2]}').to_dict()
    assert json.loads(json.dumps(record))["value"] == {"kind": "json", "data": {"a": [1, 2]}}
    assert record["timeout_s"] == 30 and record["status"] == "ok" and record["protections"]


REPLAY_PROGRAM = """
cities = ["Paris", "Tokyo", "Cairo"]
temps = parallel([lambda c=c: get_weather(city=c, unit="celsius").temperature for c in cities])
print(read_file(path="cities.txt").splitlines()[0])
temps
"""


def test_replay_answers_from_the_record_without_touching_servers(executor: Executor) -> None:
    first = executor.run(REPLAY_PROGRAM)
    assert first.status == "ok", first.error
    calls_before = len(executor.toolbox.hub.call_log.records())
    replayed = executor.run(REPLAY_PROGRAM, replay=list(reversed(first.tool_calls)))  # any order
    assert replayed.status == "ok", replayed.error
    assert replayed.value == first.value and replayed.stdout == first.stdout
    new_records = executor.toolbox.hub.call_log.records()[calls_before:]
    assert len(new_records) == 4 and all("replayed" in r.warnings[0] for r in new_records)


def test_replay_that_diverges_fails_with_the_missing_call(executor: Executor) -> None:
    first = executor.run('get_weather(city="Oslo", unit="celsius").temperature')
    result = executor.run('get_weather(city="Bergen", unit="celsius").temperature', replay=first.tool_calls)
    assert result.status == "error" and result.error is not None
    assert result.error["message"].startswith(  # the first difference, both sides named
        "replay diverged at call 1: the program called get_weather(city='Bergen', unit='celsius'), where the "
        "record has get_weather(city='Oslo', unit='celsius')"
    )
    beyond = executor.run(  # a call past the end of the record is named as missing
        'get_weather(city="Oslo", unit="celsius")\nget_weather(city="Lima", unit="celsius")',
        replay=first.tool_calls,
    )
    assert beyond.error is not None and beyond.error["line"] == 2
    assert (
        "replay diverged: no recorded result for get_weather(city='Lima', unit='celsius')"
        in beyond.error["message"]
    )


def test_pending_mode_stops_at_every_unanswered_call_and_resumes(executor: Executor) -> None:
    record: list[dict] = []
    rounds = 0
    while True:
        rounds += 1
        result = executor.run(REPLAY_PROGRAM, replay=record, pending=True)
        if result.status != "pending":
            break
        assert result.pending_calls, "a pending run must say what it waits on"
        for call in result.pending_calls:  # the tool owner runs them
            fn = executor.toolbox.tools[f"{call['server']}/{call['tool']}"]
            fn(**call["arguments"])
            record.append(executor.toolbox.hub.call_log.records()[-1].to_json())
        assert rounds < 5
    assert result.status == "ok", result.error
    assert rounds == 3  # the parallel batch of three at once, then read_file, then done
    assert result.value is not None and len(result.value["data"]) == 3


def test_code_mode_settings_from_the_config_shape_the_sandbox(tmp_path: Path) -> None:
    settings = {
        "timeout": 7,
        "grace": 1,
        "preload": ["colorsys"],
        "sandbox": {"network": True, "memoryMb": 512},
    }
    config = {"mcpServers": {}, "workspace": str(tmp_path), "defaults": {"codeMode": settings}}
    (tmp_path / "codemode.json").write_text(json.dumps(config))
    with Toolbox(load_config(tmp_path / "codemode.json")) as tb, Executor(tb) as ex:
        assert ex.timeout == 7 and ex.grace == 1
        result = ex.run(
            "import socket, resource, sys\nsocket.socket().close()\n"
            "[resource.getrlimit(resource.RLIMIT_AS)[0] // 2**20, 'colorsys' in sys.modules]"
        )
        assert result.status == "ok", result.error
        assert result.value == {"kind": "json", "data": [512, True]}
        assert result.timeout_s == 7
        assert "network_namespace" not in result.protections
        assert any(p.startswith("missing:network_namespace") for p in result.protections)


def test_a_session_keeps_its_globals_and_nothing_else(executor: Executor) -> None:
    assert (
        executor.run(
            "x = 41\nimport os\nchild = os.fork() or 0\nif child == 0:\n    import time\n"
            "    time.sleep(1000)\nchild",
            session="s",
        ).status
        == "ok"
    )
    assert executor.run("x + 1", session="s").value == {"kind": "json", "data": 42}
    alive = executor.run(
        "import os\ntry:\n    os.kill(child, 0)\n    out = True\nexcept OSError:\n    out = False\nout",
        session="s",
    )
    assert alive.value == {"kind": "json", "data": False}  # what one run started is gone before the next
    assert executor.run("x").status == "error"  # no session: a fresh interpreter
    assert "s" in executor.sessions


def test_a_session_survives_a_deadline_its_program_gives_in_to(executor: Executor) -> None:
    executor.run("y = 'kept'", session="t")
    stopped = executor.run("while True:\n    pass", session="t", timeout=1)
    assert stopped.status == "timeout"
    assert executor.run("y", session="t").value == {"kind": "text", "text": "kept"}
    stubborn = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
    assert executor.run(stubborn, session="t", timeout=1).status == "timeout"
    assert "t" not in executor.sessions  # killed: the session is gone
    fresh = executor.run("y", session="t")
    assert fresh.status == "error" and fresh.error is not None and fresh.error["type"] == "NameError"
    assert executor.close_session("t") and not executor.close_session("t")


def test_errors_in_a_session_name_the_lines_of_their_own_run(executor: Executor) -> None:
    executor.run("def f():\n    return 1 / 0", session="u")
    result = executor.run("\n\nf()", session="u")
    assert result.status == "error" and result.error is not None
    # Innermost frame first, as Python does: line 2 of the run that defined f, named in the traceback.
    assert result.error["line"] == 2 and "1 / 0" in result.error["source_line"]
    trace = result.error["traceback"]
    assert 'File "<code-1>", line 3' in trace and 'File "<code-0>", line 2, in f' in trace
    executor.close_session("u")


def test_output_streams_while_the_program_runs(executor: Executor) -> None:
    seen: list[tuple[float, str]] = []
    started = time.monotonic()
    code = 'import time\nprint("first", flush=True)\ntime.sleep(1)\nprint("second")'
    result = executor.run(
        code, on_output=lambda stream, text: seen.append((time.monotonic() - started, text))
    )
    assert result.status == "ok" and result.stdout == "first\nsecond\n"
    assert [text for _, text in seen] == ["first\n", "second\n"]
    assert seen[0][0] < seen[1][0] - 0.5  # the first line arrived before the program finished


def test_tool_calls_are_reported_as_they_start_and_end(executor: Executor) -> None:
    seen: list[tuple[str, str]] = []
    code = 'get_weather(city="Oslo", unit="celsius")\nget_weather(city="Lima", unit="celsius")'
    result = executor.run(code, on_call=lambda record: seen.append((record.arguments["city"], record.status)))
    assert result.status == "ok"
    assert seen == [("Oslo", "running"), ("Oslo", "ok"), ("Lima", "running"), ("Lima", "ok")]


def test_a_tool_call_timeout_is_an_error_at_the_calling_line(tmp_path: Path) -> None:
    servers = {"quirky": {"command": sys.executable, "args": [str(QUIRKY)], "timeout": 0.5}}
    (tmp_path / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(tmp_path)}))
    with Toolbox(load_config(tmp_path / "codemode.json")) as tb, Executor(tb) as ex:
        result = ex.run('x = 1\nsleep(seconds=5)\n"unreachable"', timeout=10)
        assert result.status == "error" and result.error is not None
        assert result.error["type"] == "ToolTimeoutError" and result.error["line"] == 2
        assert result.tool_calls[0]["status"] == "timeout"
        caught = ex.run("try:\n    sleep(seconds=5)\nexcept ToolTimeoutError as e:\n    out = 'caught'\nout")
        assert caught.value == {"kind": "text", "text": "caught"}


def test_a_thousand_tools_are_built_once_not_per_execution(tmp_path: Path) -> None:
    servers = {
        "many": {"command": sys.executable, "args": [str(QUIRKY), "--tools", "1000", "--page-size", "100"]}
    }
    (tmp_path / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(tmp_path)}))
    with Toolbox(load_config(tmp_path / "codemode.json")) as tb, Executor(tb) as ex:
        assert len(tb.models) == 1008
        first = ex.run("search_tools('page_tool_999', limit=1)[0]['name']", timeout=60)
        assert first.value == {"kind": "text", "text": "page_tool_999"}, first.error
        durations = []
        for _ in range(3):
            time.sleep(0.2)  # as between cells: the next worker is prepared meanwhile
            result = ex.run("page_tool_500()", timeout=60)
            assert result.value == {"kind": "text", "text": "page_tool_500"}, result.error
            durations.append(result.duration_ms)
        # Building the tools module for a thousand tools takes ~0.7 s here: a run that rebuilt it would show.
        assert min(durations) < 500, durations


def test_closing_while_the_worker_process_starts_leaves_nothing_behind(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import gc

    config = tmp_path / "codemode.json"
    config.write_text(json.dumps({"mcpServers": {"weather": WEATHER}, "workspace": str(tmp_path)}))
    with Toolbox(load_config(config)) as tb:
        executor = Executor(tb)
        executor.warm()  # what a kernel does once its tools are connected
        executor.close()  # ... and a reload right after
    gc.collect()
    assert "Task was destroyed but it is pending" not in caplog.text


def test_a_tool_the_settings_exclude_is_no_function_in_their_programs(workspace: Path) -> None:
    from codemode_kernel.config import CodeModeSettings

    settings = CodeModeSettings(enabled=True, excluded_tools=["weather/get_city"])
    with Toolbox(load_config(workspace / "codemode.json")) as tb, Executor(tb, settings=settings) as ex:
        # A model's own codeMode can exclude a tool the config's defaults left in the namespace.
        assert "get_city" in tb.tools
        result = ex.run("x = 1\nget_city()")
        assert result.status == "error" and result.error is not None
        assert (result.error["type"], result.error["line"]) == ("NameError", 2)
        forged = ex.run(  # the worker's own channel, found the way a hostile program could
            "import gc\nfrom codemode_kernel.worker.channel import Channel\n"
            "channel = next(o for o in gc.get_objects() if isinstance(o, Channel))\n"
            'channel.call("weather", "get_city", {})'
        )
        assert forged.status == "error" and forged.error is not None
        assert "excluded from code mode" in forged.error["message"]  # the kernel refuses it too
        assert not [r for r in tb.hub.call_log.records() if r.tool == "get_city"]  # never sent
        assert ex.run('get_weather(city="Oslo", unit="celsius").temperature').status == "ok"


def test_lone_surrogates_come_back_escaped_wherever_they_appear(executor: Executor) -> None:
    # os.listdir gives "caf\udce9" for a file named in Latin-1: a str that UTF-8 cannot encode.
    code = """
import sys
name = "caf" + chr(0xDCE9)
print("out", name)
print("err", name, file=sys.stderr)
try:
    fail(message=name)
except ToolError as e:
    caught = str(e)
[name, caught]
"""
    result = executor.run(code)
    assert result.status == "ok", result.error
    assert result.stdout == "out caf\\udce9\n"
    assert result.stderr == "err caf\\udce9\n"
    assert result.value is not None and result.value["data"][0] == "caf\\udce9"
    assert "caf\\udce9" in result.value["data"][1]
    assert result.tool_calls[0]["arguments"] == {"message": "caf\\udce9"}
    text = executor.run("chr(0xD800)")
    assert text.value == {"kind": "text", "text": "\\ud800"}
    raised = executor.run('raise ValueError("bad name " + chr(0xD800))')
    assert raised.status == "error" and raised.error is not None
    assert raised.error["message"] == "bad name \\ud800"
    json.dumps(result.to_dict(), ensure_ascii=False).encode()  # the whole record is valid UTF-8


def test_one_write_larger_than_a_frame_is_cut_like_any_output(executor: Executor) -> None:
    result = executor.run('import sys\nsys.stdout.write("x" * (65 * 1024 * 1024))\n"after"')
    assert result.status == "ok", result.error
    assert result.output_truncated and result.stdout == "x" * executor.max_output_bytes
    assert result.value == {"kind": "text", "text": "after"}


def test_an_argument_larger_than_a_frame_is_an_error_at_the_calling_line(executor: Executor) -> None:
    result = executor.run('x = 1\nfail(message="x" * (65 * 1024 * 1024))\n"unreachable"')
    assert result.status == "error" and result.error is not None
    assert result.error["type"] == "ValueError" and result.error["line"] == 2
    assert "fail()" in result.error["message"] and "64 MiB" in result.error["message"]
    assert result.tool_calls == []  # nothing was sent
    code = 'try:\n    fail(message="x" * (65 * 1024 * 1024))\nexcept ValueError:\n    out = "caught"\nout'
    caught = executor.run(code)
    assert caught.value == {"kind": "text", "text": "caught"}


@pytest.mark.parametrize("after", [0.0, 1.5])
def test_a_cancelled_run_leaves_nothing_behind(executor: Executor, after: float) -> None:
    """A caller that gives up (an MCP client cancelling), while the worker starts or while the program runs,
    leaves no waiter pending on the hub's loop, no socket open and no process running (ResourceWarnings,
    which pytest turns into failures here)."""

    async def give_up() -> None:
        running = asyncio.ensure_future(executor.arun("import time\ntime.sleep(30)"))
        await asyncio.sleep(after)
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running

    asyncio.run(give_up())

    async def left() -> list[str]:
        await asyncio.sleep(0.2)
        current = asyncio.current_task()
        return [repr(task.get_coro()) for task in asyncio.all_tasks() if task is not current]

    pending = executor.toolbox.hub.loop_thread.run(left())
    assert not [name for name in pending if "Event.wait" in name], pending
    assert executor.run("'next'").value == {"kind": "text", "text": "next"}
