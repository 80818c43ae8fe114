"""CodeModeKernel: ipykernel's IPython kernel with every MCP tool in the namespace and the magics."""

from __future__ import annotations

from typing import Any

from ipykernel.ipkernel import IPythonKernel

from .extension import attach

__all__ = ["CodeModeKernel"]


class CodeModeKernel(IPythonKernel):
    """The Code Mode kernel: Python, plus the configured MCP tools as typed functions and ``%%codemode``."""

    implementation = "codemode"
    implementation_version = "0.1.0"
    banner = (
        "Code Mode (Python 3): every MCP tool is a typed Python function (`tools`);\n"
        "`%%codemode` runs a cell in the isolated executor; `%codemode status` shows the servers.\n"
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]
        self.codemode_tools = attach(self.shell, close_at_exit=False)

    def do_shutdown(self, restart: bool) -> dict[str, Any]:  # type: ignore[override]
        """Stop the executor's workers and the MCP servers, then shut down as ipykernel does."""
        self.codemode_tools.close()
        reply: dict[str, Any] = super().do_shutdown(restart)  # type: ignore[no-untyped-call]
        return reply
