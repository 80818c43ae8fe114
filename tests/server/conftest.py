"""A real JupyterLab with the Code Mode server extension enabled, and a Code Mode kernel started through it.

The server is the browser tests' isolated one (tests/browser/lab_session.py: temp kernelspec prefix, every
user directory under the test's temp dir). The extension is enabled the way an installed wheel enables it:
the repository's ``jupyter-config/server-config/codemode_kernel.json`` in a ``jupyter_server_config.d``
on the server's ``JUPYTER_CONFIG_PATH``.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

from lab_session import ROOT, Lab, start_lab, stop_lab

SERVER_START_TIMEOUT = 90.0


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab with codemode_kernel.labserver enabled by its shipped config file."""
    base = tmp_path_factory.mktemp("sidebar-lab")
    config_path = base / "config-path" / "jupyter_server_config.d"
    config_path.mkdir(parents=True)
    shutil.copy(ROOT / "jupyter-config" / "server-config" / "codemode_kernel.json", config_path)
    with pytest.MonkeyPatch.context() as monkeypatch:  # start_lab passes the environment on
        monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(config_path.parent))
        server = start_lab(base, SERVER_START_TIMEOUT)
    try:
        yield server
    finally:
        stop_lab(server)
