"""Chat models: one interface over OpenAI-compatible and Anthropic endpoints, for the agent and ``llm()``."""

from .types import ChatModel, Message, TextCallback, ToolCall, ToolDefinition, Turn, Usage

__all__ = ["ChatModel", "Message", "TextCallback", "ToolCall", "ToolDefinition", "Turn", "Usage"]
