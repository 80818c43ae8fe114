"""Resource limits: memory, CPU time, file size, open files, core dumps and (for non-root) processes.

Hard limits equal soft ones, so the code cannot raise them back; the one exception is CPU time, whose
hard limit is one second above the soft one: at the soft limit the kernel sends SIGXCPU (the runner can
say "CPU time limit" instead of an anonymous SIGKILL), and a program that ignores it is killed a second
later. RLIMIT_AS bounds address space, not resident memory: numeric libraries reserve large areas they
never touch (one per BLAS thread, hence ``OPENBLAS_NUM_THREADS=1``), and everything the zygote imported
counts too, so the limit must leave room for both. Memory in tmpfs files is not address space; the
mount layer caps ``/dev/shm`` separately.
"""

from __future__ import annotations

import resource
from pathlib import Path

__all__ = ["apply_rlimits", "limit_processes", "processes_of_user"]

_MIB = 1 << 20


def _set(limit: int, value: int, hard: int | None = None) -> None:
    """Set soft and hard to ``value`` (hard to ``hard`` if given), never above the current hard limit."""
    _soft, current = resource.getrlimit(limit)
    top = value if hard is None else hard
    if current != resource.RLIM_INFINITY:
        value, top = min(value, current), min(top, current)
    resource.setrlimit(limit, (value, top))


def apply_rlimits(
    *, memory_mb: int | None, cpu_seconds: int | None, file_size_mb: int | None, open_files: int | None
) -> None:
    """Apply the limits of a policy (None leaves that one alone) and forbid core dumps."""
    if memory_mb is not None:
        _set(resource.RLIMIT_AS, memory_mb * _MIB)
    if cpu_seconds is not None:
        _set(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)
    if file_size_mb is not None:
        _set(resource.RLIMIT_FSIZE, file_size_mb * _MIB)
    if open_files is not None:
        _set(resource.RLIMIT_NOFILE, open_files)
    _set(resource.RLIMIT_CORE, 0)


def limit_processes(count: int) -> None:
    """RLIMIT_NPROC: at most ``count`` processes and threads of this uid (in this user namespace).

    Root (uid 0 of the host) is exempt: use the pids cgroup there. In a new user namespace the kernel
    counts only the processes inside it, which makes this a per-execution limit.
    """
    _set(resource.RLIMIT_NPROC, count)


def processes_of_user(uid: int) -> int:
    """How many tasks (threads included) ``uid`` runs: RLIMIT_NPROC counts them all, outside a user namespace.

    A task directory links to ``.``, ``..`` and one entry per thread, so its link count gives the threads
    without reading every status file.
    """
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += max(1, (entry / "task").stat().st_nlink - 2)
            except OSError:
                continue
    return count
