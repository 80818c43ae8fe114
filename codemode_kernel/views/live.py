"""The live trace of a running ``%%codemode`` cell: an ipywidgets view updated as tool calls come and go.

It exists only while the program runs, and only where someone watches (kernel/magics.py decides). Its
display carries an empty ``text/plain`` (so consoles without widgets show nothing of it while it runs) and
becomes, in place, the finished record (display.py's static MIME bundle, which survives saving and kernel
restarts): a saved notebook keeps the record where the view was, and no empty output. A program stopped
before its end (an interrupt) leaves a line saying so instead.
Updates come from the kernel's main thread only (see kernel/magics.py): widget messages then follow the
cell's other output in order. A call's start and end are shown at once; its progress (the server's
notifications, which can come many times a second) is coalesced, at most about ten refreshes a second
for the whole view, the latest state always shown.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from IPython.display import display, update_display

from ..calllog import CallRecord, call_order
from ..core.records import NodeAttempt, NoteRecord
from .display import nodes_text, stopped_bundle
from .render import call_html, code_html, esc, notes_html, status_badge

__all__ = ["LiveTrace", "LiveView", "open_live_view"]

_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
PROGRESS_INTERVAL = 0.1
"""Seconds between two refreshes of the view caused by progress alone: each sets widget values, and each
value set is a message to the frontend."""


class LiveView(Protocol):
    """What a running cell's live view does; the ipywidgets view and the trace-MIME one both do it."""

    def show(self) -> None:
        """Display the view (once, when the program starts)."""

    def tick(self) -> None:
        """Nothing came for a moment: refresh the clock."""

    def call(self, record: CallRecord) -> None:
        """A call started, reported progress, or ended."""

    def nodes(self, attempts: list[NodeAttempt]) -> None:
        """On a Ray cluster: the program began on a node (again, elsewhere, when one was lost)."""

    def note(self, note: NoteRecord) -> None:
        """The program said something with ``notify(message, **data)``."""

    def finish(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        """The program ended: the view becomes its finished record (``data``, ``metadata``), in place."""

    def close(self) -> None:
        """The program stopped before its end (an interrupt): the view says so. Nothing after ``finish``."""


def open_live_view(code: str, *, timeout: float | None, trace_mime: bool) -> LiveView:
    """The live view for this frontend: the extension's renderer when it announced it, else widgets."""
    if trace_mime:
        from .live_bundle import LiveTraceBundle

        return LiveTraceBundle(code, timeout=timeout)
    return LiveTrace(code, timeout=timeout)


class LiveTrace:
    """Status and elapsed time, the code (collapsed), one expandable row per tool call."""

    def __init__(self, code: str, *, timeout: float | None = None) -> None:
        import ipywidgets as widgets

        self._widgets = widgets
        self._started = time.monotonic()
        self._timeout = timeout
        self._header = widgets.HTML()
        self._header.add_class("codemode-trace-header")
        self._code = widgets.Accordion(children=[widgets.HTML(code_html(code))], titles=("code",))
        self._code.selected_index = None
        self._calls = widgets.VBox()
        self._notes_view = widgets.HTML()
        self._notes: list[NoteRecord] = []
        self.root = widgets.VBox([self._header, self._notes_view, self._code, self._calls])
        self.root.add_class("codemode-trace")
        self._rows: dict[str, Any] = {}
        self._places: dict[str, tuple[bool, int, float]] = {}
        self._statuses: dict[str, str] = {}
        self._pending: dict[str, CallRecord] = {}
        """Running calls whose new progress is not shown yet (the view was refreshed a moment ago)."""
        self._refreshed = 0.0
        self._display_id: str | None = None
        self._closed = False
        self._where: str | None = None
        self._header_value()

    def show(self) -> None:
        """Display the live view (text/plain empty, so it leaves no trace outside a widget frontend)."""
        view = {"version_major": 2, "version_minor": 0, "model_id": self.root.model_id}
        handle = display({_WIDGET_MIME: view, "text/plain": ""}, raw=True, display_id=True)  # type: ignore[no-untyped-call]
        self._display_id = handle.display_id

    def tick(self) -> None:
        """Nothing came for a moment: show the progress held back, refresh the header's clock."""
        self._flush(0.0)
        self._header_value()

    def _header_value(self) -> None:
        """The header: status, elapsed seconds (of the timeout), calls made, done and running."""
        elapsed = time.monotonic() - self._started
        limit = f" of {self._timeout:.0f} s" if self._timeout else ""
        running = sum(1 for status in self._statuses.values() if status == "running")
        done = len(self._rows) - running
        self._header.value = (
            f"<b>codemode</b> {status_badge('running')} {elapsed:.1f} s{limit} · "
            f"{len(self._rows)} tool call{'s' * (len(self._rows) != 1)}"
            + (f": {done} done, {running} running" if running else "")
            + (f" · {esc(self._where)}" if self._where else "")
        )

    def nodes(self, attempts: list[NodeAttempt]) -> None:
        """The node it runs on, in the header (``on node abcd1234 (running)``, or where it moved from)."""
        self._where = nodes_text(attempts)
        self._header_value()

    def note(self, note: NoteRecord) -> None:
        """Show the note under the header (the last ones; the record keeps them all)."""
        self._notes.append(note)
        self._notes_view.value = notes_html(self._notes)

    def call(self, record: CallRecord) -> None:
        """Add the call's row when it starts, fill it in when it ends (both at once); progress coalesced."""
        known = self._statuses.get(record.id)
        if known is not None and known != "running" and record.status == "running":
            return  # a running state that came after the end: the end stays shown
        if known == "running" == record.status:
            self._pending[record.id] = record  # the same running call, with new progress
            self._flush(PROGRESS_INTERVAL)
            return
        self._pending.pop(record.id, None)
        row = self._rows.get(record.id)
        if row is None:
            row = self._widgets.HTML()
            row.add_class("codemode-call")
            self._rows[record.id] = row
            self._places[record.id] = call_order(record)
            # In the program's order: a parallel batch's threads start their calls in any order.
            by_place = sorted(self._rows, key=self._places.__getitem__)
            self._calls.children = tuple(self._rows[call_id] for call_id in by_place)
        row.value = call_html(record.to_json())
        self._statuses[record.id] = record.status
        self._header_value()

    def _flush(self, interval: float) -> None:
        """Show the progress held back, unless the view was refreshed under ``interval`` seconds ago."""
        now = time.monotonic()
        if not self._pending or now - self._refreshed < interval:
            return
        for call_id, record in self._pending.items():
            self._rows[call_id].value = call_html(record.to_json())
        self._pending.clear()
        self._refreshed = now
        self._header_value()

    def finish(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        """Replace the view with the finished record, in place; close every widget."""
        self._replace(data, metadata)

    def close(self) -> None:
        """Replace the view with a line saying the program stopped; close every widget."""
        self._replace(stopped_bundle(len(self._rows)), {})

    def _replace(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        if self._closed:
            return
        self._closed = True
        if self._display_id is not None:
            update_display(data, raw=True, metadata=metadata, display_id=self._display_id)  # type: ignore[no-untyped-call]
            self._display_id = None
        parts = (
            *self._rows.values(),
            *self._code.children,
            self._code,
            self._calls,
            self._header,
            self._notes_view,
        )
        for widget in (*parts, self.root):
            for model in (getattr(widget, "layout", None), getattr(widget, "style", None), widget):
                if model is not None:
                    model.close()  # layouts and styles are models of their own: none may linger
