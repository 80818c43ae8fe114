"""Anthropic messages through the ``anthropic`` package.

Requests stream (text reaches ``on_text`` as it arrives); the events are read raw, so a tool call's
arguments are kept exactly as the model sent them, even when they are not valid JSON.
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
    from anthropic import AsyncAnthropic

__all__ = ["AnthropicChatModel"]


class AnthropicChatModel(SdkChatModel["AsyncAnthropic"]):
    """A ChatModel that calls ``POST {base_url}/v1/messages`` with the ``anthropic`` client.

    ``max_retries``, ``timeout`` and ``env`` work as for OpenAIChatModel. The Messages API needs a
    ``max_tokens`` on every request: ``default_max_tokens`` is used when ``complete()`` gets none.
    """

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        ref: str | None = None,
        base_url: str | None = None,
        api_key_env: str | None = None,
        max_retries: int = 2,
        timeout: float | None = None,
        default_max_tokens: int = 4096,
        env: Mapping[str, str] | None = None,
    ) -> None:
        # The SDK adds /v1/messages itself; a base URL copied from an OpenAI-style entry ends in /v1.
        url = base_url.rstrip("/").removesuffix("/v1") if base_url else None
        super().__init__(
            model,
            ref=ref,
            url=url,
            api_key_env=api_key_env,
            max_retries=max_retries,
            timeout=timeout,
            env=env,
        )
        self.default_max_tokens = default_max_tokens

    def _make_client(self, key: str) -> AsyncAnthropic:
        from anthropic import NOT_GIVEN, AsyncAnthropic, DefaultAsyncHttpxClient

        timeout = NOT_GIVEN if self.timeout is None else self.timeout
        http = DefaultAsyncHttpxClient(limits=no_idle_connections())
        return AsyncAnthropic(
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
        import anthropic

        client = self._clients.get(key)
        answer = _Accumulator(self.model, on_text)
        try:
            stream = await client.messages.create(
                model=self.model,
                max_tokens=max_tokens or self.default_max_tokens,
                messages=to_anthropic_messages(messages),
                system=system if system else anthropic.omit,
                tools=[to_anthropic_tool(tool) for tool in tools] if tools else anthropic.omit,
                stream=True,
            )
            async with stream:
                async for event in stream:
                    answer.add(event)
        except anthropic.APITimeoutError as exc:
            raise self.endpoint.timed_out() from exc
        except anthropic.APIConnectionError as exc:
            raise self.endpoint.unreachable(exc.__cause__) from exc
        except anthropic.APIStatusError as exc:
            raise self.endpoint.status_error(exc.status_code, exc.body, self.max_retries) from exc
        except anthropic.APIError as exc:
            raise self.endpoint.stream_error(exc.message) from exc
        return answer.turn()


class _Accumulator:
    """Builds a Turn from the raw stream events: text blocks, tool_use blocks by index, usage, stop."""

    def __init__(self, model: str, on_text: TextCallback | None) -> None:
        self.model = model
        self.on_text = on_text
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.input_tokens = 0
        self.output_tokens = 0
        self.stop_reason = ""

    def _emit(self, text: str) -> None:
        if text:
            self.text.append(text)
            if self.on_text is not None:
                self.on_text(text)

    def add(self, event: Any) -> None:
        kind = event.type
        if kind == "message_start":
            self.model = event.message.model or self.model
            self._count(event.message.usage)
        elif kind == "content_block_start":
            block = event.content_block
            if block.type == "text":
                self._emit(block.text)
            elif block.type == "tool_use":
                # The input arrives as input_json_delta pieces; a non-streaming proxy may put it here whole.
                start = json.dumps(block.input) if block.input else ""
                self.calls[event.index] = {"id": block.id, "name": block.name, "start": start, "parts": []}
        elif kind == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                self._emit(delta.text)
            elif delta.type == "input_json_delta" and event.index in self.calls:
                self.calls[event.index]["parts"].append(delta.partial_json)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            self._count(event.usage)

    def _count(self, usage: Any) -> None:
        # Counts in message_delta are cumulative; cached input is billed apart but was still sent.
        if usage is None:
            return
        inputs = [
            getattr(usage, name, None)
            for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        ]
        if any(n is not None for n in inputs):
            self.input_tokens = max(self.input_tokens, sum(n or 0 for n in inputs))
        if getattr(usage, "output_tokens", None) is not None:
            self.output_tokens = usage.output_tokens

    def turn(self) -> Turn:
        calls = []
        for _, call in sorted(self.calls.items()):
            raw = "".join(call["parts"]) or call["start"]
            calls.append(ToolCall(call["id"], call["name"], parse_arguments(raw), raw))
        usage = Usage(self.input_tokens, self.output_tokens)
        return Turn("".join(self.text), tuple(calls), usage, self.stop_reason, self.model)


def to_anthropic_tool(tool: ToolDefinition) -> Any:
    """A tool definition in the Messages format."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def to_anthropic_messages(messages: Sequence[Message]) -> list[Any]:
    """The conversation in the Messages format.

    Tool results travel as ``tool_result`` blocks of a user message; consecutive user-side messages are
    merged into one, since the API wants the roles to alternate and every result of an assistant turn
    in the next user message.
    """
    wire: list[dict[str, Any]] = []
    for message in messages:
        blocks: list[dict[str, Any]]
        if message.role == "tool":
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": message.content,
            }
            if message.is_error:
                result["is_error"] = True
            role, blocks = "user", [result]
        elif message.role == "assistant":
            blocks = [{"type": "text", "text": message.content}] if message.content else []
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                for c in message.tool_calls
            ]
            role = "assistant"
        else:
            role, blocks = "user", [{"type": "text", "text": message.content}]
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    # Plain text turns go as strings, as people write them (and the recorded requests read that way).
    for entry in wire:
        content = entry["content"]
        if len(content) == 1 and content[0]["type"] == "text":
            entry["content"] = content[0]["text"]
        elif not content:
            entry["content"] = ""
    return cast(list[Any], wire)
