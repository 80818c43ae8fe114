"""OpenAI chat completions through the ``openai`` package: OpenAI and every OpenAI-compatible server.

Ollama, vLLM, llama.cpp's server, LM Studio and OpenRouter all speak this protocol; ``base_url`` picks the
server. Requests stream (text reaches ``on_text`` as it arrives) and ask for usage in the stream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from ._arguments import parse_arguments
from ._client_cache import no_idle_connections
from ._sdk_model import SdkChatModel
from .types import Message, TextCallback, ToolCall, ToolDefinition, Turn, Usage

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OpenAIChatModel"]


class OpenAIChatModel(SdkChatModel["AsyncOpenAI"]):
    """A ChatModel that calls ``POST {base_url}/chat/completions`` with the ``openai`` client.

    ``max_retries`` retries 429, 5xx and dropped connections with the SDK's backoff (or the server's
    ``retry-after``); ``timeout`` is seconds per request (None: the SDK's default); ``env`` is where the
    key variable is read (default ``os.environ``, read at each request so an exported key is seen).
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        ref: str | None = None,
        base_url: str | None = None,
        api_key_env: str | None = None,
        max_retries: int = 2,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            model,
            ref=ref,
            url=base_url,
            api_key_env=api_key_env,
            max_retries=max_retries,
            timeout=timeout,
            env=env,
        )

    def _make_client(self, key: str) -> AsyncOpenAI:
        from openai import NOT_GIVEN, AsyncOpenAI, DefaultAsyncHttpxClient

        timeout = NOT_GIVEN if self.timeout is None else self.timeout
        http = DefaultAsyncHttpxClient(limits=no_idle_connections())
        return AsyncOpenAI(
            api_key=key,
            base_url=self.endpoint.url,
            max_retries=self.max_retries,
            timeout=timeout,
            http_client=http,
        )

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        tools: Sequence[ToolDefinition] = (),
        on_text: TextCallback | None = None,
        max_tokens: int | None = None,
    ) -> Turn:
        """Send the conversation, stream the text to ``on_text``, and return the turn (see ChatModel)."""
        key = self.endpoint.api_key(self._env)  # before importing the SDK: a missing key fails at once
        import openai

        client = self._clients.get(key)
        # OpenAI's newer models refuse "max_tokens"; compatible servers mostly know only that name.
        official = self.endpoint.official
        answer = _Accumulator(self.model, on_text)
        try:
            stream = await client.chat.completions.create(
                model=self.model,
                messages=to_openai_messages(messages, system),
                tools=[to_openai_tool(tool) for tool in tools] if tools else openai.omit,
                max_tokens=max_tokens if max_tokens is not None and not official else openai.omit,
                max_completion_tokens=max_tokens if max_tokens is not None and official else openai.omit,
                stream=True,
                stream_options={"include_usage": True},
            )
            async with stream:
                async for chunk in stream:
                    answer.add(chunk)
        except openai.APITimeoutError as exc:
            raise self.endpoint.timed_out() from exc
        except openai.APIConnectionError as exc:
            raise self.endpoint.unreachable(exc.__cause__) from exc
        except openai.APIStatusError as exc:
            raise self.endpoint.status_error(exc.status_code, exc.body, self.max_retries) from exc
        except openai.APIError as exc:
            raise self.endpoint.stream_error(exc.message) from exc
        return answer.turn()


class _Accumulator:
    """Builds a Turn from ``chat.completion.chunk`` objects: text, tool calls by index, usage, stop reason."""

    def __init__(self, model: str, on_text: TextCallback | None) -> None:
        self.model = model
        self.on_text = on_text
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.usage = Usage()
        self.stop_reason = ""

    def add(self, chunk: Any) -> None:
        self.model = chunk.model or self.model
        if chunk.usage is not None:
            self.usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                self.text.append(delta.content)
                if self.on_text is not None:
                    self.on_text(delta.content)
            for part in delta.tool_calls or ():
                call = self.calls.setdefault(part.index, {"id": "", "name": "", "arguments": []})
                call["id"] = call["id"] or part.id or ""
                if part.function is not None:
                    # The name comes whole in the first delta; some servers repeat it later.
                    call["name"] = call["name"] or part.function.name or ""
                    call["arguments"].append(part.function.arguments or "")
            if choice.finish_reason:
                self.stop_reason = choice.finish_reason

    def turn(self) -> Turn:
        calls = []
        for index, call in sorted(self.calls.items()):
            raw = "".join(call["arguments"])
            calls.append(ToolCall(call["id"] or f"call_{index}", call["name"], parse_arguments(raw), raw))
        return Turn("".join(self.text), tuple(calls), self.usage, self.stop_reason, self.model)


def to_openai_tool(tool: ToolDefinition) -> Any:
    """A tool definition in the chat completions format."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def to_openai_messages(messages: Sequence[Message], system: str | None) -> list[Any]:
    """The conversation in the chat completions format; the system prompt leads as a system message."""
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "tool":
            wire.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content})
        elif message.role == "assistant" and message.tool_calls:
            wire.append(
                {
                    "role": "assistant",
                    "content": message.content or None,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            # What the model sent, even when it was not valid JSON: the history stays true.
                            "function": {
                                "name": call.name,
                                "arguments": call.raw_arguments or json.dumps(call.arguments),
                            },
                        }
                        for call in message.tool_calls
                    ],
                }
            )
        else:
            wire.append({"role": message.role, "content": message.content})
    return cast(list[Any], wire)
