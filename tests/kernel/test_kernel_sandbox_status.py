"""``%codemode status`` in a real kernel shows the protections the kernel's workers apply."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_session import Kernel, configured_kernel

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
    with configured_kernel(jupyter_path, notebook, notebook / "sandboxed.json") as k:
        yield k


def test_status_shows_the_protections_of_the_kernels_workers(kernel: Kernel, notebook: Path) -> None:
    ran = kernel.run("%%codemode\n1")  # waits for the tools; its protections are those of a real run
    assert ran.status == "ok", ran.content
    status = kernel.run("%codemode status").stream()
    sandbox = status[status.index("sandbox: ") :]
    assert "max_processes:cgroup" not in sandbox and "pid_namespace" in sandbox, sandbox
    assert "\n  off max_processes: no limit set by the policy\n" in sandbox, sandbox
    (creatable,) = [line for line in sandbox.splitlines() if "could be created in" in line]
    assert f"could be created in {notebook}, which programs may write: " in creatable
    assert "token.txt" in creatable.split(": ", 2)[-1].split(", "), creatable


def test_status_and_doctor_show_the_same_sandbox(kernel: Kernel, notebook: Path) -> None:
    # Both format one report, so a layer the settings turned off reads "off" in both, never "missing".
    status = kernel.run("%codemode status").stream()
    env = {k: v for k, v in os.environ.items() if k != "CODEMODE_CONFIG"}
    # -P as the kernel has it (and as the `codemode` script has it in effect): `python -m` alone would put
    # the notebook's folder on doctor's own import path, which its sandbox rightly reports as a gap.
    doctor = subprocess.run(
        [sys.executable, "-P", "-m", "codemode_kernel.cli", "doctor", "--config", "sandboxed.json"],
        cwd=notebook,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr

    def layers(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith(("  off ", "  MISSING "))]

    assert layers(status) == layers(doctor.stdout), (status, doctor.stdout)
    assert "  off max_processes: no limit set by the policy" in layers(status), status
    # The whole block too: the layers in force and the warnings, word for word.
    in_status = status[status.index("\nsandbox: ") + len("\nsandbox: ") :]
    in_doctor = doctor.stdout.split("\ncode-mode sandbox: ", 1)[1].rsplit("\nno problems found", 1)[0]
    assert in_status.rstrip("\n") == in_doctor, (status, doctor.stdout)
