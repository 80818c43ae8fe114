"""The ToolHub against real MCP servers: ours, a misbehaving one, and third-party ones."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel.calllog import CallLog
from codemode_kernel.config import ServerConfig
from codemode_kernel.core.errors import ServerError, ToolArgumentError, ToolTimeoutError, UnknownToolError
from codemode_kernel.core.results import Image, decode_result
from codemode_kernel.hub import ToolHub
from tests.conftest import QUIRKY, free_port

pytestmark = pytest.mark.integration


def stdio(name: str, command: str, *args: str, **extra: Any) -> ServerConfig:
    return ServerConfig(name=name, transport="stdio", command=command, args=list(args), **extra)


def quirky(name: str = "quirky", *args: str, **extra: Any) -> ServerConfig:
    return stdio(name, sys.executable, str(QUIRKY), *args, **extra)


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


@pytest.fixture
def hub(tmp_path: Path):
    with ToolHub(
        [quirky("quirky", "--tools", "25", "--page-size", "4")], state_dir=tmp_path / ".codemode"
    ) as h:
        yield h


def test_one_failing_server_does_not_block_the_others(tmp_path: Path) -> None:
    servers = [
        quirky("good"),
        stdio("missing", "definitely-not-a-command-xyz"),
        stdio(
            "dies",
            sys.executable,
            "-c",
            "import sys; sys.stderr.write('boom: no credentials\\n'); sys.exit(2)",
        ),
    ]
    started = time.monotonic()
    with ToolHub(servers, state_dir=tmp_path / ".codemode") as hub:
        elapsed = time.monotonic() - started
        status = {s.name: s for s in hub.status()}
        assert status["good"].state == "ready" and status["good"].tools > 0
        assert status["missing"].state == "failed"
        assert "definitely-not-a-command-xyz" in (status["missing"].error or "")
        assert status["dies"].state == "failed"
        log_path = status["dies"].log_path
        assert log_path is not None and "boom: no credentials" in Path(log_path).read_text()
        assert text_of(hub.call("good", "pid")).isdigit()
        with pytest.raises(ServerError, match="missing"):
            hub.call("missing", "anything")
    assert elapsed < 10, f"start took {elapsed:.1f} s"


def test_a_server_that_never_answers_fails_after_the_connect_timeout(tmp_path: Path) -> None:
    hanging = stdio("hangs", sys.executable, "-c", "import time; time.sleep(60)")
    started = time.monotonic()
    with ToolHub([quirky("good"), hanging], state_dir=tmp_path, connect_timeout=2) as hub:
        elapsed = time.monotonic() - started
        status = {s.name: s for s in hub.status()}
        assert status["good"].state == "ready"
        assert status["hangs"].state == "failed"
        assert "did not finish connecting within 2 s" in (status["hangs"].error or "")
    assert 2 <= elapsed < 6


def test_lists_every_page_and_repairs_a_schema_without_type(hub: ToolHub) -> None:
    names = [spec.name for spec in hub.tool_specs()]
    assert len(names) == 8 + 25
    assert "page_tool_24" in names
    no_type = next(spec for spec in hub.tool_specs() if spec.name == "no_type")
    assert no_type.input_schema["type"] == "object"
    (status,) = hub.status()
    assert any("no_type" in w and "type" in w for w in status.warnings)
    assert text_of(hub.call("quirky", "no_type", {"x": 7})) == "7"


def test_arguments_are_validated_before_sending(hub: ToolHub) -> None:
    with pytest.raises(ToolArgumentError) as info:
        hub.call("quirky", "no_type", {"x": "seven"})
    assert "x" in str(info.value) and "no_type" in str(info.value)
    last = hub.call_log.records()[-1]
    assert last.status == "invalid_arguments" and last.tool == "no_type"


def test_output_schema_violation_is_a_warning_not_a_failure(hub: ToolHub) -> None:
    result = hub.call("quirky", "bad_output")
    assert result["structuredContent"] == {"n": "not a number"}
    record = hub.call_log.records()[-1]
    assert record.status == "ok"
    assert any("does not match its outputSchema at n" in w for w in record.warnings), record.warnings


def test_timeout_cancels_the_call_at_the_server(hub: ToolHub) -> None:
    started = time.monotonic()
    with pytest.raises(ToolTimeoutError, match=r"0\.5 s"):
        hub.call("quirky", "sleep", {"seconds": 10}, timeout=0.5)
    assert time.monotonic() - started < 4
    assert hub.call_log.records()[-1].status == "timeout"
    deadline = time.monotonic() + 3
    while text_of(hub.call("quirky", "cancelled_count")) != "1":
        assert time.monotonic() < deadline, "the server never saw notifications/cancelled"
        time.sleep(0.05)


@pytest.fixture
def sigint_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in this process, as ipykernel has it while a cell runs.

    Whatever pytest inherited: started with ``&`` from a script, it ignores SIGINT.
    """
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def test_interrupt_while_waiting_cancels_the_call(hub: ToolHub, sigint_raises: None) -> None:
    interrupted: list[float] = []

    def interrupt_once(_progress: float, _total: float | None, _message: str | None) -> None:
        if not interrupted:  # the server is sleeping on the call: it reported progress
            interrupted.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        hub.call("quirky", "sleep", {"seconds": 10}, progress=interrupt_once)
    assert interrupted, "the call ended before it was interrupted"
    assert time.monotonic() - interrupted[0] < 4
    deadline = time.monotonic() + 3
    while text_of(hub.call("quirky", "cancelled_count")) != "1":
        assert time.monotonic() < deadline, "the interrupted call was not cancelled at the server"
        time.sleep(0.05)
    sleeps = [r for r in hub.call_log.records() if r.tool == "sleep"]
    assert [r.status for r in sleeps] == ["cancelled"]


