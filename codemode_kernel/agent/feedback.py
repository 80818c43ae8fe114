"""What the model reads back: a program's output, value and error, or a tool's result, cut to a budget.

A result has a body that may be cut (what the program printed and its value, or a tool's content) and a
tail that is always kept whole (the error with its line number, the artifacts stored, the status line),
because the tail is what the model needs to fix its code. When the body is cut, the middle goes: the head
shows the shape of the data, the tail end its conclusion, and a marker says how much was cut and, when
the loop kept the whole as an artifact, how to read it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..budget import value_cut_note
from ..core.results import error_message
from ..executor import ExecutionResult
from ..executor.value_text import value_text
from ..worker.source import format_error_text

__all__ = ["ResultText", "execution_text", "failure_text", "tool_result_text"]

_MARKER_ROOM = 240
_IMAGE_HINT = " (store_artifact() it to keep it; you cannot see it)"
_STATUS_HINTS = {
    "error": "fix the program and call execute_python again",
    "timeout": "what it printed before the deadline is above; make it faster or pass a longer timeout",
    "crashed": "the worker process died (a signal, memory, os._exit); change the approach",
    "cancelled": "it was stopped before it finished; what it printed and called until then is above",
}


@dataclass(frozen=True)
class ResultText:
    """A result as text for the model: ``body`` may be cut, ``tail`` is always kept."""

    body: str
    tail: str = ""
    is_error: bool = False

    @property
    def whole(self) -> str:
        """Body and tail, uncut."""
        return self.body + self.tail

    def overflows(self, budget: int) -> bool:
        """Whether the whole is longer than ``budget`` characters."""
        return len(self.whole) > budget

    def left_out(self, budget: int) -> int:
        """Characters of the body that ``render(budget)`` leaves out; 0 when it shows the body whole."""
        if not self.overflows(budget):
            return 0
        return max(len(self.body) - self._room(budget)[1], 0)

    def render(self, budget: int, *, saved_as: str | None = None, uri: str | None = None) -> str:
        """The text within about ``budget`` characters; ``saved_as``: the artifact holding the whole body.

        ``uri``: where a reader outside programs (an MCP client) reads that artifact.
        """
        if not self.overflows(budget):
            return self.whole
        tail, room = self._room(budget)
        if len(self.body) <= room:
            return self.body + tail
        head = room * 2 // 3
        end = room - head
        where = (
            f"; the whole is artifact {saved_as}: read parts with get_artifact({saved_as!r}) in a program"
            + (f", or read the resource {uri}" if uri else "")
            if saved_as
            else ""
        )
        marker = f"\n[... {len(self.body) - room} characters cut here{where} ...]\n"
        return self.body[:head] + marker + self.body[len(self.body) - end :] + tail

    def _room(self, budget: int) -> tuple[str, int]:
        """The tail as shown (clipped to 3/4 of ``budget``), and the characters left for the body."""
        tail = _clip_middle(self.tail, budget * 3 // 4, "")
        return tail, max(budget - len(tail) - _MARKER_ROOM, budget // 4)


def _clip_middle(text: str, limit: int, note: str) -> str:
    if len(text) <= limit:
        return text
    half = max(limit // 2 - 40, 0)
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]{note}\n{text[len(text) - half :]}"


def execution_text(result: ExecutionResult, budget: int | None = None) -> ResultText:
    """The model's view of an execution: output and value (body); error, artifacts and status (tail).

    ``budget``: the characters the text will be cut to; a table value's rows stop once past it (the rest
    counted), so that nothing the cut would drop is built. None: every row.
    """
    body = []
    if result.stdout:
        body.append(_line(result.stdout))
    if result.stderr:
        body.append(_line(result.stderr))
    if result.value is not None:
        value = value_text(result.value, limit=budget)
        if value:
            body.append(_line(f"value: {value}{_IMAGE_HINT * (result.value['kind'] == 'image')}"))
    tail = []
    if result.output_truncated:
        tail.append("[the program printed more than the executor keeps; the rest of its output is lost]\n")
    tail.append(value_cut_note(result.value))
    if result.error is not None:
        tail.append(_line(format_error_text(result.error)))
    for artifact in result.artifacts:
        name, kind, size = artifact.get("name") or "unnamed", artifact.get("type"), artifact.get("size")
        tail.append(f"[stored artifact {artifact.get('id')}: {name}, {kind}, {size} bytes]\n")
    tail.append(_status_line(result))
    return ResultText("".join(body), "".join(tail), is_error=result.status != "ok")


def _status_line(result: ExecutionResult) -> str:
    calls = len(result.tool_calls)
    counted = f"{calls} tool call{'s' * (calls != 1)}"
    seconds = result.duration_ms / 1000
    if result.status == "ok":
        return f"[ok in {seconds:.2f} s, {counted}]\n"
    if result.status == "timeout":
        return f"[timeout: stopped after {result.timeout_s:g} s, {counted}; {_STATUS_HINTS['timeout']}]\n"
    hint = _STATUS_HINTS.get(result.status, "")
    return f"[{result.status} after {seconds:.2f} s, {counted}" + (f"; {hint}]\n" if hint else "]\n")


def tool_result_text(result: dict[str, Any], *, artifact_id: str | None = None) -> ResultText:
    """The model's view of a classic tool call's CallToolResult (wire form).

    Structured content is sent as compact JSON (the text blocks usually repeat it); media are described,
    not sent. ``artifact_id`` is where the call log kept a large result whole.
    """
    if result.get("isError"):
        return ResultText(_line(error_message(result)), is_error=True)
    structured = result.get("structuredContent")
    if structured is not None:
        body = json.dumps(structured, ensure_ascii=False, separators=(",", ":"), default=str)
    else:
        body = "\n".join(
            _block_text(block) for block in result.get("content") or [] if isinstance(block, dict)
        )
    tail = f"[the whole result is artifact {artifact_id}]\n" if artifact_id else ""
    return ResultText(_line(body) if body else "", tail)


def failure_text(exc: BaseException) -> ResultText:
    """A classic tool call that did not reach a result (bad arguments, unknown tool, timeout, server)."""
    return ResultText(_line(f"{type(exc).__name__}: {exc}"), is_error=True)


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        size = len(str(block.get("data", ""))) * 3 // 4
        return f"[{kind} {block.get('mimeType', '')}, about {size} bytes; not shown]"
    if kind == "resource":
        resource = block.get("resource") or {}
        text = resource.get("text") if isinstance(resource, dict) else None
        uri = resource.get("uri") if isinstance(resource, dict) else None
        return str(text) if text is not None else f"[resource {uri}]"
    if kind == "resource_link":
        return f"[resource link {block.get('uri')}: {block.get('name', '')}]"
    return f"[{kind} content]"


def _line(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
