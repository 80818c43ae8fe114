"""The configuration used when no file is found: the demo servers that ship inside codemode-kernel.

They make a fresh install useful at once (weather, files of the workspace, a SQLite database) and start
with the same interpreter as the kernel, so they need nothing installed beyond this package. ``-P`` keeps
the working directory (a workspace that programs write) off their import path.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .models import CodeModeSettings, Config, Defaults, ServerConfig

__all__ = ["default_config"]


def default_config(workspace: Path) -> Config:
    """Build the demo config: the weather, workspace (rooted at ``workspace``) and sqlite servers.

    Code mode is on here (with the default settings), since showing it is the point of the demo; in a file,
    code mode is on only where ``defaults.codeMode`` or a model's ``codeMode`` says so.
    """
    workspace = workspace.resolve()

    def demo(name: str, *extra: str) -> ServerConfig:
        return ServerConfig(
            name=name,
            transport="stdio",
            command=sys.executable,
            args=["-P", "-m", f"codemode_kernel.servers.{name}", *extra],
        )

    servers = [demo("weather"), demo("workspace", "--root", str(workspace)), demo("sqlite")]
    return Config(
        servers={server.name: server for server in servers},
        defaults=Defaults(code_mode=CodeModeSettings()),
        workspace=workspace,
        origin="default",
    )
