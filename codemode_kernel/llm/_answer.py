"""A program's ``llm()`` request answered by a chat model, for the kernel and for ``codemode serve``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .types import ChatModel, Message

__all__ = ["answer_request"]


async def answer_request(model: ChatModel, request: Mapping[str, Any]) -> str:
    """The text ``model`` answers to a worker's ``llm()`` request (``prompt``, ``system``, ``max_tokens``)."""
    turn = await model.complete(
        [Message("user", str(request.get("prompt", "")))],
        system=request.get("system"),
        max_tokens=request.get("max_tokens"),
    )
    return turn.text
