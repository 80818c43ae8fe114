"""What the scripted model says (turns) and what it was asked (recorded requests).

A script is a list of turns played in order, one per model request. A turn is text and/or tool calls, or
an HTTP error status to answer instead; a Python callable can stand in for a turn and answer from what
the model was sent. These types know nothing about HTTP or wire formats.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Responder", "ScriptedRequest", "ScriptedToolCall", "ScriptedTurn", "TurnLike", "count_tokens"]

Api = Literal["openai", "anthropic", "other"]


@dataclass(frozen=True)
class ScriptedToolCall:
    """A tool call the scripted model makes. A ``str`` for ``arguments`` is sent as is (e.g. broken JSON)."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    """The call's id; by default ``call_<request>_<n>`` (OpenAI) or ``toolu_<request>_<n>`` (Anthropic)."""

    @property
    def arguments_json(self) -> str:
        """The arguments as the wire carries them: a JSON text."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments))


@dataclass(frozen=True)
class ScriptedTurn:
    """One answer of the scripted model: text and/or tool calls, or an HTTP error ``status`` instead.

    ``text`` given as a string is streamed word by word; a list of strings is streamed piece by piece.
    ``delay`` waits before answering and ``pause`` between the streamed chunks that follow the first
    piece of text or arguments (both watch the connection,
    so a client that gives up is seen: ``ScriptedRequest.disconnected``). An error turn with a 429 or 5xx
    status sends ``retry-after-ms`` so the SDKs retry after ``retry_after`` seconds instead of their
    own backoff, which keeps tests fast.
    """

    text: str | Sequence[str] = ""
    tool_calls: Sequence[ScriptedToolCall] = ()
    status: int | None = None
    error: str = ""
    """The error message sent with ``status`` (a default one names the status)."""
    retry_after: float = 0.01
    delay: float = 0.0
    pause: float = 0.0
    stop_reason: str | None = None
    """Overrides the stop reason (by default: tool calls, else the end of the turn)."""

    @property
    def pieces(self) -> list[str]:
        """The text as the chunks it is streamed in."""
        if isinstance(self.text, str):
            return re.findall(r"\s*\S+\s*", self.text) or ([self.text] if self.text else [])
        return [piece for piece in self.text if piece]

    @property
    def full_text(self) -> str:
        """The whole text of the turn."""
        return "".join(self.pieces)

    @classmethod
    def from_json(cls, data: Any) -> ScriptedTurn:
        """A turn from a script file entry: a string (text) or an object with the field names above."""
        if isinstance(data, str):
            return cls(text=data)
        if not isinstance(data, dict):
            raise ValueError(f"a turn is a string or an object, not {type(data).__name__}")
        unknown = (
            set(data) - {f for f in cls.__dataclass_fields__} - {"toolCalls", "retryAfter", "stopReason"}
        )
        if unknown:
            raise ValueError(f"unknown turn keys: {', '.join(sorted(unknown))}")
        calls = data.get("tool_calls", data.get("toolCalls", ()))
        return cls(
            text=data.get("text", ""),
            tool_calls=tuple(
                ScriptedToolCall(c["name"], c.get("arguments", {}), c.get("id")) for c in calls or ()
            ),
            status=data.get("status"),
            error=data.get("error", ""),
            retry_after=float(data.get("retry_after") or data.get("retryAfter") or 0.01),
            delay=data.get("delay", 0.0),
            pause=data.get("pause", 0.0),
            stop_reason=data.get("stop_reason", data.get("stopReason")),
        )


@dataclass
class ScriptedRequest:
    """One request the server received, as it arrived, and how the server answered it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: Any
    """The parsed JSON body (None for a GET or a body that is not JSON)."""
    api: Api = "other"
    status: int = 0
    """The HTTP status the server answered with."""
    disconnected: bool = False
    """The client closed the connection before the answer was complete (e.g. a cancelled request)."""

    @property
    def model(self) -> str | None:
        """The model the request asked for."""
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def tool_results(self) -> list[str]:
        """The text of every tool result sent back to the model, in order, in either wire format."""
        found: list[str] = []
        for message in self.body.get("messages", []) if isinstance(self.body, dict) else []:
            if message.get("role") == "tool":
                found.append(_text_of(message.get("content")))
            elif isinstance(message.get("content"), list):
                for block in message["content"]:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        found.append(_text_of(block.get("content")))
        return found

    def to_json(self) -> dict[str, Any]:
        """The record as ``GET /_requests`` shows it."""
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
            "api": self.api,
            "status": self.status,
            "disconnected": self.disconnected,
        }


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


Responder = Callable[[ScriptedRequest], "ScriptedTurn | str"]
"""A turn computed from the request (e.g. echo the last tool result); a ``str`` is a text turn."""

TurnLike = ScriptedTurn | str | Responder


def count_tokens(value: Any) -> int:
    """A rough, deterministic token count: the characters of the value (as compact JSON) over four."""
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), sort_keys=True)
    return (len(text) + 3) // 4
