"""``import my_module`` from the notebook's folder, for cells only, and after everything installed.

The kernel starts with ``python -P`` so that its working directory, which programs may write, is not on its
import path: a ``codemode_kernel/`` or ``httpx.py`` planted there would otherwise run, unsandboxed, in the
process that holds the credentials, at the next start or at the kernel's next lazy import. People still
expect a notebook to import the modules beside it, so this finder serves the working directory:

- last, after the standard library and every installed package: a local module never shadows what the
  kernel (or a library it uses) imports;
- only for an import that a cell asked for, directly or through the modules it imports: somewhere up the
  stack is code running in the notebook's namespace. An optional module the kernel or a library tries on
  its own thread (``try: import brotli``) is not looked for here.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

__all__ = ["NotebookFolderFinder", "install_notebook_imports"]


class NotebookFolderFinder(importlib.abc.MetaPathFinder):
    """Finds top-level modules in the working directory for code running in the notebook's namespace."""

    def __init__(self, namespace: Callable[[], dict[str, Any]]) -> None:
        """``namespace`` returns the notebook's globals (the shell's ``user_ns``, which ``%reset`` keeps)."""
        self._namespace = namespace

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """A spec from the working directory, or None (submodules are found through their package)."""
        if path is not None or not self._asked_by_a_cell():
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, [os.getcwd()])

    def _asked_by_a_cell(self) -> bool:
        namespace = self._namespace()
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_globals is namespace:
                return True
            frame = frame.f_back  # type: ignore[assignment]
        return False


def install_notebook_imports(namespace: Callable[[], dict[str, Any]]) -> NotebookFolderFinder | None:
    """Append the finder to ``sys.meta_path`` when the kernel runs with ``-P``; returns it, or None.

    Without ``-P`` (a kernel started the old way) the working directory is on ``sys.path`` already.
    """
    if not sys.flags.safe_path:
        return None
    finder = NotebookFolderFinder(namespace)
    sys.meta_path.append(finder)
    return finder
