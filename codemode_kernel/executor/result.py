"""ExecutionResult: the one record of an execution, the same for the notebook, the agent and the CLI."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..core.records import (
    ArtifactMetadata,
    ErrorRecord,
    ExecutionRecord,
    ExecutionStatus,
    NodeAttempt,
    NoteRecord,
    PendingCall,
    ToolCallRecord,
    ValueEnvelope,
)

__all__ = [
    "EXIT_CODES",
    "ArtifactMetadata",
    "ErrorRecord",
    "ExecutionRecord",
    "ExecutionResult",
    "ExecutionStatus",
    "PendingCall",
    "ToolCallRecord",
    "ValueEnvelope",
    "format_result_text",
]

EXIT_CODES: dict[str, int] = {
    "ok": 0,
    "error": 1,
    "internal": 3,
    "timeout": 4,
    "crashed": 5,
    "pending": 6,
    "cancelled": 7,
}
"""``codemode run`` exit codes by status (2 is the usage error)."""


@dataclass
class ExecutionResult:
    """What happened when a program ran: status, value, output, tool calls and the isolation in force."""

    status: ExecutionStatus
    execution_id: str
    value: ValueEnvelope | None = None
    """The program's value, a ``ValueEnvelope``: ``{"kind": "json" | "text" | "bytes" | "image" | "table" |
    "repr", ...}``."""
    error: ErrorRecord | None = None
    """An ``ErrorRecord``: ``{type, message}``, and from the worker ``line, column, source_line, traceback``
    (lines counted in the code as written)."""
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    """Each a ``ToolCallRecord``, in the order the program issued them (``seq``)."""
    artifacts: list[ArtifactMetadata] = field(default_factory=list)
    """What the execution stored, in order: ``store_artifact`` calls and tool results too large for a
    record, each an ``ArtifactMetadata`` ``{id, name, type, description, size, created, sha256,
    execution_id}``."""
    duration_ms: float = 0.0
    timeout_s: float = 0.0
    protections: list[str] = field(default_factory=list)
    """Isolation layers in force; ``missing:<layer>: reason`` entries name those that were not."""
    pending_calls: list[PendingCall] = field(default_factory=list)
    """Each a ``PendingCall``: the calls a replay stopped at (status ``pending``)."""
    nodes: list[NodeAttempt] | None = None
    """On a Ray cluster: the node of each attempt, in order (more than one when a lost node moved it)."""
    notes: list[NoteRecord] = field(default_factory=list)
    """What the program sent with ``notify(message, **data)``, in order."""
    notes_dropped: int = 0
    """Notes the program sent beyond ``NOTES_PER_RUN``: counted, not kept."""
    completed: bool = False
    """The program ended with ``complete(answer, **data)``: ``value`` is ``{"answer": ..., "data": {...}}``,
    a final answer the agent returns as its own."""

    @property
    def final_answer(self) -> tuple[str, dict[str, Any]] | None:
        """The answer and data a program gave ``complete()``, or None."""
        if not self.completed or self.value is None or self.value["kind"] != "json":
            return None
        final = self.value["data"]
        return (str(final["answer"]), dict(final.get("data") or {})) if isinstance(final, dict) else None

    @property
    def ok(self) -> bool:
        """True when the program finished without raising."""
        return self.status == "ok"

    @property
    def exit_code(self) -> int:
        """The ``codemode run`` exit code for this status."""
        return EXIT_CODES[self.status]

    def to_dict(self) -> ExecutionRecord:
        """The run's record (``core/records.py``'s ``ExecutionRecord``): a JSON-serialisable copy of it all.

        A deep copy, so a caller may change it without changing this result.
        """
        record = ExecutionRecord(
            status=self.status,
            execution_id=self.execution_id,
            value=self.value,
            error=self.error,
            stdout=self.stdout,
            stderr=self.stderr,
            output_truncated=self.output_truncated,
            tool_calls=self.tool_calls,
            artifacts=self.artifacts,
            duration_ms=self.duration_ms,
            timeout_s=self.timeout_s,
            protections=self.protections,
            pending_calls=self.pending_calls,
            completed=self.completed,
        )
        if self.nodes is not None:
            record["nodes"] = self.nodes
        if self.notes:
            record["notes"] = self.notes
        if self.notes_dropped:
            record["notes_dropped"] = self.notes_dropped
        return copy.deepcopy(record)


def format_result_text(result: ExecutionResult, *, output: bool = True) -> str:
    """The result as a person (or a model) reads it: output, the value or the error, a status line.

    A cut says so, and how much came through. ``output=False`` leaves out what the program printed (a
    terminal showed it as it came), not the note that it was cut.
    """
    from ..budget import value_cut_note
    from .value_text import value_text

    parts = []
    if output and result.stdout:
        parts.append(result.stdout if result.stdout.endswith("\n") else result.stdout + "\n")
    if output and result.stderr:
        parts.append(result.stderr if result.stderr.endswith("\n") else result.stderr + "\n")
    if result.output_truncated:
        kept = len(result.stdout) + len(result.stderr)
        parts.append(
            f"[output cut: only the first {kept:,} characters of what the program printed were kept; "
            "store_artifact(data) in the program keeps large data whole]\n"
        )
    if result.value is not None:
        text = value_text(result.value)
        if text:
            parts.append(text + "\n")
        parts.append(value_cut_note(result.value))
    if result.error is not None:
        from ..worker.source import format_error_text

        parts.append(format_error_text(result.error).rstrip("\n") + "\n")
    for artifact in result.artifacts:
        name, kind, size = artifact.get("name") or "unnamed", artifact.get("type"), artifact.get("size")
        parts.append(f"[artifact {artifact.get('id')}: {name}, {kind}, {size} bytes]\n")
    calls = len(result.tool_calls)
    parts.append(
        f"[{result.status} in {result.duration_ms / 1000:.2f} s, {calls} tool call{'s' * (calls != 1)}]\n"
    )
    return "".join(parts)
