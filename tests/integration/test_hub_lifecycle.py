"""Connection lifecycle through the real path: a server hanging at start-up next to healthy ones, a
read-only tool that crashes its server every time, remote servers that go away and come back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import ServerConfig
from codemode_kernel.core.errors import ServerError
from codemode_kernel.executor import Executor
from codemode_kernel.executor.result import format_result_text
from codemode_kernel.hub import DEFAULT_START_WAIT, ToolHub
from codemode_kernel.hub.reconnect import RECONNECT_BACKOFF
from tests.conftest import ROOT, free_port, wait_for_port, wait_until
from tests.conftest import run_cli as codemode

pytestmark = pytest.mark.integration

LIFECYCLE = ROOT / "tests" / "servers" / "lifecycle_server.py"
REMOTE = ROOT / "tests" / "servers" / "remote_server.py"


def lifecycle(*args: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(LIFECYCLE), *args], **extra}


def write_config(directory: Path, servers: dict[str, Any], **top: Any) -> Path:
    path = directory / "codemode.json"
    path.write_text(json.dumps({"mcpServers": servers, **top}))
    return path


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


# -- a server that hangs during initialize ----------------------------------------------------------


def first_call_seconds(config: Path) -> float:
    """Seconds from starting a Toolbox to the answer of the healthy server's echo."""
    started = time.monotonic()
    with Toolbox.from_config(config) as tb:
        assert tb.tools.echo(text="hello") == "hello"
        elapsed = time.monotonic() - started
        if "stuck" in tb.config.servers:
            assert {s.name: s.state for s in tb.status()} == {"good": "ready", "stuck": "connecting"}
    return elapsed


def test_toolbox_tools_of_healthy_servers_work_at_once_beside_a_hung_one(tmp_path: Path) -> None:
    (tmp_path / "alone").mkdir()
    alone = write_config(tmp_path / "alone", {"good": lifecycle()})
    # The hung server keeps the built-in connect timeout (60 s): start must not wait for it.
    both = write_config(
        tmp_path, {"good": lifecycle(), "stuck": lifecycle("--hang-initialize", "--prefix", "stuck_")}
    )
    baseline = first_call_seconds(alone)
    elapsed = first_call_seconds(both)
    # What it may cost: start waits for the hung one as long again as the good one took (5 s at least).
    limit = 2 * baseline + DEFAULT_START_WAIT + 3
    assert elapsed < limit, f"{elapsed:.1f} s beside a hung server, {baseline:.1f} s without it"


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(lifecycle(disabled=True), id="disabled"),
        pytest.param({"command": "no-such-command-codemode-test"}, id="missing-command"),
    ],
)
def test_start_waits_for_healthy_servers_beside_a_disabled_or_broken_entry(
    tmp_path: Path, broken: dict[str, Any]
) -> None:
    # Healthy but slow to start (3 s, as an npx server can be): a disabled entry or a command that fails
    # in milliseconds says nothing about how long these need, so start() must still wait for them.
    servers = {
        "first": lifecycle("--initialize-delay", "3", "--prefix", "first_"),
        "second": lifecycle("--initialize-delay", "3", "--prefix", "second_"),
        "broken": broken,
    }
    with Toolbox.from_config(write_config(tmp_path, servers)) as tb:
        states = {s.name: s.state for s in tb.status()}
        assert states["first"] == "ready" and states["second"] == "ready", tb.status()
        assert states["broken"] == ("disabled" if broken.get("disabled") else "failed")
        assert tb.pending == []
        assert {"first_echo", "second_echo"} <= set(dir(tb.tools))
        assert "second_echo(" in tb.stubs()


def test_a_hung_server_is_reported_naming_it_and_connect_timeout(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "good": lifecycle(),
            "stuck": lifecycle("--hang-initialize", "--prefix", "stuck_", connectTimeout=2),
        },
        defaults={"connectTimeout": 1},  # the server's own value wins
    )
    with Toolbox.from_config(config) as tb:
        began = time.monotonic()
        tb.wait_for_servers()
        waited = time.monotonic() - began
        status = {s.name: s for s in tb.status()}
        assert status["good"].state == "ready"
        assert status["stuck"].state == "failed"
        error = status["stuck"].error or ""
        assert "within 2 s" in error and '"connectTimeout"' in error, error
        with pytest.raises(ServerError, match=r"'stuck'.*connectTimeout"):
            tb.hub.call("stuck", "stuck_echo", {"text": "x"})
    assert waited < 4


