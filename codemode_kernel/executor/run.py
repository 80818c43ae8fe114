"""One run of a program as one value: built once by ``Executor.arun``, then passed whole.

What the run's steps read (waiting for servers still connecting, taking a worker, executing, making the
result) is here, decided once: the program as parsed (``references.Program``), its limit, its inputs as
sent, where its calls are answered (``CallPlan``), the caller's live views and the session it runs in. The
value is frozen; waiting for servers gives a new one that says how long it waited (``after_wait``). A second
executor backend takes the same value.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict

from ..approvals import Approver
from ..config.models import ExecutorResources
from ..core.records import ErrorRecord, ToolCallRecord, ValueEnvelope
from .execution import CallCallback, NodeWatcher, NoteWatcher, OutputCallback, ProgressWatcher, Watchers
from .owned import CallPlan, OwnedTool
from .references import Program
from .replay import REPLAYED, ReplayBook

__all__ = ["Run", "RunOptions", "Stop"]


def _execution_id() -> str:
    return uuid.uuid4().hex[:12]


class RunOptions(TypedDict, total=False):
    """How one run goes: the keyword arguments of ``Executor.arun``, ``run`` and ``start`` (see ``arun``)."""

    timeout: float | None
    inputs: Mapping[str, Any] | None
    session: str | None
    replay: Sequence[Mapping[str, Any]] | None
    pending: bool
    tools: Sequence[OwnedTool]
    approver: Approver | None
    on_output: OutputCallback | None
    on_call: CallCallback | None
    on_progress: ProgressWatcher | None
    resources: ExecutorResources | None
    on_node: NodeWatcher | None
    on_note: NoteWatcher | None
    execution_id: str
    """The run's id, when the caller named it before the run began (a queued background run's)."""


@dataclass(eq=False)
class Stop:
    """A request to stop a run before its deadline (a background run's cancel), shared by its attempts.

    Set on the hub's loop (``Job.cancel`` moves it there); the run then ends as a timeout would (SIGINT, the
    grace period, SIGKILL), with status ``cancelled`` and every call it made in its record.
    """

    event: asyncio.Event = field(default_factory=asyncio.Event)
    by: str = ""
    """Who stopped it, as the error message says (``the client``, ``%codemode cancel``)."""

    def set(self, by: str) -> None:
        """Stop the run; the first request's ``by`` is kept."""
        if not self.event.is_set():
            self.by = by
            self.event.set()

    @property
    def requested(self) -> bool:
        """Whether the run was asked to stop."""
        return self.event.is_set()


@dataclass(frozen=True)
class Run:
    """One program to run, with everything decided about it before it starts."""

    program: Program
    limit: float
    """Seconds the whole run may take, waiting for servers included (``result.timeout_s``); checked once."""
    inputs: Mapping[str, Any]
    """The globals the program starts with, as the caller gave them (their names count as defined)."""
    encoded_inputs: dict[str, ValueEnvelope]
    """The same, as sent to the worker."""
    plan: CallPlan
    watchers: Watchers
    session: str | None = None
    resources: ExecutorResources | None = None
    """What the run reserves on a Ray cluster; None: the executor's ``executor.resources``."""
    execution_id: str = field(default_factory=_execution_id)
    started: float = field(default_factory=time.monotonic)
    """``time.monotonic()`` when the run was asked for."""
    waited: float | None = None
    """Seconds from ``started`` to the end of its wait for servers still connecting; None: it did not wait."""
    connecting: tuple[str, ...] = ()
    """The servers still connecting when that wait ended, while the program still named what none defined."""
    queued: float = 0.0
    """Seconds before this attempt began that were not the wait for servers: waiting for a Ray node with
    the run's resources free, and earlier attempts on nodes that were lost."""
    attempt: int = 1
    stop: Stop = field(default_factory=Stop)
    """Set to end the run before its deadline (``Executor.start``'s job cancels through it)."""

    @property
    def code(self) -> str:
        """The program as written."""
        return self.program.code

    @property
    def seconds(self) -> float:
        """The program's own time: the limit less the wait, but a moment however long it waited."""
        return max(self.limit - (self.waited or 0.0) - self.queued, reserve(self.limit))

    def after_wait(self, connecting: Sequence[str]) -> Run:
        """This run once its wait for servers ended now, ``connecting`` still connecting."""
        return replace(self, waited=time.monotonic() - self.started, connecting=tuple(connecting))

    def begun(self) -> Run:
        """This run as its attempt begins now, on a worker it may have waited for (a Ray node's)."""
        return replace(self, queued=max(0.0, time.monotonic() - self.started - (self.waited or 0.0)))

    def moved(self, record: Sequence[ToolCallRecord], shown: Mapping[str, int]) -> Run:
        """The next attempt of a run whose node was lost: the calls it made are answered from ``record``.

        No tool is called twice: what the lost attempt called (and got an answer to) is answered from the
        record; the servers answer only what it did not reach. ``shown`` is what the caller's live views
        were shown already (characters per stream), not shown again.
        """
        # Every answer so far: the caller's record, then what each lost attempt was answered by a server
        # (calls answered from the record are in it already). A run that had no record goes live past it;
        # one that had keeps its rule (a strict replay stays strict, a pending one pending).
        answered = [call for call in record if REPLAYED not in (call.get("warnings") or ())]
        book = ReplayBook([*(self.plan.book.calls if self.plan.book else ()), *answered])
        plan = replace(self.plan, book=book, then_live=self.plan.then_live or self.plan.book is None)
        return replace(self, plan=plan, watchers=self.watchers.skipping(shown), attempt=self.attempt + 1)

    def remaining(self) -> float:
        """Seconds left of the run's limit, counted from when it was asked for (every attempt shares it)."""
        return max(0.0, self.limit - (time.monotonic() - self.started))

    def duration_ms(self) -> float:
        """Milliseconds since the run was asked for."""
        return round((time.monotonic() - self.started) * 1000, 3)

    def timeout_error(self) -> ErrorRecord:
        """The error of a run stopped at its limit, saying how much of it went to waiting for servers."""
        spent = self.limit - self.seconds
        queued = min(self.queued, spent)
        waited = spent - queued
        waiting = f" ({waited:.1f} s of it waiting for servers to finish connecting)" if waited else ""
        if self.connecting and waited:
            connecting = ", ".join(self.connecting)
            waiting = f" ({waited:.1f} s of it waiting for servers still connecting: {connecting})"
        if queued >= 0.05:
            waiting += f" ({queued:.1f} s of it waiting for a Ray node, or on nodes that were lost)"
        return ErrorRecord(
            type="TimeoutError",
            message=(
                f"the program did not finish within {self.limit:g} s{waiting} and was stopped; "
                "output so far is kept"
            ),
            line=None,
            column=None,
            source_line=None,
            traceback="",
        )

    def cancelled_error(self) -> ErrorRecord:
        """The error of a run stopped before its deadline: who stopped it, and after how long."""
        by = f" by {self.stop.by}" if self.stop.by else ""
        return ErrorRecord(
            type="Cancelled",
            message=(
                f"the program was stopped{by} after {time.monotonic() - self.started:.1f} s, before its "
                f"{self.limit:g} s limit; output and tool calls so far are kept"
            ),
            line=None,
            column=None,
            source_line=None,
            traceback="",
        )


def reserve(limit: float) -> float:
    """Seconds of a run's timeout kept for the program itself, however long servers keep it waiting."""
    return min(1.0, limit / 4)
