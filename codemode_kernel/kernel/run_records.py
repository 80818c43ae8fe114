"""Each finished run as a record in the workspace's history (run_files.py), for the JupyterLab sidebar.

A ``%%codemode`` record holds the MIME bundle the cell shows (``views.display.result_bundle``), an
``%%agent`` record the answer the cell shows (``views.agent.answer_bundle``) and the record of each program
the agent ran: the sidebar renders them with the same renderers as the notebook. Writing is best effort: a
full disk or a read-only workspace logs a warning and the cell still succeeds.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..views.agent import answer_bundle
from ..views.display import result_bundle
from .history import AgentRun, CellRun
from .run_files import write_run

__all__ = ["RunRecorder", "agent_record", "cell_record"]

log = logging.getLogger(__name__)

MAX_RECORD_BYTES = 8 * 1024 * 1024
"""A record larger than this keeps only the text of its bundle (``"truncated": true``)."""


def cell_record(run: CellRun, kernel_id: str | None) -> dict[str, Any]:
    """A ``%%codemode`` execution: which cell, its code, what happened, and what the cell showed."""
    result = run.result
    data, metadata = result_bundle(result, replayed=run.replayed, code=run.code)  # as _cell shows it
    return {
        "id": result.execution_id,
        "kind": "codemode",
        "kernel_id": kernel_id,
        "number": run.number,
        "cell_id": run.cell_id,
        "code": run.code,
        "status": result.status,
        "tool_calls": len(result.tool_calls),
        "finished": _iso(run.finished_at),
        "duration_ms": result.duration_ms,
        "replayed": run.replayed,
        "bundle": {"data": data, "metadata": metadata},
    }


def agent_record(run: AgentRun, kernel_id: str | None) -> dict[str, Any]:
    """An ``%%agent`` request: the model, the request, the answer the cell showed, each program's record."""
    result = run.result
    data, metadata = answer_bundle(result)
    executions = []
    for action in (action for step in result.steps for action in step.actions):
        if action.execution is not None:  # as the agent's view shows each program's record
            program_data, program_metadata = result_bundle(action.execution, code=action.code)
            executions.append({"data": program_data, "metadata": program_metadata})
    return {
        "id": uuid.uuid4().hex[:12],
        "kind": "agent",
        "kernel_id": kernel_id,
        "number": run.number,
        "model": run.model,
        "request": run.request,
        "status": result.status,
        "finished": _iso(run.finished_at),
        "duration_ms": result.duration_ms,
        "bundle": {"data": data, "metadata": metadata},
        "executions": executions,
    }


class RunRecorder:
    """The History listener that writes each run into the workspace's ``.codemode/history/``."""

    def __init__(self, workspace: Callable[[], Path], kernel_id: Callable[[], str | None]) -> None:
        self._workspace = workspace
        self._kernel_id = kernel_id

    def __call__(self, run: CellRun | AgentRun) -> None:
        """Write the run's record; a failure is logged as a warning, never raised into the cell."""
        try:
            if isinstance(run, CellRun):
                record = cell_record(run, self._kernel_id())
            else:
                record = agent_record(run, self._kernel_id())
            write_run(self._workspace(), _bounded(record))
        except (OSError, ValueError, TypeError) as exc:
            log.warning("codemode: run #%d was not written to the workspace's history: %s", run.number, exc)


def _bounded(record: dict[str, Any]) -> dict[str, Any]:
    """The record, or (when huge: a large value or many calls) the record with only its bundle's text."""
    size = len(json.dumps(record, ensure_ascii=False, default=str))
    if size <= MAX_RECORD_BYTES:
        return record
    text = record["bundle"]["data"].get("text/plain", "")
    bundle = {"data": {"text/plain": text}, "metadata": {}}
    smaller = {**record, "bundle": bundle, "truncated": True}
    if "executions" in smaller:
        smaller["executions"] = []
    return smaller


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")
