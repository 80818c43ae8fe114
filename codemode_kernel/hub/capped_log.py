"""CappedLog: a server's stderr on disk, never more than a fixed size, newest output always kept.

A chatty server writes tens of megabytes per start to stderr (681 MB were seen in one log). The hub reads
the server's stderr from a pipe and writes it here: the current file grows to ``limit`` bytes, then becomes
``<name>.1`` (replacing the older one) and a new current file starts. So at most two files of ``limit``
bytes exist, and the newest lines (the ones that explain a crash) are at the end of the current file.

Not ``logging.handlers.RotatingFileHandler``: it writes text records (a pipe's raw bytes would need a
decode and gain a line break per chunk), measures them in characters, not bytes, and neither cuts a chunk
larger than the cap nor an oversized file left from before (it renames it whole to ``.1``), so the cap
would not hold.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CappedLog"]


class CappedLog:
    """An append-only byte log of at most ``limit`` bytes per file, plus one rotated file.

    Not thread-safe: one writer (the thread that drains one server process's stderr) owns it.
    """

    def __init__(self, path: Path, limit: int) -> None:
        if limit <= 0:
            raise ValueError(f"a log limit must be positive, not {limit}")
        self.path = path
        self.rotated = path.with_name(path.name + ".1")
        self.limit = limit
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(path, "ab")  # noqa: SIM115 (kept open for the process's lifetime; close() ends it)
        self._size = self._file.tell()
        if self._size > limit:  # left by a release without the cap, or a smaller limit now
            self._rotate()

    def write(self, data: bytes) -> None:
        """Append ``data``, rotating first when it would not fit (a chunk is never split across files)."""
        if not data:
            return
        if self._size + len(data) > self.limit and self._size > 0:
            self._rotate()
        if len(data) > self.limit:
            data = data[-self.limit :]
        self._file.write(data)
        self._file.flush()  # the log is read while the server runs (and after the kernel dies)
        self._size += len(data)

    def close(self) -> None:
        """Close the current file; further writes fail."""
        self._file.close()

    def _rotate(self) -> None:
        """The current file becomes ``.1`` (at most its last ``limit`` bytes); a new current file starts."""
        self._file.close()
        if self._size <= self.limit:
            os.replace(self.path, self.rotated)
        else:
            with open(self.path, "rb") as old, open(self.rotated, "wb") as kept:
                old.seek(self._size - self.limit)
                kept.write(old.read(self.limit))
            self.path.unlink()
        self._file = open(self.path, "ab")  # noqa: SIM115
        self._size = 0
