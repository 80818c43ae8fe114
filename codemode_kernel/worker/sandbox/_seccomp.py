"""A seccomp filter, assembled here as classic BPF: no libseccomp, no compiled extension.

The other layers decide what the code may touch; this one shrinks what it may ask the kernel to do.
It refuses, with an errno so that Python raises a clear ``PermissionError``:

- system calls that change the mount table or the namespaces (``mount``, ``umount2``, ``unshare``,
  ``setns``, the new mount API, namespace flags of ``clone``): the hidden paths stay hidden, and the
  user-namespace code paths, a frequent source of kernel exploits, stay closed;
- ``prctl(PR_SET_PDEATHSIG)``: PID 1 of the namespace dies with the process that watches it, and the code
  cannot undo that to outlive its execution;
- kernel attack surface a program has no use for: keyrings (they can hold the user's secrets), ``bpf``,
  ``perf_event_open``, ``userfaultfd``, module loading, ``kexec_load``, and ``io_uring`` (its operations
  bypass seccomp's view of sockets);
- with the network off, ``socket()`` for AF_INET, AF_INET6 and AF_PACKET: this covers UDP, which Landlock
  does not, and machines without a network namespace.

``clone3`` answers ENOSYS (its flags sit in memory a filter cannot read) and the C library falls back to
``clone``, whose flags the filter does check. A system call made through a foreign ABI (32-bit
``int 0x80`` on x86_64, x32) kills the process, because the numbers checked here would not apply.
"""

from __future__ import annotations

import ctypes
import errno

from ._libc import ARCH, SyscallTable, prctl

__all__ = ["build_filter", "install_filter"]

PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_RET_KILL_PROCESS = 0x80000000
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

_NR = 0  # offsets in struct seccomp_data
_ARCH = 4
_ARG0_LOW = 16  # low 32 bits of args[0] on a little-endian machine

_X32_SYSCALL_BIT = 0x40000000
_NAMESPACE_CLONE_FLAGS = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
_AF_INET, _AF_INET6, _AF_PACKET = 2, 10, 17

_DENIED = (
    "mount",
    "umount2",
    "pivot_root",
    "unshare",
    "setns",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsmount",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "add_key",
    "request_key",
    "keyctl",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
)


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter)))


Instruction = tuple[int, int, int, int]
"""(code, jump if true, jump if false, k), jumps counted in instructions after this one."""


class _Assembler:
    """Collects instructions whose jumps name labels; ``assemble`` turns labels into offsets."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | None, str | None, int]] = []
        self.labels: dict[str, int] = {}

    def load(self, offset: int) -> None:
        self.code.append((_LD_W_ABS, None, None, offset))

    def jump(self, op: int, k: int, if_true: str | None, if_false: str | None = None) -> None:
        self.code.append((op, if_true, if_false, k))

    def ret(self, value: int) -> None:
        self.code.append((_RET_K, None, None, value))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> list[Instruction]:
        out: list[Instruction] = []
        for index, (op, true, false, k) in enumerate(self.code):
            jt = 0 if true is None else self.labels[true] - index - 1
            jf = 0 if false is None else self.labels[false] - index - 1
            if not (0 <= jt < 256 and 0 <= jf < 256):
                raise ValueError("seccomp filter jump out of range")
            out.append((op, jt, jf, k))
        return out


def build_filter(*, deny_inet_sockets: bool, table: SyscallTable | None = None) -> list[Instruction]:
    """The filter described above for ``table`` (this machine's by default), as BPF instructions."""
    arch = table or ARCH
    if arch is None:
        raise OSError(errno.ENOSYS, "seccomp: no system call table for this machine")
    asm = _Assembler()
    asm.load(_ARCH)
    asm.jump(_JEQ_K, arch.audit_arch, "native", "kill")
    asm.label("native")
    asm.load(_NR)
    if arch.name == "x86_64":
        asm.jump(_JGE_K, _X32_SYSCALL_BIT, "kill")
    for name in _DENIED:
        asm.jump(_JEQ_K, arch[name], "eperm")
    asm.jump(_JEQ_K, arch["clone3"], "enosys")
    asm.jump(_JEQ_K, arch["clone"], "clone")
    asm.jump(_JEQ_K, arch["prctl"], "prctl")
    if deny_inet_sockets:
        asm.jump(_JEQ_K, arch["socket"], "socket")
    asm.ret(_RET_ALLOW)

    asm.label("clone")
    asm.load(_ARG0_LOW)
    asm.jump(_JSET_K, _NAMESPACE_CLONE_FLAGS, "eperm", "allow")
    asm.label("prctl")
    asm.load(_ARG0_LOW)
    asm.jump(_JEQ_K, PR_SET_PDEATHSIG, "eperm", "allow")
    if deny_inet_sockets:
        asm.label("socket")
        asm.load(_ARG0_LOW)
        for family in (_AF_INET, _AF_INET6, _AF_PACKET):
            asm.jump(_JEQ_K, family, "eacces")
        asm.ret(_RET_ALLOW)
        asm.label("eacces")
        asm.ret(_RET_ERRNO | errno.EACCES)

    asm.label("allow")
    asm.ret(_RET_ALLOW)
    asm.label("eperm")
    asm.ret(_RET_ERRNO | errno.EPERM)
    asm.label("enosys")
    asm.ret(_RET_ERRNO | errno.ENOSYS)
    asm.label("kill")
    asm.ret(_RET_KILL_PROCESS)
    return asm.assemble()


def install_filter(program: list[Instruction]) -> None:
    """Load ``program`` for this process and its future children (needs no_new_privs or CAP_SYS_ADMIN).

    The filter is permanent: it survives fork and exec and cannot be removed.
    """
    array = (_SockFilter * len(program))(*(_SockFilter(code, jt, jf, k) for code, jt, jf, k in program))
    fprog = _SockFprog(len(program), ctypes.cast(array, ctypes.POINTER(_SockFilter)))
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))
