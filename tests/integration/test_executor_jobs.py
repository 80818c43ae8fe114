"""Background runs at the executor: start, come back for more, wait for a note, cancel, close.

Real worker processes and a real stdio server that counts its calls in a file, so a test can prove what
reached the server whichever way the run ended.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codemode_kernel import Toolbox
from codemode_kernel.config import load_config
from codemode_kernel.executor import Executor
from codemode_kernel.executor.jobs import JobCursor

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
COUNTING = ROOT / "tests" / "servers" / "counting_server.py"

TICKING = """
import time
for i in range(ticks):
    print("tick", i)
    if i == note_at:
        notify("halfway", i=i)
    time.sleep(step)
{"ticks": ticks}
"""


@pytest.fixture(scope="module")
def calls_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("counted") / "calls.txt"


@pytest.fixture(scope="module")
def executor(tmp_path_factory: pytest.TempPathFactory, calls_log: Path) -> Iterator[Executor]:
    path = tmp_path_factory.mktemp("ws")
    servers = {"counting": {"command": sys.executable, "args": [str(COUNTING), "--log", str(calls_log)]}}
    (path / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(path)}))
    with Toolbox(load_config(path / "codemode.json")) as tb, Executor(tb, grace=1.0) as ex:
        yield ex


def counted(log: Path, label: str) -> int:
    return log.read_text().splitlines().count(label) if log.exists() else 0


def test_a_job_returns_at_once_and_its_updates_add_up_to_the_foreground_record(executor: Executor) -> None:
    inputs = {"ticks": 6, "note_at": 99, "step": 0.3}
    began = time.monotonic()
    job = executor.start(TICKING, inputs=inputs, timeout=30)
    assert time.monotonic() - began < 0.5, "start() must not wait for the program"
    assert job in executor.jobs
    seen, cursor = "", JobCursor()
    while not job.done:
        update = job.updates(cursor)
        seen += update.stdout
        cursor = update.cursor
        job.wait(0.2)
    last = job.updates(cursor)
    seen += last.stdout
    assert last.state == "ended" and last.result is not None
    background = last.result
    foreground = executor.run(TICKING, inputs=inputs, timeout=30)
    assert background.status == foreground.status == "ok"
    assert seen == background.stdout == foreground.stdout == "".join(f"tick {i}\n" for i in range(6))
    assert background.value == foreground.value
    assert job not in executor.jobs


def test_a_wait_ends_at_the_programs_note_with_what_it_printed_before(executor: Executor) -> None:
    job = executor.start(TICKING, inputs={"ticks": 40, "note_at": 2, "step": 0.25}, timeout=30)
    began = time.monotonic()
    assert asyncio.run(job.wait_async(20, until_note=True)) is None  # woken by the note, not the end
    assert time.monotonic() - began < 10
    update = job.updates()
    assert update.state == "running"
    assert [(n["message"], n["data"]) for n in update.notes] == [("halfway", {"i": 2})]
    assert update.stdout.startswith("tick 0\ntick 1\ntick 2\n")  # flushed before the note was sent
    job.cancel("the test")
    result = job.wait(15)
    assert result is not None and result.status == "cancelled"
    assert result.notes == update.notes


def test_output_beyond_an_update_s_size_is_kept_for_the_next(executor: Executor) -> None:
    job = executor.start("print('x' * 5000)\nprint('y' * 10)", timeout=30)
    assert job.wait(20) is not None
    first = job.updates(max_chars=3000)
    assert len(first.stdout) == 3000 and first.output_left == 2012
    assert first.result is None, "an update that left output out is not the end yet"
    second = job.updates(first.cursor, max_chars=3000)
    assert first.stdout + second.stdout == "x" * 5000 + "\n" + "y" * 10 + "\n"
    assert second.state == "ended" and second.result is not None and second.output_left == 0


def test_cancel_stops_a_run_inside_a_slow_call_within_the_grace_and_records_every_call(
    executor: Executor, calls_log: Path
) -> None:
    code = """
count(label="before-cancel")
try:
    slow_count(label="never-counted", seconds=60)
finally:
    print("cleaned up")
"""
    job = executor.start(code, timeout=120)
    deadline = time.monotonic() + 20
    while not any(c["tool"] == "slow_count" for c in job.updates().calls):
        assert time.monotonic() < deadline, "the slow call never started"
        job.wait(0.05)
    asked = time.monotonic()
    job.cancel("the test")
    result = job.wait(executor.grace + 10)
    assert result is not None, "cancel did not end the run"
    assert time.monotonic() - asked < executor.grace + 3
    assert result.status == "cancelled" and result.exit_code == 7
    assert result.error is not None and "stopped by the test" in result.error["message"]
    assert "cleaned up" in result.stdout
    assert [(c["tool"], c["status"]) for c in result.tool_calls] == [
        ("count", "ok"),
        ("slow_count", "cancelled"),
    ]
    assert counted(calls_log, "before-cancel") == 1
    assert counted(calls_log, "never-counted") == 0


def test_a_job_cancelled_while_waiting_for_a_busy_session_says_so(executor: Executor) -> None:
    holder = executor.start("import time\nprint('holding')\ntime.sleep(30)", session="busy", timeout=60)
    deadline = time.monotonic() + 20
    while "holding" not in holder.updates().stdout:
        assert time.monotonic() < deadline, "the session's first run never started"
        holder.wait(0.05)
    waiting = executor.start("print('never')", session="busy", timeout=60)
    assert waiting.wait(0.5) is None, "the second run of a session waits for the first"
    waiting.cancel("the test")
    holder.cancel("the test")
    for job in (holder, waiting):
        result = job.wait(15)
        assert result is not None and result.status == "cancelled", result
    assert waiting.result is not None and "never" not in waiting.result.stdout


def test_closing_the_executor_cancels_its_jobs_and_keeps_their_results(
    calls_log: Path, tmp_path: Path
) -> None:
    servers = {"counting": {"command": sys.executable, "args": [str(COUNTING), "--log", str(calls_log)]}}
    (tmp_path / "codemode.json").write_text(json.dumps({"mcpServers": servers, "workspace": str(tmp_path)}))
    with Toolbox(load_config(tmp_path / "codemode.json")) as tb:
        with Executor(tb, grace=1.0) as ex:
            job = ex.start("count(label='closing')\nimport time\ntime.sleep(60)", timeout=120)
            deadline = time.monotonic() + 20
            while not job.updates().calls or job.updates().calls[-1]["status"] == "running":
                assert time.monotonic() < deadline
                job.wait(0.05)
        result = job.result
    assert result is not None and result.status == "cancelled"
    assert result.error is not None and "the executor closing" in result.error["message"]
    assert [c["status"] for c in result.tool_calls] == ["ok"]


def test_notes_are_bounded_and_bad_ones_refused_in_the_program(executor: Executor) -> None:
    code = """
for i in range(1200):
    notify("n", i=i)
refused = []
for bad in (lambda: notify("x" * 2001), lambda: notify("ok", blob=object()), lambda: notify(42)):
    try:
        bad()
    except (TypeError, ValueError) as exc:
        refused.append(str(exc)[:40])
refused
"""
    result = executor.run(code, timeout=60)
    assert result.status == "ok", result.error
    assert len(result.notes) == 1000 and result.notes_dropped == 200
    assert [n["data"]["i"] for n in result.notes[:3]] == [0, 1, 2]
    assert result.value is not None and [text[:8] for text in result.value["data"]] == ["notify()"] * 3
