"""``llm()`` in served programs: answered by the config's first model, when it has one."""

from __future__ import annotations

from typing import Any

from ..config import Config
from ..executor.runner import LLMHandler
from ..llm import ChatModel, answer_request, open_model

__all__ = ["model_answerer"]


def model_answerer(config: Config) -> LLMHandler | None:
    """The Executor's ``llm`` handler for ``config``'s first model; None when no model is configured.

    The model is opened on the first request, so a served program that never calls ``llm()`` costs nothing.
    """
    if not config.models:
        return None
    opened: list[ChatModel] = []

    async def answer(request: dict[str, Any]) -> str:
        if not opened:
            opened.append(open_model(config, None))
        return await answer_request(opened[0], request)

    return answer
