"""The few Linux system calls the sandbox needs that Python 3.11's ``os`` module does not offer.

``os.unshare`` and ``os.setns`` arrived in 3.12, ``mount`` and ``prctl`` never did, and Landlock and
seccomp have no libc wrappers at all: everything goes through ``ctypes`` and the C library's generic
``syscall()``. Each wrapper raises ``OSError`` with the real errno, so a failing layer says why.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Final

__all__ = [
    "ARCH",
    "CLONE_NEWNET",
    "CLONE_NEWNS",
    "CLONE_NEWPID",
    "CLONE_NEWUSER",
    "MS_BIND",
    "MS_NODEV",
    "MS_NOEXEC",
    "MS_NOSUID",
    "MS_PRIVATE",
    "MS_RDONLY",
    "MS_REC",
    "MS_REMOUNT",
    "SyscallTable",
    "mount",
    "prctl",
    "syscall",
    "unshare",
]

CLONE_NEWNS: Final = 0x00020000
CLONE_NEWUSER: Final = 0x10000000
CLONE_NEWPID: Final = 0x20000000
CLONE_NEWNET: Final = 0x40000000

MS_RDONLY: Final = 0x1
MS_NOSUID: Final = 0x2
MS_NODEV: Final = 0x4
MS_NOEXEC: Final = 0x8
MS_REMOUNT: Final = 0x20
MS_BIND: Final = 0x1000
MS_REC: Final = 0x4000
MS_PRIVATE: Final = 0x40000


class SyscallTable:
    """System call numbers and the seccomp audit architecture of one CPU architecture.

    The numbers differ between x86_64 and aarch64 for the old calls; the calls added since Linux 5.1
    (``io_uring_*``, ``clone3``, Landlock) share one number on every architecture.
    """

    def __init__(self, name: str, audit_arch: int, numbers: dict[str, int]) -> None:
        self.name = name
        self.audit_arch = audit_arch
        self.numbers = numbers

    def __getitem__(self, call: str) -> int:
        return self.numbers[call]


_COMMON = {
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "clone3": 435,
    "landlock_create_ruleset": 444,
    "landlock_add_rule": 445,
    "landlock_restrict_self": 446,
}
_TABLES = {
    "x86_64": SyscallTable(
        "x86_64",
        0xC000003E,
        {
            **_COMMON,
            "socket": 41,
            "clone": 56,
            "ptrace": 101,
            "capget": 125,
            "capset": 126,
            "prctl": 157,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "init_module": 175,
            "delete_module": 176,
            "kexec_load": 246,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "unshare": 272,
            "perf_event_open": 298,
            "setns": 308,
            "finit_module": 313,
            "bpf": 321,
            "userfaultfd": 323,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsmount": 432,
        },
    ),
    "aarch64": SyscallTable(
        "aarch64",
        0xC00000B7,
        {
            **_COMMON,
            "socket": 198,
            "clone": 220,
            "ptrace": 117,
            "capget": 90,
            "capset": 91,
            "prctl": 167,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "init_module": 105,
            "delete_module": 106,
            "kexec_load": 104,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "unshare": 97,
            "perf_event_open": 241,
            "setns": 268,
            "finit_module": 273,
            "bpf": 280,
            "userfaultfd": 282,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsmount": 432,
        },
    ),
}

ARCH: Final[SyscallTable | None] = _TABLES.get(os.uname().machine) if sys.platform == "linux" else None
"""This machine's table, or None where the sandbox has no numbers (and reports its layers unavailable)."""

_libc = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None


def _fail(what: str) -> OSError:
    errno = ctypes.get_errno()
    return OSError(errno, f"{what}: {os.strerror(errno)}")


def _c(value: int | bytes | None) -> object:
    """Pass every integer as a C long: ``syscall()`` is variadic, so ctypes would otherwise pass an int."""
    return ctypes.c_long(value) if isinstance(value, int) else value


def syscall(call: str, *args: int | bytes | None, what: str | None = None) -> int:
    """Make the raw system call ``call`` (a name from this machine's table); raise OSError when it fails."""
    if _libc is None or ARCH is None:
        raise OSError(38, f"{call}: no system call table for {os.uname().machine} on {sys.platform}")
    result = int(_libc.syscall(ctypes.c_long(ARCH[call]), *(_c(a) for a in args)))
    if result == -1:
        raise _fail(what or call)
    return result


def unshare(flags: int) -> None:
    """``unshare(2)``: move the calling process into new namespaces (``os.unshare`` exists from 3.12 only)."""
    syscall("unshare", flags, what=f"unshare({flags:#x})")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    """``mount(2)`` with the flags above; ``data`` is the file system's option string (``"size=1m"``)."""
    if _libc is None:
        raise OSError(38, "mount: not Linux")
    encode = os.fsencode
    result = _libc.mount(
        None if source is None else encode(source),
        encode(target),
        None if fstype is None else encode(fstype),
        ctypes.c_ulong(flags),
        None if data is None else encode(data),
    )
    if result != 0:
        raise _fail(f"mount {source or fstype or ''} on {target}")


def prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    """``prctl(2)``, for the options that take integer arguments."""
    if _libc is None:
        raise OSError(38, "prctl: not Linux")
    result = int(
        _libc.prctl(
            ctypes.c_int(option),
            ctypes.c_ulong(arg2),
            ctypes.c_ulong(arg3),
            ctypes.c_ulong(arg4),
            ctypes.c_ulong(arg5),
        )
    )
    if result == -1:
        raise _fail(f"prctl({option})")
    return result
