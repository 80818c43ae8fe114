"""The live trace as the trace MIME type, for frontends with the extension's renderer (kernel/frontend.py).

One output, displayed when the program starts and replaced in place (``update_display_data``) as calls
start and end, so the extension draws the running record with the same renderer as the finished one.
Updates are throttled (a record of thousands of calls, or a server reporting progress many times a
second, must not send thousands of copies of the record; the latest state is always sent) and,
like the ipywidgets view, the output becomes the finished record at the end, in place.
"""

from __future__ import annotations

import time
from typing import Any

from IPython.display import display, update_display

from ..calllog import CallRecord, call_order
from ..core.records import NodeAttempt, NoteRecord
from .display import TRACE_MIME, split_volatile, stable_notes, stopped_bundle

__all__ = ["LiveTraceBundle"]

_MIN_INTERVAL = 0.2  # seconds between two updates caused by calls
_CLOCK_INTERVAL = 1.0  # seconds between two updates of the elapsed time alone


class LiveTraceBundle:
    """The running record: status ``running``, the code, the calls so far, the elapsed time."""

    def __init__(self, code: str, *, timeout: float | None = None) -> None:
        self._code = code
        self._timeout = timeout
        self._started = time.monotonic()
        self._calls: dict[str, CallRecord] = {}
        self._display_id: str | None = None
        self._sent = 0.0
        self._dirty = False
        self._nodes: list[NodeAttempt] = []
        self._notes: list[NoteRecord] = []

    def bundle(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The (data, metadata) of the record so far; ``text/plain`` empty, as the widget view's."""
        records = sorted(self._calls.values(), key=call_order)
        calls, times = split_volatile([record.to_json() for record in records])
        trace: dict[str, Any] = {
            "status": "running",
            "code": self._code,
            "value": None,
            "error": None,
            "stdout": "",
            "stderr": "",
            "tool_calls": calls,
            "artifacts": [],
            "timeout_s": self._timeout,
        }
        if self._notes:
            trace["notes"] = stable_notes(self._notes)
        elapsed_ms = (time.monotonic() - self._started) * 1000
        volatile: dict[str, Any] = {"duration_ms": round(elapsed_ms, 1), "tool_calls": times}
        if self._nodes:
            volatile["nodes"] = self._nodes
        metadata = {TRACE_MIME: volatile}
        return {TRACE_MIME: trace, "text/plain": ""}, metadata

    def show(self) -> None:
        """Display the running record."""
        data, metadata = self.bundle()
        handle = display(data, raw=True, metadata=metadata, display_id=True)  # type: ignore[no-untyped-call]
        self._display_id = handle.display_id
        self._sent = time.monotonic()

    def call(self, record: CallRecord) -> None:
        """A call started, reported progress or ended: shown at once unless the last update was recent.

        Updates are 0.2 s apart at least: a server reporting progress many times a second costs at most
        five updates a second.
        """
        known = self._calls.get(record.id)
        if known is not None and known.status != "running" and record.status == "running":
            return  # a running state that came after the end: the end stays shown
        self._calls[record.id] = record
        self._dirty = True
        self._send(_MIN_INTERVAL)

    def nodes(self, attempts: list[NodeAttempt]) -> None:
        """The node it runs on (and those it moved from), in the running record's metadata: shown at once."""
        self._nodes = list(attempts)
        self._dirty = True
        self._send(0.0)

    def note(self, note: NoteRecord) -> None:
        """The program sent a note: in the running record at once (notes are what a person waits for)."""
        self._notes.append(note)
        self._dirty = True
        self._send(0.0)

    def tick(self) -> None:
        """Nothing happened for a moment: send what is pending, or the clock once a second."""
        self._send(0.0 if self._dirty else _CLOCK_INTERVAL)

    def finish(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        """The output becomes the finished record (the same renderer draws it)."""
        self._replace(data, metadata)

    def close(self) -> None:
        """The program stopped before its end: the output says so."""
        self._replace(stopped_bundle(len(self._calls)), {})

    def _replace(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        if self._display_id is not None:
            update_display(data, raw=True, metadata=metadata, display_id=self._display_id)  # type: ignore[no-untyped-call]
            self._display_id = None

    def _send(self, interval: float) -> None:
        now = time.monotonic()
        if self._display_id is None or now - self._sent < interval:
            return
        data, metadata = self.bundle()
        update_display(data, raw=True, metadata=metadata, display_id=self._display_id)  # type: ignore[no-untyped-call]
        self._sent, self._dirty = now, False
