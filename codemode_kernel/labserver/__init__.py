"""The Code Mode sidebar's server side: a jupyter_server extension under ``/codemode/api/``.

Why a server extension and not (only) a kernel comm: the sidebar must answer while a cell runs, when the
kernel's shell channel is busy and a comm message would wait, and must list artifacts and history while
the kernel restarts. So the kernel writes what only it knows, its servers and tools, into a state file
beside its connection file (kernel/state_file.py), and each run into the workspace's
``.codemode/history/`` (kernel/run_files.py); artifacts are in ``.codemode/artifacts.db`` already. This
extension reads those files, behind Jupyter's own authentication and authorization; actions that change
the kernel (reconnect a server, load an artifact) are ``%codemode`` magics the sidebar runs in the kernel.

Enabled by ``jupyter-config/server-config/codemode_kernel.json``, which the wheel installs into
``etc/jupyter/jupyter_server_config.d``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["_jupyter_server_extension_points", "_load_jupyter_server_extension"]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Where jupyter_server finds the extension (this module)."""
    return [{"module": "codemode_kernel.labserver"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Add the handlers to the server's web application."""
    from .handlers import setup_handlers

    setup_handlers(serverapp)
    serverapp.log.info("codemode_kernel.labserver: the Code Mode sidebar's API is at /codemode/api/")
