"""ShapeStore: the result shapes inferred for tools without an outputSchema, kept in the workspace.

It listens to the call log: each call that ended ``ok`` gives the value its tool function returned
(``decode_result``: JSON text parsed, structuredContent...), whose shape widens the tool's inferred
schema (typegen/infer.py). The stubs, ``help()`` and ``tool_schema()`` then show a typed result marked
as inferred. The work happens on a thread of its own, so a call never waits for it, and it never
changes what a call returns.

Skipped: results stored as artifacts (over ``codeMode.artifactThresholdBytes``; the record only keeps a
preview) and results whose text is over ``MAX_RESULT_CHARS``. Inference reads at most
``infer.MAX_NODES`` values of one result.

The shapes live in ``.codemode/shapes.json``, so a new kernel in the workspace starts with them. Writes are
whole (temp file, rename) and merge with what another process wrote since (under a lock file): the
shapes widen, the call counts add up. A file that cannot be read is reported with its path, ignored, and
replaced at the next write.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import Any

from .atomic_file import write_atomically
from .calllog import CallRecord
from .core.results import decode_result
from .core.toolspec import ToolSpec
from .typegen.infer import InferredShape

try:  # POSIX: processes of one workspace take turns at the file
    import fcntl
except ImportError:  # pragma: no cover - Windows: writes are still atomic, a race may drop one update
    fcntl = None  # type: ignore[assignment]

__all__ = ["MAX_RESULT_CHARS", "SHAPES_FILE", "ShapeStore"]

log = logging.getLogger(__name__)

SHAPES_FILE = "shapes.json"
"""The store's file in the workspace's ``.codemode/``."""
MAX_RESULT_CHARS = 256 * 1024
"""Results with more text than this are not read for their shape (the parse alone would cost too much)."""
_FORMAT = 1
_SAVE_INTERVAL = 5.0
"""Seconds a count-only change may wait before it is written (a changed shape is written at once)."""

Key = tuple[str, str]
_STOP = object()


class ShapeStore:
    """Inferred result shapes per ``(server, tool)``, learned from the call log and kept in ``path``.

    ``accept(server, tool)`` says which tools are inferred (those without an outputSchema); by default all.
    ``version`` changes whenever a shape changes (not when only a count does): whoever built stubs from
    the shapes compares it to know they are out of date.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, accept: Callable[[str, str], bool] | None = None
    ) -> None:
        self.path = Path(path)
        self.accept = accept or (lambda server, tool: True)
        self.version = 0
        self.problem: str | None = None
        """Why the file could not be read or written, with its path; None when all is well."""
        self._shapes: dict[Key, InferredShape] = {}
        self._unsaved: dict[Key, int] = {}
        """Calls counted here since the last write, per tool (what a write adds to the file's counts)."""
        self._changed = False  # a shape changed since the last write: write at once
        self._saved_at = time.monotonic()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self._queue: SimpleQueue[Any] = SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._load()

    @classmethod
    def for_workspace(cls, workspace: str | os.PathLike[str], **options: Any) -> ShapeStore:
        """The store of a workspace: ``<workspace>/.codemode/shapes.json``."""
        return cls(Path(workspace) / ".codemode" / SHAPES_FILE, **options)

    # -- reading ----------------------------------------------------------------------------------

    def get(self, server: str, tool: str) -> InferredShape | None:
        """The shape inferred for a tool, or None when none of its results was seen."""
        with self._lock:
            return self._shapes.get((server, tool))

    def shapes(self) -> dict[Key, InferredShape]:
        """Every shape known, by ``(server, tool)``."""
        with self._lock:
            return dict(self._shapes)

    def __iter__(self) -> Iterator[Key]:
        return iter(self.shapes())

    def apply(self, specs: Iterable[ToolSpec]) -> list[ToolSpec]:
        """``specs`` with their shapes as ``ToolSpec.inferred_output``, for tools without an outputSchema."""
        with self._lock:
            shapes = self._shapes
            out = []
            for spec in specs:
                shape = shapes.get((spec.server, spec.name)) if spec.output_schema is None else None
                out.append(
                    spec
                    if shape is None
                    else replace(spec, inferred_output=shape.schema, inferred_calls=shape.calls)
                )
            return out

    # -- learning ---------------------------------------------------------------------------------

    def observe(self, record: CallRecord) -> None:
        """The call log's listener: queue a finished call's result for the thread (no work here)."""
        if (
            record.status != "ok"
            or record.result is None
            or record.artifact_id is not None  # too large: the record holds a preview only
            or self._closed
            or not self.accept(record.server, record.tool)
        ):
            return
        with self._lock:
            # Checked again and queued under the lock ``close()`` takes to queue its stop marker: an item
            # queued after the marker would never be read, and ``settle()`` would wait for it in vain.
            if self._closed:
                return
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="codemode-shapes", daemon=True)
                self._thread.start()
            self._queue.put((record.server, record.tool, record.result))

    def record(self, server: str, tool: str, result: dict[str, Any]) -> bool:
        """Widen a tool's shape with one wire CallToolResult now; True when the shape changed.

        A result that is an error, too large, or cannot be decoded is skipped (False).
        """
        if _text_size(result) > MAX_RESULT_CHARS:
            return False
        try:
            seen = InferredShape.of(decode_result(result, tool=tool, server=server))
        except Exception:  # a result that cannot be decoded (isError, a recursion): nothing to learn
            log.debug("no shape learned from a %s/%s result", server, tool, exc_info=True)
            return False
        key = (server, tool)
        with self._lock:
            current = self._shapes.get(key)
            new = seen if current is None else current.merge(seen)
            changed = current is None or current.schema != new.schema
            self._shapes[key] = new
            self._unsaved[key] = self._unsaved.get(key, 0) + 1
            if changed:
                self._changed = True
                self.version += 1
        return changed

    def settle(self, timeout: float = 1.0) -> bool:
        """Wait until the results queued so far are read (at most ``timeout`` s); True when they are."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def _work(self) -> None:
        """The thread: read each queued result, write when due.

        A failing step is logged and the thread goes on: were it to end, every later result would wait
        in the queue, and ``settle()`` for its whole timeout.
        """
        while True:
            try:
                item = self._queue.get(timeout=_SAVE_INTERVAL)
            except Empty:
                item = None
            if item is _STOP:
                return
            try:
                if item is not None:
                    self.record(*item)
            except Exception:
                log.exception("codemode: inferred result shapes: a result could not be read; going on")
            finally:
                if item is not None:
                    with self._idle:
                        self._pending -= 1
                        if not self._pending:
                            self._idle.notify_all()
            try:
                self._save_if_due(force=item is None)
            except Exception:
                log.exception(
                    "codemode: inferred result shapes: %s could not be written; going on", self.path
                )

    # -- the file ---------------------------------------------------------------------------------

    def _save_if_due(self, *, force: bool) -> None:
        with self._lock:
            due = self._changed or (
                bool(self._unsaved) and (force or time.monotonic() - self._saved_at >= _SAVE_INTERVAL)
            )
        if due:
            self.save()

    def save(self) -> None:
        """Write the shapes now, merged with what the file holds (another kernel's calls)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with _file_lock(self.path.with_name(self.path.name + ".lock")):
                on_disk = self._read_file()
                with self._lock:
                    merged = dict(on_disk)
                    for key, mine in self._shapes.items():
                        theirs = on_disk.get(key)
                        # The file counts what this process read at start plus what others added since.
                        merged[key] = (
                            mine
                            if theirs is None
                            else InferredShape(
                                mine.merge(theirs).schema, theirs.calls + self._unsaved.get(key, 0)
                            )
                        )
                    if any(
                        key not in self._shapes or self._shapes[key].schema != shape.schema
                        for key, shape in merged.items()
                    ):
                        self.version += 1  # another process saw results this one had not
                    self._shapes = merged
                    self._unsaved.clear()
                    self._changed = False
                    self._saved_at = time.monotonic()
                    document = {
                        "format": _FORMAT,
                        "tools": [
                            {"server": server, "tool": tool, **shape.to_json()}
                            for (server, tool), shape in sorted(merged.items())
                        ],
                    }
                write_atomically(
                    self.path, json.dumps(document, ensure_ascii=False, indent=1), prefix=".shapes-"
                )
            self.problem = None  # a good file replaced a damaged one, or a failed write went through
        except OSError as exc:
            with self._lock:
                self._changed = False  # not again at once: the next shape change tries again
                self._saved_at = time.monotonic()
            if self.problem is None or "written" not in self.problem:
                log.warning(
                    "codemode: the inferred result shapes could not be written to %s: %s", self.path, exc
                )
            self.problem = f"{self.path} could not be written ({exc.strerror or exc}); shapes kept in memory"

    def close(self) -> None:
        """Read what is queued, write the shapes, stop the thread."""
        with self._lock:  # as observe() queues: nothing lands after the stop marker
            self._closed = True
            thread = self._thread
            if thread is not None:
                self._queue.put(_STOP)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
        with self._lock:
            dirty = self._changed or bool(self._unsaved)
        if dirty:
            self.save()

    def _load(self) -> None:
        self._shapes = self._read_file()

    def _read_file(self) -> dict[Key, InferredShape]:
        """The shapes in the file; a file that is not one is reported (``problem``, a warning) and ignored."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            return self._unreadable(f"cannot be read ({exc})")
        try:
            document = json.loads(text)
        except RecursionError:
            return self._unreadable("is nested too deep to read")
        except Exception as exc:  # ValueError, and whatever else a damaged file makes the parser raise
            return self._unreadable(f"is not JSON ({exc})")
        entries = document.get("tools") if isinstance(document, dict) else None
        if not isinstance(entries, list) or document.get("format") != _FORMAT:
            return self._unreadable(
                f'is not a shapes file (expected {{"format": {_FORMAT}, "tools": [...]}})'
            )
        shapes: dict[Key, InferredShape] = {}
        bad = 0
        for entry in entries:
            try:  # one damaged entry costs only itself
                shape = InferredShape.from_json(entry)
                if (
                    shape is None
                    or not isinstance(entry["server"], str)
                    or not isinstance(entry["tool"], str)
                ):
                    bad += 1
                    continue
            except Exception:
                bad += 1
                continue
            shapes[(entry["server"], entry["tool"])] = shape
        if bad:
            self._report(f"{self.path}: {bad} entr{'y' if bad == 1 else 'ies'} ignored (not a shape)")
        return shapes

    def _unreadable(self, why: str) -> dict[Key, InferredShape]:
        self._report(f"{self.path} {why}; ignored, and replaced when a shape is next written")
        return {}

    def _report(self, problem: str) -> None:
        if problem != self.problem:
            log.warning("codemode: inferred result shapes: %s", problem)
        self.problem = problem


def _text_size(result: dict[str, Any]) -> int:
    """Characters of text in a result's content blocks (what decoding would parse)."""
    blocks = result.get("content")
    if not isinstance(blocks, list):
        return 0
    return sum(len(b["text"]) for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) while the file is read, merged and written."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
