"""CodeModeKernel: ipykernel's IPython kernel with every MCP tool in the namespace and the magics.

Its traitlets are what a Jupyter admin sets for every kernel (``c.CodeModeKernel.default_timeout = 60`` in
``codemode_kernel_config.py``; docs/configuration.md); a user's ``codemode.json`` wins over them (admin.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ipykernel.ipkernel import IPythonKernel
from traitlets import Float, TraitError, Unicode, validate
from traitlets.utils.bunch import Bunch

from .._version import __version__
from ..core.limits import DEFAULT_TIMEOUT, TIMEOUT_RANGE, TimeoutValueError, check_timeout
from .admin import AdminDefaults
from .extension import attach
from .notebook_imports import install_notebook_imports
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

    default_timeout = Float(
        DEFAULT_TIMEOUT,
        help=f"""Seconds one execution (a %%codemode cell, an %%agent program) may run when the user's
        config names no timeout (defaults.codeMode.timeout) and the cell asks for none; {TIMEOUT_RANGE}.""",
    ).tag(config=True)

    config_path = Unicode(
        "",
        help="""The Code Mode config (codemode.json) used when the user has none: no CODEMODE_CONFIG, no
        codemode.json, .mcp.json or .vscode/mcp.json in the notebook's directory and no
        ~/.config/codemode/config.json. An absolute path; empty: the built-in demo servers.""",
    ).tag(config=True)

    @validate("default_timeout")
    def _check_default_timeout(self, proposal: Bunch) -> float:
        try:
            return check_timeout(proposal["value"], field="CodeModeKernel.default_timeout")
        except TimeoutValueError as exc:
            raise TraitError(str(exc)) from None

    @validate("config_path")
    def _check_config_path(self, proposal: Bunch) -> str:
        value = str(proposal["value"])
        if value and not Path(value).expanduser().is_absolute():
            raise TraitError(
                f"CodeModeKernel.config_path must be an absolute path (a kernel starts in each notebook's "
                f"directory), not {value!r}"
            )
        return str(Path(value).expanduser()) if value else ""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]
        shell = self.shell
        assert shell is not None  # ipykernel made it in super().__init__
        install_notebook_imports(lambda: shell.user_ns)
        self.codemode_tools = attach(self.shell, close_at_exit=False, admin=self.codemode_admin())
        self.codemode_state = _state_file(self)

    def codemode_admin(self) -> AdminDefaults:
        """The traitlets as the kernel's tools read them (once, when the kernel starts)."""
        return AdminDefaults(
            config_path=Path(self.config_path) if self.config_path else None, timeout=self.default_timeout
        )

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
        """Cancel background runs, stop the executor's workers and the servers; shut down as ipykernel does.

        Each background cell shows its run's record (cancelled, by the kernel restarting or shutting down).
        """
        self.codemode_tools.background.shutdown(
            by="the kernel restarting" if restart else "the kernel shutting down"
        )
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
    tools.background.on_change.append(state.notify)  # a background run started or ended
    try:
        state.start()
    except OSError as exc:  # an unwritable runtime directory costs the sidebar, never the kernel
        kernel.log.warning("codemode: no state file for the sidebar: %s", exc)
    return state
