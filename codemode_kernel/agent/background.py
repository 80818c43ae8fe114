"""The agent's programs that run on after their execute_python call: what the model has read of each.

execute_python starts its program in the background (``Executor.start``) and waits ``wait_s`` seconds; a
program still running then is kept here, with a cursor of what the model was sent, so ``wait_execution``
answers with what came since and ``cancel_execution`` stops it. The table belongs to the conversation
(``Agent``): a later request may still read a program's end. When a request ends, every program it left
running is stopped, and its result goes into the record of the execute_python call that started it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..executor.jobs import Job, JobCursor, JobUpdate, first_line
from .record import AgentAction

__all__ = ["BackgroundProgram", "BackgroundPrograms"]


@dataclass(eq=False)
class BackgroundProgram:
    """One program the model was told is running, and how much of it the model has read."""

    job: Job
    action: AgentAction
    """The execute_python call that started it: its record gets the result once the program ends."""
    step: int
    """The step of that call (its events name it)."""
    timeout: float
    """The program's limit, as the call asked (a program resumed after pending runs with it again)."""
    cursor: JobCursor = field(default_factory=JobCursor)
    calls: set[str] = field(default_factory=set)
    """Ids of the tool calls the model has seen (for the count it is told)."""
    collected: bool = False
    """Its result is in the execute_python record: the model read its end, or the request ended (a
    later wait_execution still answers with it)."""

    @property
    def execution_id(self) -> str:
        """The run's id, the one the model names."""
        return self.job.execution_id

    def read(self, max_chars: int) -> JobUpdate:
        """What came since the model's last answer (at most ``max_chars`` of output); moves the cursor."""
        update = self.job.updates(self.cursor, max_chars=max_chars)
        self.cursor = update.cursor
        self.calls.update(call["id"] for call in update.calls)
        return update

    def describe(self) -> str:
        """One line for list_executions: id, state, seconds, the program's first line."""
        result = self.job.result
        if result is None:
            state = "cancelling" if self.job.cancelling else "running"
        else:
            state = result.status + ("" if self.collected else ", its result not read yet")
        return f"{self.execution_id}: {state}, {self.job.elapsed():.1f} s, {first_line(self.job.code)}"


class BackgroundPrograms:
    """The conversation's programs that outlived their call, by execution id, oldest first."""

    def __init__(self) -> None:
        self._programs: dict[str, BackgroundProgram] = {}
        self.ran_on = False
        """A program ran on past its call's wait in this conversation: from then on the model is offered
        wait_execution, cancel_execution and list_executions (kept offered, since the conversation
        holds calls of them)."""

    def __bool__(self) -> bool:
        return bool(self._programs)

    def add(self, program: BackgroundProgram) -> None:
        """Keep a program the model was (or is about to be) told is running."""
        self._programs[program.execution_id] = program

    def discard(self, execution_id: str) -> None:
        """Forget a program that ended within its call's wait (the model read its end there)."""
        self._programs.pop(execution_id, None)

    def get(self, execution_id: str) -> BackgroundProgram | None:
        """The program of that id, or None."""
        return self._programs.get(execution_id)

    def uncollected(self) -> list[BackgroundProgram]:
        """Those whose result is not in their execute_python record yet (running, or ended unread)."""
        return [p for p in self._programs.values() if not p.collected]

    def listed(self) -> list[BackgroundProgram]:
        """Those list_executions shows: running, or ended with the result not read yet."""
        return [p for p in self._programs.values() if not p.collected or not p.job.done]

    def known_ids(self) -> str:
        """The ids the model may name, for an error message ("none" when there are none)."""
        ids = [p.execution_id for p in self.listed()] or list(self._programs)[-5:]
        return ", ".join(ids) if ids else "none"

    def clear(self) -> None:
        """Forget them all (a new conversation); the caller stopped those still running."""
        self._programs.clear()
        self.ran_on = False
