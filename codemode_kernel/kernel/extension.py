"""Attach Code Mode to an IPython shell: the tools, the magics, the pre-cell hook (once per shell)."""

from __future__ import annotations

import atexit
from pathlib import Path
from typing import Any

from .admin import AdminDefaults
from .agent_magic import AgentMagics
from .frontend import Frontends
from .magics import CodeModeMagics
from .tools import KernelTools

__all__ = ["attach"]


def attach(shell: Any, *, close_at_exit: bool = True, admin: AdminDefaults | None = None) -> KernelTools:
    """Start the shell's tools in the background and register the magics; returns the KernelTools.

    ``admin``: what the Jupyter admin set (CodeModeKernel's traitlets); None in a plain IPython shell.
    Calling it again for the same shell returns the tools already attached.
    """
    existing: KernelTools | None = getattr(shell, "_codemode_tools", None)
    if existing is not None:
        return existing
    tools = KernelTools(shell, Path.cwd(), admin)
    shell._codemode_tools = tools
    tools.start()
    frontends = Frontends()  # which MIME types the frontend's extension renders (the live view's form)
    kernel = getattr(shell, "kernel", None)
    if kernel is not None:
        frontends.register(kernel.comm_manager)
    shell.register_magics(CodeModeMagics(shell, tools, frontends))
    shell.register_magics(AgentMagics(shell, tools, frontends))
    shell.events.register("pre_run_cell", tools.before_cell)
    # A background run's --out is bound between cells, on this thread (background.py says why).
    shell.events.register("pre_execute", lambda: tools.background.bind_ended(shell.user_ns))
    shell.events.register("post_run_cell", tools.after_cell)  # drops notebook tools whose function is gone
    if close_at_exit:
        atexit.register(tools.close)
    return tools
