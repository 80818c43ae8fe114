"""What a running program does, sent to the MCP client while it runs: progress and log notifications.

The executor reports from the hub's thread (a call started or ended, a server's progress on a call, lines
the program printed, a note it sent with ``notify()``); the relay moves each event to the MCP server's loop
and sends it there. With a progress token in the request, every event is a ``notifications/progress``
whose message says what happened; printed lines and notes are also ``notifications/message`` entries
(logger ``stdout`` / ``stderr`` / ``note``, level info / warning / info) for clients that asked for log
messages (at or above the level a handshake-era client set with ``logging/setLevel``: ``loglevel.py``).
Output is coalesced: a program printing in a tight loop costs one notification per stream per batch,
never one per line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import LoggingLevel

from ..calllog import CallRecord
from ..core.records import NoteRecord

__all__ = ["ProgressRelay"]

log = logging.getLogger(__name__)

ARGUMENTS_LIMIT = 200
"""Characters of a call's arguments (as JSON) a notification shows."""
MESSAGE_LIMIT = 2000
"""Characters of printed output one notification carries; the rest of a batch is cut, and said so."""


@dataclass(frozen=True)
class _Event:
    kind: str  # "stdout" | "stderr" | "call" | "progress" | "note"
    text: str


class ProgressRelay:
    """Forwards one execution's events to the client that asked for it, in order, off the hub's thread."""

    def __init__(
        self,
        ctx: Context[Any, Any],
        loop: asyncio.AbstractEventLoop,
        wants_log: Callable[[LoggingLevel], bool] | None = None,
    ) -> None:
        """``wants_log``: whether the client is to get a log message at a level (``LogLevels.wants``)."""
        self._ctx = ctx
        self._loop = loop
        self._wants_log = wants_log
        self._queue: asyncio.Queue[_Event | None] = asyncio.Queue()
        self._count = 0
        self._task: asyncio.Task[None] | None = None

    def rebind(self, ctx: Context[Any, Any]) -> None:
        """Send from now on for ``ctx``'s request (a 2026-07-28 client's next round: ``rounds.py``)."""
        self._ctx = ctx

    # -- the executor's watchers, called on the hub's thread ----------------------------------------

    def on_output(self, stream: str, text: str) -> None:
        """What the program printed (``Executor.run``'s ``on_output``)."""
        self._put(_Event(stream, text))

    def on_call(self, record: CallRecord) -> None:
        """A tool call started or ended (``on_call``)."""
        name = f"call #{record.seq} {record.tool}"
        if record.status == "running" and record.progress is not None:
            return  # the same call again with news of its progress: on_progress reports that
        if record.status == "running":
            text = f"{name} {_arguments(record.arguments)} started"
        else:
            text = f"{name} ended: {record.status} in {record.duration_ms or 0:.0f} ms"
        self._put(_Event("call", text))

    def on_progress(
        self, tool: str, seq: int | None, progress: float, total: float | None, message: str | None
    ) -> None:
        """A server's progress on a call (``on_progress``)."""
        amount = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
        text = f"call #{seq} {tool}: {amount}" + (f" {message}" if message else "")
        self._put(_Event("progress", text))

    def on_note(self, note: NoteRecord) -> None:
        """A note the program sent with ``notify()`` (``on_note``): a progress message, and a log entry."""
        data = f" {_arguments(note['data'])}" if note["data"] else ""
        self._put(_Event("note", f"{note['message']}{data}"))

    def _put(self, event: _Event | None) -> None:
        # RuntimeError: the server's loop has closed (serve is stopping), so there is nobody to tell.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._queue.put_nowait, event)

    # -- on the MCP server's loop --------------------------------------------------------------------

    def start(self) -> None:
        """Begin sending; call on the MCP server's loop before the execution starts."""
        self._task = asyncio.ensure_future(self._pump())

    async def finish(self) -> None:
        """Send what is queued, then stop (the watchers' last calls are already queued by then)."""
        if self._task is None:
            return
        await asyncio.sleep(0)  # let call_soon_threadsafe callbacks already scheduled run first
        self._queue.put_nowait(None)
        with contextlib.suppress(Exception):
            await self._task

    def cancel(self) -> None:
        """Stop sending at once (the request was cancelled)."""
        if self._task is not None:
            self._task.cancel()

    async def _pump(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            end = None in batch
            for event in _coalesce([e for e in batch if e is not None]):
                await self._send(event)
            if end:
                return

    async def _send(self, event: _Event) -> None:
        self._count += 1
        try:
            await self._ctx.report_progress(self._count, None, _label(event))
            level: LoggingLevel = "warning" if event.kind == "stderr" else "info"
            logged = event.kind in ("stdout", "stderr", "note")
            if logged and (self._wants_log is None or self._wants_log(level)):
                with warnings.catch_warnings():
                    # Logging is deprecated by the 2026-07-28 protocol, yet hosts on earlier ones show it.
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await self._ctx.log(level, event.text, logger_name=event.kind)
        except Exception:  # a client gone or a closed stream must not fail the execution
            log.debug("a progress notification could not be sent", exc_info=True)


def _coalesce(events: list[_Event]) -> list[_Event]:
    """Join consecutive output of one stream into one event, cut to MESSAGE_LIMIT characters."""
    merged: list[_Event] = []
    for event in events:
        last = merged[-1] if merged else None
        if last is not None and event.kind in ("stdout", "stderr") and last.kind == event.kind:
            merged[-1] = _Event(event.kind, last.text + event.text)
        else:
            merged.append(event)
    return [_cut(event) for event in merged]


def _cut(event: _Event) -> _Event:
    if event.kind not in ("stdout", "stderr") or len(event.text) <= MESSAGE_LIMIT:
        return event
    cut = len(event.text) - MESSAGE_LIMIT
    return _Event(event.kind, event.text[:MESSAGE_LIMIT] + f"… ({cut} more characters in the result)")


def _label(event: _Event) -> str:
    if event.kind in ("stdout", "stderr", "note"):
        return f"{event.kind}: {event.text.rstrip()}"
    return event.text


def _arguments(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, ensure_ascii=False, default=str)
    return text if len(text) <= ARGUMENTS_LIMIT else text[:ARGUMENTS_LIMIT] + "…"
