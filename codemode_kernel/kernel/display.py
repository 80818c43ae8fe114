"""An ExecutionResult as a MIME bundle: deterministic text and JSON, escaped HTML, timings in metadata.

nbval compares ``text/plain`` and the JSON payload of stored notebooks, so both leave out what changes
from run to run (durations, ids, timestamps) and what changes from machine to machine (protections):
those go into the output's metadata. Every string that comes from a tool or the program is escaped in
the HTML, because JupyterLab trusts live outputs.
"""

from __future__ import annotations

import json
from typing import Any

from ..executor import ExecutionResult
from .render import call_html, error_html, status_badge, value_html

__all__ = ["TRACE_MIME", "result_bundle", "result_text"]

TRACE_MIME = "application/vnd.codemode.trace.v1+json"
_CALL_VOLATILE = ("id", "started", "duration_ms", "execution_id", "result_file")


def result_bundle(result: ExecutionResult) -> tuple[dict[str, Any], dict[str, Any]]:
    """The (data, metadata) pair to display for a finished execution."""
    record = result.to_dict()
    trace = {k: v for k, v in record.items() if k not in ("execution_id", "duration_ms", "protections")}
    # Calls made in parallel finish in any order: the payload lists them in a stable order (server, tool,
    # arguments); the metadata keeps, call by call in the same order, when each started and its id.
    calls = sorted(result.tool_calls, key=_call_order)
    trace["tool_calls"] = [{k: v for k, v in c.items() if k not in _CALL_VOLATILE} for c in calls]
    metadata = {
        TRACE_MIME: {
            "execution_id": result.execution_id,
            "duration_ms": result.duration_ms,
            "protections": result.protections,
            "tool_calls": [{k: c.get(k) for k in _CALL_VOLATILE} for c in calls],
        }
    }
    data = {"text/plain": result_text(result), "text/html": _html(result, calls), TRACE_MIME: trace}
    return data, metadata


def _call_order(call: dict[str, Any]) -> tuple[str, str, str]:
    arguments = json.dumps(call.get("arguments"), sort_keys=True, ensure_ascii=False)
    return str(call.get("server")), str(call.get("tool")), arguments


def result_text(result: ExecutionResult) -> str:
    """A short deterministic summary: status, tool calls, the value or the error with its line."""
    calls = len(result.tool_calls)
    lines = [f"codemode: {result.status}, {calls} tool call{'s' * (calls != 1)}"]
    if result.value is not None and result.value != {"kind": "json", "data": None}:
        lines.append(f"value: {_value_text(result.value)}")
    if result.error is not None:
        lines.append(_error_text(result.error))
    return "\n".join(lines)


def _value_text(envelope: dict[str, Any], limit: int = 2000) -> str:
    kind = envelope.get("kind")
    if kind == "json":
        text = json.dumps(envelope.get("data"), ensure_ascii=False, sort_keys=False)
    elif kind == "text":
        text = repr(envelope.get("text", ""))
    elif kind == "repr":
        text = str(envelope.get("repr", ""))
    elif kind == "table":
        text = f"<table: {envelope.get('row_count', '?')} rows, columns {envelope.get('columns')}>"
    else:
        text = f"<{kind}>"
    return text if len(text) <= limit else text[:limit] + "..."


def _error_text(error: dict[str, Any]) -> str:
    where = f"line {error['line']}: " if error.get("line") else ""
    head = f"{where}{error.get('type', 'Error')}: {error.get('message', '')}"
    source = error.get("source_line")
    return f"{head}\n    {source.strip()}" if source else head


def _html(result: ExecutionResult, calls: list[dict[str, Any]]) -> str:
    calls_count = len(calls)
    parts = [
        f'<div class="codemode-result"><b>codemode</b> {status_badge(result.status)}'
        f" · {calls_count} tool call{'s' * (calls_count != 1)}",
        *(call_html(call) for call in calls),
    ]
    if result.value is not None and result.value != {"kind": "json", "data": None}:
        parts.append(f'<div class="codemode-value">{value_html(result.value)}</div>')
    if result.error is not None:
        parts.append(error_html(result.error))
    parts.append("</div>")
    return "".join(parts)
