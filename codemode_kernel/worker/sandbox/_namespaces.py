"""User, mount, network and PID namespaces, and the two processes a PID namespace needs.

A new PID namespace applies to the children of the process that creates it, so an execution is two
processes: the *warden*, which the zygote forked and which unshares the namespaces, and its child, PID 1
of the new namespace, which runs the program. When PID 1 ends, by exiting or by SIGKILL, the kernel kills
every process left in the namespace, including those that called setsid and forked twice: nothing
outlives the execution. PID 1 gets SIGKILL when the warden dies (PR_SET_PDEATHSIG; the seccomp layer stops
the program from clearing it), and the warden ends as PID 1 ended, so the zygote and the runner only ever
deal with the warden, the process they forked.

As root the namespaces are created directly. Otherwise a user namespace comes first, mapping only our
own uid and gid (so files keep their owners); the process holds every capability inside it until the
privileges layer drops them.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
from collections.abc import Callable
from typing import NoReturn

from ..interrupts import handle_interrupts
from ._fds import close_fds_except
from ._libc import CLONE_NEWPID, CLONE_NEWUSER, prctl, unshare

__all__ = [
    "become_child_subreaper",
    "fork_into_new_pid_namespace",
    "kill_namespace",
    "supervise",
    "unshare_namespaces",
]

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36

_namespace_init = False


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def unshare_namespaces(flags: int, *, user_namespace: bool) -> None:
    """Enter new namespaces (``CLONE_NEW*`` flags); with ``user_namespace``, a user namespace as well.

    In a user namespace the process keeps its uid and gid (a one-to-one map); ``setgroups`` must be
    denied before an unprivileged process may write its gid map. Changes the calling process for good:
    call it in a process made for one execution, never in the zygote.
    """
    uid, gid = os.getuid(), os.getgid()
    if user_namespace:
        # A process that changed its uid is not dumpable, and its /proc/self files then belong to root:
        # it could not write its own id maps.
        prctl(PR_SET_DUMPABLE, 1)
    unshare(flags | (CLONE_NEWUSER if user_namespace else 0))
    if user_namespace:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
        _write("/proc/self/gid_map", f"{gid} {gid} 1\n")


def fork_into_new_pid_namespace(*, user_namespace: bool = False, extra_flags: int = 0) -> tuple[int, int]:
    """Unshare a PID namespace (plus ``extra_flags``) and fork: the child is PID 1 of the new namespace.

    Returns ``(0, -1)`` in the child and ``(child_pid, lifeline)`` in the parent, where ``lifeline`` is
    a pipe end the parent keeps open for as long as it lives (``supervise`` does). The child has
    PR_SET_PDEATHSIG set to SIGKILL, and exits at once if the parent died before that was in place; its
    SIGINT raises KeyboardInterrupt, whatever the parent ignored or blocked.
    """
    global _namespace_init
    unshare_namespaces(CLONE_NEWPID | extra_flags, user_namespace=user_namespace)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # an ignored SIGCHLD would reap PID 1 before we wait
    lifeline_read, lifeline = os.pipe()
    pid = os.fork()
    if pid:
        os.close(lifeline_read)
        return pid, lifeline
    os.close(lifeline)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    handle_interrupts()  # PID 1 gets no default action: without a handler, SIGINT would be dropped
    # The parent may have died between fork and prctl; its end of the pipe closes with it.
    if select.select([lifeline_read], [], [], 0)[0]:
        os._exit(1)
    os.close(lifeline_read)
    _namespace_init = True
    return 0, -1


def supervise(
    child: int, *, keep_fd: int, on_exit: Callable[[], None] | None = None, cpu_seconds: int | None = None
) -> NoReturn:
    """Be the warden: wait for PID 1 of the namespace, then end exactly as it ended.

    The warden drops every file descriptor but ``keep_fd`` (so the runner's pipes see end-of-file when
    the program's end closes them), ignores SIGINT (it reaches PID 1 through the process group), and
    turns SIGTERM or SIGHUP into SIGKILL of PID 1 (PID 1 of a namespace ignores signals it has no handler
    for). ``on_exit`` runs after PID 1 is gone, before the warden exits (the cgroup cleanup).

    PID 1 ignores even the SIGXCPU of its own RLIMIT_CPU (the kernel drops default-action signals to a
    namespace's init) and is killed by the SIGKILL at the hard limit; when it used ``cpu_seconds`` of
    CPU or more, the warden ends with SIGXCPU, so the runner sees the same cause as without a namespace.
    """
    close_fds_except([keep_fd])
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)

    def kill_child(_signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, kill_child)
    signal.signal(signal.SIGHUP, kill_child)
    try:
        _, status, usage = os.wait4(child, 0)
    except ChildProcessError:
        os._exit(1)
    if on_exit is not None:
        with contextlib.suppress(Exception):
            on_exit()
    if not os.WIFSIGNALED(status):
        os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)
    number = os.WTERMSIG(status)
    used = usage.ru_utime + usage.ru_stime
    if number == signal.SIGKILL and cpu_seconds is not None and used >= cpu_seconds:
        number = signal.SIGXCPU
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if number not in (signal.SIGKILL, signal.SIGSTOP):
        signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
    os.kill(os.getpid(), number)
    os._exit(128 + number)


def become_child_subreaper() -> bool:
    """Make the calling process the reaper of its orphaned descendants (``PR_SET_CHILD_SUBREAPER``).

    For the zygote: when a warden is killed, its PID 1 (and, without a PID namespace, whatever the
    program left running) is handed to the zygote instead of the machine's PID 1, which in a container
    without an init never reaps anything. The caller must then reap every child, not only those it forked.
    Returns False where the option does not exist (not Linux, or Linux before 3.4).
    """
    try:
        prctl(PR_SET_CHILD_SUBREAPER, 1)
    except OSError:
        return False
    return True


def kill_namespace() -> int:
    """In PID 1 of a namespace made here: SIGKILL every other process in it and reap them.

    For a session that keeps PID 1 between executions: what one execution started does not survive
    into the next. Returns how many processes were reaped. Refuses anywhere else, because ``kill(-1)``
    outside a fresh namespace would signal every process the caller may signal.
    """
    if not _namespace_init or os.getpid() != 1:
        raise RuntimeError("kill_namespace() runs only in PID 1 of a namespace made by this module")
    with contextlib.suppress(ProcessLookupError):
        os.kill(-1, signal.SIGKILL)
    reaped = 0
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return reaped
        reaped += 1