def test_progress_reaches_the_callback(hub: ToolHub) -> None:
    seen: list[tuple[float, float | None]] = []
    hub.call("quirky", "sleep", {"seconds": 0.5}, progress=lambda p, total, msg: seen.append((p, total)))
    assert [p for p, _ in seen] == [1, 2, 3, 4, 5]
    assert seen[-1][1] == 5
    (record,) = [r for r in hub.call_log.records() if r.tool == "sleep"]
    assert record.status == "ok"
    assert record.progress == {"count": 5, "progress": 5, "total": 5, "message": None}


def test_progress_is_in_the_record_without_a_callback(hub: ToolHub) -> None:
    """The call log keeps every call's progress (the live views read it), watched or not."""
    updates: list[int] = []
    unsubscribe = hub.call_log.subscribe(
        lambda record: updates.append(record.progress["count"]) if record.progress else None
    )
    try:
        hub.call("quirky", "sleep", {"seconds": 0.3})
    finally:
        unsubscribe()
    (record,) = [r for r in hub.call_log.records() if r.tool == "sleep"]
    assert record.progress is not None and record.progress["count"] == 3
    assert record.to_json()["progress"] == record.progress
    assert updates[:3] == [1, 2, 3]  # the running record, once per notification, then the finished one


def test_many_concurrent_calls_run_in_parallel(hub: ToolHub) -> None:
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=40) as pool:
        results = list(pool.map(lambda _: hub.call("quirky", "sleep", {"seconds": 0.5}), range(40)))
    elapsed = time.monotonic() - started
    assert all(text_of(r) == "slept 0.5" for r in results)
    assert elapsed < 5, f"40 calls of 0.5 s took {elapsed:.1f} s: not concurrent"


def test_a_server_dying_during_a_call_is_restarted_but_the_call_is_not_repeated(hub: ToolHub) -> None:
    first = text_of(hub.call("quirky", "pid"))
    with pytest.raises(ServerError, match="may or may not have run"):
        hub.call("quirky", "crash")  # sending it again could run a side effect twice
    assert hub.status()[0].restarts == 1
    second = text_of(hub.call("quirky", "pid"))
    assert second.isdigit() and second != first
    assert hub.status()[0].restarts == 1


def test_a_server_that_died_while_idle_is_restarted_before_the_next_call(hub: ToolHub) -> None:
    first = int(text_of(hub.call("quirky", "pid")))
    os.kill(first, signal.SIGKILL)
    deadline = time.monotonic() + 3
    while hub.status()[0].state != "failed":  # doctor and status see it at once
        assert time.monotonic() < deadline, "a dead server still shows as ready"
        time.sleep(0.02)
    second = int(text_of(hub.call("quirky", "pid")))  # never sent to the dead one: nothing to repeat
    assert second != first and hub.status()[0].restarts == 1
    assert hub.status()[0].state == "ready"


def test_closing_during_a_call_starts_nothing_new(tmp_path: Path) -> None:
    hub = ToolHub([quirky()], state_dir=tmp_path).start()
    pid = int(text_of(hub.call("quirky", "pid")))
    errors: list[BaseException] = []

    def slow_call() -> None:
        try:
            hub.call("quirky", "sleep", {"seconds": 5})
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=slow_call)
    worker.start()
    time.sleep(0.5)
    hub.close()
    worker.join(5)
    assert not worker.is_alive() and len(errors) == 1
    assert hub.status()[0].restarts == 0
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    children = ["pgrep", "-P", str(os.getpid()), "-f", str(QUIRKY)]
    out = subprocess.run(children, capture_output=True, text=True).stdout.split()
    assert not out, f"server processes left behind: {out}"


