"""A kernel whose config has a server that hangs at start-up and one that is slow, beside a healthy one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from kernel_session import start_kernel

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
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("CODEMODE_CONFIG", str(config))
        kernel = start_kernel(jupyter_path, tmp_path, monkeypatch)
    try:
        first = kernel.run("print(echo(text='at once'))", timeout=50)
        assert first.status == "ok", first.content
        assert first.stream() == "at once\n"
        assert first.elapsed < 30, f"the first cell took {first.elapsed:.1f} s"

        late = kernel.run("print(slow_echo(text='late'))", timeout=50)
        assert late.status == "ok", late.content
        assert late.stream() == "late\n"
        assert "waiting for slow, stuck to finish connecting" in late.stream("stderr")

        program = kernel.run("%%codemode\nprint(echo(text='a program'), slow_echo(text='too'))", timeout=50)
        assert program.status == "ok", program.content

        status = kernel.run("%codemode status").stream()
        assert "stuck" in status and "connecting" in status, status
    finally:
        kernel.client.stop_channels()
        kernel.manager.shutdown_kernel(now=True)
