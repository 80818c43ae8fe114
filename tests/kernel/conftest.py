"""A Code Mode kernel started through jupyter_client from a kernelspec installed into a temp prefix."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_session import Kernel, start_kernel

from codemode_kernel.kernel.app import install_kernel_spec


@pytest.fixture(scope="session")
def jupyter_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    prefix = tmp_path_factory.mktemp("prefix")
    install_kernel_spec(prefix=str(prefix))
    return prefix / "share" / "jupyter"


@pytest.fixture(scope="module")
def kernel(jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        k = start_kernel(jupyter_path, tmp_path_factory.mktemp("notebook"), monkeypatch)
    try:
        yield k
    finally:
        k.client.stop_channels()
        k.manager.shutdown_kernel(now=False)


@pytest.fixture(scope="session")
def message_mode_jupyter_path(jupyter_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the installed kernelspec with ``"interrupt_mode": "message"``, under its own Jupyter path.

    jupyter_client then interrupts with an ``interrupt_request`` on the control channel instead of SIGINT,
    as frontends do for kernels they cannot signal (remote ones, Windows).
    """
    path = tmp_path_factory.mktemp("message-mode") / "share" / "jupyter"
    spec_dir = path / "kernels" / "codemode"
    shutil.copytree(jupyter_path / "kernels" / "codemode", spec_dir)
    spec = json.loads((spec_dir / "kernel.json").read_text())
    (spec_dir / "kernel.json").write_text(json.dumps({**spec, "interrupt_mode": "message"}, indent=1))
    return path
