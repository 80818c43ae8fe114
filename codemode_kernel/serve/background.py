"""Programs that outlive the ``execute_python`` call that started them, and whose they are.

``execute_python`` waits ``wait_s`` seconds; a program still running then is answered with what it did so
far and keeps running as a ``BackgroundRun``. The client comes back with ``wait_execution`` (what came
since the last answer, then the final record) or ``cancel_execution``, naming the run by the id the first
answer gave. A run belongs to the client that started it, by the rule sessions follow (``sessions.py``):
its scope is the stdio client or the MCP session the server issued and checks, and only that scope finds
it. A request without a scope (the 2026-07-28 protocol over HTTP) gets an id with a random part that this
table issued: a key only the client that received it holds, and nothing lists it.

Each call that waits gets the run's progress, output and notes as notifications (its own ``ProgressRelay``);
between calls nobody is told, and nothing is lost: the job keeps it all for the next answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mcp.server.mcpserver.exceptions import ToolError

from ..approvals import ApprovalRequest, Decision
from ..calllog import CallRecord
from ..core.records import NoteRecord
from ..elicitation import Answer, Question
from ..executor.jobs import Job, JobCursor, JobUpdate, first_line
from .approval import ClientApprover
from .client_tools import ClientRun
from .progress import ProgressRelay
from .reply import Finished
from .rounds import WaitingRun
from .sessions import SessionRef

__all__ = ["KEEP_ENDED_S", "NEVER_STARTED", "Asker", "BackgroundRun", "BackgroundRuns"]

KEEP_ENDED_S = 600.0
"""How long a run that ended keeps its final record for a client that has not collected it."""
MAX_KEPT = 128
"""Runs kept at most (running, and ended but not collected): the oldest ended ones go first."""
MAX_KEPT_OUTPUT = 64 * 2**20
"""Characters of output the ended, uncollected runs may hold together; beyond, the oldest ended ones go
(a client that starts programs printing much and never collects them cannot make serve hold more)."""
NEVER_STARTED = (
    "execution_id: {handle!r} was cancelled before it started (it was waiting for a free place): nothing "
    "ran. Run it again with execute_python if you still need it"
)


@dataclass(eq=False)
class BackgroundRun:
    """One program past its first wait: its job, its final answer once made, and who may reach it."""

    scope: str | None
    code: str
    ref: SessionRef | None
    """The session it runs in, if any."""
    client_run: ClientRun | None
    """The client's own tools and their record (``client_tools.py``), if any."""
    approver: ClientApprover
    """Asks the client about calls that need approval, through the call that waits now (``rebind``)."""
    waiting: WaitingRun[Finished] | None = None
    """A 2026-07-28 client's run across its rounds (``rounds.py``): its questions come with an answer."""
    task: asyncio.Future[Finished] | None = None
    """Runs the program and makes its final answer (admission, the run, the stored whole): on serve's loop."""
    handle: str = ""
    """The id its client names it by (given when it is kept past its first wait)."""
    execution_id: str = field(default_factory=lambda: secrets.token_hex(6))
    """Its run's id, chosen before the run starts, so a run kept while still queued keeps it."""
    job: Job | None = None
    """Set once the program started (it may wait for a free place first)."""
    cursor: JobCursor = field(default_factory=JobCursor)
    """How much of it the client was sent."""
    relay: ProgressRelay | None = None
    """The waiting call's notifications, when a call waits."""
    ended_at: float | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One waiting call at a time gets the updates, so none is sent twice or skipped."""
    calling: asyncio.Event = field(default_factory=asyncio.Event)
    """Set while a call waits on it: a handshake-era question can only be asked through such a call."""

    def asker(self, loop: asyncio.AbstractEventLoop) -> Asker:
        """The approver to run it with: its client's, asked through the call that waits (``Asker``)."""
        return Asker(self, loop)

    # -- watchers, on the hub's thread -------------------------------------------------------------

    def on_output(self, stream: str, text: str) -> None:
        """Tell the waiting call, if one waits."""
        if (relay := self.relay) is not None:
            relay.on_output(stream, text)

    def on_call(self, record: CallRecord) -> None:
        """Tell the waiting call, if one waits."""
        if (relay := self.relay) is not None:
            relay.on_call(record)

    def on_progress(
        self, tool: str, seq: int | None, done: float, total: float | None, text: str | None
    ) -> None:
        """Tell the waiting call, if one waits."""
        if (relay := self.relay) is not None:
            relay.on_progress(tool, seq, done, total, text)

    def on_note(self, note: NoteRecord) -> None:
        """Tell the waiting call, if one waits."""
        if (relay := self.relay) is not None:
            relay.on_note(note)

    # -- on serve's loop -----------------------------------------------------------------------------

    @property
    def answer_task(self) -> asyncio.Future[Finished]:
        """The task making its final answer (set as it starts)."""
        assert self.task is not None
        return self.task

    @property
    def ended(self) -> bool:
        """Whether its final answer is made (or its task failed)."""
        return self.answer_task.done()

    @property
    def status(self) -> str:
        """``queued`` (waiting for a free place), ``running``, or the final status."""
        task = self.answer_task
        if task.cancelled():
            return "cancelled"
        if task.done() and task.exception() is None:
            return task.result().result.status
        if task.done():
            return "failed"
        if self.job is None:
            return "queued"
        return "running"

    def elapsed(self) -> float:
        """Seconds since it started (0 while queued)."""
        return self.job.elapsed() if self.job is not None else 0.0

    def finished(self) -> Finished:
        """Its final answer, once ``ended``.

        Raises:
            ToolError: it was cancelled while it waited for a place (its task has no answer), or it failed.
        """
        if self.answer_task.cancelled():
            raise ToolError(NEVER_STARTED.format(handle=self.handle))
        return self.answer_task.result()

    def take_update(self, max_chars: int) -> JobUpdate | None:
        """What came since the client's cursor (at most ``max_chars`` of output); the cursor moves on."""
        if self.job is None:
            return None
        update = self.job.updates(self.cursor, max_chars=max_chars)
        self.cursor = update.cursor
        return update

    async def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for its end (its final answer made) or a note; True when it ended."""
        deadline = asyncio.get_running_loop().time() + seconds
        task = self.answer_task
        # Its first step takes a free place and starts the program without waiting: let it run before
        # deciding, so that even ``wait_s=0`` is answered ``running`` (not ``queued``) when a place is free.
        await asyncio.sleep(0)
        while self.job is None and not task.done():  # queued for a place: wait for the start
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return False
            await asyncio.wait({task}, timeout=min(left, 0.05))
        if self.job is not None and not task.done():
            if self.job.note_count <= self.cursor.notes:  # else a note came while no call waited: answer now
                left = max(0.0, deadline - asyncio.get_running_loop().time())
                await self.job.wait_async(left, until_note=True)
            if self.job.done:  # the answer is made right after (storing a cut whole, off the loop)
                await asyncio.wait({task})
        return task.done()

    def first_line(self) -> str:
        """The program's first non-empty line, for listings."""
        return first_line(self.code)


