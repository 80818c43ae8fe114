"""A Code Mode kernel started through jupyter_client from a kernelspec installed into a temp prefix."""

from __future__ import annotations

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
