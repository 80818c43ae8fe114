"""The hub's stdio transport against a server that abuses its stdio: bad Unicode, huge results, noise.

Every test runs the real server process (tests/servers/stdio_faults_server.py) through a real ToolHub.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import StdioServerParameters

from codemode_kernel.config import ServerConfig
from codemode_kernel.core.errors import ServerError
from codemode_kernel.hub import ToolHub
from codemode_kernel.hub.stdio import STDERR_LOG_BYTES, stdio_transport

pytestmark = pytest.mark.integration

FAULTS = Path(__file__).resolve().parents[1] / "servers" / "stdio_faults_server.py"


def faults(*args: str, **extra: Any) -> ServerConfig:
    return ServerConfig(
        name="faults", transport="stdio", command=sys.executable, args=[str(FAULTS), *args], **extra
    )


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


@pytest.fixture
def hub(tmp_path: Path):
    with ToolHub([faults(max_result_bytes=1_000_000)], state_dir=tmp_path / ".codemode") as h:
        yield h


@pytest.mark.parametrize("tool", ["surrogate", "latin1"])
def test_a_result_that_is_not_valid_unicode_arrives_at_once_with_the_character_replaced(
    hub: ToolHub, tool: str
) -> None:
    started = time.monotonic()
    result = hub.call("faults", tool, timeout=10)
    assert time.monotonic() - started < 5  # it used to wait out the whole timeout
    assert text_of(result) == "caf\ufffd"
    record = hub.call_log.records()[-1]
    assert record.status == "ok"
    assert any("U+FFFD" in w and "faults/" + tool in w for w in record.warnings), record.warnings
    assert "_meta" not in result  # the warning travels in the record, not in the server's result
    assert text_of(hub.call("faults", "echo", {"text": "still fine"})) == "still fine"


@pytest.mark.parametrize("id_last", [False, True])
def test_a_result_over_max_result_bytes_fails_at_once_naming_the_tool_size_and_setting(
    hub: ToolHub, id_last: bool
) -> None:
    started = time.monotonic()
    with pytest.raises(ServerError) as caught:
        hub.call("faults", "big", {"size": 3_000_000, "id_last": id_last}, timeout=30)
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert "'faults'" in message and "big" in message
    assert re.search(r"3,000,\d{3} bytes", message), message  # the answer's size, the result's JSON
    assert "1,000,000" in message and "maxResultBytes" in message
    assert hub.call_log.records()[-1].status == "server_error"
    # The connection survives the dropped answer: the next call works, and so does one under the limit.
    assert text_of(hub.call("faults", "echo", {"text": "after"})) == "after"
    assert len(text_of(hub.call("faults", "big", {"size": 900_000}))) == 900_000


def test_an_answer_that_is_not_json_rpc_fails_the_call_at_once(hub: ToolHub) -> None:
    started = time.monotonic()
    with pytest.raises(ServerError, match=r"not_rpc.*not a valid JSON-RPC"):
        hub.call("faults", "not_rpc", timeout=10)
    assert time.monotonic() - started < 5


def test_a_60_mb_result_arrives_whole_and_fast(tmp_path: Path) -> None:
    size = 60_000_000
    with ToolHub([faults(max_result_bytes=100_000_000)], state_dir=tmp_path / ".codemode") as hub:
        # About 1 s here; the SDK's own reader took 26 s (it splits its whole buffer on every chunk).
        result = hub.call("faults", "big", {"size": size, "id_last": True}, timeout=10)
    assert len(text_of(result)) == size


def test_lines_that_are_not_json_are_counted_not_logged_with_a_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with ToolHub([faults("--banner", "3")], state_dir=tmp_path / ".codemode") as hub:
        assert text_of(hub.call("faults", "chatter", {"lines": 50})) == "chattered"
        status = hub.status()[0]
    assert status.non_json_lines == 53
    assert status.last_non_json_line == "chatter line 49: not JSON"
    assert "53 lines" in (status.stdout_note() or "") and "chatter line 49" in (status.stdout_note() or "")
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING and "not JSON" in r.getMessage()]
    assert len(warnings) == 1  # the first such line is reported once; the rest are counted


def test_a_chatty_servers_stderr_log_is_capped_and_keeps_the_newest_lines(tmp_path: Path) -> None:
    state = tmp_path / ".codemode"
    with ToolHub([faults()], state_dir=state) as hub:
        log_path = Path(hub.status()[0].log_path or "")
        hub.call("faults", "flood", {"size": STDERR_LOG_BYTES, "last": "first flood ends"})
        with pytest.raises(ServerError, match="exited during the call") as caught:
            hub.call(
                "faults",
                "flood",
                {"size": 3 * STDERR_LOG_BYTES, "last": "FATAL: the last words", "crash": True},
            )
        assert str(log_path) in str(caught.value)
        # Restarted: the new process's output goes to the same capped log.
        assert text_of(hub.call("faults", "echo", {"text": "back"})) == "back"
    logs = sorted(log_path.parent.glob(log_path.name + "*"))
    assert [p.name for p in logs] == [log_path.name, log_path.name + ".1"]
    assert sum(p.stat().st_size for p in logs) <= STDERR_LOG_BYTES
    assert b"FATAL: the last words" in log_path.read_bytes()  # the newest lines, which explain the crash


def test_an_oversized_log_from_an_older_release_is_cut_to_the_cap(tmp_path: Path) -> None:
    state = tmp_path / ".codemode"
    log_path = state / "logs" / "faults.stderr.log"
    log_path.parent.mkdir(parents=True)
    log_path.write_bytes(b"old line\n" * (STDERR_LOG_BYTES // 4))  # more than twice the cap
    with ToolHub([faults()], state_dir=state) as hub:
        hub.call("faults", "flood", {"size": 1000, "last": "new words"})
    logs = sorted(log_path.parent.glob(log_path.name + "*"))
    assert sum(p.stat().st_size for p in logs) <= STDERR_LOG_BYTES
    assert b"new words" in log_path.read_bytes()


def test_doctor_shows_the_count_and_the_last_line_that_was_not_json(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    entry = {"command": sys.executable, "args": [str(FAULTS), "--banner", "2"]}
    (tmp_path / "servers.json").write_text(json.dumps({"mcpServers": {"faults": entry}}))
    env = {k: v for k, v in os.environ.items() if k not in ("CODEMODE_CONFIG", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"))
    result = subprocess.run(
        [sys.executable, "-m", "codemode_kernel.cli", "doctor", "--config", "servers.json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "faults [stdio]: ready" in result.stdout, result.stdout + result.stderr
    assert (
        "    stdout: 2 lines on its stdout were not JSON-RPC and skipped (a server should log to stderr); "
        "the last: 'banner line 1: server starting'"
    ) in result.stdout
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("depth", [300, 900, 20_000])
def test_an_answer_nested_too_deeply_fails_its_call_at_once_and_the_next_calls_work(
    hub: ToolHub, depth: int
) -> None:
    # 900 levels: json.loads parses it, the repair walk hit RecursionError and the reader drained stdout for
    # good (every later call timed out); 20,000: json.loads itself raises RecursionError.
    started = time.monotonic()
    with pytest.raises(ServerError) as caught:
        hub.call("faults", "deep", {"depth": depth}, timeout=10)
    message = str(caught.value)
    assert "'faults'" in message and "deep" in message, message
    assert "nested more than 200 levels" in message, message
    assert text_of(hub.call("faults", "echo", {"text": "ok"}, timeout=10)) == "ok"
    assert text_of(hub.call("faults", "echo", {"text": "ok again"}, timeout=10)) == "ok again"
    assert time.monotonic() - started < 3
    assert hub.call_log.records()[-3].status == "server_error"
    assert hub.status()[0].restarts == 0  # the connection itself was never in doubt


def test_an_answer_nested_within_the_limit_arrives(hub: ToolHub) -> None:
    result = hub.call("faults", "deep", {"depth": 150}, timeout=10)
    level = result["structuredContent"]
    for _ in range(149):
        level = level["level"]
    assert level == {"level": 0}


def test_a_repaired_answer_whose_meta_holds_the_warnings_key_arrives(hub: ToolHub) -> None:
    # Adding the repair warning to the server's value there (a string) raised; the reader stopped for good
    # and every later call timed out.
    started = time.monotonic()
    assert text_of(hub.call("faults", "meta_warnings", timeout=10)) == "caf\ufffd"
    warnings = hub.call_log.records()[-1].warnings
    assert len(warnings) == 1 and "U+FFFD" in warnings[0], warnings  # the server's value there is dropped
    assert text_of(hub.call("faults", "echo", {"text": "ok"}, timeout=10)) == "ok"
    assert time.monotonic() - started < 3


def test_an_answer_python_cannot_parse_fails_its_call_at_once(hub: ToolHub) -> None:
    # Valid JSON, but json.loads refuses integers over 4,300 digits: it was counted as noise and the call
    # waited out its timeout.
    started = time.monotonic()
    with pytest.raises(
        ServerError, match=r"long_int: its answer cannot be parsed as JSON \(Exceeds the limit"
    ):
        hub.call("faults", "long_int", timeout=10)
    assert time.monotonic() - started < 3
    assert text_of(hub.call("faults", "echo", {"text": "ok"}, timeout=10)) == "ok"


@pytest.mark.parametrize("params_first", [False, True])
def test_an_oversized_notification_is_dropped_without_failing_the_call_in_flight(
    hub: ToolHub, params_first: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    for _ in range(2):
        result = hub.call("faults", "huge_log", {"size": 3_000_000, "params_first": params_first}, timeout=10)
        assert text_of(result) == "logged"
    dropped = [r.getMessage() for r in caplog.records if "notifications/message" in r.getMessage()]
    assert len(dropped) == 1, dropped  # logged once, counted after that
    assert "'faults'" in dropped[0] and "maxResultBytes" in dropped[0], dropped


def test_a_start_that_cannot_make_the_stderr_pipe_leaves_no_file_open(tmp_path: Path) -> None:
    log_path = tmp_path / "faults.stderr.log"
    params = StdioServerParameters(command=sys.executable, args=[str(FAULTS)])

    def open_on(path: Path) -> list[int]:
        fds = []
        for name in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/self/fd/{name}") == str(path):
                    fds.append(int(name))
        return fds

    async def start_with_one_descriptor_left() -> pytest.ExceptionInfo[OSError]:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        highest = max(int(name) for name in os.listdir("/proc/self/fd"))
        fillers: list[int] = []
        resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 16, hard))
        try:
            with contextlib.suppress(OSError):
                while True:
                    fillers.append(os.open(os.devnull, os.O_RDONLY))
            os.close(fillers.pop())  # room for the log file, none for the pipe's two ends
            with pytest.raises(OSError, match="Too many open files") as caught:
                async with stdio_transport(params, server="faults", log_path=log_path):
                    pass
            return caught
        finally:
            for fd in fillers:
                os.close(fd)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    # The traceback keeps the transport's frame alive, so a leaked file stays open until it is dropped.
    caught = anyio.run(start_with_one_descriptor_left)
    assert log_path.exists()  # it was opened before the pipe failed...
    assert open_on(log_path) == [], caught.traceback  # ...and closed again
