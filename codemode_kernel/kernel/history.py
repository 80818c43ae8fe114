"""What ran in this kernel: every ``%%codemode`` execution (for ``--replay`` and ``%codemode history``).

A cell is known by the id JupyterLab sends with each execution (``cellId``), so an edited cell still
finds its previous run; failing that by its code (a console, an old frontend, or a copy of the cell).

This is the kernel's memory; ``on_record`` listeners (run_records.py) also keep each run as a file in the
workspace, so the sidebar lists it while a cell runs and after a restart.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..executor import ExecutionResult

__all__ = ["AgentRun", "CellRun", "History", "RunListener"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CellRun:
    """One ``%%codemode`` execution: which cell, what code, what happened."""

    number: int
    cell_id: str | None
    code: str
    result: ExecutionResult
    finished_at: float = field(default_factory=time.time)
    replayed: bool = False


@dataclass(frozen=True)
class AgentRun:
    """One ``%%agent`` request: the model, the request, and the agent's whole record (its transcript)."""

    number: int
    model: str
    request: str
    result: Any
    """The AgentResult: steps with the model's text, programs, executions, tool calls, usage."""
    finished_at: float = field(default_factory=time.time)


RunListener = Callable[[CellRun | AgentRun], None]
"""Told of each run as it is recorded (on the kernel's main thread); what it raises is only logged."""


class History:
    """The kernel's executions, newest last; bounded so a long session cannot grow it without end."""

    def __init__(self, limit: int = 500) -> None:
        self._runs: deque[CellRun] = deque(maxlen=limit)
        self._agent_runs: deque[AgentRun] = deque(maxlen=limit)
        self._count = 0
        self._lock = threading.Lock()  # background runs (background.py) are recorded from their own threads
        self._listeners: list[RunListener] = []

    def on_record(self, listener: RunListener) -> None:
        """Call ``listener`` with each run recorded from now on."""
        self._listeners.append(listener)

    def _tell(self, run: CellRun | AgentRun) -> None:
        for listener in self._listeners:
            try:
                listener(run)
            except Exception:  # keeping a copy must never fail the cell that ran
                log.warning("codemode: a history listener failed for run #%d", run.number, exc_info=True)

    def add(
        self, cell_id: str | None, code: str, result: ExecutionResult, *, replayed: bool = False
    ) -> CellRun:
        """Record an execution; returns it with its number in this kernel (1, 2, ...)."""
        with self._lock:
            self._count += 1
            run = CellRun(self._count, cell_id, code, result, replayed=replayed)
            self._runs.append(run)
        self._tell(run)
        return run

    def add_agent(self, model: str, request: str, result: Any) -> AgentRun:
        """Record an ``%%agent`` request and its transcript."""
        with self._lock:
            self._count += 1
            run = AgentRun(self._count, model, request, result)
            self._agent_runs.append(run)
        self._tell(run)
        return run

    def agent_runs(self) -> list[AgentRun]:
        """Every agent request kept, oldest first."""
        return list(self._agent_runs)

    def last_for(self, cell_id: str | None, code: str) -> CellRun | None:
        """The newest execution of this cell that called servers (a replay records nothing new).

        By the cell's id first, then by the same code (ignoring surrounding blank lines).
        """
        recorded = [run for run in reversed(self._runs) if not run.replayed]
        if cell_id is not None:
            for run in recorded:
                if run.cell_id == cell_id:
                    return run
        return next((run for run in recorded if run.code.strip() == code.strip()), None)

    def runs(self) -> list[CellRun]:
        """Every execution kept, oldest first."""
        return list(self._runs)

    def __len__(self) -> int:
        return len(self._runs)
