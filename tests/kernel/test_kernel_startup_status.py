"""The first cells of a notebook while the servers start: a cell that needs no tool runs at once and shows
nothing of the start-up; a cell that needs one shows a status while it waits (a plain display, never the red
stderr box), which is gone once the servers are ready, so the saved output is the cell's own."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from kernel_session import Reply, configured_kernel

pytestmark = pytest.mark.integration

LIFECYCLE = Path(__file__).resolve().parents[1] / "servers" / "lifecycle_server.py"
SLOW_START = 10  # seconds the slow server takes to initialize: the kernel is not ready before


def shown(reply: Reply) -> list[str]:
    """What the cell's output area holds at the end: display and stream texts, clear_output applied."""
    area: list[str] = []
    for message in reply.messages:
        content: dict[str, Any] = message["content"]
        if message["msg_type"] == "clear_output":
            area.clear()
        elif message["msg_type"] == "stream":
            area.append(f"{content['name']}: {content['text']}")
        elif message["msg_type"] in ("display_data", "execute_result"):
            area.append(str(content["data"].get("text/plain")))
    return area


def test_a_cell_without_tools_runs_at_once_and_one_with_tools_shows_a_passing_status(
    jupyter_path: Path, tmp_path: Path
) -> None:
    servers = {
        "good": {"command": sys.executable, "args": [str(LIFECYCLE)]},
        "slow": {
            "command": sys.executable,
            "args": [str(LIFECYCLE), "--initialize-delay", str(SLOW_START), "--prefix", "slow_"],
        },
    }
    config = tmp_path / "codemode.json"
    config.write_text(json.dumps({"mcpServers": servers, "defaults": {"startWait": 60}}))
    with configured_kernel(jupyter_path, tmp_path, config, now=True) as kernel:
        plain = kernel.run('from pathlib import Path\nPath("cities.txt").write_text("Oslo\\n")')
        assert plain.status == "ok", plain.content
        assert shown(plain) == ["5"]  # no start-up note, no stderr
        assert plain.elapsed < SLOW_START / 2, f"a cell that needs no tool waited {plain.elapsed:.1f} s"

        tool = kernel.run("print(slow_echo(text='ready'))", timeout=60)
        assert tool.status == "ok", tool.content
        statuses = [d for d in tool.shown_then() if "codemode:" in str(d)]
        assert statuses == ["codemode: starting the MCP servers..."], tool.messages
        assert shown(tool) == ["stdout: ready\n"]  # the status went away; nothing red was printed
        assert not tool.stream("stderr")

        after = kernel.run("print(echo(text='later'))")
        assert shown(after) == ["stdout: later\n"]


def test_a_late_server_whose_tool_name_is_taken_is_said_once_without_a_traceback(
    jupyter_path: Path, tmp_path: Path
) -> None:
    servers = {
        "first": {"command": sys.executable, "args": [str(LIFECYCLE)]},
        "late": {"command": sys.executable, "args": [str(LIFECYCLE), "--initialize-delay", "3"]},
    }
    config = tmp_path / "codemode.json"
    config.write_text(json.dumps({"mcpServers": servers, "defaults": {"startWait": 0.5}}))
    with configured_kernel(jupyter_path, tmp_path, config, now=True) as kernel:
        assert kernel.run("print(echo(text='early'))").stream() == "early\n"
        said = ""
        deadline = time.monotonic() + 60
        while not said and time.monotonic() < deadline:  # cells until the late server has connected
            reply = kernel.run("1")
            assert reply.status == "ok", reply.content
            said = reply.stream("stderr")
            time.sleep(0.2)  # a person's next cell: the server connects on its own time
        assert "first/echo and late/echo" in said and "Traceback" not in said, said
        assert said.count("codemode:") == 1
        again = kernel.run("print(echo(text='still'))")
        assert again.stream() == "still\n" and not again.stream("stderr")
