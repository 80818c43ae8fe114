"""A scripted turn in the two wire formats: OpenAI chat completions and Anthropic messages.

Each format has a whole response (``stream: false``) and a list of server-sent events (``stream: true``).
The streams are shaped like the real services': text in pieces, tool-call arguments split across two
deltas, usage in the last chunk (OpenAI, when ``stream_options.include_usage`` asks) or in
``message_start`` / ``message_delta`` (Anthropic).
"""

from __future__ import annotations

from typing import Any

from ._script import ScriptedToolCall, ScriptedTurn

__all__ = ["anthropic_events", "anthropic_message", "error_body", "openai_chunks", "openai_completion"]

SSE = tuple[str | None, Any]
"""One server-sent event: its ``event:`` name (None: no name) and its data (a JSON value or ``[DONE]``)."""

_CREATED = 1_700_000_000  # a fixed timestamp: recorded answers read the same every run


def _call_id(call: ScriptedToolCall, prefix: str, request_no: int, n: int) -> str:
    return call.id or f"{prefix}_{request_no}_{n}"


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [part for part in (text[:middle], text[middle:]) if part]


def _openai_usage(usage: tuple[int, int]) -> dict[str, int]:
    return {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}


def _openai_stop(turn: ScriptedTurn) -> str:
    return turn.stop_reason or ("tool_calls" if turn.tool_calls else "stop")


def openai_completion(turn: ScriptedTurn, model: str, usage: tuple[int, int], request_no: int) -> Any:
    """The ``chat.completion`` object for a non-streaming request."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.full_text or None}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": _call_id(call, "call", request_no, n),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json},
            }
            for n, call in enumerate(turn.tool_calls)
        ]
    return {
        "id": f"chatcmpl-{request_no}",
        "object": "chat.completion",
        "created": _CREATED,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _openai_stop(turn), "logprobs": None}],
        "usage": _openai_usage(usage),
    }


def openai_chunks(
    turn: ScriptedTurn, model: str, usage: tuple[int, int], request_no: int, include_usage: bool
) -> list[SSE]:
    """The ``chat.completion.chunk`` events of a streaming request, ending with ``[DONE]``."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> SSE:
        data: dict[str, Any] = {
            "id": f"chatcmpl-{request_no}",
            "object": "chat.completion.chunk",
            "created": _CREATED,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        if include_usage:
            data["usage"] = None
        return None, data

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in turn.pieces]
    for n, call in enumerate(turn.tool_calls):
        head = {"id": _call_id(call, "call", request_no, n), "type": "function"}
        events.append(
            chunk({"tool_calls": [{"index": n, **head, "function": {"name": call.name, "arguments": ""}}]})
        )
        for part in _halves(call.arguments_json):
            events.append(chunk({"tool_calls": [{"index": n, "function": {"arguments": part}}]}))
    events.append(chunk({}, _openai_stop(turn)))
    if include_usage:
        last = {"id": f"chatcmpl-{request_no}", "object": "chat.completion.chunk", "created": _CREATED}
        events.append((None, {**last, "model": model, "choices": [], "usage": _openai_usage(usage)}))
    events.append((None, "[DONE]"))
    return events


def _anthropic_stop(turn: ScriptedTurn) -> str:
    return turn.stop_reason or ("tool_use" if turn.tool_calls else "end_turn")


def anthropic_message(turn: ScriptedTurn, model: str, usage: tuple[int, int], request_no: int) -> Any:
    """The ``message`` object for a non-streaming request."""
    content: list[dict[str, Any]] = []
    if turn.full_text:
        content.append({"type": "text", "text": turn.full_text})
    for n, call in enumerate(turn.tool_calls):
        arguments = call.arguments if not isinstance(call.arguments, str) else {}
        content.append(
            {
                "type": "tool_use",
                "id": _call_id(call, "toolu", request_no, n),
                "name": call.name,
                "input": arguments,
            }
        )
    return {
        "id": f"msg_{request_no}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _anthropic_stop(turn),
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def anthropic_events(turn: ScriptedTurn, model: str, usage: tuple[int, int], request_no: int) -> list[SSE]:
    """The named events of a streaming request, from ``message_start`` to ``message_stop``."""
    start = anthropic_message(turn, model, (usage[0], 1), request_no)
    events: list[SSE] = [
        ("message_start", {"type": "message_start", "message": {**start, "content": [], "stop_reason": None}})
    ]
    index = 0
    if turn.pieces:
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            )
        )
        for piece in turn.pieces:
            delta = {"type": "text_delta", "text": piece}
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
        index = 1
    for n, call in enumerate(turn.tool_calls):
        block = {
            "type": "tool_use",
            "id": _call_id(call, "toolu", request_no, n),
            "name": call.name,
            "input": {},
        }
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
        )
        for part in _halves(call.arguments_json):
            delta = {"type": "input_json_delta", "partial_json": part}
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    stop = {"stop_reason": _anthropic_stop(turn), "stop_sequence": None}
    events.append(
        ("message_delta", {"type": "message_delta", "delta": stop, "usage": {"output_tokens": usage[1]}})
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


_OPENAI_ERROR_TYPES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_body(api: str, status: int, message: str) -> Any:
    """The JSON error body each service sends with an error status."""
    if api == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    code = _OPENAI_ERROR_TYPES.get(status)
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}
