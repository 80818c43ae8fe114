"""Hostile programs against the real executor: each ends as it must, in time, leaves nothing behind,
and the next execution works. Run as root by the suite, and again as an unprivileged user by
test_hostile_code_as_an_unprivileged_user (which re-runs this module under uid 65534)."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import ExecutionResult, Executor
from tests.unprivileged import CHILD, rerun_unprivileged

pytestmark = pytest.mark.integration

TIMEOUT, GRACE = 1.0, 1.0
SLACK = 3.0  # process start and teardown on a busy 2-core machine
SECRET = "s3cret-value-the-worker-must-not-see"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile")
    path.chmod(0o777)
    servers = {"weather": {"command": sys.executable, "args": ["-m", "codemode_kernel.servers.weather"]}}
    (path / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(path)}))
    (path / "notes.txt").write_text("ordinary project file\n")
    return path


@pytest.fixture(scope="module")
def executor(workspace: Path) -> Iterator[Executor]:
    os.environ["CODEMODE_TEST_SECRET"] = SECRET
    try:
        with Toolbox(load_config(workspace / "codemode.json")) as tb, Executor(tb, grace=GRACE) as ex:
            assert ex.run("1").status == "ok"  # start the worker process now, with the secret set
            yield ex
    finally:
        os.environ.pop("CODEMODE_TEST_SECRET", None)


def worker_processes(executor: Executor) -> list[int]:
    """The pre-started zygote of this executor and every process descended from it, except the workers
    prepared ahead for the next executions (and their own children: they have not run anything yet)."""
    zygote = executor._pool.zygote_pid
    assert zygote is not None
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            ppid = next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:"))
            parents[int(entry.name)] = int(ppid)

    def descendants(root: int) -> set[int]:
        family = {root}
        grew = True
        while grew:
            children = {pid for pid, ppid in parents.items() if ppid in family} - family
            family |= children
            grew = bool(children)
        return family

    ahead = set().union(*(descendants(spare.pid) for spare in executor._pool.spares))
    return sorted(descendants(zygote) - ahead)


def run_and_check(executor: Executor, code: str, *, timeout: float = TIMEOUT) -> ExecutionResult:
    """Run hostile code; then nothing but the zygote may be left, and the next run must work."""
    started = time.monotonic()
    result = executor.run(code, timeout=timeout)
    elapsed = time.monotonic() - started
    assert elapsed < timeout + GRACE + SLACK, f"took {elapsed:.1f} s ({result.status})"
    deadline = time.monotonic() + 5
    while len(worker_processes(executor)) > 1:
        assert time.monotonic() < deadline, f"processes left behind: {worker_processes(executor)}"
        time.sleep(0.05)
    follow_up = executor.run("21 * 2", timeout=10)
    assert follow_up.status == "ok" and follow_up.value == {"kind": "json", "data": 42}, follow_up.error
    return result


def test_sandbox_layers_are_in_force(executor: Executor) -> None:
    protections = executor.run("1").protections
    for layer in ("pid_namespace", "network_namespace", "mount_namespace:hidden_paths", "rlimits"):
        assert layer in protections, protections


def test_busy_loop(executor: Executor) -> None:
    assert run_and_check(executor, "while True:\n    pass").status == "timeout"


def test_sigint_ignored(executor: Executor) -> None:
    code = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
    assert run_and_check(executor, code).status == "timeout"


def test_signals_blocked_around_a_long_sleep(executor: Executor) -> None:
    code = "import signal, time\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})\n"
    code += "time.sleep(1000)"
    assert run_and_check(executor, code).status == "timeout"


def test_fork_bomb(executor: Executor) -> None:
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    assert run_and_check(executor, code).status in ("timeout", "crashed", "error")


def test_setsid_and_double_fork(executor: Executor) -> None:
    code = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(1000)
    os._exit(0)
"escaped?"
"""
    assert run_and_check(executor, code).status == "ok"


