"""A kernel whose config has a server that hangs at start-up and one that is slow, beside a healthy one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from kernel_session import Kernel, Reply, configured_kernel

pytestmark = pytest.mark.integration

LIFECYCLE = Path(__file__).resolve().parents[1] / "servers" / "lifecycle_server.py"


def lifecycle(*args: str) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(LIFECYCLE), *args]}


def test_cells_use_healthy_servers_at_once_and_wait_only_for_the_server_they_name(
    jupyter_path: Path, tmp_path: Path
) -> None:
    servers = {
        "good": lifecycle(),
        "slow": lifecycle("--initialize-delay", "12", "--prefix", "slow_"),
        # Keeps the built-in connect timeout, 60 s: no cell here may wait for it.
        "stuck": lifecycle("--hang-initialize", "--prefix", "stuck_"),
    }
    config = tmp_path / "codemode.json"
    # Start-up returns 2 s (or as long again) after "good" is ready: the first cell ends long before the
    # 12 s of "slow", so the second cell still finds it connecting, even on a loaded machine.
    config.write_text(json.dumps({"mcpServers": servers, "defaults": {"startWait": 2}}))
    with configured_kernel(jupyter_path, tmp_path, config, now=True) as kernel:
        first = kernel.run("print(echo(text='at once'))", timeout=50)
        assert first.status == "ok", first.content
        assert first.stream() == "at once\n"
        assert first.elapsed < 30, f"the first cell took {first.elapsed:.1f} s"

        late = kernel.run("print(slow_echo(text='late'))", timeout=50)
        assert late.status == "ok", late.content
        assert late.stream() == "late\n"
        # Said as a status while it waited, cleared once it ended: nothing in the red stderr box.
        assert "codemode: waiting for slow, stuck to finish connecting..." in late.shown_then()
        assert late.data() == []  # the status is gone; the cell printed, it displayed nothing
        assert late.of_type("clear_output") and not late.stream("stderr")

        program = kernel.run("%%codemode\nprint(echo(text='a program'), slow_echo(text='too'))", timeout=50)
        assert program.status == "ok", program.content

        status = kernel.run("%codemode status").stream()
        assert "stuck" in status and "connecting" in status, status


def run_interrupted(kernel: Kernel, code: str, once: str) -> Reply:
    """Run ``code`` and interrupt the kernel as soon as the cell shows ``once`` (its waiting status)."""
    msg_id = kernel.client.execute(code)
    messages: list[dict[str, object]] = []
    interrupted = False
    while True:
        message = kernel.client.get_iopub_msg(timeout=50)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(message)
        content = message["content"]
        said = content.get("text") or content.get("data", {}).get("text/plain", "")
        if message["msg_type"] in ("stream", "display_data") and once in said and not interrupted:
            kernel.manager.interrupt_kernel()
            interrupted = True
        if message["msg_type"] == "status" and content["execution_state"] == "idle":
            break
    assert interrupted, f"the cell never showed {once!r}"
    while (reply := kernel.client.get_shell_msg(timeout=10))["parent_header"].get("msg_id") != msg_id:
        pass
    return Reply(reply["content"]["status"], reply["content"], messages)


def test_an_interrupted_wait_keeps_the_ready_tools_and_tools_magic_waits_for_a_match(
    jupyter_path: Path, tmp_path: Path
) -> None:
    servers = {
        "good": lifecycle(),
        "slow": lifecycle("--initialize-delay", "12", "--prefix", "slow_"),
        "stuck": lifecycle("--hang-initialize", "--prefix", "stuck_"),  # connecting for 60 s
    }
    config = tmp_path / "codemode.json"
    # Start-up returns 2 s (or as long again) after "good" is ready: %codemode tools slow_echo comes long
    # before the 12 s of "slow".
    config.write_text(json.dumps({"mcpServers": servers, "defaults": {"startWait": 2}}))
    with configured_kernel(jupyter_path, tmp_path, config, now=True) as kernel:
        # The first cell: interrupted while it waits for stuck_echo, it still finds echo.
        first = run_interrupted(
            kernel, "print(echo(text='here'))\nstuck_echo(text='x')", "to finish connecting"
        )
        assert first.status == "error" and first.content["ename"] == "NameError", first.content
        assert "stuck_echo" in first.content["evalue"]
        assert first.stream() == "here\n"
        note = "codemode: interrupted; the tools of slow, stuck are not in the namespace yet"
        assert note in first.stream("stderr"), first.stream("stderr")

        everything = kernel.run("%codemode tools").stream()
        assert "echo(text: str)" in everything and "still connecting: slow, stuck" in everything, everything

        found = kernel.run("%codemode tools slow_echo", timeout=50)
        assert "slow_echo(text: str)" in found.stream(), found.stream()  # it waited for slow
        assert "waiting for slow, stuck to finish connecting" in found.stream("stderr")

        missing = run_interrupted(kernel, "%codemode tools no_such_tool", "waiting for stuck")
        assert "no tool matches 'no_such_tool' yet; still connecting: stuck" in missing.stream()
