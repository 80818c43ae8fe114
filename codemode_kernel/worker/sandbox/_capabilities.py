"""What this machine supports, found out once by trying it in a throw-away child process.

Reading kernel versions or sysctls would guess: containers forbid namespaces with seccomp, distributions
restrict user namespaces with AppArmor, Landlock may be built in but off. So ``probe()`` forks a child that
really unshares the namespaces, maps its ids, forks PID 1, mounts a /proc and installs a seccomp filter,
and reports what worked over a pipe; the calling process is left as it was. Landlock's ABI version and
the pids cgroup are asked directly (neither changes the caller). About 5-20 ms; run it once in the zygote.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import signal
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any, Literal

from . import _landlock
from ._cgroup import find_pids_cgroup
from ._libc import (
    ARCH,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
)
from ._libc import mount as _mount
from ._namespaces import unshare_namespaces
from ._privileges import set_no_new_privs
from ._seccomp import install_filter

__all__ = ["Capabilities", "probe"]

NamespaceMode = Literal["direct", "user", "none"]
_PROBE_TIMEOUT = 5.0


@dataclass(frozen=True)
class Capabilities:
    """The isolation features this machine offers to this uid.

    Attributes:
        linux: running on Linux (every layer but rlimits and the environment needs it).
        is_root: the effective uid is 0 (RLIMIT_NPROC does not bind root).
        namespace_mode: ``direct`` (root: unshare needs nothing else), ``user`` (through a new user
            namespace), or ``none`` (neither works; no namespace layer is available).
        mount_namespace, network_namespace, pid_namespace: each kind can be created.
        private_proc: PID 1 of a new PID namespace can mount its own /proc.
        seccomp: a seccomp filter can be installed (and this module has system call numbers for the CPU).
        landlock_abi: Landlock ABI version, 0 when there is none.
        pids_cgroup: the directory under which per-execution pids cgroups can be made, or None.
        reasons: for each feature that is missing, why (``{"pid_namespace": "unshare: EPERM ..."}``).
    """

    linux: bool
    is_root: bool
    namespace_mode: NamespaceMode
    mount_namespace: bool
    network_namespace: bool
    pid_namespace: bool
    private_proc: bool
    seccomp: bool
    landlock_abi: int
    pids_cgroup: str | None
    reasons: tuple[tuple[str, str], ...] = ()

    def reason(self, feature: str) -> str:
        """Why ``feature`` is missing, or ``""``."""
        return dict(self.reasons).get(feature, "")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (for ``codemode doctor`` and for sending to the zygote)."""
        data = asdict(self)
        data["reasons"] = dict(self.reasons)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Capabilities:
        """The inverse of ``to_dict``."""
        return cls(**{**data, "reasons": tuple(dict(data.get("reasons") or {}).items())})


def _error(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "?")
    return f"{exc.strerror or exc} ({name})"


def _try_namespaces(report: dict[str, Any]) -> None:
    """In the probe child: create each namespace, as the real entry would, and note what fails."""
    why: dict[str, str] = report["reasons"]
    mode: NamespaceMode = "none"
    if os.geteuid() == 0:
        try:
            unshare_namespaces(CLONE_NEWNS, user_namespace=False)
            mode = "direct"
        except OSError as exc:
            why["direct_namespaces"] = _error(exc)
    if mode == "none":
        try:
            unshare_namespaces(CLONE_NEWNS, user_namespace=True)
            mode = "user"
        except OSError as exc:
            why["user_namespace"] = f"unshare(CLONE_NEWUSER|CLONE_NEWNS): {_error(exc)}"
    report["namespace_mode"] = mode
    if mode == "none":
        for name in ("mount_namespace", "network_namespace", "pid_namespace", "private_proc"):
            why[name] = "no user namespace and not root"
        return
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing the probe mounts may reach the host
    report["mount_namespace"] = True
    try:
        unshare_namespaces(CLONE_NEWNET, user_namespace=False)
        report["network_namespace"] = True
    except OSError as exc:
        why["network_namespace"] = f"unshare(CLONE_NEWNET): {_error(exc)}"
    try:
        unshare_namespaces(CLONE_NEWPID, user_namespace=False)
    except OSError as exc:
        why["pid_namespace"] = f"unshare(CLONE_NEWPID): {_error(exc)}"
        why["private_proc"] = "no PID namespace"
        return
    init = os.fork()
    if init == 0:
        code = 2
        if os.getpid() == 1:
            code = 0
            try:
                _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            except OSError as exc:
                os.write(2, f"codemode sandbox probe: mount proc: {exc}\n".encode())
                code = 1
        os._exit(code)
    _, status = os.waitpid(init, 0)
    code = os.waitstatus_to_exitcode(status)
    report["pid_namespace"] = code in (0, 1)
    report["private_proc"] = code == 0
    if code == 1:
        why["private_proc"] = "PID 1 of a new PID namespace could not mount /proc (a masked /proc?)"
    elif code != 0:
        why["pid_namespace"] = f"the first child of a new PID namespace was not PID 1 (status {code})"


