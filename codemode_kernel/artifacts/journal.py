"""Which SQLite journal a store uses: WAL where it works, the rollback journal where it cannot.

WAL lets readers and a writer work at once and survives a killed process, but it needs shared memory
beside the database: on network file systems (NFS, SMB, sshfs...) that memory is not shared between
machines, and SQLite says not to use WAL there. So a store on such a file system, or one where
``PRAGMA journal_mode=WAL`` does not answer ``wal``, uses the rollback journal (``DELETE``), which is
slower under concurrency but just as crash-safe.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path
from typing import Literal

__all__ = ["NETWORK_FILESYSTEMS", "JournalChoice", "filesystem_type", "set_journal"]

log = logging.getLogger(__name__)

JournalChoice = Literal["auto", "wal", "rollback"]
"""``auto``: WAL unless the file system is a network one or WAL is refused; ``wal``: WAL, falling back
only when refused; ``rollback``: always the rollback journal."""

NETWORK_FILESYSTEMS = frozenset(
    {"nfs", "nfs4", "cifs", "smb", "smb2", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre",
     "gpfs", "fuse.sshfs", "fuse.s3fs", "fuse.gcsfuse", "fuse.rclone", "davfs", "fuse.davfs2"}
)  # fmt: skip
"""File system types where WAL's shared memory does not work across machines."""


def filesystem_type(path: Path, mounts: str = "/proc/self/mounts") -> str | None:
    """The type of the file system holding ``path`` (the longest mount point above it), or None."""
    try:
        with open(mounts, encoding="utf-8", errors="replace") as table:
            lines = table.read().splitlines()
    except OSError:
        return None
    target = os.path.realpath(path)
    best, found = -1, None
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best:
            best, found = len(point), fields[2]
    return found


def set_journal(
    connection: sqlite3.Connection, path: Path, choice: JournalChoice, *, mounts: str = "/proc/self/mounts"
) -> str:
    """Switch the connection's database to WAL or the rollback journal; returns the mode in force."""
    if choice == "auto":
        fs_type = filesystem_type(path.parent, mounts)
        if fs_type in NETWORK_FILESYSTEMS:
            log.info("artifact store %s is on %s, a network file system: rollback journal", path, fs_type)
            choice = "rollback"
    if choice != "rollback":
        try:
            mode = str(connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
        except sqlite3.DatabaseError as exc:
            log.info("artifact store %s: WAL refused (%s); rollback journal", path, exc)
            mode = ""
        if mode == "wal":
            connection.execute("PRAGMA synchronous=NORMAL")  # in WAL, a killed process loses nothing
            return "wal"
        log.info("artifact store %s: WAL not available (journal mode %r); rollback journal", path, mode)
    mode = str(connection.execute("PRAGMA journal_mode=DELETE").fetchone()[0]).lower()
    connection.execute("PRAGMA synchronous=FULL")
    return mode
