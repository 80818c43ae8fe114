"""CodeModeKernel: ipykernel's IPython kernel with every MCP tool in the namespace and the magics."""

from __future__ import annotations

from typing import Any

from ipykernel.ipkernel import IPythonKernel

from .._version import __version__
from .extension import attach
from .state_file import KernelStateFile

__all__ = ["CodeModeKernel"]


class CodeModeKernel(IPythonKernel):
    """The Code Mode kernel: Python, plus the configured MCP tools as typed functions and ``%%codemode``."""

    implementation = "codemode"
    implementation_version = __version__
    banner = (
        "Code Mode (Python 3): every MCP tool is a typed Python function (`tools`);\n"
        "`%%codemode` runs a cell in the isolated executor; `%codemode status` shows the servers.\n"
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]
        self.codemode_tools = attach(self.shell, close_at_exit=False)
        self.codemode_state = _state_file(self)

    def do_complete(self, code: str, cursor_pos: int) -> dict[str, Any]:  # type: ignore[override]
        """Complete, with the tools in the namespace even before the first cell has run."""
        self.codemode_tools.place()
        reply: dict[str, Any] = super().do_complete(code, cursor_pos)  # type: ignore[no-untyped-call]
        return reply

    def do_inspect(  # type: ignore[override]
        self, code: str, cursor_pos: int, detail_level: int = 0, omit_sections: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        """Inspect (``tool?``), with the tools in the namespace even before the first cell has run."""
        self.codemode_tools.place()
        reply: dict[str, Any] = super().do_inspect(code, cursor_pos, detail_level, omit_sections)  # type: ignore[no-untyped-call]
        return reply

    def do_shutdown(self, restart: bool) -> dict[str, Any]:  # type: ignore[override]
        """Stop the executor's workers and the MCP servers, then shut down as ipykernel does."""
        if self.codemode_state is not None:
            self.codemode_state.close()
        self.codemode_tools.close()
        reply: dict[str, Any] = super().do_shutdown(restart)  # type: ignore[no-untyped-call]
        return reply


def _state_file(kernel: CodeModeKernel) -> KernelStateFile | None:
    """Start the state file beside the connection file (state_file.py says why); None without one."""
    connection_file = getattr(kernel.parent, "abs_connection_file", None)
    if not connection_file:
        return None
    tools = kernel.codemode_tools
    state = KernelStateFile(tools, connection_file)
    tools.kernel_id = state.kernel_id
    tools.on_change.append(state.notify)
    try:
        state.start()
    except OSError as exc:  # an unwritable runtime directory costs the sidebar, never the kernel
        kernel.log.warning("codemode: no state file for the sidebar: %s", exc)
    return state
