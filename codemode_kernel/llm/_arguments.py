"""Tool-call arguments as models send them: JSON text that is usually, but not always, an object.

The choice, documented in docs/llm.md: a provider never raises on bad arguments. ``ToolCall.arguments``
is the parsed object, or ``{}`` when the text is not a JSON object, and ``raw_arguments`` keeps the text
as sent. ``argument_error(call)`` then gives the sentence an agent sends back as the tool's result, so
the model can repeat the call correctly instead of the whole turn failing.
"""

from __future__ import annotations

import json
from typing import Any

from .types import ToolCall

__all__ = ["argument_error", "parse_arguments"]


def parse_arguments(raw: str) -> dict[str, Any]:
    """The arguments object of ``raw``; ``{}`` when it is empty, not JSON, or not a JSON object."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def argument_error(call: ToolCall) -> str | None:
    """Why the model's arguments for ``call`` could not be used, as a message for the model; else None."""
    raw = call.raw_arguments
    if not raw.strip():
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return (
            f"The arguments of your call to {call.name} are not valid JSON "
            f"({exc.msg} at character {exc.pos}). Call the tool again with the arguments as one JSON object."
        )
    if not isinstance(value, dict):
        return (
            f"The arguments of your call to {call.name} are a JSON {type(value).__name__}, not an object. "
            "Call the tool again with the arguments as one JSON object of named parameters."
        )
    return None
