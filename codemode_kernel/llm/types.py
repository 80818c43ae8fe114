"""The provider-neutral shapes of a chat with a model: messages, tool definitions, tool calls, turns.

Every provider (OpenAI-compatible chat completions, Anthropic messages) converts to and from these, so
the agent loop and ``llm()`` never see a vendor's types.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = ["ChatModel", "Message", "TextCallback", "ToolCall", "ToolDefinition", "Turn", "Usage"]

TextCallback = Callable[[str], None]
"""``on_text(delta)``: a piece of the model's answer as it streams in."""


@dataclass(frozen=True)
class ToolDefinition:
    """A tool offered to the model: its name, what it is for, and a JSON Schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model asked for. ``arguments`` is parsed; ``raw_arguments`` is what it sent."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""


@dataclass(frozen=True)
class Usage:
    """Tokens the provider counted for one request."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


@dataclass(frozen=True)
class Message:
    """One message of the conversation.

    ``assistant`` messages may carry ``tool_calls``; each ``tool`` message answers one of them
    (``tool_call_id``) with ``content`` as text. The system prompt is passed separately.
    """

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False
    """For a ``tool`` message: the call failed (Anthropic's ``is_error``; OpenAI has no such flag)."""


@dataclass(frozen=True)
class Turn:
    """What the model answered to one request."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    model: str = ""


class ChatModel(Protocol):
    """A configured model that can take one request at a time (async; cancel the task to abort it)."""

    ref: str
    """The ``ref`` of the config's ``models`` entry (or the model name when none was configured)."""
    provider: str
    model: str

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        tools: Sequence[ToolDefinition] = (),
        on_text: TextCallback | None = None,
        max_tokens: int | None = None,
    ) -> Turn:
        """Send the conversation; stream text to ``on_text``; return the whole turn.

        Raises:
            LLMError (from codemode_kernel.core.errors) or a subclass: missing key, unknown model, endpoint
            unreachable, rejected request; transient failures (429, 5xx) are retried first.
        """
        ...
