"""Tools owned by whoever runs a program, not by an MCP server: a notebook's functions, a client's tools.

``Executor.run(code, tools=[OwnedTool(spec, answer)])`` makes each tool a typed function in that run's
program, like an MCP tool. A tool with an ``answer`` is answered in this process (a notebook's function:
``kernel/notebook_tools.py``); one without is answered by the caller itself, through the pending-call
protocol of the tool-calls-as-code proof of concept (seed 003, docs/pending.md):

1. ``run(code, tools=..., replay=record)`` runs the program. Calls of the servers' tools are made as usual;
   a call of a caller's tool that the record does not answer is *pending*.
2. The run stops once the program waits on nothing but pending calls (every call of a parallel batch is
   collected first). Its result has status ``pending``, the ``pending_calls``, and in ``tool_calls`` the
   record so far.
3. The caller answers each pending call (``answered(call, result)``), appends the answers to the record,
   and runs the same code again with it: every call the record holds is answered from it (no server is
   called twice, no side effect repeated), and the program goes on past the point it stopped at.

A re-run whose calls differ from the record where the record has an answer (a program that is not
deterministic) fails with the first difference, instead of answering a different question.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..approvals import ApprovalCheck
from ..calllog import ToolCallRecord
from ..core.errors import ToolNameCollisionError
from ..core.toolspec import ToolSpec
from ..hub.validation import ArgumentValidator
from ..typegen import ToolModel, build_tool_models
from .replay import ReplayBook
from .result import PendingCall

__all__ = ["CallPlan", "OwnedTool", "ToolAnswer", "answered", "call_result", "owned_models", "plan_calls"]

ToolAnswer = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""``await answer(arguments)``: the call's MCP CallToolResult as JSON (``content``, ``structuredContent``,
``isError``). Raising ``ToolError`` fails the call at the program's line; the arguments are checked
against the tool's input schema first."""


@dataclass(frozen=True)
class OwnedTool:
    """A tool of the caller: its MCP definition (``spec.server`` names the owner), and who answers it."""

    spec: ToolSpec
    answer: ToolAnswer | None = None
    """Answered in this process; None: its calls come back to the caller as pending calls."""


@dataclass
class CallPlan:
    """Where each call of one run is answered: the record, the caller's tools, the servers."""

    book: ReplayBook | None = None
    """The record of an earlier run (``replay=``): whatever it answers is answered from it."""
    pending_all: bool = False
    """``pending=True``: the caller owns every tool; a call the record lacks is pending."""
    owned: dict[tuple[str, str], OwnedTool] = field(default_factory=dict)
    models: list[ToolModel] = field(default_factory=list)
    """The owned tools as the worker builds them (their Python names)."""
    approval: ApprovalCheck | None = None
    """Which of the servers' tools wait for a decision, and whom to ask (``approvals.py``)."""
    then_live: bool = False
    """A run replayed after its node was lost: the record answers what the lost attempt called, the
    servers what it did not reach."""

    @property
    def can_pend(self) -> bool:
        """Whether a call of this run may be left to the caller."""
        return self.pending_all or any(tool.answer is None for tool in self.owned.values())

    @property
    def strict(self) -> bool:
        """A replay that must answer every call from its record (``%%codemode --replay``): no live call."""
        return self.book is not None and not self.can_pend and not self.then_live

    def descriptors(self) -> list[dict[str, Any]]:
        """The owned tools as the run frame carries them to the worker."""
        return [model.descriptor() for model in self.models]


def plan_calls(
    tools: Sequence[OwnedTool],
    *,
    taken: Iterable[str],
    replay: Sequence[Mapping[str, Any]] | None,
    pending: bool,
    reserved: frozenset[str],
    approval: ApprovalCheck | None = None,
) -> CallPlan:
    """The CallPlan of one run.

    Args:
        tools: the caller's tools.
        taken: the Python names the servers' tools have in the program.
        replay: the record to answer from.
        pending: the caller owns every tool (see ``CallPlan.pending_all``).
        reserved: names code mode defines itself (``toolbox.RESERVED_NAMES``).
        approval: the approval policy and whom to ask.

    Raises:
        ToolNameCollisionError: a caller's tool has the Python name of a server's tool, or two of them
            one name: the program could not tell them apart.
        ValueError: a replay record that is not a list of tool calls.
    """
    owned: dict[tuple[str, str], OwnedTool] = {}
    for tool in tools:
        key = (tool.spec.server, tool.spec.name)
        if key in owned:
            raise ToolNameCollisionError(
                f"two tools named {tool.spec.qualified_name} were given; pass each tool once", tools=[key[1]]
            )
        owned[key] = tool
    models = owned_models(list(owned.values()), taken=taken, reserved=reserved)
    book = ReplayBook(replay) if replay is not None else None
    pending_all = pending and book is not None
    return CallPlan(book=book, pending_all=pending_all, owned=owned, models=models, approval=approval)


def owned_models(
    tools: Sequence[OwnedTool], *, taken: Iterable[str], reserved: frozenset[str]
) -> list[ToolModel]:
    """The caller's tools as type models (their Python names, stubs, checks), as programs will see them.

    Raises:
        ToolNameCollisionError: one has the Python name of a server's tool (``taken``), or two one name.
    """
    if not tools:
        return []
    models = build_tool_models([t.spec for t in tools], check=ArgumentValidator, reserved=reserved)
    servers = frozenset(taken)
    clashes = [m for m in models if m.function_name in servers]
    if clashes:
        names = ", ".join(f"{m.spec.qualified_name} ({m.function_name})" for m in clashes)
        raise ToolNameCollisionError(
            f"{names}: a configured server's tool already has this name in programs; give the "
            "caller's tool another name",
            tools=[m.spec.name for m in clashes],
        )
    return models


def answered(
    call: PendingCall, result: Mapping[str, Any] | None = None, *, error: str | None = None
) -> ToolCallRecord:
    """A pending call and its answer as a record entry, to append to the record of the next run.

    ``result`` is the MCP CallToolResult JSON (``{"content": [...], "isError": false}``); ``error`` instead
    fails the call in the program with a ``ToolError`` carrying that message.
    """
    if (result is None) == (error is None):
        raise ValueError("answer a pending call with a result or an error, not both")
    return ToolCallRecord(
        id=f"answer-{call.get('seq')}",
        server=call["server"],
        tool=call["tool"],
        arguments=dict(call["arguments"]),
        started=0.0,
        status="ok" if error is None else "tool_error",
        duration_ms=None,
        result=dict(result)
        if result is not None
        else {"content": [{"type": "text", "text": error}], "isError": True},
        error=error,
        warnings=["answered by the caller"],
        artifact_id=None,
        execution_id=None,
        seq=call.get("seq"),
    )


def call_result(value: Any) -> dict[str, Any]:
    """An answer as an MCP CallToolResult: one given as such (it has ``content``) is kept as it is.

    Any other JSON value becomes the result's text (a string as it is, anything else as JSON) and, when it
    is an object, its ``structuredContent`` too, which a tool with an output schema returns as a typed value.
    """
    if isinstance(value, Mapping) and isinstance(value.get("content"), list):
        return dict(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
    if isinstance(value, Mapping):
        result["structuredContent"] = dict(value)
    return result


def _error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}