def test_daemon_child_left_running(executor: Executor) -> None:
    code = "import os, time\nif os.fork() == 0:\n    time.sleep(1000)\n'parent done'"
    result = run_and_check(executor, code)
    assert result.status == "ok" and result.value == {"kind": "text", "text": "parent done"}


def test_threads_that_never_end(executor: Executor) -> None:
    code = "import threading, time\nthreading.Thread(target=time.sleep, args=(1000,)).start()\n'main done'"
    result = run_and_check(executor, code)
    assert result.status == "ok" and result.value == {"kind": "text", "text": "main done"}


def test_memory_bomb(executor: Executor) -> None:
    # Filling 1 GiB takes about 2 s on a slow machine: give it the time to hit the cap.
    result = run_and_check(
        executor, "chunks = []\nwhile True:\n    chunks.append(bytearray(50_000_000))", timeout=8
    )
    assert result.status in ("error", "crashed")
    if result.status == "error":
        assert result.error is not None and result.error["type"] == "MemoryError"


def test_endless_output_is_cut(executor: Executor) -> None:
    result = run_and_check(executor, 'while True:\n    print("x" * 1000)', timeout=2)
    assert result.status == "timeout" and result.output_truncated
    assert 0 < len(result.stdout) <= executor.max_output_bytes


def test_deep_recursion(executor: Executor) -> None:
    result = run_and_check(executor, "def f(n):\n    return f(n + 1)\nf(0)")
    assert result.status == "error" and result.error is not None
    assert result.error["type"] == "RecursionError" and result.error["line"] == 2


def test_os_exit_mid_run(executor: Executor) -> None:
    result = run_and_check(executor, 'print("partial")\nimport os\nos._exit(7)')
    assert result.status == "crashed" and result.stdout == "partial\n"


def test_shutting_down_the_protocol_channel(executor: Executor) -> None:
    code = """
import os, socket, time
for fd in range(3, 64):
    try:
        socket.socket(fileno=os.dup(fd)).shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
time.sleep(5)
"""
    assert run_and_check(executor, code).status == "crashed"


def test_closing_the_protocol_channel_ends_by_the_deadline(executor: Executor) -> None:
    # A thread blocked reading the socket keeps it open in the kernel after close(): no end-of-file
    # reaches the runner, so the run ends at its deadline (never a hang).
    code = """
import os, time
for fd in range(3, 64):
    try:
        os.close(fd)
    except OSError:
        pass
time.sleep(5)
"""
    assert run_and_check(executor, code).status in ("crashed", "timeout")


def test_writing_garbage_to_the_protocol_channel(executor: Executor) -> None:
    code = """
import os, time
for fd in range(3, 64):
    try:
        os.write(fd, b"\\xff" * 64)
    except OSError:
        pass
time.sleep(5)
"""
    assert run_and_check(executor, code).status == "crashed"


def test_the_kernels_secrets_are_not_in_the_environment(executor: Executor) -> None:
    result = run_and_check(executor, "import os\ndict(os.environ)")
    assert result.status == "ok" and result.value is not None
    assert SECRET not in json.dumps(result.value)
    assert "CODEMODE_TEST_SECRET" not in result.value["data"]


def test_config_files_can_be_neither_read_nor_rewritten(executor: Executor, workspace: Path) -> None:
    original = (workspace / "codemode.json").read_text()
    read = run_and_check(executor, "open('codemode.json').read()")
    assert read.status == "error" or (read.value is not None and "mcpServers" not in json.dumps(read.value))
    run_and_check(executor, "open('codemode.json', 'w').write('{}')")  # may "succeed" into /dev/null
    run_and_check(executor, "import os\nos.replace('notes.txt', 'codemode.json')")
    assert (workspace / "codemode.json").read_text() == original
    state = run_and_check(executor, "import os\nos.listdir('.codemode')")
    assert state.status == "error" or state.value == {"kind": "json", "data": []}
    ordinary = run_and_check(executor, "open('notes.txt').read()")
    assert ordinary.value == {"kind": "text", "text": "ordinary project file\n"}


