"""The outputSchema of ``execute_python``: the run's record (``core/records.py``) as MCP structuredContent.

The record is ``core.records.ExecutionRecord`` and the keys of a serve session; its schema is derived from
those types, so a client can rely on the shape of every nested value, error, call and artifact.
"""

import functools
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, NotRequired, TypedDict, cast

import typing_extensions

from ..core import records

__all__ = [
    "OUTPUT_RECORD",
    "RECORD_STATUS",
    "CutNote",
    "ExecutionRecord",
    "RunningState",
    "pydantic_readable",
]


class CutNote(TypedDict):
    """The text content was cut to the budget the description promises (``reply.py``)."""

    characters: int
    """How many characters the text left out."""
    artifact: str | None
    """The id of the artifact holding the whole output and value; None if it could not be stored."""
    uri: str | None
    """``artifact://<id>``, to read it as a resource."""


class RunningState(TypedDict):
    """A program still running when the call's wait ended (status ``running`` or ``queued``)."""

    elapsed_s: float
    """Seconds it has run so far (0 while it waits for a free place)."""
    output_left: int
    """Characters printed since the last answer that did not fit in this one: the next wait returns them."""
    tool_calls_so_far: int
    """Its tool calls in all; ``tool_calls`` holds those that started or ended since the last answer."""


class ExecutionRecord(records.ExecutionRecord):
    """One execution: ``ExecutionResult.to_dict()`` and its session, so clients can rely on its shape.

    Every call that needed approval has ``approval``: the decision, who made it (``the client``,
    ``timeout``, ``nobody (...)``), its scope (``once``, ``session``) and why. With the client's own tools
    (status ``pending``), ``pending_calls`` are the calls the program waits on, each with the ``id`` its
    answer names.
    """

    session: str | None
    """The session the program ran in (the name to pass next time), or None for a fresh process."""
    resume: dict[str, Any] | None
    """With status ``pending``: the state to pass back as ``resume`` with the answers (client_tools.py)."""
    cut: CutNote | None
    """When the text content was cut to the budget; None when the text holds everything."""
    running: NotRequired[RunningState]
    """Only while it runs (status ``running`` or ``queued``): ``stdout``, ``stderr``, ``notes`` and
    ``tool_calls`` hold what came since the last answer; ``execution_id`` names it for wait_execution."""


RECORD_STATUS: Any = Literal[(*typing.get_args(records.ExecutionStatus), "running", "queued")]  # type: ignore[valid-type]
"""A run's final status (``ExecutionStatus``), or ``running`` / ``queued`` for one the call left running."""


def pydantic_readable(hint: Any) -> Any:
    """``hint`` with every stdlib ``TypedDict`` in it rebuilt as a ``typing_extensions`` one.

    Why: pydantic refuses ``typing.TypedDict`` below Python 3.12, and the MCP SDK rebuilds only the
    return type itself, not the records nested in it; core/records.py must stay standard library only.
    """
    if typing.is_typeddict(hint):
        return _rebuilt(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if not args or origin is Literal:
        return hint
    converted = tuple(pydantic_readable(arg) for arg in args)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[converted]  # noqa: UP007 (a runtime union of computed members)
    return origin[converted]


_MAKE_TYPEDDICT = cast("Callable[[str, dict[str, Any]], Any]", typing_extensions.TypedDict)
"""The functional form, called with a name that is not a literal (which type checkers refuse)."""


@functools.cache
def _rebuilt(cls: Any, overrides: tuple[tuple[str, Any], ...] = ()) -> Any:
    hints = typing.get_type_hints(cls)
    items = {name: pydantic_readable(hint) for name, hint in hints.items()}
    items.update(overrides)
    for name in cls.__optional_keys__:
        items[name] = NotRequired[items[name]]
    rebuilt = _MAKE_TYPEDDICT(cls.__name__, items)
    for attr in ("__doc__", "__module__", "__qualname__"):
        setattr(rebuilt, attr, getattr(cls, attr))
    return rebuilt


OUTPUT_RECORD: Any = _rebuilt(ExecutionRecord, (("status", RECORD_STATUS),))
"""``ExecutionRecord`` as pydantic reads it: what ``execute_python``'s return annotation names, so the
SDK publishes its schema as the outputSchema and checks each reply's structured content against it."""
