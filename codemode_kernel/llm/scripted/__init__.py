"""A scripted model server: a local endpoint that speaks the OpenAI and Anthropic wire protocols.

It plays scripted turns (text, tool calls, or an HTTP error) in order and records every request, so the
tests, the demo notebooks and the agent benchmark run through the real ``openai`` and ``anthropic``
clients with no paid model. From Python::

    with ScriptedModelServer(["Hello!", ScriptedTurn(tool_calls=[ScriptedToolCall("f", {"x": 1})])]) as s:
        ...  # point a model at s.base_url (OpenAI) or s.url (Anthropic); read s.requests afterwards

From a shell: ``python -m codemode_kernel.llm.scripted --script turns.json [--port N]`` (docs/llm.md).
"""

from ._script import Responder, ScriptedRequest, ScriptedToolCall, ScriptedTurn, TurnLike, count_tokens
from ._server import ScriptedModelServer
from .cli import load_script

__all__ = [
    "Responder",
    "ScriptedModelServer",
    "ScriptedRequest",
    "ScriptedToolCall",
    "ScriptedTurn",
    "TurnLike",
    "count_tokens",
    "load_script",
]
