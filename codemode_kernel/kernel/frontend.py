"""What the connected frontend renders: the JupyterLab extension announces its MIME types on a comm.

The live view of a running cell must pick its form before the first output: the extension's trace
renderer (updated in place through ``update_display_data``) or, for every other frontend, the ipywidgets
view. A bundle offering both cannot decide it, because a frontend re-creates a widget view on each update.
So the extension opens a ``codemode.frontend`` comm when it connects to a kernel, with
``{"mime_types": [...]}``; the kernel remembers it until the comm closes (the page closed or reloaded).
"""

from __future__ import annotations

from typing import Any

__all__ = ["FRONTEND_COMM_TARGET", "Frontends", "watched"]

FRONTEND_COMM_TARGET = "codemode.frontend"


class Frontends:
    """The MIME types announced by each open ``codemode.frontend`` comm."""

    def __init__(self) -> None:
        self._announced: dict[str, frozenset[str]] = {}

    def register(self, comm_manager: Any) -> None:
        """Listen for the extension's comm on the kernel's comm manager."""
        comm_manager.register_target(FRONTEND_COMM_TARGET, self._opened)

    def renders(self, mime_type: str) -> bool:
        """True when a connected frontend said it renders ``mime_type``."""
        return any(mime_type in types for types in self._announced.values())

    def _opened(self, comm: Any, message: dict[str, Any]) -> None:
        data = message.get("content", {}).get("data") or {}
        types = data.get("mime_types") if isinstance(data, dict) else None
        if isinstance(types, list):
            self._announced[comm.comm_id] = frozenset(t for t in types if isinstance(t, str))
        comm.on_close(lambda _message: self._announced.pop(comm.comm_id, None))


def watched(shell: Any) -> bool:
    """Whether someone watches this cell run, so that a live view is worth showing.

    That is a kernel (not a terminal IPython) whose request allows input. nbclient, nbval and papermill
    ask with ``allow_stdin: false``: nobody watches, and nbval, which compares each display as first sent,
    would see a live view where the saved notebook holds the record it became.
    """
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return False
    request = kernel.get_parent("shell") or {}
    return bool(request.get("content", {}).get("allow_stdin", False))
