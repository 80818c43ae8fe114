"""A pids cgroup per execution: the only process bound that root cannot walk past.

RLIMIT_NPROC is not checked for root, so a fork bomb run by a kernel running as root is bounded only
by the cgroup ``pids`` controller. The execution's first process creates ``codemode-<pid>`` under the
cgroup it already belongs to, sets ``pids.max`` and moves itself in; everything it starts inherits the
cgroup. After the execution it moves back out and removes the directory. Directories left by processes
that were killed before cleaning up are removed by a later execution: an empty one older than a minute
(a live execution's holds its processes, and rmdir refuses a cgroup that does; its owner's pid is no
guide, since an execution in another PID namespace names itself by a pid this one cannot see). The files
are the same in cgroup v1 and v2; v2 needs ``pids`` delegated to our cgroup's children.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

__all__ = ["PidsCgroup", "find_pids_cgroup"]

_PREFIX = "codemode-"
_STALE_AFTER_S = 60.0
"""An empty execution cgroup this old is stale: a live one is empty only between its mkdir and its join."""


def _own_cgroups() -> dict[str, str]:
    """Map each controller name of ``/proc/self/cgroup`` (``""`` for the v2 line) to our cgroup path."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _hierarchy, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            found[name] = path
    return found


def _mounts() -> list[tuple[str, str, str, str]]:
    """(mount root, mount point, file system type, super options) of every cgroup mount."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            unescape = fields[4].replace("\\040", " ")
            found.append((fields[3], unescape, tail[0], tail[2]))
    return found


def _our_directory() -> tuple[Path | None, str]:
    own = _own_cgroups()
    for root, point, fstype, options in _mounts():
        if fstype == "cgroup" and "pids" in options.split(","):
            path = own.get("pids")
        elif fstype == "cgroup2":
            path = own.get("")
        else:
            continue
        if path is None or not (path + "/").startswith(root.rstrip("/") + "/"):
            continue
        directory = Path(point) / path[len(root.rstrip("/")) :].lstrip("/")
        if fstype == "cgroup2":
            control = directory / "cgroup.subtree_control"
            if "pids" not in (control.read_text().split() if control.exists() else []):
                continue
        return directory, ""
    return None, "no pids controller: neither cgroup v1 'pids' nor v2 with 'pids' in cgroup.subtree_control"


def find_pids_cgroup() -> tuple[Path | None, str]:
    """Where per-execution pids cgroups can be made, or None and the reason; creates and removes a probe."""
    try:
        directory, reason = _our_directory()
    except OSError as exc:
        return None, f"cannot read the cgroup of this process: {exc}"
    if directory is None:
        return None, reason
    probe = directory / f"{_PREFIX}probe-{os.getpid()}"
    try:
        probe.mkdir()
        try:
            if not (probe / "pids.max").exists():
                return None, f"{directory} has no pids.max in its children"
        finally:
            probe.rmdir()
    except OSError as exc:
        return None, f"cannot create a cgroup under {directory}: {exc.strerror}"
    return directory, ""


class PidsCgroup:
    """The cgroup of one execution: ``join`` in its first process, ``leave`` when the execution is over."""

    def __init__(self, base: Path, max_processes: int) -> None:
        self.base = base
        self.max_processes = max_processes
        # The pid names the owner for a person reading the tree; the random part keeps a directory a dead
        # process left under the same pid (pids are reused) from being adopted, and so swept under us.
        self.path = base / f"{_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"

    def join(self) -> None:
        """Create the cgroup, set ``pids.max`` and move the calling process into it."""
        self._remove_stale()
        self.path.mkdir()
        (self.path / "pids.max").write_text(f"{self.max_processes}\n")
        (self.path / "cgroup.procs").write_text(f"{os.getpid()}\n")

    def leave(self) -> None:
        """Move the calling process back to the base cgroup and remove this one (once it is empty)."""
        with contextlib.suppress(OSError):
            (self.base / "cgroup.procs").write_text(f"{os.getpid()}\n")
        for _attempt in range(50):  # processes leave the cgroup a moment after they are reaped
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.002)

    def _remove_stale(self) -> None:
        now = time.time()
        for entry in self.base.glob(f"{_PREFIX}*"):
            with contextlib.suppress(OSError):  # gone already, or not empty (EBUSY): in use
                if now - entry.stat().st_mtime >= _STALE_AFTER_S:
                    entry.rmdir()
