"""Hidden paths through a private mount namespace: an empty, read-only view laid over each secret.

Landlock allows, it cannot except: "read everything but ~/.ssh" needs the mount table. In the execution's
own mount namespace (mounts made private first, so nothing propagates back to the host):

- each hidden directory is covered by an empty read-only directory and each hidden file by an empty
  read-only file, both from a small staging tmpfs and both with mode 000: once capabilities are dropped,
  opening, reading or listing one fails with ``EACCES`` (for root and for an unprivileged user alike),
  and ``_hidden_errors`` makes that error say the path is hidden;
- every directory between a writable root and a hidden path inside it becomes a mount point of its own
  (a bind onto itself). Without that, renaming ``.vscode`` away and writing a new ``.vscode/mcp.json``
  would replace a config file the kernel reads, because a rename carries the mount off with the old name;
- a hidden path that does not exist yet cannot be covered: if its nearest existing directory lies inside
  a writable root, that directory is made read-only, unless it is the root itself (then it is reported);
- each read-only path inside a writable root (what runs outside the sandbox: a server's script, a
  site-packages) is bound onto itself read-only, file or directory, and pinned like a hidden path, so that
  it can be neither changed, removed, nor carried off by renaming a directory above it. A missing one is
  treated like a missing hidden path; one that is a writable root, or holds one, cannot be protected and is
  reported. Paths outside every writable root need nothing here: Landlock keeps programs from writing them;
- a hidden path that holds a directory this interpreter imports from is left visible and reported:
  covering it would break every program's imports;
- ``/proc`` is mounted afresh for the new PID namespace, so ``/proc/<pid>/root`` of processes outside
  (the kernel's view of the file system, hidden paths included) is out of reach; without a PID namespace
  ``/proc`` is covered instead. ``/proc/sys`` is made read-only;
- ``/dev/shm`` becomes a private tmpfs capped at the memory limit, so it neither reaches other processes
  nor grows past what RLIMIT_AS would allow;
- the run's own temp dir (its ``HOME`` and ``TMPDIR``) becomes a private tmpfs of the same size (1 GiB
  without a memory limit; 65,536 files in each): another
  run finds the directory on disk (all runs' temp dirs share the system's temp directory) but none of the
  files this one writes there, which live in this mount namespace only.

Once capabilities are dropped and the seccomp filter is in, the code can neither unmount nor remount.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ._libc import MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_RDONLY, MS_REC, MS_REMOUNT, mount

__all__ = ["HiddenPathsReport", "HidingPlan", "hide_paths", "import_roots", "plan_hiding"]

_MS_NOATIME = 0x400
_MS_NODIRATIME = 0x800
_MS_RELATIME = 0x200000
_ST_TO_MS = (
    (os.ST_NOSUID, MS_NOSUID),
    (os.ST_NODEV, MS_NODEV),
    (os.ST_NOEXEC, MS_NOEXEC),
    (os.ST_NOATIME, _MS_NOATIME),
    (os.ST_NODIRATIME, _MS_NODIRATIME),
    (os.ST_RELATIME, _MS_RELATIME),
)
_TMPFS_DEFAULT_MB = 1024  # a private tmpfs's size when the settings set no memory limit
_TMPFS_FILES = 65536  # files in a private tmpfs: each costs kernel memory, whatever its size
_STAGING = "/proc"  # covered by the new /proc afterwards, so the staging tmpfs never shows
_SAFE = MS_NOSUID | MS_NODEV | MS_NOEXEC


def _within(path: Path, root: Path) -> bool:
    """``path`` is ``root`` or lies below it; both absolute and normalized.

    Compared as text, which is quick: a worker plans about a hundred paths every time it starts.
    """
    inner, outer = str(path), str(root)
    return inner == outer or inner.startswith(outer if outer.endswith(os.sep) else outer + os.sep)


def _below(path: Path, root: Path) -> bool:
    return path != root and _within(path, root)


def _between(root: Path, path: Path) -> list[Path]:
    """The directories strictly between ``root`` and ``path`` (the ones a rename could carry it off by)."""
    return [parent for parent in path.parents if _below(parent, root)]


def _locked_flags(path: Path) -> int:
    """The flags of the mount under ``path`` that a remount in a user namespace must keep."""
    flags = os.statvfs(path).f_flag
    return sum(ms for st, ms in _ST_TO_MS if flags & st)


def _bind(source: Path | str, target: Path | str, *, read_only: bool, recursive: bool = False) -> None:
    mount(str(source), str(target), None, MS_BIND | (MS_REC if recursive else 0))
    if read_only:
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY | _locked_flags(Path(target))
        mount(None, str(target), None, flags)


def _nearest_existing(path: Path) -> Path:
    """The closest ancestor this process can see (``os.path.exists`` is False also where search is denied)."""
    for parent in path.parents:
        if os.path.exists(parent):
            return parent
    return Path("/")


@dataclass(frozen=True)
class HidingPlan:
    """Paths sorted by treatment: cover, pin (bind onto itself), make read-only; and the gaps.

    ``read_only`` holds files and directories: the read-only paths of the policy and the directories in
    which a missing hidden or read-only path would be created.
    """

    cover: tuple[Path, ...]
    pin: tuple[Path, ...]
    read_only: tuple[Path, ...]
    warnings: tuple[str, ...]


def import_roots() -> tuple[Path, ...]:
    """Where this interpreter imports from (its prefixes and absolute ``sys.path`` entries), resolved."""
    entries = (sys.prefix, sys.exec_prefix, *(p for p in sys.path if p and os.path.isabs(p)))
    return tuple(dict.fromkeys(Path(os.path.realpath(p)) for p in entries))


def plan_hiding(
    hidden: Iterable[Path],
    writable: Iterable[Path],
    read_only: Iterable[Path] = (),
    *,
    keep_visible: Iterable[Path] = (),
) -> HidingPlan:
    """Decide, without changing anything, how each path is protected (see the module docstring).

    ``keep_visible`` are directories programs must be able to read (``import_roots()``): a hidden path
    that holds one is reported, not covered.
    """
    roots = tuple(Path(os.path.realpath(p)) for p in writable)
    needed = tuple(keep_visible)
    hidden = tuple(hidden)
    cover: list[Path] = []
    pin: set[Path] = set()
    fixed: set[Path] = set()
    warnings: list[str] = []
    creatable: dict[tuple[str, Path], list[str]] = {}

    def keep_unchanged(path: Path, around: list[Path], kind: str) -> None:
        """Make ``path`` read-only, or the directory it would be created in, and pin what lies between."""
        target = path if os.path.lexists(path) else _nearest_existing(path)
        for root in around:
            if target == root:
                creatable.setdefault((kind, root), []).append(str(path.relative_to(root)))
            elif _within(target, root):
                fixed.add(target)
                pin.update(_between(root, target))

    for path in hidden:
        inner = [root for root in roots if _within(root, path)]
        if inner:
            warnings.append(f"{path} is not hidden: it contains the writable path {inner[0]}")
            continue
        imported = [kept for kept in needed if _within(kept, path)]
        if imported:
            warnings.append(f"{path} is not hidden: programs import from {imported[0]}, inside it")
            continue
        around = [root for root in roots if _within(path, root)]
        if os.path.lexists(path):
            cover.append(path)
            for root in around:
                pin.update(_between(root, path))
        else:
            keep_unchanged(path, around, "hidden")
    # A path inside a covered directory is hidden already, and could not be bound to once the cover is on.
    outermost: list[Path] = []
    for path in sorted(cover, key=_depth):
        if not any(_within(path, kept) for kept in outermost):
            outermost.append(path)

    for path in read_only:
        if path in hidden or any(_within(path, covered) for covered in outermost):
            continue  # hidden, which is read-only as well
        if path in roots:
            warnings.append(
                f"{path} is read-only by the policy but is a writable path: programs may add files to it, "
                "new modules too where the host imports from it (only the read-only paths inside it are "
                "protected)"
            )
            continue
        inner = [root for root in roots if _within(root, path)]
        if inner:
            warnings.append(f"{path} is not read-only: it contains the writable path {inner[0]}")
            continue
        keep_unchanged(path, [root for root in roots if _within(path, root)], "read-only")

    # One line per writable directory: the built-in list alone names four project config files.
    warnings.extend(
        f"{kind} names that do not exist yet could be created in {root}, which programs may write: "
        + ", ".join(names)
        for (kind, root), names in creatable.items()
    )
    # Inside a read-only directory nothing can be changed or moved: no bind is needed there.
    fixed = {path for path in fixed if not any(_below(path, other) for other in fixed)}
    pin = {path for path in pin - fixed if not any(_below(path, other) for other in fixed)}
    return HidingPlan(
        tuple(outermost),
        tuple(sorted(pin, key=_depth)),
        tuple(sorted(fixed, key=_depth)),
        tuple(warnings),
    )


def _depth(path: Path) -> tuple[int, Path]:
    return len(path.parts), path


@dataclass(frozen=True)
class HiddenPathsReport:
    """What ``hide_paths`` did, and what it made.

    ``shm`` is the private ``/dev/shm`` (a writable root for Landlock); ``cover_device`` the ``st_dev`` of
    the covers, which tells a hidden path from an ordinary one that cannot be opened.
    """

    plan: HidingPlan
    shm: Path | None
    cover_device: int


def hide_paths(
    hiding: HidingPlan, *, fresh_proc: bool, shm_mb: int | None, private_tmp: Path | None = None
) -> HiddenPathsReport:
    """In a new mount namespace (and, for ``fresh_proc``, as PID 1 of a new PID namespace): apply the above.

    ``hiding`` comes from ``plan_hiding`` (made before the fork, so the zygote's child plans once).
    Raises OSError when a mount fails; the caller turns that into a SandboxError for the layer.
    """
    mount(None, "/", None, MS_REC | MS_PRIVATE)

    # Pins and read-only binds first, outermost first, so that no later bind hides a cover made earlier
    # (a bind inside a read-only one stays read-only: it is made from that mount).
    for path in sorted(hiding.pin + hiding.read_only, key=lambda p: len(p.parts)):
        _bind(path, path, read_only=path in hiding.read_only, recursive=True)

    mount("tmpfs", _STAGING, "tmpfs", _SAFE, "size=16k,nr_inodes=8,mode=0755")
    closed_dir, closed_file, empty_dir = Path(_STAGING, "d"), Path(_STAGING, "f"), Path(_STAGING, "e")
    closed_dir.mkdir(mode=0o000)
    os.close(os.open(closed_file, os.O_CREAT | os.O_WRONLY, 0o000))
    empty_dir.mkdir(mode=0o555)
    cover_device = os.stat(_STAGING).st_dev
    mount(None, _STAGING, None, MS_REMOUNT | MS_RDONLY | _SAFE)
    for path in hiding.cover:
        source = closed_dir if path.is_dir() and not path.is_symlink() else closed_file
        _bind(source, path, read_only=True)

    if fresh_proc:
        mount("proc", "/proc", "proc", _SAFE)
        _bind("/proc/sys", "/proc/sys", read_only=True, recursive=True)
    else:
        _bind(empty_dir, "/proc", read_only=True)  # empty, not hidden: Python only finds nothing there

    shm = Path("/dev/shm")
    # Memory in a tmpfs is not address space: each is capped (and its files counted), so that a run holds
    # no more than its limit in each, whatever the settings say.
    size = f"size={shm_mb or _TMPFS_DEFAULT_MB}m,nr_inodes={_TMPFS_FILES}"
    if shm.is_dir():
        mount("tmpfs", str(shm), "tmpfs", _SAFE, f"mode=1777,{size}")
    if private_tmp is not None and private_tmp.is_dir():
        mount("tmpfs", str(private_tmp), "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,{size}")
    return HiddenPathsReport(hiding, shm if shm.is_dir() else None, cover_device)