def test_reading_a_hidden_path_is_a_permission_error_that_says_so(executor: Executor) -> None:
    reads = {
        "open": "open('codemode.json').read()",
        "pathlib": "import pathlib\npathlib.Path('codemode.json').read_bytes()",
        "os.open": "import os\nos.read(os.open('codemode.json', os.O_RDONLY), 100)",
        "listdir": "import os\nos.listdir('.codemode')",
        "inside a hidden dir": "open('.codemode/zygote.stderr.log', 'rb').read()",
        "symlink": "import os\nos.symlink('codemode.json', 'link.json')\nopen('link.json').read()",
    }
    for name, code in reads.items():
        result = run_and_check(executor, code)
        assert result.status == "error" and result.error is not None, (name, result.value)
        assert result.error["type"] == "PermissionError", (name, result.error)
        assert "is hidden from programs" in result.error["message"], (name, result.error["message"])
    shell = run_and_check(
        executor,
        "import subprocess\np = subprocess.run(['cat', 'codemode.json'], capture_output=True)\n"
        "[p.returncode, p.stdout.decode()]",
    )
    assert shell.value is not None and shell.value["data"][0] != 0 and shell.value["data"][1] == ""


def test_no_network(executor: Executor) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=0.5)"
        result = run_and_check(executor, code)
    assert result.status == "error" and result.error is not None
    assert result.error["type"] in ("PermissionError", "OSError", "ConnectionRefusedError", "TimeoutError")


def test_writes_outside_the_workspace(executor: Executor, tmp_path: Path) -> None:
    target = tmp_path / "outside.txt"
    result = run_and_check(executor, f"open({str(target)!r}, 'w').write('x')")
    assert result.status == "error" and not target.exists()
    inside = run_and_check(
        executor, "open('made-by-code.txt', 'w').write('ok')\nopen('made-by-code.txt').read()"
    )
    assert inside.value == {"kind": "text", "text": "ok"}


@pytest.mark.skipif(CHILD, reason="this is the unprivileged re-run")
def test_hostile_code_as_an_unprivileged_user() -> None:
    """The same module again under uid/gid 65534, as a kernel run by an ordinary user would be."""
    completed = rerun_unprivileged(__file__)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert " passed" in completed.stdout and "1 skipped" in completed.stdout  # only this very test skips


def test_a_program_cannot_read_another_runs_temp_files(executor: Executor) -> None:
    """Each run's HOME and TMPDIR are a temp dir of its own: a program running beside another (another
    client's, in serve) finds that directory on disk but none of the files the other wrote there."""
    import threading

    written = threading.Event()
    writer = (
        "import os, time\nopen(os.path.join(os.environ['TMPDIR'], 'secret.txt'), 'w').write('mine')\n"
        "print('written', flush=True)\ntime.sleep(4)\n"
        "open(os.path.join(os.environ['TMPDIR'], 'secret.txt')).read()"
    )
    done: dict[str, ExecutionResult] = {}
    thread = threading.Thread(
        target=lambda: done.update(
            first=executor.run(writer, timeout=20, on_output=lambda _, text: written.set())
        )
    )
    thread.start()
    assert written.wait(20)
    reader = (
        "import glob, os\nroot = os.path.dirname(os.environ['TMPDIR'])\n"
        "[open(p).read() for p in glob.glob(os.path.join(root, 'codemode-run-*', 'secret.txt'))]"
    )
    peek = executor.run(reader, timeout=10)
    thread.join(30)
    assert peek.status == "ok", peek.error
    assert peek.value == {"kind": "json", "data": []}, "another run's temp files are readable"
    assert done["first"].value == {"kind": "text", "text": "mine"}, done["first"].error