class BackgroundRuns:
    """The background runs of every client, by handle, found only from the scope that started them."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._runs: dict[str, BackgroundRun] = {}
        self._clock = clock

    def keep(self, run: BackgroundRun) -> None:
        """Keep ``run`` past its first wait, and give it its handle.

        The handle is its execution id, with a random part when it has no scope (then the only key to it).
        """
        self._sweep()
        ident = run.execution_id
        run.handle = ident if run.scope is not None else f"{ident}~{secrets.token_urlsafe(12)}"
        run.answer_task.add_done_callback(lambda _: self._ended(run))
        self._runs[run.handle] = run

    def find(self, scope: str | None, handle: str) -> BackgroundRun:
        """The run ``handle`` names, if ``scope`` started it.

        Raises:
            ToolError: no such run of this client (ended and collected, expired, or another client's).
        """
        run = self._runs.get(handle)
        if run is None or run.scope != scope:
            yours = ", ".join(r.handle for r in self.of(scope)) if scope is not None else ""
            known = f"; yours are: {yours}" if yours else ""
            raise ToolError(
                f"execution_id: no execution {handle!r} of this client{known}. An execution is kept until "
                f"its final result is collected, and {KEEP_ENDED_S:g} s after it ends; run the program again "
                "with execute_python if you need it"
            )
        return run

    def of(self, scope: str | None) -> list[BackgroundRun]:
        """The runs ``scope`` started and has not collected, oldest first (none without a scope)."""
        if scope is None:
            return []
        return [run for run in self._runs.values() if run.scope == scope]

    def collected(self, run: BackgroundRun) -> None:
        """Its final record reached the client: forget it."""
        self._runs.pop(run.handle, None)

    def cancel_all(self, by: str) -> None:
        """Stop every run (serve is stopping)."""
        self._cancel(list(self._runs.values()), by)

    def cancel_of(self, scope: str, by: str) -> None:
        """Stop every run of ``scope`` (its MCP session ended: nobody can reach them any more)."""
        self._cancel([run for run in self._runs.values() if run.scope == scope], by)

    @staticmethod
    def _cancel(runs: list[BackgroundRun], by: str) -> None:
        for run in runs:
            if run.job is not None:
                run.job.cancel(by)
            elif not run.answer_task.done():
                run.answer_task.cancel()

    def _ended(self, run: BackgroundRun) -> None:
        run.ended_at = self._clock()
        if run.job is not None:
            run.job.release()  # its final answer holds everything: the job's copy would double a kept run
        self._sweep()  # within MAX_KEPT_OUTPUT now, not only when the next program is kept
        # Swept when its time is up, even if no other program is kept by then (the answer task's callback
        # runs on serve's loop; one closing keeps nothing anyway).
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().call_later(KEEP_ENDED_S + 1.0, self._sweep)

    def _sweep(self) -> None:
        """Forget runs ended long ago uncollected, and the oldest ended beyond either cap (count, output)."""
        now = self._clock()
        for handle, run in list(self._runs.items()):
            if run.ended_at is not None and now - run.ended_at >= KEEP_ENDED_S:
                del self._runs[handle]
        ended = sorted(
            (r for r in self._runs.values() if r.ended_at is not None), key=lambda r: r.ended_at or 0
        )
        held = sum(_output_size(r) for r in ended)
        while ended and (len(self._runs) >= MAX_KEPT or held > MAX_KEPT_OUTPUT):
            oldest = ended.pop(0)
            held -= _output_size(oldest)
            self._runs.pop(oldest.handle, None)


def _output_size(run: BackgroundRun) -> int:
    """Characters of output an ended run's final record holds (0 for a run that failed to start)."""
    task = run.answer_task
    if not task.done() or task.cancelled() or task.exception() is not None:
        return 0
    finished = task.result()
    if not isinstance(finished, Finished):
        return 0
    return len(finished.result.stdout) + len(finished.result.stderr)


class Asker:
    """Asks a background run's client its questions (approvals, servers' questions), on the hub's loop.

    A handshake-era question is a request sent on the call that waits on the run; between calls there is
    none, so the question waits for the next ``wait_execution`` (within the call's timeout, as any wait for
    a decision). On 2026-07-28 a question waits in the run's rounds anyway (``rounds.py``).
    """

    def __init__(self, run: BackgroundRun, loop: asyncio.AbstractEventLoop) -> None:
        self._run = run
        self._loop = loop

    async def __call__(self, request: ApprovalRequest) -> Decision:
        """The client's decision on ``request``, asked once a call waits."""
        await self._until_a_call_waits()
        return await self._run.approver(request)

    async def elicit(self, question: Question) -> Answer:
        """The client's answer to a server's ``question``, asked once a call waits."""
        await self._until_a_call_waits()
        return await self._run.approver.elicit(question)

    async def _until_a_call_waits(self) -> None:
        if self._run.waiting is not None:
            return
        waited = asyncio.run_coroutine_threadsafe(self._run.calling.wait(), self._loop)
        try:
            await asyncio.wrap_future(waited)
        finally:
            waited.cancel()
