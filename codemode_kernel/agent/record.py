"""AgentResult and AgentStep: the record of one ``run()``, for a notebook view, a transcript, a benchmark."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..executor import ExecutionResult
from ..executor.result import PendingCall
from ..llm.types import ToolCall, Usage

__all__ = ["AgentAction", "AgentResult", "AgentStatus", "AgentStep", "ToolSelection"]

AgentStatus = Literal["answered", "max_steps", "timeout", "pending"]
"""``answered`` the model gave its final answer; ``max_steps`` it was still calling tools at the step
limit; ``timeout`` the whole request ran out of time; ``pending`` a program waits on calls of the caller's
own tools (``pending_calls``), and ``Agent.resume(answers)`` goes on."""


@dataclass
class AgentAction:
    """One tool call of a step: a program run (``execute_python``) or an ordinary tool call."""

    call: ToolCall
    kind: Literal["code", "tool"]
    text: str = ""
    """What the model was sent back."""
    is_error: bool = False
    duration_ms: float = 0.0
    code: str | None = None
    execution: ExecutionResult | None = None
    """The program's ExecutionResult (``kind == "code"``; None when the arguments were unusable). A
    program that ran on past its wait (``ran_on``) gets it when it ends: when the model reads its end,
    or when the request ends (then it is stopped, status ``cancelled``)."""
    execution_id: str | None = None
    """The program's run: the one execute_python started, or the one wait_execution or cancel_execution
    named."""
    ran_on: bool = False
    """execute_python: the program was still running after ``wait_s``; the model was told so."""
    ended: ExecutionResult | None = None
    """wait_execution, cancel_execution: the result of the program whose end this call read (its
    execute_python action holds it as ``execution``)."""
    server: str | None = None
    tool: str | None = None
    tool_result: dict[str, Any] | None = None
    """The MCP CallToolResult in wire form (``kind == "tool"``; None when the call failed before one)."""


@dataclass
class AgentStep:
    """One model request and the calls it asked for."""

    index: int
    text: str = ""
    """The model's text in this step (its final answer in the last step of an answered run)."""
    actions: list[AgentAction] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model_ms: float = 0.0
    """How long the model request took."""
    execution_ms: float = 0.0
    """How long the step's calls took, together."""
    stop_reason: str = ""


@dataclass
class ToolSelection:
    """Which tools a model picked for the request before the first step (large tool sets only).

    The picked tools are described to the model as full stubs, the others compactly. ``fallback`` says
    why the picks were not used (the request failed, the answer named no tool, or it recited the listing
    instead of choosing): then every tool stays in
    the plain compact listing, and the run goes on.
    """

    model: str
    """The ``ref`` of the model asked (``codeMode.selectModel``, or the agent's own)."""
    offered: int
    """Tools listed in the selection request."""
    tools: list[str] = field(default_factory=list)
    """The picked tools' function names, in the model's order (at most ``AgentOptions.select_max``)."""
    ignored: list[str] = field(default_factory=list)
    """Names in the answer that are no tool of the list (or beyond ``select_max``)."""
    fallback: str | None = None
    """Why the plain compact listing is used instead; None when the picks are used."""
    answer: str = ""
    """The model's answer as it came (cut to 2000 characters), to see what a fallback read."""
    usage: Usage = field(default_factory=Usage)
    model_ms: float = 0.0

    @property
    def used(self) -> bool:
        """Whether the picks shape the execute_python description."""
        return self.fallback is None


@dataclass
class AgentResult:
    """What one ``run()`` did: the answer, every step, and the totals a comparison needs."""

    request: str
    answer: str
    status: AgentStatus
    code_mode: bool
    steps: list[AgentStep] = field(default_factory=list)
    duration_ms: float = 0.0
    pending_calls: list[PendingCall] = field(default_factory=list)
    """With status ``pending``: the calls of the caller's tools the program waits on (docs/pending.md)."""
    data: dict[str, Any] = field(default_factory=dict)
    """What a program passed ``complete(answer, **data)`` beside its answer (empty otherwise)."""
    selection: ToolSelection | None = None
    """The tool pre-selection before the first step, when there was one (``AgentOptions.select_tools``)."""

    @property
    def round_trips(self) -> int:
        """Model requests sent (the selection request included)."""
        return len(self.steps) + (self.selection is not None)

    @property
    def usage(self) -> Usage:
        """Tokens the provider counted, over every request of this run (the selection request included)."""
        total = self.selection.usage if self.selection is not None else Usage()
        for step in self.steps:
            total = total + step.usage
        return total

    @property
    def executions(self) -> list[ExecutionResult]:
        """Every program run, in order."""
        return [a.execution for s in self.steps for a in s.actions if a.execution is not None]

    @property
    def final_code(self) -> str | None:
        """The last program the model ran (for "insert as a cell"), or None."""
        codes = [a.code for s in self.steps for a in s.actions if a.code is not None]
        return codes[-1] if codes else None
