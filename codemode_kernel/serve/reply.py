"""``execute_python``'s answer: the record as structured content, and text within the promised budget.

The description tells the host's model that what comes back is cut to about ``AgentOptions.result_budget``
characters (the agent's model is told the same, and reads the same text: ``agent.feedback``). A program
whose output or value is larger gets the head and the end of it, and a marker saying how many characters
were left out and where the whole is: an artifact, stored before the answer is made, which a program reads
with ``get_artifact(id)`` and a client as the resource ``artifact://<id>``. The record says the same in
``cut``. Only the instructions of a pending run come after the budget, whole: they hold the ``resume``
state a text-only client must pass back exactly.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

from mcp.types import CallToolResult, TextContent

from ..agent.feedback import ResultText, execution_text
from ..agent.running import running_text
from ..artifacts import Artifact, ArtifactStore
from ..budget import keep_whole
from ..executor import ExecutionResult
from ..executor.jobs import Job, JobUpdate
from .client_tools import ClientRun, error_hint, pending_reply
from .resources import artifact_uri
from .sessions import SessionRef

__all__ = ["Finished", "finish", "reply", "running_reply"]

READER = "the codemode serve client"
"""Who saw the cut, as the whole's artifact says."""


@dataclass(frozen=True)
class Finished:
    """A run's result, its text before the budget, and the artifact holding the whole when it is cut."""

    result: ExecutionResult
    view: ResultText
    whole: Artifact | None


async def finish(
    result: ExecutionResult,
    store: ArtifactStore,
    budget: int,
    *,
    ref: SessionRef | None,
    run: ClientRun | None,
) -> Finished:
    """``result`` ready to answer: its text, and the whole stored (off the loop) if the text will be cut."""
    view = _view(result, budget, ref, run)
    whole = None
    if view.left_out(budget):
        whole = await asyncio.to_thread(keep_whole, store, view.body, result.execution_id, reader=READER)
    return Finished(result, view, whole)


def reply(
    finished: Finished, budget: int, *, ref: SessionRef | None, run: ClientRun | None
) -> CallToolResult:
    """The call's result: the record as structured content, the text within ``budget``, what to do next."""
    result, view, whole = finished.result, finished.view, finished.whole
    record = dict(result.to_dict(), session=ref.name if ref else None, resume=None, cut=None)
    uri = artifact_uri(whole) if whole is not None else None
    text = view.render(budget, saved_as=whole.id if whole is not None else None, uri=uri)
    if left_out := view.left_out(budget):
        record["cut"] = {"characters": left_out, "artifact": whole.id if whole else None, "uri": uri}
    if run is not None and result.status == "pending":
        record["pending_calls"], record["resume"], instructions = pending_reply(result, run)
        text += instructions
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=record,
        is_error=result.status not in ("ok", "pending"),
    )


def _view(result: ExecutionResult, budget: int, ref: SessionRef | None, run: ClientRun | None) -> ResultText:
    """What the agent's model would read of ``result``, with the session and the client-tools hint kept."""
    view = execution_text(result, budget)
    more = ""
    if ref is not None:
        more += f"session: {ref.name}" + (" (new: no globals from earlier calls)" if ref.new else "") + "\n"
    if run is not None and result.status != "pending" and result.error is not None:
        more += error_hint(result.error, run)
    return replace(view, tail=view.tail + more)


def running_reply(
    handle: str, job: Job | None, update: JobUpdate | None, budget: int, *, ref: SessionRef | None
) -> CallToolResult:
    """The answer for a program still running when the call's wait ended: what came since, how to go on.

    ``update`` holds what came since the last answer (its output already cut to fit ``budget``; the rest
    comes with the next wait); ``job`` None: it still waits for a free place.
    """
    elapsed = update.elapsed_s if update is not None else 0.0
    calls = job.call_count if job is not None else 0
    status = "running" if job is not None else "queued"
    record = {
        "status": status,
        "execution_id": handle,
        "value": None,
        "error": None,
        "stdout": update.stdout if update else "",
        "stderr": update.stderr if update else "",
        "output_truncated": False,
        "tool_calls": update.calls if update else [],
        "artifacts": [],
        "duration_ms": round(elapsed * 1000, 3),
        "timeout_s": job.run.limit if job is not None else 0.0,
        "protections": [],
        "pending_calls": [],
        "completed": False,
        "notes": update.notes if update else [],
        "session": ref.name if ref else None,
        "resume": None,
        "cut": None,
        "running": {
            "elapsed_s": elapsed,
            "output_left": update.output_left if update else 0,
            "tool_calls_so_far": calls,
        },
    }
    if update is None:
        text = (
            f"[queued: every place is taken by other programs; execution_id {handle}: "
            f"wait_execution(execution_id={handle!r}) to wait for it, or cancel_execution to drop it]\n"
        )
    else:
        text = running_text(update, tool_calls=calls, budget=budget).render(budget)
    if ref is not None:
        text += f"session: {ref.name}\n"
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=record)