def test_tools_list_changed_refreshes_the_tools(hub: ToolHub) -> None:
    version = hub.tools_version
    hub.call("quirky", "add_tool")
    deadline = time.monotonic() + 5
    while "added_0" not in [s.name for s in hub.tool_specs()]:
        assert time.monotonic() < deadline, "tools/list_changed was not followed by a new listing"
        time.sleep(0.05)
    assert hub.tools_version > version
    assert text_of(hub.call("quirky", "added_0")) == "added_0"


def test_unknown_names_suggest_the_closest(hub: ToolHub) -> None:
    with pytest.raises(UnknownToolError, match="did you mean 'sleep'"):
        hub.call("quirky", "slep")
    with pytest.raises(UnknownToolError, match="quirky"):
        hub.call("quirk", "sleep")


def test_every_call_is_in_the_log_and_the_log_spills_to_disk(tmp_path: Path) -> None:
    log = CallLog(spill_dir=tmp_path / ".codemode", max_entries=5, max_result_bytes=200)
    with ToolHub([quirky()], state_dir=tmp_path / ".codemode", call_log=log) as hub:
        for i in range(12):
            hub.call("quirky", "fail" if i == 3 else "pid", {"message": "x" * 300} if i == 3 else {})
        assert len(log) <= 5
        everything = log.records(include_spilled=True)
        assert len(everything) == 12
        assert [r.status for r in everything].count("tool_error") == 1
        failed = next(r for r in everything if r.status == "tool_error")
        assert failed.artifact_id is not None and failed.result is not None and "preview" in failed.result
        full = log.full_result(failed)
        assert full is not None and full["content"][0]["text"] == "x" * 300
        assert log.get(everything[0].id) == everything[0]
        assert all(r.duration_ms is not None and r.duration_ms >= 0 for r in everything)


def test_server_everything_over_stdio(tmp_path: Path, everything_bin: str) -> None:
    with ToolHub([stdio("everything", everything_bin)], state_dir=tmp_path) as hub:
        assert decode_result(hub.call("everything", "echo", {"message": "hi"}), tool="echo") == "Echo: hi"
        image = decode_result(hub.call("everything", "get-tiny-image"), tool="get-tiny-image")
        parts = image if isinstance(image, list) else [image]
        png = next(p for p in parts if isinstance(p, Image))
        assert png.data.startswith(b"\x89PNG")
        structured = decode_result(
            hub.call("everything", "get-structured-content", {"location": "New York"}), tool="x"
        )
        assert isinstance(structured.temperature, (int, float))
        steps: list[float] = []
        hub.call(
            "everything",
            "trigger-long-running-operation",
            {"duration": 0.6, "steps": 3},
            progress=lambda p, t, m: steps.append(p),
        )
        assert steps == [1, 2, 3]
        long_run = [r for r in hub.call_log.records() if r.tool == "trigger-long-running-operation"]
        assert long_run[0].progress is not None
        assert long_run[0].progress["count"] == 3 and long_run[0].progress["total"] == 3


def test_server_everything_over_sse(tmp_path: Path, everything_bin: str, http_server) -> None:
    port = free_port()
    http_server([everything_bin, "sse"], port, env={"PORT": str(port)})
    url = f"http://127.0.0.1:{port}/sse"
    with ToolHub([ServerConfig(name="ev", transport="sse", url=url)], state_dir=tmp_path) as hub:
        assert hub.status()[0].state == "ready", hub.status()[0].error
        assert decode_result(hub.call("ev", "echo", {"message": "over sse"}), tool="echo") == "Echo: over sse"


def test_our_weather_server_over_streamable_http(tmp_path: Path, http_server) -> None:
    port = free_port()
    http_server(
        [sys.executable, "-m", "codemode_kernel.servers.weather", "--transport", "http", "--port", str(port)],
        port,
    )
    config = ServerConfig(
        name="weather", transport="http", url=f"http://127.0.0.1:{port}/mcp", headers={"X-Test": "1"}
    )
    with ToolHub([config], state_dir=tmp_path) as hub:
        assert hub.status()[0].state == "ready", hub.status()[0].error
        result = decode_result(
            hub.call("weather", "get_weather", {"city": "Seattle", "unit": "celsius"}), tool="w"
        )
        again = decode_result(
            hub.call("weather", "get_weather", {"city": "Seattle", "unit": "celsius"}), tool="w"
        )
        assert result.temperature == again.temperature


def test_mcp_server_time_from_pypi(tmp_path: Path, time_server_bin: str) -> None:
    with ToolHub([stdio("time", time_server_bin)], state_dir=tmp_path) as hub:
        result = decode_result(
            hub.call("time", "get_current_time", {"timezone": "UTC"}), tool="get_current_time"
        )
        assert result.timezone == "UTC"
        assert result["datetime"][:2] == "20"
        with pytest.raises(ToolArgumentError, match="timezone"):
            hub.call("time", "get_current_time", {})