def test_the_default_connect_timeout_comes_from_defaults(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {"stuck": lifecycle("--hang-initialize")}, defaults={"connectTimeout": 1.5}
    )
    started = time.monotonic()
    with Toolbox.from_config(config) as tb:
        tb.wait_for_servers()
        (status,) = tb.status()
        assert status.state == "failed" and "within 1.5 s" in (status.error or "")
    assert time.monotonic() - started < 5


def test_a_tool_of_a_slow_server_is_waited_for_by_name(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "good": lifecycle(),
            "slow": lifecycle("--initialize-delay", "8", "--prefix", "slow_"),
            "stuck": lifecycle("--hang-initialize", "--prefix", "stuck_"),
        },
        # start() returns at max(2 s, as long again) after "good" is ready: before "slow" (8 s) unless
        # "good", a script of the standard library, took 4 s to start.
        defaults={"startWait": 2},
    )
    started = time.monotonic()
    with Toolbox.from_config(config) as tb:
        assert tb.hub.start_wait == 2
        assert "echo" in tb.tools
        assert "slow_echo" not in tb.tools  # start did not wait for it, so much slower than "good"
        assert tb.tools.slow_echo(text="late") == "late"  # naming it waits for its server only
        elapsed = time.monotonic() - started
        assert elapsed >= 8  # it did wait for the slow server
    assert elapsed < 30, f"took {elapsed:.1f} s: it waited for the hung server (60 s) too"


def test_the_tools_of_a_slow_server_by_its_name_are_waited_for(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {"good": lifecycle(), "slow": lifecycle("--initialize-delay", "6", "--prefix", "slow_")},
        defaults={"startWait": 1},  # start returns a second or two after "good" is ready, before "slow" is
    )
    with Toolbox.from_config(config) as tb:
        assert tb.pending == ["slow"]
        assert tb.by_server["slow"].slow_echo(text="late") == "late"
        with pytest.raises(KeyError, match=r"'nowhere'.*good, slow"):
            tb.by_server["nowhere"]


