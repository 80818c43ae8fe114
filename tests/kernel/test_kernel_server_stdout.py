"""%codemode status in a real kernel tells about the lines a server wrote to stdout that are not JSON-RPC."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_session import Kernel, configured_kernel

FAULTS = Path(__file__).resolve().parents[1] / "servers" / "stdio_faults_server.py"


@pytest.fixture(scope="module")
def noisy_kernel(jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """A kernel whose only server prints two banner lines to stdout before it speaks MCP."""
    notebook = tmp_path_factory.mktemp("noisy-notebook")
    entry = {"command": sys.executable, "args": [str(FAULTS), "--banner", "2"]}
    (notebook / "noisy.json").write_text(json.dumps({"mcpServers": {"faults": entry}}))
    with configured_kernel(jupyter_path, notebook, notebook / "noisy.json") as k:
        yield k


def test_status_counts_the_lines_on_stdout_that_are_not_json_rpc(noisy_kernel: Kernel) -> None:
    reply = noisy_kernel.run("chatter(lines=3)")
    assert reply.status == "ok", reply.content
    assert reply.stream("stderr") == ""  # no traceback per line, as the SDK's reader printed
    status = noisy_kernel.run("%codemode status").stream()
    assert "faults [stdio]: ready" in status
    assert (
        "    stdout: 5 lines on its stdout were not JSON-RPC and skipped (a server should log to stderr); "
        "the last: 'chatter line 2: not JSON'"
    ) in status
