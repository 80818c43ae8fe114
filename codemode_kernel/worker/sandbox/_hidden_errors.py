"""Say so when a program touches a protected path: ``PermissionError: ... the path is hidden from programs``.

The mount layer is what keeps a hidden path's content away: each is covered by an empty file or directory
that nobody may open (mode 000, and the sandbox holds no capability that would override it). The kernel
can only answer ``EACCES`` ("Permission denied"), which looks like an ordinary permission problem that a
model might try to work around. A read-only path answers ``EROFS`` ("Read-only file system"), or
``EXDEV`` to a rename from another mount, and a pinned directory (one that holds a hidden or read-only
path) ``EBUSY`` when it is moved or removed: all look like accidents of the machine. So, once the mounts
are in place, the calls that open, list, create, change, move or remove are wrapped: when one fails on a
cover (the path, or the nearest ancestor that can be examined, lies on the covers' file system), on a
read-only path or on a pinned directory, the error is a PermissionError that says which.

Only the message changes, and only after the system call failed: nothing here decides what is protected,
and a program that restores the original functions still gets nothing but the bare error.
"""

from __future__ import annotations

import builtins
import errno
import functools
import io
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["HIDDEN_MESSAGE", "PINNED_MESSAGE", "READ_ONLY_MESSAGE", "explain_protected_paths"]

HIDDEN_MESSAGE = "Permission denied: the path is hidden from programs"
READ_ONLY_MESSAGE = "Permission denied: the path is read-only to programs (what runs outside the sandbox)"
PINNED_MESSAGE = (
    "Permission denied: the path cannot be moved or removed: it holds a path that is hidden from, or "
    "read-only to, programs"
)
_DENIED = (errno.EACCES, errno.EPERM, errno.EROFS, errno.EBUSY, errno.EXDEV)
_DIR_FDS = ("dir_fd", "src_dir_fd", "dst_dir_fd")

# The calls that change the file system, and which of their arguments are paths.
_CHANGES: dict[str, tuple[int, ...]] = {
    "mkdir": (0,),
    "rmdir": (0,),
    "unlink": (0,),
    "remove": (0,),
    "truncate": (0,),
    "rename": (0, 1),
    "replace": (0, 1),
    "link": (0, 1),
    "symlink": (1,),
}


def explain_protected_paths(
    cover_device: int, *, read_only: Iterable[Path] = (), pinned: Iterable[Path] = ()
) -> None:
    """From now on, this process's failures on a protected path say why.

    ``cover_device`` is the ``st_dev`` of the file system the covers were bound from; ``read_only`` and
    ``pinned`` are the paths the mount layer bound read-only and onto themselves.
    """
    fixed = tuple(read_only)
    immovable = frozenset(pinned)

    def on_cover(path: Any, dir_fd: int | None) -> bool:
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

    def where(path: Any) -> Path | None:
        try:
            return Path(os.path.realpath(os.fsdecode(path)))
        except (OSError, ValueError):
            return None

    def reason(exc: OSError, paths: list[Any], dir_fd: int | None) -> tuple[str, Any] | None:
        """Why the call failed, and on which of its paths; None when no protection explains it."""
        names = [p for p in paths if not isinstance(p, int)]
        for path in names:
            if on_cover(path, dir_fd):
                return HIDDEN_MESSAGE, path
        if dir_fd is not None:
            return None
        for path in names:
            found = where(path)
            if found is None:
                continue
            if any(found == kept or kept in found.parents for kept in fixed):
                return READ_ONLY_MESSAGE, path
            if exc.errno == errno.EBUSY and found in immovable:
                return PINNED_MESSAGE, path
        return None

    def explained(function: Callable[..., Any], positions: tuple[int, ...]) -> Callable[..., Any]:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return function(*args, **kwargs)
            except OSError as exc:
                if exc.errno not in _DENIED:
                    raise
                paths = [args[i] for i in positions if i < len(args)]
                if not paths:
                    paths = [kwargs.get("path", kwargs.get("file", kwargs.get("src", ".")))]
                dir_fd = next((kwargs[k] for k in _DIR_FDS if kwargs.get(k) is not None), None)
                found = reason(exc, paths, dir_fd)
                if found is None:
                    raise
                raise PermissionError(errno.EACCES, found[0], os.fspath(found[1])) from None

        return wrapper

    builtins.open = io.open = explained(builtins.open, (0,))
    os.open = explained(os.open, (0,))
    os.listdir = explained(os.listdir, (0,))
    os.scandir = explained(os.scandir, (0,))
    for name, positions in _CHANGES.items():
        setattr(os, name, explained(getattr(os, name), positions))
