"""Landlock: writes only beneath the writable roots, no TCP, no signals or abstract sockets outside.

Landlock is an allow-list enforced by the kernel for this process and everything it starts, unprivileged
and permanent. The ruleset *handles* every kind of write (write, truncate, create, remove, rename across
directories) everywhere, and *allows* them beneath the workspace, the private temp dir and the extra
writable paths, plus plain writes to the harmless devices (``/dev/null`` ...). Reading stays open:
hiding is the mount layer's job. With the network off it handles TCP bind and connect and allows no
port (Landlock has no UDP rules: the network namespace and seccomp cover that). From ABI 6 it also
scopes signals and abstract unix sockets to the sandbox, so the code cannot signal the kernel or reach
a desktop session's abstract sockets. Each feature is used when the running kernel's ABI has it.
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Iterable
from pathlib import Path

from ._libc import syscall

__all__ = ["abi_version", "restrict"]

_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

_DIR_ONLY = (
    REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM
)
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def abi_version() -> tuple[int, str]:
    """The Landlock ABI version of the running kernel (0 when absent) and, for 0, why."""
    try:
        return syscall("landlock_create_ruleset", None, 0, _CREATE_RULESET_VERSION), ""
    except OSError as exc:
        if exc.errno == errno.ENOSYS:
            return 0, "the kernel has no Landlock (built without it, or no system call table here)"
        if exc.errno == errno.EOPNOTSUPP:
            return 0, "Landlock is built in but not enabled at boot (lsm= kernel parameter)"
        return 0, f"Landlock probe failed: {exc}"


def _write_access(abi: int) -> int:
    access = WRITE_FILE | _DIR_ONLY
    if abi >= 2:
        access |= REFER
    if abi >= 3:
        access |= TRUNCATE
    return access


def restrict(abi: int, writable: Iterable[Path], *, deny_tcp: bool) -> list[str]:
    """Confine this process (and its future children) as described above; returns the parts in force.

    Needs no_new_privs, or CAP_SYS_ADMIN in the current user namespace. A writable path that does not
    exist is skipped: nothing could be written there anyway.
    """
    handled = _write_access(abi)
    attr = _RulesetAttr(handled_access_fs=handled)
    size = 8
    parts = ["landlock:fs_write"]
    if deny_tcp and abi >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        size = 16
        parts.append("landlock:net")
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
        parts.append("landlock:scoped")
    ruleset = syscall(
        "landlock_create_ruleset", ctypes.addressof(attr), size, 0, what="landlock_create_ruleset"
    )
    try:
        for path in writable:
            _allow(ruleset, path, handled)
        for device in _DEVICES:
            _allow(ruleset, Path(device), handled & (WRITE_FILE | TRUNCATE))
        syscall("landlock_restrict_self", ruleset, 0, what="landlock_restrict_self")
    finally:
        os.close(ruleset)
    return parts


def _allow(ruleset: int, path: Path, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        if not os.path.isdir(path):
            access &= ~(_DIR_ONLY | REFER)  # rights about directory entries do not apply to a file
        rule = _PathBeneathAttr(allowed_access=access, parent_fd=fd)
        syscall(
            "landlock_add_rule",
            ruleset,
            _RULE_PATH_BENEATH,
            ctypes.addressof(rule),
            0,
            what=f"landlock rule {path}",
        )
    finally:
        os.close(fd)
