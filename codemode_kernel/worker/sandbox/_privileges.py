"""no_new_privs and dropping every capability.

A kernel run as root would hand the code every capability: unmounting the covers over hidden paths,
loading kernel modules, raw sockets, tracing any process. In a user namespace the process also holds
every capability (inside it), which is what let the mount layer work. Dropping them all, including
from the bounding set so that running a setuid-root or file-capability binary gives nothing back, leaves
a root process with only what its uid owns. no_new_privs makes setuid bits and file capabilities inert
for good, and it is what lets an unprivileged process install Landlock and seccomp.
"""

from __future__ import annotations

import ctypes
import errno
from pathlib import Path

from ._libc import prctl, syscall

__all__ = ["drop_capabilities", "effective_capabilities", "set_no_new_privs"]

PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def set_no_new_privs() -> None:
    """PR_SET_NO_NEW_PRIVS for this process and its children; it cannot be unset."""
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def _last_capability() -> int:
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        return 40  # CAP_CHECKPOINT_RESTORE, the last one as of Linux 6.x


def drop_capabilities() -> None:
    """Empty the bounding, ambient, inheritable, permitted and effective capability sets."""
    last = _last_capability()
    for cap in range(last + 1):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError as exc:
            if exc.errno == errno.EINVAL:  # a capability this kernel does not know
                continue
            if exc.errno == errno.EPERM and effective_capabilities() == 0:
                break  # an unprivileged process without CAP_SETPCAP: nothing to drop from
            raise
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    syscall("capset", ctypes.addressof(header), ctypes.addressof(data), what="capset")


def effective_capabilities() -> int:
    """This process's effective capability mask (what ``CapEff`` in /proc/self/status shows)."""
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    syscall("capget", ctypes.addressof(header), ctypes.addressof(data), what="capget")
    return int(data[0].effective) | int(data[1].effective) << 32