def _try_seccomp(report: dict[str, Any]) -> None:
    if ARCH is None:
        report["reasons"]["seccomp"] = "no system call numbers for this CPU architecture"
        return
    try:
        set_no_new_privs()
        install_filter([(0x06, 0, 0, 0x7FFF0000)])  # return ALLOW
        report["seccomp"] = True
    except OSError as exc:
        report["reasons"]["seccomp"] = f"installing a filter failed: {_error(exc)}"


def _child(write_end: int) -> None:
    report: dict[str, Any] = {"reasons": {}}
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
        _try_namespaces(report)
        _try_seccomp(report)
    except BaseException as exc:
        report["reasons"]["probe"] = f"probe child failed: {exc!r}"
    finally:
        os.write(write_end, json.dumps(report).encode())
        os._exit(0)


def _run_child() -> dict[str, Any]:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _child(write_end)
    os.close(write_end)
    chunks: list[bytes] = []
    deadline = time.monotonic() + _PROBE_TIMEOUT
    try:
        while (left := deadline - time.monotonic()) > 0 and select.select([read_end], [], [], left)[0]:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    try:
        data: dict[str, Any] = json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        data = {}
    return data


def probe() -> Capabilities:
    """Find out which isolation layers work here, for this uid, without changing the calling process."""
    if sys.platform != "linux":
        why = f"{sys.platform} has no namespaces, Landlock or seccomp"
        features = (
            "mount_namespace",
            "network_namespace",
            "pid_namespace",
            "seccomp",
            "landlock",
            "pids_cgroup",
        )
        return Capabilities(
            linux=False,
            is_root=os.geteuid() == 0,
            namespace_mode="none",
            mount_namespace=False,
            network_namespace=False,
            pid_namespace=False,
            private_proc=False,
            seccomp=False,
            landlock_abi=0,
            pids_cgroup=None,
            reasons=tuple((feature, why) for feature in features),
        )
    found = _run_child()
    reasons: dict[str, str] = {k: v for k, v in found.get("reasons", {}).items() if v}
    if not found:
        reasons["probe"] = "the probe child reported nothing"
    abi, landlock_why = _landlock.abi_version()
    if landlock_why:
        reasons["landlock"] = landlock_why
    cgroup, cgroup_why = find_pids_cgroup()
    if cgroup_why:
        reasons["pids_cgroup"] = cgroup_why
    return Capabilities(
        linux=True,
        is_root=os.geteuid() == 0,
        namespace_mode=found.get("namespace_mode", "none"),
        mount_namespace=bool(found.get("mount_namespace")),
        network_namespace=bool(found.get("network_namespace")),
        pid_namespace=bool(found.get("pid_namespace")),
        private_proc=bool(found.get("private_proc")),
        seccomp=bool(found.get("seccomp")),
        landlock_abi=abi,
        pids_cgroup=None if cgroup is None else str(cgroup),
        reasons=tuple(sorted(reasons.items())),
    )
