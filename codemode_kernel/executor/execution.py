"""One running execution's state on the hub's loop, and the caller's live views of it.

Shared by the Executor (which starts, waits for and ends an execution) and WorkerRequests (which answers
the worker's requests during it); neither needs the other's internals to read or update it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..calllog import CallRecord
from ..core.records import NOTE_DATA_BYTES, NOTE_MESSAGE_CHARS, NOTES_PER_RUN, NodeAttempt, NoteRecord
from ..hub.connection import ProgressCallback
from ..worker.protocol import (
    DoneFrame,
    KernelFrame,
    NotifyFrame,
    ProtectionsFrame,
    ToolProgressFrame,
    encode_frame,
)
from .owned import CallPlan

__all__ = [
    "CallCallback",
    "Execution",
    "LLMHandler",
    "NodeWatcher",
    "NoteWatcher",
    "OutputCallback",
    "ProgressWatcher",
    "Watchers",
]

log = logging.getLogger(__name__)

LLMHandler = Callable[[dict[str, Any]], Awaitable[str]]
"""``await llm(request)``: the model's answer to a program's ``llm()`` (prompt, system, max_tokens)."""
OutputCallback = Callable[[str, str], None]
"""``on_output(stream, text)``: what the program printed, as it prints it."""
CallCallback = Callable[[CallRecord], None]
"""``on_call(record)``: one of the execution's tool calls started (status running) or ended."""
ProgressWatcher = Callable[[str, int | None, float, float | None, str | None], None]
"""``on_progress(tool, seq, progress, total, message)``: a server's progress notification for a call."""
NoteWatcher = Callable[[NoteRecord], None]
"""``on_note(note)``: the program sent a note with ``notify(message, **data)``."""
NodeWatcher = Callable[[list[NodeAttempt]], None]
"""``on_node(attempts)``: a run on a Ray cluster began an attempt on a node; the last attempt's outcome is
``running``, the earlier ones say how they ended (a node lost under the run)."""


@dataclass(frozen=True)
class Watchers:
    """The caller's live views of one execution, called on the hub's thread."""

    on_output: OutputCallback | None = None
    on_call: CallCallback | None = None
    on_progress: ProgressWatcher | None = None
    on_node: NodeWatcher | None = None
    on_note: NoteWatcher | None = None

    def skipping(self, shown: Mapping[str, int]) -> Watchers:
        """These views for a run replayed elsewhere: what they were shown already is not shown again.

        ``shown`` counts the characters of each stream (``stdout``, ``stderr``) the last attempt printed; a
        replay prints them again first (its calls answered from the record, the program does the same).
        """
        if self.on_output is None or not any(shown.values()):
            return self
        left = dict(shown)
        show = self.on_output

        def on_output(stream: str, text: str) -> None:
            skip = min(left.get(stream, 0), len(text))
            left[stream] = left.get(stream, 0) - skip
            if text[skip:]:
                show(stream, text[skip:])

        return replace(self, on_output=on_output)


