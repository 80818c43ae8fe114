"""The outputSchema of ``execute_python``: the ExecutionResult record as MCP structuredContent."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

__all__ = ["ExecutionRecord"]


class ExecutionRecord(TypedDict):
    """One execution: ``ExecutionResult.to_dict()`` and its session, so clients can rely on its shape."""

    status: Literal["ok", "error", "timeout", "crashed", "internal", "pending"]
    execution_id: str
    value: dict[str, Any] | None
    error: dict[str, Any] | None
    stdout: str
    stderr: str
    output_truncated: bool
    tool_calls: list[dict[str, Any]]
    """Every call (``calllog.ToolCallRecord``); one that needed approval has ``approval``: the decision, who
    made it (``the client``, ``timeout``, ``nobody (...)``), its scope (``once``, ``session``) and why."""
    artifacts: list[dict[str, Any]]
    duration_ms: float
    timeout_s: float
    protections: list[str]
    pending_calls: list[dict[str, Any]]
    """The calls of the client's tools the program waits on (status ``pending``): id, seq, tool, arguments."""
    session: str | None
    """The session the program ran in (the name to pass next time), or None for a fresh process."""
    resume: dict[str, Any] | None
    """With status ``pending``: the state to pass back as ``resume`` with the answers (client_tools.py)."""
    cut: dict[str, Any] | None
    """When the text content was cut to the budget the description promises (``reply.py``): ``characters``
    left out of it, and the ``artifact`` (its id; None if it could not be stored) and ``uri``
    (``artifact://<id>``) holding the whole output and value. None when the text holds everything. (A plain
    dict: the SDK cannot nest a TypedDict in the outputSchema on Python 3.11.)"""
