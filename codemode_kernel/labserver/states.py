"""Finding a kernel's state file (kernel/state_file.py) from its id, and remembering the last one read.

A kernel id from a URL is checked against the shape jupyter_server gives ids (five groups of letters and
digits joined by ``-``, as a UUID) before it goes near a path: nothing like ``../`` reaches the file system.
While a kernel restarts its state file is gone for a moment; the last one read says which workspace it
uses, so its artifacts and history can still be listed.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..kernel.state_file import STATE_VERSION, state_file_name

__all__ = ["KernelStates", "valid_kernel_id"]

_KERNEL_ID = re.compile(r"[0-9A-Za-z]{1,32}(?:-[0-9A-Za-z]{1,32}){4}")
_REMEMBERED = 256


def valid_kernel_id(kernel_id: str) -> bool:
    """Whether ``kernel_id`` has the shape of a jupyter_server kernel id (a UUID): never a path."""
    return _KERNEL_ID.fullmatch(kernel_id) is not None


class KernelStates:
    """Reads ``codemode-<kernel id>.json`` from the kernel's runtime directory; keeps the last of each."""

    def __init__(self, directory_of: Callable[[str], Path]) -> None:
        """``directory_of(kernel_id)``: the directory of that kernel's connection file."""
        self._directory_of = directory_of
        self._last: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def current(self, kernel_id: str) -> dict[str, Any] | None:
        """The kernel's state file as it is now; None when there is none (not Code Mode, or starting).

        Raises:
            ValueError: ``kernel_id`` is not a kernel id.
        """
        if not valid_kernel_id(kernel_id):
            raise ValueError(f"not a kernel id: {kernel_id[:80]!r}")
        path = self._directory_of(kernel_id) / state_file_name(kernel_id)
        try:
            state: Any = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, ValueError):  # being replaced (never half-written), or not ours: not a state
            return None
        if not _is_state(state, kernel_id):
            return None
        assert isinstance(state, dict)
        with self._lock:
            self._last[kernel_id] = state
            self._last.move_to_end(kernel_id)
            while len(self._last) > _REMEMBERED:
                self._last.popitem(last=False)
        return state

    def last_known(self, kernel_id: str) -> dict[str, Any] | None:
        """The state file now, else the last one read for this kernel (it is restarting); else None."""
        state = self.current(kernel_id)
        if state is not None:
            return state
        with self._lock:
            return self._last.get(kernel_id)

    def workspace(self, kernel_id: str) -> Path | None:
        """The kernel's workspace (where ``.codemode/`` is), from its state now or last known."""
        state = self.last_known(kernel_id)
        return Path(state["workspace"]) if state is not None else None


def _is_state(state: Any, kernel_id: str) -> bool:
    return (
        isinstance(state, dict)
        and state.get("version") == STATE_VERSION
        and state.get("kernel_id") == kernel_id
        and isinstance(state.get("workspace"), str)
        and Path(state["workspace"]).is_absolute()
    )
