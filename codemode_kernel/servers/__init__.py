"""Demo MCP servers shipped inside the package, so the quickstart works offline.

Each one is a real MCP server written with the SDK and started like any other (``python -m
codemode_kernel.servers.<name>``, stdio by default, ``--transport http`` for Streamable HTTP):

- ``weather``: deterministic demo weather (not real weather), including a slow tool with progress.
- ``workspace``: list, read, write and search files under one root directory.
- ``sqlite``: read-only SQL over a generated sample database, and bar charts as PNG images.

This module only names them; importing it starts nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

from codemode_kernel.core.errors import ConfigError

__all__ = ["DEMO_SERVERS", "demo_server_command"]

DEMO_SERVERS: dict[str, str] = {
    "weather": "codemode_kernel.servers.weather",
    "workspace": "codemode_kernel.servers.workspace",
    "sqlite": "codemode_kernel.servers.sqlite",
}
"""Demo server name → the module that ``python -m`` runs."""


def demo_server_command(name: str, workspace: Path) -> list[str]:
    """Return the command line that starts demo server ``name`` over stdio with this interpreter.

    ``sys.executable`` rather than ``python``: the servers must run in the environment where this package
    is installed, whatever ``python`` means on the user's PATH.

    Args:
        name: One of :data:`DEMO_SERVERS`.
        workspace: The directory the ``workspace`` server is confined to (the others ignore it).

    Raises:
        ConfigError: ``name`` is not a demo server.
    """
    module = DEMO_SERVERS.get(name)
    if module is None:
        raise ConfigError(
            f"there is no demo server named {name!r}",
            fix=f"use one of: {', '.join(DEMO_SERVERS)}",
        )
    command = [sys.executable, "-P", "-m", module]  # -P: the working directory is not on the import path
    if name == "workspace":
        command += ["--root", str(workspace)]
    return command
