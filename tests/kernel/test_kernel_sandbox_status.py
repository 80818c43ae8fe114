"""``%codemode status`` in a real kernel shows the protections the kernel's workers apply."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_session import Kernel, start_kernel

# A process limit turned off, and a hidden path the program could still create: what a simplified
# policy (network and memory only) would get wrong.
SANDBOX = {"maxProcesses": None, "hidden": ["token.txt"]}


@pytest.fixture(scope="module")
def notebook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sandbox-notebook")


@pytest.fixture(scope="module")
def kernel(jupyter_path: Path, notebook: Path) -> Iterator[Kernel]:
    config = {"mcpServers": {}, "defaults": {"codeMode": {"sandbox": SANDBOX}}}
    (notebook / "sandboxed.json").write_text(json.dumps(config))
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("CODEMODE_CONFIG", str(notebook / "sandboxed.json"))
        k = start_kernel(jupyter_path, notebook, monkeypatch)
    try:
        yield k
    finally:
        k.client.stop_channels()
        k.manager.shutdown_kernel(now=False)


def test_status_shows_the_protections_of_the_kernels_workers(kernel: Kernel, notebook: Path) -> None:
    ran = kernel.run("%%codemode\n1")  # waits for the tools; its protections are those of a real run
    assert ran.status == "ok", ran.content
    status = kernel.run("%codemode status").stream()
    sandbox = status[status.index("sandbox: ") :]
    assert "max_processes:cgroup" not in sandbox and "pid_namespace" in sandbox, sandbox
    assert "max_processes (no limit set by the policy)" in sandbox, sandbox
    (creatable,) = [line for line in sandbox.splitlines() if "could be created in" in line]
    assert f"could be created in {notebook}, which programs may write: " in creatable
    assert "token.txt" in creatable.split(": ", 2)[-1].split(", "), creatable