def run_seconds(directory: Path, program: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.monotonic()
    result = codemode("run", "--config", "codemode.json", "-", cwd=directory, stdin=program)
    return time.monotonic() - started, result


def test_codemode_run_calling_a_healthy_tool_does_not_wait_for_a_hung_server(tmp_path: Path) -> None:
    (tmp_path / "alone").mkdir()
    write_config(tmp_path / "alone", {"good": lifecycle()})
    write_config(tmp_path, {"good": lifecycle(), "stuck": lifecycle("--hang-initialize", "--prefix", "s_")})
    baseline, _ = run_seconds(tmp_path / "alone", "echo(text='fast')\n")
    elapsed, result = run_seconds(tmp_path, "echo(text='fast')\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "fast" in result.stdout
    # What it may cost: start waits for the hung one as long again as the good one took (5 s at least).
    assert elapsed < 2 * baseline + DEFAULT_START_WAIT + 3, (
        f"codemode run: {elapsed:.1f} s, {baseline:.1f} s without the hung server"
    )


def test_codemode_run_waits_for_the_server_a_program_names(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        {
            "good": lifecycle(),
            "slow": lifecycle("--initialize-delay", "6", "--prefix", "slow_"),
            "stuck": lifecycle("--hang-initialize", "--prefix", "stuck_"),
        },
    )
    elapsed, result = run_seconds(tmp_path, "print(slow_echo(text='made it'))\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "made it" in result.stdout
    assert elapsed < 40, f"codemode run took {elapsed:.1f} s: it waited for the hung server (60 s)"


def test_doctor_waits_and_reports_the_hung_server_with_the_setting_to_raise(tmp_path: Path) -> None:
    servers = {
        "good": lifecycle(),
        "stuck": lifecycle("--hang-initialize", "--prefix", "s_", connectTimeout=2),
    }
    write_config(tmp_path, servers)
    result = codemode("doctor", "--config", "codemode.json", cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert "good [stdio]: ready, 2 tools" in result.stdout
    assert "stuck [stdio]: failed" in result.stdout
    assert "did not finish connecting within 2 s" in result.stdout
    assert '"connectTimeout"' in result.stdout
    assert "unknown key" not in result.stdout


# -- programs run while a server hangs: the wait counts in their timeout ----------------------------


@pytest.fixture(scope="module")
def beside_a_hung_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Executor]:
    """An Executor whose "stuck" server stays connecting for the whole module (connectTimeout 300 s)."""
    directory = tmp_path_factory.mktemp("hung")
    stuck = lifecycle("--hang-initialize", "--prefix", "stuck_", connectTimeout=300)
    config = write_config(directory, {"good": lifecycle(), "stuck": stuck}, defaults={"startWait": 1})
    with Toolbox.from_config(config) as tb, Executor(tb) as ex:
        assert tb.pending == ["stuck"]
        yield ex


# A run beside a hung server ends within its timeout plus this, far below the server's 60 s connect timeout
# it would otherwise wait for; the margin covers a worker's start and end on two loaded cores (a CI run with
# other work beside it once took 2.8 s over).
MARGIN = 4.0


def timed_run(ex: Executor, program: str, **options: Any) -> tuple[float, Any]:
    started = time.monotonic()
    result = ex.run(program, **options)
    return time.monotonic() - started, result


def test_a_name_nothing_defines_ends_within_the_timeout_naming_the_servers_still_connecting(
    beside_a_hung_server: Executor,
) -> None:
    elapsed, result = timed_run(beside_a_hung_server, "print(echo(text='x'))\nprint(no_such_name)", timeout=5)
    assert result.status == "error", result
    assert result.error["type"] == "NameError"
    note = "name 'no_such_name' is not defined (servers still connecting: stuck)"
    assert result.error["message"] == note
    assert note in format_result_text(result)  # what codemode run and %%codemode show
    assert result.stdout == "x\n"  # the program did run, with the time left
    assert result.timeout_s == 5
    assert elapsed < 5 + MARGIN, f"took {elapsed:.1f} s with timeout=5"


def test_a_tool_named_through_tools_that_is_not_there_names_the_servers_still_connecting(
    beside_a_hung_server: Executor,
) -> None:
    elapsed, result = timed_run(beside_a_hung_server, "tools.stuck_echo(text='x')", timeout=2)
    assert result.status == "error", result
    assert result.error["message"] == (
        "module 'tools' has no attribute 'stuck_echo' (servers still connecting: stuck)"
    )
    assert elapsed < 2 + MARGIN, f"took {elapsed:.1f} s with timeout=2"


def test_a_program_that_waited_and_then_ran_out_of_time_says_how_long_it_waited(
    beside_a_hung_server: Executor,
) -> None:
    program = "import time\ntime.sleep(30)\nstuck_echo(text='x')"
    elapsed, result = timed_run(beside_a_hung_server, program, timeout=4)
    assert result.status == "timeout", result
    message = result.error["message"]
    assert "within 4 s" in message and "waiting for servers still connecting: stuck" in message, message
    assert elapsed < 4 + MARGIN, f"took {elapsed:.1f} s with timeout=4"


def test_a_session_program_using_its_earlier_globals_runs_at_once(beside_a_hung_server: Executor) -> None:
    ex = beside_a_hung_server
    assert ex.run("rows = [1, 2]\ndef total(xs):\n    return sum(xs)", session="waits").ok
    assert ex.run("from json import *", session="waits").ok
    for later, printed in (("print(total(rows))", "3\n"), ("print(dumps(rows))", "[1, 2]\n")):
        elapsed, result = timed_run(ex, later, session="waits", timeout=20)
        assert result.status == "ok", result
        assert result.stdout == printed
        assert elapsed < 4, f"{later!r} waited {elapsed:.1f} s for the hung server"


def test_a_program_with_a_star_import_runs_at_once(beside_a_hung_server: Executor) -> None:
    elapsed, result = timed_run(beside_a_hung_server, "from json import *\nprint(dumps([1]))", timeout=20)
    assert result.status == "ok", result
    assert result.stdout == "[1]\n"
    assert elapsed < 4, f"waited {elapsed:.1f} s for the hung server"


# -- a read-only tool that crashes its server every time --------------------------------------------


def test_a_read_only_call_that_crashes_the_restarted_server_again_says_so(tmp_path: Path) -> None:
    config = ServerConfig(name="fragile", command=sys.executable, args=[str(LIFECYCLE)])
    with ToolHub([config], state_dir=tmp_path / ".codemode") as hub:
        with pytest.raises(ServerError) as info:
            hub.call("fragile", "crash")
        message = str(info.value)
        log_path = hub.status()[0].log_path
        assert log_path is not None
        assert "'fragile'" in message and "again" in message and "crash" in message, message
        assert log_path in message, message
        assert "Connection closed" not in message, message
        # the server's stderr reaches its log on a thread of its own, maybe a moment after the error
        log = wait_until(Path(log_path).read_text, lambda text: text.count("crashing on purpose") >= 2)
        crashes = log.count("crashing on purpose")
        assert crashes == 2, "the read-only call was not sent again after the first crash"
        assert text_of(hub.call("fragile", "echo", {"text": "back"})) == "back"  # restarted once more
        assert hub.status()[0].state == "ready"


# -- remote servers that go away and come back -----------------------------------------------------


class RemoteServer:
    """tests/servers/remote_server.py on a fixed port, which can be killed and started again."""

    def __init__(self, transport: str) -> None:
        self.transport = transport
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        path = "/mcp" if transport == "http" else "/sse"
        self.url = f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> None:
        argv = [sys.executable, str(REMOTE), "--transport", self.transport, "--port", str(self.port)]
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        wait_for_port(self.port, self.proc)

    def kill(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGCONT)  # a stopped process dies only once it runs again
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def freeze(self) -> None:
        """Stop the process (SIGSTOP): the port still accepts connections, nothing ever answers."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGCONT)


@pytest.fixture(params=["http", "sse"])
def remote(request: pytest.FixtureRequest) -> Iterator[RemoteServer]:
    server = RemoteServer(request.param)
    server.start()
    yield server
    if server.proc is not None and server.proc.poll() is None:
        server.kill()


def test_a_remote_server_is_reconnected_after_it_went_away(tmp_path: Path, remote: RemoteServer) -> None:
    config = ServerConfig(name="far", transport=remote.transport, url=remote.url)
    with ToolHub([config], state_dir=tmp_path / ".codemode") as hub:
        first = text_of(hub.call("far", "pid"))
        remote.kill()
        with pytest.raises(ServerError) as info:
            hub.call("far", "echo", {"text": "anyone?"})
        failed_at = time.monotonic()
        message = str(info.value)
        assert "'far'" in message and remote.url in message, message
        assert hub.status()[0].restarts == 0  # a failed attempt is no restart
        remote.start()
        time.sleep(max(0.0, failed_at + RECONNECT_BACKOFF - time.monotonic()))  # the back-off is a timer
        assert text_of(hub.call("far", "echo", {"text": "back"})) == "back"
        assert text_of(hub.call("far", "pid")) != first
        assert hub.status()[0].state == "ready" and hub.status()[0].restarts == 1


def test_a_remote_server_restarted_while_idle_is_reconnected(tmp_path: Path, remote: RemoteServer) -> None:
    config = ServerConfig(name="far", transport=remote.transport, url=remote.url)
    with ToolHub([config], state_dir=tmp_path / ".codemode") as hub:
        first = text_of(hub.call("far", "pid"))
        remote.kill()
        remote.start()  # the hub never saw it down; the new process knows nothing of the old session
        assert text_of(hub.call("far", "echo", {"text": "still here"})) == "still here"
        assert text_of(hub.call("far", "pid")) != first


def test_calls_to_a_remote_server_that_does_not_answer_end_within_their_timeout(
    tmp_path: Path, remote: RemoteServer
) -> None:
    config = ServerConfig(name="far", transport=remote.transport, url=remote.url)
    with ToolHub([config], state_dir=tmp_path / ".codemode") as hub:
        assert text_of(hub.call("far", "echo", {"text": "hi"})) == "hi"
        remote.kill()
        with pytest.raises(ServerError, match="cannot be reached") as info:
            hub.call("far", "echo", {"text": "anyone?"}, timeout=2)
        failed_at = time.monotonic()
        assert "'far'" in str(info.value) and remote.url in str(info.value), info.value

        # Within the back-off a call fails at once with the last error, and says when it is tried again.
        began = time.monotonic()
        with pytest.raises(ServerError, match=r"tried again in \d") as info:
            hub.call("far", "echo", {"text": "anyone?"}, timeout=2)
        assert time.monotonic() - began < 0.5
        assert "'far'" in str(info.value) and remote.url in str(info.value), info.value

        # Back, but frozen: it accepts the connection and never answers (as a host that hangs would).
        remote.start()
        remote.freeze()
        time.sleep(max(0.0, failed_at + RECONNECT_BACKOFF - time.monotonic()))  # the back-off is a timer
        began = time.monotonic()
        with pytest.raises(ServerError) as info:
            hub.call("far", "echo", {"text": "anyone?"}, timeout=2)
        elapsed = time.monotonic() - began
        message = str(info.value)
        assert elapsed < 3, f"a call with timeout=2 took {elapsed:.1f} s: {message}"
        assert "'far'" in message and remote.url in message and "2 s" in message, message
        assert hub.status()[0].restarts == 0  # counts connections made again, not attempts

        # The attempt goes on in the background: once the server runs again, calls reach it.
        remote.thaw()
        assert text_of(hub.call("far", "echo", {"text": "back"}, timeout=30)) == "back"
        assert hub.status()[0].state == "ready" and hub.status()[0].restarts == 1
