"""The workspace's run history on disk: one JSON file per ``%%codemode`` execution or ``%%agent`` request.

Why files in the workspace (``.codemode/history/``) rather than the kernel's memory: the JupyterLab sidebar
reads them through the server extension (codemode_kernel/labserver), which answers while a cell keeps the
kernel busy and after a restart, and every kernel of the workspace adds to the same list.

A file is named ``<nanoseconds since the epoch, 20 digits>-<run id>.json``, so names sort by time and the
newest ``KEEP`` are kept without reading any of them. Each is written whole (temp file, then rename), so a
reader never sees half of one. Records are made by run_records.py; this module only stores and finds them,
and is also what the server extension reads with (it imports nothing from IPython).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from ..atomic_file import write_atomically

__all__ = [
    "KEEP",
    "SUMMARY_TEXT",
    "find_run",
    "history_dir",
    "run_files",
    "run_summary",
    "valid_run_id",
    "write_run",
]

KEEP = 500
"""Run files kept per workspace; older ones are removed as new ones are written."""

SUMMARY_TEXT = 2000
"""Characters of a run's code (or request) in its summary; the whole text is in its file."""

_RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_FILE = re.compile(r"(\d{20})-([A-Za-z0-9_-]{1,128})\.json")
_SUMMARY_KEYS = (
    "id",
    "kind",
    "number",
    "kernel_id",
    "cell_id",
    "model",
    "status",
    "tool_calls",
    "finished",
    "duration_ms",
    "replayed",
)


def history_dir(workspace: str | os.PathLike[str]) -> Path:
    """Where a workspace's run files are: ``<workspace>/.codemode/history``."""
    return Path(workspace) / ".codemode" / "history"


def valid_run_id(run_id: str) -> bool:
    """Whether ``run_id`` can name a run file (letters, digits, ``_`` and ``-``: never a path)."""
    return _RUN_ID.fullmatch(run_id) is not None


def write_run(workspace: str | os.PathLike[str], record: dict[str, Any], *, keep: int = KEEP) -> Path:
    """Store one run record (its ``id`` names the file) and remove the oldest beyond ``keep``.

    Raises:
        ValueError: the record's id cannot name a file, or the record is not JSON.
        OSError: the directory or file cannot be written.
    """
    run_id = str(record.get("id", ""))
    if not valid_run_id(run_id):
        raise ValueError(f"a run id is letters, digits, _ and - only, not {run_id!r}")
    directory = history_dir(workspace)
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, ensure_ascii=False, allow_nan=False, default=str)
    target = directory / f"{time.time_ns():020d}-{run_id}.json"
    write_atomically(target, text, prefix=".run-")
    _prune(directory, keep)
    return target


def run_files(directory: Path) -> list[Path]:
    """The run files in ``directory``, newest first (none when it does not exist)."""
    try:
        names = [entry.name for entry in os.scandir(directory) if _FILE.fullmatch(entry.name)]
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [directory / name for name in sorted(names, reverse=True)]


def find_run(workspace: str | os.PathLike[str], run_id: str) -> Path | None:
    """The file of the run with this id (the newest, should two kernels ever share one), or None."""
    if not valid_run_id(run_id):
        return None
    suffix = f"-{run_id}.json"
    return next((path for path in run_files(history_dir(workspace)) if path.name.endswith(suffix)), None)


def run_summary(record: dict[str, Any]) -> dict[str, Any]:
    """A run as the sidebar lists it: the record without its bundle, its code or request shortened."""
    summary = {key: record[key] for key in _SUMMARY_KEYS if key in record}
    for key in ("code", "request"):
        if isinstance(record.get(key), str):
            summary[key] = record[key][:SUMMARY_TEXT]
    return summary


def _prune(directory: Path, keep: int) -> None:
    for old in run_files(directory)[keep:]:
        with contextlib.suppress(FileNotFoundError):  # another kernel of the workspace removed it first
            old.unlink()
