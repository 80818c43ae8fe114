"""Background runs: a program that outlives the call that started it.

``Executor.start`` runs a program as ``Executor.run`` does, on the hub's loop, and returns at once with a
``Job``. The job keeps what the program printed, the calls it made and the notes it sent, so whoever
started it can come back for them (``updates``: what came since a cursor), wait a while for its end or its
next note (``wait``, ``wait_async``), or stop it (``cancel``: SIGINT, the grace period, SIGKILL, as at a
deadline; the result says ``cancelled``). Its result is the one a foreground run of the same program
records, whichever way it ended.

Readers are any threads and loops (the kernel's shell thread, ``codemode serve``'s loop); the buffers are
written on the hub's thread, under a lock. What the job keeps is bounded as a run's result is: output up to
the executor's ``max_output_bytes``, notes up to ``NOTES_PER_RUN``, one record per call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from ..calllog import CallRecord, call_order
from ..core.records import NodeAttempt, NoteRecord, ToolCallRecord
from .execution import Watchers
from .result import ExecutionResult
from .run import Run

__all__ = ["Job", "JobCursor", "JobUpdate", "first_line"]

JobState = Literal["running", "ended"]


def first_line(code: str, limit: int = 80) -> str:
    """A program's first non-empty line, cut to ``limit`` characters: how listings of runs name it."""
    line = next((text.strip() for text in code.splitlines() if text.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


@dataclass(frozen=True)
class JobCursor:
    """How much of a job a reader has had: characters of each stream, notes, call changes."""

    stdout: int = 0
    stderr: int = 0
    notes: int = 0
    calls: int = 0


@dataclass(frozen=True)
class JobUpdate:
    """What a job did since a cursor, and the cursor after it (pass it to the next ``updates``)."""

    execution_id: str
    state: JobState
    elapsed_s: float
    stdout: str
    stderr: str
    calls: list[ToolCallRecord]
    """Calls that started, progressed or ended since the cursor, each as it is now, in the program's order."""
    notes: list[NoteRecord]
    cursor: JobCursor
    output_left: int
    """Characters printed since the cursor that did not fit in this update (the next one starts with them)."""
    result: ExecutionResult | None
    """The run's result once it ended (``state`` is ``ended``)."""


@dataclass(eq=False)
class Job:
    """A program running in the background; ``Executor.start`` makes it."""

    run: Run
    cancel_on: Callable[[Callable[[], None]], object]
    """Runs a function on the hub's loop (where the run's stop is set)."""
    started_at: float = field(default_factory=time.time)
    """When it started (seconds since the epoch)."""
    future: concurrent.futures.Future[ExecutionResult] = field(default_factory=concurrent.futures.Future)
    """Done with the run's result."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stdout: list[str] = field(default_factory=list)
    _stderr: list[str] = field(default_factory=list)
    _stdout_size: int = 0
    _stderr_size: int = 0
    _notes: list[NoteRecord] = field(default_factory=list)
    _calls: dict[str, tuple[tuple[bool, int, float], ToolCallRecord]] = field(default_factory=dict)
    _call_changes: list[str] = field(default_factory=list)
    _nodes: list[NodeAttempt] = field(default_factory=list)
    _wakers: list[tuple[concurrent.futures.Future[None], bool]] = field(default_factory=list)
    """Waiters to wake at the end, and (those marked True) at a note too."""

    @property
    def execution_id(self) -> str:
        """The run's id, as its result and its calls' records carry it."""
        return self.run.execution_id

    @property
    def code(self) -> str:
        """The program as written."""
        return self.run.code

    @property
    def done(self) -> bool:
        """Whether the run has ended (its result is in ``result``)."""
        return self.future.done()

    @property
    def result(self) -> ExecutionResult | None:
        """The run's result once it ended, else None."""
        return self.future.result() if self.future.done() else None

    @property
    def cancelling(self) -> bool:
        """Whether someone asked it to stop."""
        return self.run.stop.requested

    @property
    def call_count(self) -> int:
        """Tool calls it made so far (started, running or ended)."""
        with self._lock:
            return len(self._calls)

    @property
    def note_count(self) -> int:
        """Notes it sent so far (compare with a cursor's ``notes``: news for that reader)."""
        with self._lock:
            return len(self._notes)

    def elapsed(self) -> float:
        """Seconds since it was started (until its end, once it ended)."""
        result = self.result
        if result is not None:
            return result.duration_ms / 1000
        return time.monotonic() - self.run.started

    # -- on the hub's thread ------------------------------------------------------------------------

    def watching(self, watchers: Watchers) -> Watchers:
        """The caller's live views, with this job's buffers filled first."""

        def on_output(stream: str, text: str) -> None:
            with self._lock:
                if stream == "stdout":
                    self._stdout.append(text)
                    self._stdout_size += len(text)
                else:
                    self._stderr.append(text)
                    self._stderr_size += len(text)
            if watchers.on_output is not None:
                watchers.on_output(stream, text)

        def on_call(record: CallRecord) -> None:
            with self._lock:
                self._calls[record.id] = (call_order(record), record.to_json())
                self._call_changes.append(record.id)
            if watchers.on_call is not None:
                watchers.on_call(record)

        def on_note(note: NoteRecord) -> None:
            with self._lock:
                self._notes.append(note)
            try:
                if watchers.on_note is not None:
                    # Before the wake: a caller's view that sends the note (serve's progress) has it queued
                    # by the time the waiter it wakes answers, and so sends it within that answer's call.
                    watchers.on_note(note)
            finally:
                self._wake(note=True)

        def on_node(attempts: list[NodeAttempt]) -> None:
            with self._lock:
                self._nodes = list(attempts)
            if watchers.on_node is not None:
                watchers.on_node(attempts)

        return replace(watchers, on_output=on_output, on_call=on_call, on_note=on_note, on_node=on_node)

    def finish(self, result: ExecutionResult) -> None:
        """The run ended: keep its result and wake every waiter."""
        if not self.future.done():
            self.future.set_result(result)
        self._wake(note=False)

    def release(self) -> None:
        """Drop what it printed, called and noted, once ended: its result holds all of it.

        For a caller that keeps ended jobs a while (``codemode serve``, until the client collects the
        result) and reads only the result by then; ``updates`` afterwards has nothing more to give.
        """
        if not self.done:
            return
        with self._lock:
            self._stdout, self._stderr, self._notes = [], [], []
            self._calls, self._call_changes = {}, []

    def _wake(self, *, note: bool) -> None:
        """Wake the waiters for the end (all of them), or for a note (those that wait for one)."""
        with self._lock:
            woken = [(w, on_note) for w, on_note in self._wakers if on_note or not note]
            self._wakers = [(w, on_note) for w, on_note in self._wakers if not (on_note or not note)]
        for waker, _ in woken:
            with contextlib.suppress(concurrent.futures.InvalidStateError):  # its waiter gave up just now
                waker.set_result(None)

    # -- from any thread or loop --------------------------------------------------------------------

    def cancel(self, by: str) -> None:
        """Stop the run as at its deadline (SIGINT, the grace period, SIGKILL); ``by`` says who did.

        Returns at once; the result (status ``cancelled``, every call it made recorded) follows.
        """
        if not self.done:
            self.cancel_on(lambda: self.run.stop.set(by))

    def updates(self, cursor: JobCursor | None = None, *, max_chars: int | None = None) -> JobUpdate:
        """What the job did since ``cursor`` (from its start when None), at most ``max_chars`` of output.

        Output that does not fit stays for the next update: pass the returned cursor.
        """
        cursor = cursor or JobCursor()
        result = self.result  # read first: an ended job's buffers are complete by then
        with self._lock:
            stdout = "".join(self._stdout)[cursor.stdout :]
            stderr = "".join(self._stderr)[cursor.stderr :]
            notes = self._notes[cursor.notes :]
            changed = dict.fromkeys(self._call_changes[cursor.calls :])
            calls = [record for _, record in sorted((self._calls[i] for i in changed), key=lambda c: c[0])]
            change_count = len(self._call_changes)
        left = 0
        if max_chars is not None and len(stdout) + len(stderr) > max_chars:
            total = len(stdout) + len(stderr)
            stdout = stdout[:max_chars]
            stderr = stderr[: max(0, max_chars - len(stdout))]
            left = total - len(stdout) - len(stderr)
        return JobUpdate(
            execution_id=self.execution_id,
            state="ended" if result is not None else "running",
            elapsed_s=round(self.elapsed(), 3),
            stdout=stdout,
            stderr=stderr,
            calls=calls,
            notes=notes,
            cursor=JobCursor(
                stdout=cursor.stdout + len(stdout),
                stderr=cursor.stderr + len(stderr),
                notes=cursor.notes + len(notes),
                calls=change_count,
            ),
            output_left=left,
            result=result if left == 0 else None,
        )

    def wait(self, timeout: float | None = None) -> ExecutionResult | None:
        """Block until the run ends (its result) or ``timeout`` seconds pass (None)."""
        try:
            return self.future.result(timeout)
        except concurrent.futures.TimeoutError:
            return None

    async def wait_async(self, timeout: float, *, until_note: bool = False) -> ExecutionResult | None:
        """Await the run's end (its result) for up to ``timeout`` seconds, from any event loop.

        With ``until_note`` a note the program sends ends the wait too (None then, as at the timeout).
        """
        waker: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._lock:
            self._wakers.append((waker, until_note))
        if self.done:  # it ended before the waker was listed, so nobody would set it
            waker.set_result(None)
        try:
            await asyncio.wait({asyncio.wrap_future(waker)}, timeout=timeout)
        finally:
            waker.cancel()
            with self._lock:
                self._wakers = [entry for entry in self._wakers if entry[0] is not waker]
        return self.result
