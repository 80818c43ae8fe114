"""The workspace's run history as the sidebar lists it: summaries of the run files, newest first.

Run files never change once written (kernel/run_files.py), so each is read once and its summary kept;
a listing then reads only the directory and the files new since the last one. Records can be large
(a cell's whole output), which is why the list holds summaries and ``read_run`` gives one whole record.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from ..kernel.run_files import find_run, history_dir, run_files, run_summary

__all__ = ["HistoryIndex", "read_run"]


class HistoryIndex:
    """Summaries of run files, each read once (files are written whole, then never changed)."""

    def __init__(self) -> None:
        self._summaries: dict[Path, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def runs(self, workspace: Path) -> list[dict[str, Any]]:
        """Every run of the workspace (all its kernels), newest first."""
        directory = history_dir(workspace)
        files = run_files(directory)
        out = []
        for path in files:
            with self._lock:
                summary = self._summaries.get(path)
            if summary is None:
                summary = _summary_of(path)
                if summary is None:
                    continue
                with self._lock:
                    self._summaries[path] = summary
            out.append(summary)
        present = set(files)
        with self._lock:  # forget files pruned since (only this workspace's)
            for path in [p for p in self._summaries if p.parent == directory and p not in present]:
                del self._summaries[path]
        return out


def read_run(workspace: Path, run_id: str) -> bytes | None:
    """The whole record of one run, as stored (JSON); None when there is no such run."""
    path = find_run(workspace, run_id)
    if path is None:
        return None
    try:
        return path.read_bytes()
    except FileNotFoundError:  # pruned just now
        return None


def _summary_of(path: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # removed meanwhile, or not a record: not listed
        return None
    return run_summary(record) if isinstance(record, dict) else None
