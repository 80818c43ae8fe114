"""What the agent reports while it works, for a live view: one small frozen dataclass per kind of event.

``Agent.run(..., on_event=callback)`` calls ``callback(event)`` on the thread that awaits ``run()``, in the
order things happened, including the output and tool calls of a program while it runs (they come from
the executor's thread and are handed over). A callback that raises is logged and ignored: a broken view
must not break the agent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..calllog import CallRecord
from ..core.records import NoteRecord
from ..executor import ExecutionResult
from ..llm.types import Usage
from .record import ToolSelection

__all__ = [
    "AgentEvent",
    "CodeRequested",
    "EventCallback",
    "ExecutionFinished",
    "ExecutionNote",
    "ExecutionOutput",
    "ExecutionRunning",
    "ExecutionStarted",
    "ExecutionToolCall",
    "FinalAnswer",
    "StepFinished",
    "StepStarted",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallRequested",
    "ToolsSelected",
]


@dataclass(frozen=True)
class ToolsSelected:
    """Before the first step: which tools the model picked for the request (or why the picks are not used)."""

    selection: ToolSelection


@dataclass(frozen=True)
class StepStarted:
    """A model request is about to be sent (step numbers start at 1 for each ``run()``)."""

    step: int


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's text as it streams in."""

    step: int
    text: str


@dataclass(frozen=True)
class CodeRequested:
    """The model asked to run a program (``execute_python``)."""

    step: int
    call_id: str
    code: str
    timeout: float


@dataclass(frozen=True)
class ToolCallRequested:
    """The model asked for an ordinary tool call (classic mode, or a tool excluded from code mode)."""

    step: int
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ExecutionStarted:
    """The program was handed to the executor."""

    step: int
    call_id: str
    code: str


@dataclass(frozen=True)
class ExecutionOutput:
    """The running program printed something."""

    step: int
    call_id: str
    stream: Literal["stdout", "stderr"]
    text: str


@dataclass(frozen=True)
class ExecutionToolCall:
    """A tool call made by the running program started (status ``running``) or ended."""

    step: int
    call_id: str
    record: CallRecord


@dataclass(frozen=True)
class ExecutionNote:
    """The running program sent a note (``notify(message, **data)``)."""

    step: int
    call_id: str
    note: NoteRecord


@dataclass(frozen=True)
class ExecutionRunning:
    """The program runs on past its call's wait: the model was sent ``text`` (what it did so far).

    Its output, calls and notes keep coming as events of the same ``call_id``; ``ExecutionFinished``
    follows once its end is read (a wait_execution or cancel_execution of the model, or the request's
    end, which stops it).
    """

    step: int
    call_id: str
    execution_id: str
    text: str


@dataclass(frozen=True)
class ExecutionFinished:
    """The program ended; ``text`` is what the model is sent back.

    For a program that ran on (``ExecutionRunning``): ``step`` and ``call_id`` are its execute_python
    call's, ``text`` the answer that read its end, or for one stopped at the request's end what the model
    would have read.
    """

    step: int
    call_id: str
    result: ExecutionResult
    text: str


@dataclass(frozen=True)
class ToolCallFinished:
    """An ordinary tool call ended; ``text`` is what the model is sent back."""

    step: int
    call_id: str
    name: str
    text: str
    is_error: bool
    duration_ms: float


@dataclass(frozen=True)
class StepFinished:
    """A step's model request and the calls it asked for are done."""

    step: int
    usage: Usage
    model_ms: float
    execution_ms: float


@dataclass(frozen=True)
class FinalAnswer:
    """The run ended: the model's answer, or the agent's message when it stopped (``status``)."""

    text: str
    status: Literal["answered", "max_steps", "timeout"]


AgentEvent = (
    ToolsSelected
    | StepStarted
    | TextDelta
    | CodeRequested
    | ToolCallRequested
    | ExecutionStarted
    | ExecutionOutput
    | ExecutionToolCall
    | ExecutionNote
    | ExecutionRunning
    | ExecutionFinished
    | ToolCallFinished
    | StepFinished
    | FinalAnswer
)
"""Every kind of event ``on_event`` receives."""

EventCallback = Callable[[AgentEvent], None]
