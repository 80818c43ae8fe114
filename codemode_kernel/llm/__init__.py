"""Chat models: one interface over OpenAI-compatible and Anthropic endpoints, for the agent and ``llm()``.

``open_model(config, ref)`` gives the ChatModel of a config entry; ``OpenAIChatModel`` and
``AnthropicChatModel`` can also be built directly. ``codemode_kernel.llm.scripted`` is a local server
that speaks both wire protocols and plays scripted turns (tests, demos, benchmarks). See docs/llm.md.
"""

from ._answer import answer_request
from ._anthropic import AnthropicChatModel
from ._arguments import argument_error
from ._open import open_model
from ._openai import OpenAIChatModel
from .types import ChatModel, Message, TextCallback, ToolCall, ToolDefinition, Turn, Usage

__all__ = [
    "AnthropicChatModel",
    "ChatModel",
    "Message",
    "OpenAIChatModel",
    "TextCallback",
    "ToolCall",
    "ToolDefinition",
    "Turn",
    "Usage",
    "answer_request",
    "argument_error",
    "open_model",
]
