"""Say so when a program touches a hidden path: ``PermissionError: ... the path is hidden from programs``.

The mount layer is what keeps a hidden path's content away: each is covered by an empty file or directory
that nobody may open (mode 000, and the sandbox holds no capability that would override it). The kernel
can only answer ``EACCES`` ("Permission denied"), which looks like an ordinary permission problem that a
model might try to work around. So, once the covers are in place, ``open``, ``os.open``, ``os.listdir``
and ``os.scandir`` are wrapped: when one fails on a cover (the path, or the nearest ancestor that can be
examined, lies on the covers' file system), the error says the path is hidden from programs.

Only the message changes, and only after the system call failed: nothing here decides what is hidden, and a
program that restores the original functions still gets nothing but the bare ``EACCES``.
"""

from __future__ import annotations

import builtins
import errno
import functools
import io
import os
from collections.abc import Callable
from typing import Any

__all__ = ["HIDDEN_MESSAGE", "explain_hidden_paths"]

HIDDEN_MESSAGE = "Permission denied: the path is hidden from programs"
_DENIED = (errno.EACCES, errno.EPERM, errno.EROFS)


def explain_hidden_paths(cover_device: int) -> None:
    """From now on, failures of this process's opens and listings on a cover say the path is hidden.

    ``cover_device`` is the ``st_dev`` of the file system the covers were bound from.
    """

    def on_cover(path: Any, dir_fd: int | None) -> bool:
        if isinstance(path, int):
            return False
        current = os.fspath(path)
        while True:
            try:
                return os.stat(current, dir_fd=dir_fd).st_dev == cover_device
            except PermissionError:  # inside a covered directory: look at the directory
                parent = os.path.dirname(current) or type(current)(".")
                if parent == current:
                    return False
                current = parent
            except (OSError, ValueError):
                return False

    def explained(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return function(*args, **kwargs)
            except OSError as exc:
                path = args[0] if args else kwargs.get("path", kwargs.get("file", "."))
                if exc.errno in _DENIED and on_cover(path, kwargs.get("dir_fd")):
                    raise PermissionError(errno.EACCES, HIDDEN_MESSAGE, os.fspath(path)) from None
                raise

        return wrapper

    builtins.open = io.open = explained(builtins.open)
    os.open = explained(os.open)
    os.listdir = explained(os.listdir)
    os.scandir = explained(os.scandir)
