"""The JSON a ``codemode run --pending`` round prints, and reading it back with answers (``--answers``).

One file carries the whole state, so the command stays stateless like the protocol (``owned.py``)::

    {"status": "pending", "program": "prog.py",
     "pending_calls": [{"seq": 2, "server": "weather", "tool": "get_weather", "arguments": {...}}],
     "record": [... every call answered so far ...]}

The caller fills in ``"result"`` (an MCP CallToolResult, or any JSON value) or ``"error"`` (a message the
program gets as a ToolError) in each pending call and passes the file back with ``--answers``. A call left
without either is asked again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..calllog import ToolCallRecord
from ..core.errors import PendingFileError
from .owned import answered, call_result
from .result import ExecutionResult, PendingCall

__all__ = ["PendingFileError", "pending_state", "read_answers"]

_HOW = (
    'Fill in "result" (the tool\'s answer: an MCP CallToolResult, or any JSON value) or "error" (a message '
    "the program gets as a ToolError) in each pending call, save this, and run again with --pending "
    "--answers FILE."
)


def pending_state(result: ExecutionResult, program: str) -> dict[str, Any]:
    """What a pending round prints: the calls to answer, the record to resume with, and how."""
    return {
        "status": "pending",
        "program": program,
        "how_to_answer": _HOW,
        "pending_calls": [dict(call) for call in result.pending_calls],
        "stdout": result.stdout,
        "stderr": result.stderr,
        "record": [call for call in result.tool_calls if call["status"] not in ("running", "cancelled")],
    }


def read_answers(path: Path) -> list[ToolCallRecord]:
    """The record to resume with: the file's record plus its answered pending calls."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PendingFileError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise PendingFileError(
            f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); pass the file a --pending "
            "round printed, with results filled in"
        ) from None
    if not isinstance(state, dict) or not isinstance(state.get("pending_calls"), list):
        raise PendingFileError(f'{path}: no "pending_calls" list; pass the file a --pending round printed')
    record = state.get("record", [])
    if not isinstance(record, list) or not all(isinstance(c, dict) and "tool" in c for c in record):
        raise PendingFileError(f'{path}: "record" must be the list of calls the round printed')
    out: list[ToolCallRecord] = list(record)
    for index, call in enumerate(state["pending_calls"]):
        where = f"{path}: pending_calls[{index}]"
        if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
            raise PendingFileError(f"{where} is not a call with a tool name; keep the calls as printed")
        if "result" in call and "error" in call:
            raise PendingFileError(f'{where} ({call["tool"]}): give "result" or "error", not both')
        pending = PendingCall(
            server=str(call.get("server", "")),
            tool=call["tool"],
            arguments=call.get("arguments") or {},
            seq=call.get("seq") if isinstance(call.get("seq"), int) else None,
        )
        if "error" in call:
            out.append(answered(pending, error=str(call["error"])))
        elif "result" in call:
            out.append(answered(pending, call_result(call["result"])))
    return out
