"""``enter_sandbox``: every available layer, in the one order in which they all work.

The order is forced by what each step needs and what it takes away:

1. pids cgroup (root): joined first, so that every process of the execution is counted;
2. namespaces: user (unprivileged), mount, network and PID, then the fork into PID 1; the calling
   process stays behind as the warden and never returns from here;
3. the environment and the file descriptors, while the host's /proc still shows this process's
   start-up block and open descriptors;
4. mounts: hidden and read-only paths, a fresh /proc, a private /dev/shm; needs CAP_SYS_ADMIN (root or
   the user namespace), then the cwd moves to the workspace (a cwd inside a covered directory would still
   reach what the cover hides); from here on, a call that fails on a cover says the path is hidden, and
   one that fails on a read-only path says so;
5. rlimits, and the process limit where it is an rlimit;
6. no_new_privs, then Landlock, then seccomp: both need no_new_privs or CAP_SYS_ADMIN, and seccomp
   forbids the mount and namespace calls the earlier steps made;
7. capabilities dropped last: Landlock and seccomp may need CAP_SYS_ADMIN when no_new_privs is off.

A layer that ``plan()`` counts as in force and that fails raises ``SandboxError``: the process is
half-confined and must not run the program.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from . import _landlock
from ._capabilities import Capabilities
from ._cgroup import PidsCgroup
from ._environment import scrub_environment
from ._errors import SandboxError
from ._fds import close_fds_except
from ._hidden_errors import explain_protected_paths
from ._libc import CLONE_NEWNET, CLONE_NEWNS
from ._mounts import hide_paths
from ._namespaces import fork_into_new_pid_namespace, supervise, unshare_namespaces
from ._plan import Protections, plan, plan_mounts
from ._policy import SandboxPolicy
from ._privileges import drop_capabilities, effective_capabilities, set_no_new_privs
from ._rlimits import apply_rlimits, limit_processes, processes_of_user
from ._seccomp import build_filter, install_filter

__all__ = ["enter_sandbox"]

T = TypeVar("T")


def _layer(name: str, step: Callable[..., T], *args: object, **kwargs: object) -> T:
    try:
        return step(*args, **kwargs)
    except (OSError, ValueError) as exc:
        raise SandboxError(name, str(exc)) from exc


def enter_sandbox(policy: SandboxPolicy, caps: Capabilities, *, keep_fds: Iterable[int] = ()) -> Protections:
    """Confine the calling process for one execution; returns (in PID 1 of the namespace) what is in force.

    Call it in the single-threaded process the zygote forked for this execution, right before the
    program runs. With a PID namespace available, the caller becomes the warden and this function
    returns only in its child, PID 1 of the new namespace (see ``supervise``). Every file descriptor
    above 2 that is not in ``keep_fds`` is closed.
    """
    writable = tuple(Path(os.path.realpath(p)) for p in policy.writable_paths())
    hiding = plan_mounts(policy) if caps.mount_namespace else None
    protections = plan(policy, caps, hiding=hiding)
    on = set(protections.in_force)
    keep = tuple(keep_fds)

    cgroup: PidsCgroup | None = None
    if "max_processes:cgroup" in on and caps.pids_cgroup and policy.max_processes is not None:
        cgroup = PidsCgroup(Path(caps.pids_cgroup), policy.max_processes + 1)  # + the warden
        _layer("max_processes:cgroup", cgroup.join)

    user_namespace = "user_namespace" in on
    flags = (CLONE_NEWNS if "mount_namespace:hidden_paths" in on else 0) | (
        CLONE_NEWNET if "network_namespace" in on else 0
    )
    if "pid_namespace" in on:
        pid, lifeline = _layer(
            "pid_namespace", fork_into_new_pid_namespace, user_namespace=user_namespace, extra_flags=flags
        )
        if pid:
            supervise(
                pid,
                keep_fd=lifeline,
                on_exit=cgroup.leave if cgroup else None,
                cpu_seconds=policy.cpu_seconds,
            )
    elif flags or user_namespace:
        _layer("namespaces", unshare_namespaces, flags, user_namespace=user_namespace)

    _layer(
        "env_scrubbed",
        scrub_environment,
        policy.env_allowlist,
        policy.extra_env,
        None if policy.tmp_dir is None else Path(os.path.abspath(policy.tmp_dir)),
    )
    _layer("fds_closed", close_fds_except, keep)
    shm: Path | None = None
    if "mount_namespace:hidden_paths" in on and hiding is not None:
        report = _layer(
            "mount_namespace:hidden_paths",
            hide_paths,
            hiding,
            fresh_proc="pid_namespace" in on and caps.private_proc,
            shm_mb=policy.memory_mb,
            private_tmp=None if policy.tmp_dir is None else Path(os.path.abspath(policy.tmp_dir)),
        )
        shm = report.shm
        explain_protected_paths(report.cover_device, read_only=hiding.read_only, pinned=hiding.pin)
    _layer("workspace", os.chdir, writable[0])

    _layer(
        "rlimits",
        apply_rlimits,
        memory_mb=policy.memory_mb,
        cpu_seconds=policy.cpu_seconds,
        file_size_mb=policy.file_size_mb,
        open_files=policy.open_files,
    )
    if "max_processes:rlimit" in on and policy.max_processes is not None:
        # In our own user namespace only its tasks count (the warden, if any, and this process's tree);
        # outside one, every task of the uid does.
        warden = 1 if "pid_namespace" in on else 0
        others = warden if user_namespace else processes_of_user(os.getuid()) - 1
        _layer("max_processes:rlimit", limit_processes, policy.max_processes + others)

    if "no_new_privs" in on:
        _layer("no_new_privs", set_no_new_privs)
    if "landlock:fs_write" in on:
        roots = writable + ((shm,) if shm is not None else ())
        parts = _layer("landlock", _landlock.restrict, caps.landlock_abi, roots, deny_tcp=not policy.network)
        if set(parts) != {p for p in on if p.startswith("landlock:")}:
            raise SandboxError("landlock", f"applied {parts}, planned otherwise")
    if "seccomp" in on:
        program = _layer("seccomp", build_filter, deny_inet_sockets=not policy.network)
        _layer("seccomp", install_filter, program)
    if "capabilities_dropped" in on:
        _layer("capabilities_dropped", drop_capabilities)
        if effective_capabilities() != 0:
            raise SandboxError("capabilities_dropped", "capabilities remain after capset")
    return protections