@dataclass
class Execution:
    """The state of one running execution, on the hub's loop."""

    execution_id: str
    writer: asyncio.StreamWriter
    max_output: int
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    output_size: int = 0
    truncated: bool = False
    calls: set[asyncio.Task[None]] = field(default_factory=set)
    """The worker's requests being answered (tool calls, artifact requests): cancelled when it ends."""
    fresh: bool = True
    """Whether the worker runs its first program: only then may its first frame be ``protections``."""
    frames_read: int = 0
    done: DoneFrame | None = None
    broken: str | None = None
    plan: CallPlan = field(default_factory=CallPlan)
    """Where this run's calls are answered: a replay record, the caller's tools, the servers."""
    pending: list[dict[str, Any]] = field(default_factory=list)
    """The calls left to the caller (``owned.py``), with their ``seq``."""
    pending_changed: asyncio.Event = field(default_factory=asyncio.Event)
    protections: ProtectionsFrame | None = None
    watchers: Watchers = field(default_factory=Watchers)
    records: dict[str, CallRecord] = field(default_factory=dict)
    """This execution's tool calls, by id, in the order they started (kept however long the log grows)."""
    artifact_ids: list[str] = field(default_factory=list)
    """Artifacts this execution made (stored by the program, or large tool results), in order."""
    started: float = field(default_factory=time.monotonic)
    """``time.monotonic()`` when the run was asked for (a note's ``at_ms`` counts from it)."""
    notes: list[NoteRecord] = field(default_factory=list)
    notes_dropped: int = 0

    def collect(self, record: CallRecord) -> None:
        """The call log's subscriber: keep this execution's records and show them to the caller."""
        if record.execution_id != self.execution_id:
            return
        self.records[record.id] = record
        if record.artifact_id is not None and record.artifact_id not in self.artifact_ids:
            self.artifact_ids.append(record.artifact_id)
        if self.watchers.on_call is not None:
            try:
                self.watchers.on_call(record)
            except Exception:  # a broken live view must not break the execution
                log.exception("an on_call callback failed")

    def output(self, stream: str, data: str) -> None:
        """Keep what the program printed, up to ``max_output`` characters, and show it to the caller."""
        room = self.max_output - self.output_size
        if room <= 0:
            self.truncated = True
            return
        if len(data) > room:
            data, self.truncated = data[:room], True
        self.output_size += len(data)
        (self.stdout if stream == "stdout" else self.stderr).append(data)
        if self.watchers.on_output is not None:
            try:
                self.watchers.on_output(stream, data)
            except Exception:  # a broken live view must not break the execution
                log.exception("an on_output callback failed")

    def note(self, frame: NotifyFrame) -> None:
        """Keep a note the program sent (within the limits: the program is not trusted) and show it."""
        if len(self.notes) >= NOTES_PER_RUN:
            self.notes_dropped += 1
            return
        message = frame["message"]
        if len(message) > NOTE_MESSAGE_CHARS:
            message = message[:NOTE_MESSAGE_CHARS] + f"… ({len(message) - NOTE_MESSAGE_CHARS} characters cut)"
        data = frame["data"]
        try:
            size = len(json.dumps(data, allow_nan=False))
        except (TypeError, ValueError):
            size = NOTE_DATA_BYTES + 1
        note = NoteRecord(
            message=message,
            data=data if size <= NOTE_DATA_BYTES else {"cut": size},
            at_ms=round((time.monotonic() - self.started) * 1000, 3),
        )
        self.notes.append(note)
        if self.watchers.on_note is not None:
            try:
                self.watchers.on_note(note)
            except Exception:  # a broken live view must not break the execution
                log.exception("an on_note callback failed")

    def progress_of(self, tool: str, seq: int | None, call_id: int | None = None) -> ProgressCallback | None:
        """The hub's progress callback for one call, when anyone watches its progress.

        The caller's watcher gets it, and the program when it watches the call (``call_id``, its request:
        the updates go as ``tool_progress`` frames).
        """
        watch = self.watchers.on_progress
        if watch is None and call_id is None:
            return None

        def forward(progress: float, total: float | None, message: str | None) -> None:
            if call_id is not None:
                self.reply(
                    ToolProgressFrame(
                        type="tool_progress", id=call_id, progress=progress, total=total, message=message
                    )
                )
            if watch is None:
                return
            try:
                watch(tool, seq, progress, total, message)
            except Exception:  # a broken live view must not break the call
                log.exception("an on_progress callback failed")

        return forward

    def reply(self, message: KernelFrame) -> None:
        """Send a frame to the worker, unless its channel is already closing."""
        if not self.writer.is_closing():
            self.writer.write(encode_frame(message))

    def track(self, request: Awaitable[None]) -> None:
        """Answer one of the worker's requests concurrently; it is cancelled if the execution ends first."""
        task = asyncio.ensure_future(request)
        self.calls.add(task)
        task.add_done_callback(self.calls.discard)
