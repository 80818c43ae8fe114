"""A program still running after the wait: what the model reads, and the words of the follow-up tools.

``execute_python`` waits ``wait_s`` seconds for a program; one still running then is answered with what
it did so far (``executor.jobs.JobUpdate``) and its execution id, and keeps running. The model comes back
with ``wait_execution`` (what came since, and the final result once it ends) or stops it with
``cancel_execution``. ``codemode serve`` and the agent offer the same tools with the same words, and
answer with the same text.
"""

from __future__ import annotations

import json

from ..core.limits import DEFAULT_WAIT, MAX_WAIT
from ..executor.jobs import JobUpdate
from .feedback import ResultText

__all__ = [
    "CANCEL_EXECUTION",
    "CANCEL_EXECUTION_DESCRIPTION",
    "DEFAULT_WAIT_S",
    "EXECUTION_ID_PARAMETER",
    "FOLLOW_UP_TOOLS",
    "FOLLOW_WAIT_PARAMETER",
    "LIST_EXECUTIONS",
    "LIST_EXECUTIONS_DESCRIPTION",
    "MAX_WAIT_S",
    "WAIT_EXECUTION",
    "WAIT_EXECUTION_DESCRIPTION",
    "WAIT_PARAMETER",
    "running_text",
]

WAIT_EXECUTION = "wait_execution"
CANCEL_EXECUTION = "cancel_execution"
LIST_EXECUTIONS = "list_executions"
FOLLOW_UP_TOOLS = (WAIT_EXECUTION, CANCEL_EXECUTION, LIST_EXECUTIONS)
"""The tools that come back to a program execute_python left running (reserved, as execute_python is)."""

DEFAULT_WAIT_S = DEFAULT_WAIT
MAX_WAIT_S = MAX_WAIT

WAIT_PARAMETER = (
    "Optional. Seconds to wait for the program before answering (0 to {max:g}, default {default:g}). A "
    'program still running then keeps running: the answer has status "running", what it printed and '
    "called so far, and its execution_id for wait_execution and cancel_execution."
)
FOLLOW_WAIT_PARAMETER = (
    "Optional. Seconds to wait for the program's end (0 to {max:g}, default {default:g}); a note it sends "
    "ends the wait sooner."
)
EXECUTION_ID_PARAMETER = "The execution_id of a running program, as execute_python's answer gave it."
WAIT_EXECUTION_DESCRIPTION = (
    "Wait for a program that execute_python left running. Returns what it printed, called and notified "
    "since the last answer, and its final result (status, value, error) once it ends. Waits at most wait_s "
    "seconds, and less when the program sends a note with notify()."
)
CANCEL_EXECUTION_DESCRIPTION = (
    "Stop a running program (as at its timeout: an interrupt, a grace period, then a kill). Returns its "
    'final result, status "cancelled", with everything it printed and every tool call it made.'
)
LIST_EXECUTIONS_DESCRIPTION = (
    "List your programs that are still running, or ended and not yet collected: execution_id, status, "
    "seconds so far, the program's first line."
)


def running_text(update: JobUpdate, *, tool_calls: int, budget: int) -> ResultText:
    """A running program as the model reads it: what came since the last answer, then how to go on.

    ``tool_calls``: calls so far in all; ``budget``: the characters the text is cut to (the update's own
    output was already cut to fit; what is left out comes with the next wait). An update of a program
    that ended with more output than fitted says so: its result comes with the rest.
    """
    body = _progress_lines(update)
    for call in update.calls:
        if call["status"] == "running":
            body.append(f"[call #{call['seq']} {call['tool']} running]\n")
    tail = []
    if update.output_left:
        tail.append(
            f"[{update.output_left} more characters printed since; the next wait_execution returns them]\n"
        )
    ident = update.execution_id
    if update.state == "ended":
        tail.append(
            f"[the program ended after {update.elapsed_s:.1f} s; wait_execution(execution_id={ident!r}) "
            "returns the rest of its output and its result]\n"
        )
    else:
        tail.append(
            f"[running for {update.elapsed_s:.1f} s, {tool_calls} tool call{'s' * (tool_calls != 1)} so far; "
            f"execution_id {ident}: wait_execution(execution_id={ident!r}) for more and its result, or "
            f"cancel_execution(execution_id={ident!r}) to stop it]\n"
        )
    return ResultText(_lines(body), "".join(tail))


def _progress_lines(update: JobUpdate) -> list[str]:
    """What an update shows of the program's own doing: its output, then its notes, one line each."""
    body = [update.stdout, update.stderr]
    for note in update.notes:
        data = f" {json.dumps(note['data'], ensure_ascii=False)}" if note["data"] else ""
        body.append(f"[note at {note['at_ms'] / 1000:.1f} s] {note['message']}{data}\n")
    return body


def _lines(parts: list[str]) -> str:
    """The parts joined, each ending its line."""
    return "".join(part if part.endswith("\n") or not part else part + "\n" for part in parts)
