"""%%codemode --replay, %codemode history and %codemode reload, through a real kernel."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_session import Kernel, kernel_in

from codemode_kernel.views.display import TRACE_MIME

WRITER = (
    "%%codemode\n"
    "write_file(path='log.txt', content='written by the program')\n"
    "r = get_weather(city='Oslo', unit='celsius')\n"
    "print('temperature', r.temperature)\n"
    "r.temperature"
)


@pytest.fixture(scope="module")
def notebook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("notebook")


@pytest.fixture(scope="module")
def replay_kernel(jupyter_path: Path, notebook: Path) -> Iterator[Kernel]:
    """A kernel in ``notebook`` for the replay tests, which only add runs of their own to its record."""
    with kernel_in(jupyter_path, notebook, {}) as k:
        yield k


@pytest.fixture()
def fresh_kernel(jupyter_path: Path, tmp_path: Path) -> Iterator[Kernel]:
    """A kernel of its own, in an empty notebook directory (for tests that count what it has run or
    change its config)."""
    with kernel_in(jupyter_path, tmp_path, {}) as k:
        yield k


def test_replay_answers_from_the_record_without_side_effects(replay_kernel: Kernel, notebook: Path) -> None:
    first = replay_kernel.run(WRITER, answers=["y"])  # write_file is destructive: the kernel asks first
    assert first.status == "ok", first.content
    assert len(first.questions) == 1 and "workspace/write_file(path=" in first.questions[0]
    assert (notebook / "log.txt").read_text() == "written by the program"
    (notebook / "log.txt").unlink()

    replayed = replay_kernel.run(WRITER.replace("%%codemode", "%%codemode --replay"))
    assert replayed.status == "ok", replayed.content
    assert replayed.questions == []  # nothing is sent, so nothing is asked
    assert replayed.stream() == "temperature 6.1\n"  # the program ran again, on recorded results
    assert replayed.data()[0].startswith("codemode: ok, 2 tool calls (replayed from the record")
    assert replayed.data(TRACE_MIME)[0]["replayed"] is True
    assert not (notebook / "log.txt").exists(), "a replay must not call the server (no side effects)"


def test_replay_of_a_changed_program_says_where_it_diverged(replay_kernel: Kernel) -> None:
    code = "%%codemode\nget_weather(city='Oslo', unit='celsius').temperature"
    assert replay_kernel.run(code).status == "ok"
    # Without a frontend cell id the cell is known by its code: same code, then a changed one.
    assert replay_kernel.run(code.replace("%%codemode", "%%codemode --replay")).status == "ok"
    missing = replay_kernel.run("%%codemode --replay\nget_weather(city='Lima', unit='celsius')")
    assert missing.status == "error"
    assert "has not run in this kernel yet" in missing.content["evalue"]


def test_history_lists_executions_and_direct_calls(fresh_kernel: Kernel) -> None:
    fresh_kernel.run("%%codemode\nget_weather(city='Oslo', unit='celsius')\n'done'")
    fresh_kernel.run("%%codemode\n1 / 0")
    fresh_kernel.run("get_city()")
    reply = fresh_kernel.run("%codemode history")
    assert reply.status == "ok", reply.content
    assert reply.data() == [
        "codemode history: 2 executions, 1 direct tool call\n"
        "  #1 ok, 1 tool call: get_weather(city='Oslo', unit='celsius')\n"
        "  #2 error, 0 tool calls: 1 / 0\n"
        "      line 1: ZeroDivisionError: division by zero\n"
        "direct tool calls:\n"
        "  get_city() ok"
    ]
    html = reply.data("text/html")[0]
    assert html.count('class="codemode-run"') == 2 and "get_weather" in html
    assert fresh_kernel.run("%codemode history 1").data()[0].splitlines()[1].startswith("  #2 error")


def test_reload_switches_to_another_config(fresh_kernel: Kernel, tmp_path: Path) -> None:
    config = tmp_path / "other" / "codemode.json"
    config.parent.mkdir()
    servers = {
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    assert fresh_kernel.run("callable(get_weather)").data() == ["True"]
    reply = fresh_kernel.run(f"%codemode reload --config {config}", timeout=120)
    assert reply.status == "ok", reply.content
    assert "time [stdio]: ready" in reply.stream()
    assert fresh_kernel.run("'get_weather' in dir(), callable(get_current_time)").data() == ["(False, True)"]
    result = fresh_kernel.run("%%codemode\nget_current_time(timezone='UTC').timezone")
    assert result.data()[0] == "codemode: ok, 1 tool call\nvalue: 'UTC'"
    bad = fresh_kernel.run("%codemode reload --config nowhere.json")
    assert bad.status == "error" and "no file nowhere.json" in bad.content["evalue"]
